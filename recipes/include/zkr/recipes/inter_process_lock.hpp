#pragma once
/// \file
/// `InterProcessLock`: the blocking lock interface shared by the lock recipes (Curator's `InterProcessLock`),
/// so that locks of different kinds can be combined, e.g. by `InterProcessMultiLock`.

#include <chrono>
#include <memory>
#include <optional>
#include <vector>
#include <zkr/framework/error.hpp>
#include <zkr/recipes/detail/timeout.hpp>
#include <zkr/recipes/lease.hpp>

namespace zkr {

/// A lock shared across processes, acquired and released through blocking calls. Implemented by
/// `InterProcessMutex` (and so by the read and write locks of `InterProcessReadWriteLock`),
/// `InterProcessSemaphoreMutex` and `InterProcessMultiLock`.
///
/// Who owns a hold is the implementation's rule: the thread for `InterProcessMutex` (reentrant), the object
/// for `InterProcessSemaphoreMutex` (not reentrant). Every member is thread-safe in the implementations of
/// this library. Errors are as the implementation documents; the throwing forms throw `zkr::Error`.
///
/// Every lock models `Lockable` and `TimedLockable` (`lock`, `try_lock`, `try_lock_for`, `try_lock_until`,
/// `unlock`), so `std::unique_lock` and `std::scoped_lock` work. The timed forms take any
/// `std::chrono::duration`, rounded up to whole milliseconds (a negative one is one try without waiting);
/// their `bool` must be used.
///
/// Every lock of this library can also be acquired asynchronously inside `InterProcessMultiLock`'s locks
/// form, through two protected hooks (`grant_core`, `start_grant`). A lock class of your own that does not
/// override them still works in the locks form's blocking API; its asynchronous acquire refuses it.
class InterProcessLock {
 public:
  virtual ~InterProcessLock() = default;

  /// Blocks until held.
  virtual void acquire() = 0;
  virtual void acquire(error_code& ec) = 0;
  /// Waits at most `timeout`; false on timeout (not an error), leaving nothing queued behind. Implemented by
  /// `timed_acquire` (below).
  [[nodiscard]] bool acquire(std::chrono::milliseconds timeout) { return timed_acquire(timeout); }
  [[nodiscard]] bool acquire(std::chrono::milliseconds timeout, error_code& ec) {
    return timed_acquire(timeout, ec);
  }
  /// `acquire(timeout)` for any duration (`acquire(1s)`, `acquire(500us)`, `acquire(1.5s)`).
  template <class Rep, class Period>
  [[nodiscard]] bool acquire(std::chrono::duration<Rep, Period> timeout) {
    return acquire(detail::to_timeout(timeout));
  }
  template <class Rep, class Period>
  [[nodiscard]] bool acquire(std::chrono::duration<Rep, Period> timeout, error_code& ec) {
    return acquire(detail::to_timeout(timeout), ec);
  }
  /// `acquire(timeout)` under the name of the standard's timed waits.
  template <class Rep, class Period>
  [[nodiscard]] bool try_acquire_for(std::chrono::duration<Rep, Period> timeout) {
    return acquire(detail::to_timeout(timeout));
  }
  template <class Rep, class Period>
  [[nodiscard]] bool try_acquire_for(std::chrono::duration<Rep, Period> timeout, error_code& ec) {
    return acquire(detail::to_timeout(timeout), ec);
  }
  /// Gives one hold back. Giving back the last hold returns once ZooKeeper has deleted the lock node, as
  /// Curator's does: a process told of the release afterwards (by any means) finds the lock free. A delete
  /// that fails for a connection reason reports the error and goes on as a guaranteed delete in the
  /// background. On the client's I/O thread (a listener, a completion handler) it cannot wait: it starts that
  /// delete and returns. docs/benchmark-targets.md (finding 14) measures what the wait costs a
  /// release-and-retake loop.
  virtual void release() = 0;
  virtual void release(error_code& ec) = 0;
  /// Some holder in this process holds it (Curator's `isAcquiredInThisProcess`).
  virtual bool is_acquired_in_this_process() const = 0;

  // Lockable / TimedLockable (errors are thrown).
  void lock() { acquire(); }
  [[nodiscard]] bool try_lock() { return acquire(std::chrono::milliseconds(0)); }
  template <class Rep, class Period>
  [[nodiscard]] bool try_lock_for(std::chrono::duration<Rep, Period> d) {
    return acquire(detail::to_timeout(d));
  }
  template <class Clock, class Duration>
  [[nodiscard]] bool try_lock_until(std::chrono::time_point<Clock, Duration> t) {
    return acquire(detail::to_timeout(t - Clock::now()));
  }
  void unlock() { release(); }

 protected:
  /// The client whose I/O thread runs `start_grant` (null: this lock has no asynchronous acquire).
  virtual std::shared_ptr<detail::Core> grant_core() const { return nullptr; }
  /// Starts one asynchronous acquire on `grant_core()`'s I/O thread, as this lock's `async_acquire` does (a
  /// grant independent of the blocking holds): completes there with the grants taken (one Lease per node;
  /// none on timeout), or an error. `cancel` belongs to this acquire (that I/O thread); its request deletes
  /// what the acquire made before it completes with `operation_aborted`.
  virtual void start_grant(std::optional<std::chrono::steady_clock::time_point> deadline,
                           std::shared_ptr<detail::StopSignal> cancel,
                           detail::unique_function<void(error_code, std::vector<Lease>)> done) {
    (void)deadline;
    (void)cancel;
    done(client_errc::invalid_argument, {});
  }
  /// The calling holder's hold of this lock is known lost (its session expired, or its node was deleted and
  /// that was seen). `InterProcessMultiLock`'s locks form asks it of the locks already taken after each later
  /// grant, so that it never returns with a lock it no longer holds. Default: false (not known).
  virtual bool hold_lost() const { return false; }
  friend struct detail::access;  // the hooks above, for the multi-lock's locks form

  /// What an implementation provides for the timed `acquire`. Not virtual in the public interface because GCC
  /// does not warn about the discarded result of a virtual call, so `[[nodiscard]]` there would go unchecked.
  [[nodiscard]] virtual bool timed_acquire(std::chrono::milliseconds timeout) = 0;
  [[nodiscard]] virtual bool timed_acquire(std::chrono::milliseconds timeout, error_code& ec) = 0;

  InterProcessLock() = default;
  InterProcessLock(const InterProcessLock&) = default;
  InterProcessLock& operator=(const InterProcessLock&) = default;
};

}  // namespace zkr
