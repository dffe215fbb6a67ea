#include "snippet.hpp"
void discard_try_lock(zkr::InterProcessSemaphoreMutex& m) { ZKR_SNIPPET(m.try_lock()); }
