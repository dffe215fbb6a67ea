#include "snippet.hpp"
void discard_try_acquire_for(zkr::InterProcessMultiLock& m) { ZKR_SNIPPET(m.try_acquire_for(500us)); }
