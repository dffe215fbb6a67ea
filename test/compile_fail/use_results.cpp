// Must compile: every discard_*.cpp snippet with its result used (the generated include list), and the
// timed acquires called with durations of every kind, none of them ambiguous.
#define ZKR_SNIPPET(expr) \
  { [[maybe_unused]] auto&& used = (expr); }
#include <mutex>

#include "all_discard_snippets.inc"
#include "snippet.hpp"

bool use_durations(zkr::InterProcessMutex& m, zkr::InterProcessSemaphoreV2& s, zkr::error_code& ec) {
  bool ok = m.acquire(std::chrono::milliseconds(1)) && m.acquire(std::chrono::seconds(1));
  ok = ok && m.try_acquire_for(500us) && m.try_lock_for(1.5s) && m.acquire(-1s, ec) &&
       m.try_acquire_for(1min, ec);
  zkr::Lease one = s.acquire(std::chrono::seconds(1));
  std::vector<zkr::Lease> two = s.acquire(2, 250us, ec);
  std::unique_lock<zkr::InterProcessMutex> lk(m, 1s);
  return ok && one.valid() && !two.empty() && lk.owns_lock();
}

// Curator's `InterProcessLock m = writer ? rw.writeLock() : rw.readLock();`: both sides have one type.
zkr::InterProcessMutex& pick_side(zkr::InterProcessReadWriteLock& rw, bool writer) {
  return writer ? rw.write_lock() : rw.read_lock();
}
