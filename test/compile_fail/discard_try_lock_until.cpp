#include "snippet.hpp"
void discard_try_lock_until(zkr::InterProcessMultiLock& m) {
  ZKR_SNIPPET(m.try_lock_until(std::chrono::steady_clock::now() + 1s));
}
