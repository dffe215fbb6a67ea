#include "snippet.hpp"
void discard_try_lock_for(zkr::InterProcessReadWriteLock& rw) {
  ZKR_SNIPPET(rw.write_lock().try_lock_for(1.5s));
}
