#include "snippet.hpp"
void discard_timed_acquire_ec(zkr::InterProcessLock& l, zkr::error_code& ec) {
  ZKR_SNIPPET(l.acquire(1s, ec));
}
