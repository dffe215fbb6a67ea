#include "snippet.hpp"
void discard_semaphore_lease(zkr::InterProcessSemaphoreV2& s) { ZKR_SNIPPET(s.acquire()); }
