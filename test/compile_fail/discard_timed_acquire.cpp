#include "snippet.hpp"
void discard_timed_acquire(zkr::InterProcessMutex& m) {
  ZKR_SNIPPET(m.acquire(std::chrono::milliseconds(10)));
}
