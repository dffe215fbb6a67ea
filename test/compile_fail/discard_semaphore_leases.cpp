#include "snippet.hpp"
void discard_semaphore_leases(zkr::InterProcessSemaphoreV2& s) { ZKR_SNIPPET(s.acquire(2, 1s)); }
