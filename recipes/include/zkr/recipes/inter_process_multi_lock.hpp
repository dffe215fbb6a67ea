#pragma once
/// \file
/// `InterProcessMultiLock`: several locks taken as one, all or none, in list order (Curator's
/// `InterProcessMultiLock`), with a batched acquire for the mutexes of the path-based form and an
/// asynchronous twin returning a `MultiLease`. See docs/multi-lock.md for the algorithm and why it cannot
/// deadlock.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zkr/recipes/detail/lock_internals.hpp>
#include <zkr/recipes/inter_process_lock.hpp>
#include <zkr/recipes/multi_lease.hpp>

namespace zkr {

namespace detail {
class MultiLockForm;
}

/// Several locks held as one: acquired in list order, all or none (Curator's `InterProcessMultiLock`).
///
/// Two forms:
/// - **Paths** (`InterProcessMultiLock(client, paths)`): one mutex per path, wire-compatible with Curator's
///   `InterProcessMutex` (`<path>/_c_<uuid>-lock-<seq>`). When the locks are free, acquiring N of them costs
///   one round trip in all instead of 2N: one transaction queues on every lock, and the listings that check
///   them are sent right behind it. Where a lock is taken, the queue positions in the *later* locks are given
///   back before waiting for it, so the lock order is respected exactly as Curator's one-at-a-time acquire
///   does: processes using this class and Java Curator's `InterProcessMultiLock` on the same list cannot
///   deadlock each other. Blocking holds belong to the calling thread and are reentrant (as Curator's
///   mutexes); asynchronous acquires return a `MultiLease` owned by whoever holds it. Duplicate paths are
///   refused (`client_errc::invalid_argument`): Curator would deadlock on them.
/// - **Locks** (`InterProcessMultiLock(locks)`): any `InterProcessLock`s (mutexes, read or write locks,
///   semaphore mutexes, other multi-locks), acquired one by one through their blocking API; each lock's own
///   ownership and reentrancy rules apply. The asynchronous twin takes each lock's own asynchronous acquire.
///
/// Semantics (Curator's, with three deliberate differences):
/// - `acquire` takes the locks in list order; on failure (timeout or error) the ones taken are released in
///   reverse order and nothing stays queued; the timed forms return false on timeout.
/// - Difference 1: the timeout is one budget for the whole acquire (Curator gives each lock the full timeout,
///   so its worst case is N times the timeout).
/// - Difference 2: the first error stops the acquire (Curator goes on trying the remaining locks and then
/// rolls
///   them back, keeping only the last exception). An exception thrown by a lock of the locks form is
///   rethrown after the roll-back.
/// - Difference 3: a lock whose hold was lost (session expiry) while a later lock was awaited is taken again,
///   with every later one (Curator returns it); see docs/multi-lock.md.
/// - `release` releases every lock in reverse order, even when one fails; the error is the first failure.
/// - `is_acquired_in_this_process` is true only when every lock is held.
///
/// Thread-safety: all members are thread-safe. Lifetime: with the paths form the object may be destroyed
/// while asynchronous acquires are pending (they complete normally); with the locks form the locks must
/// outlive it (unless given as `shared_ptr`s).
class InterProcessMultiLock : public InterProcessLock {
 public:
  /// One mutex per path (validated: `Error` with `client_errc::invalid_path`; `client_errc::invalid_argument`
  /// for an empty list or a duplicate path).
  InterProcessMultiLock(CuratorFramework& client, std::vector<std::string> paths);
  /// Any locks, shared. `client_errc::invalid_argument` for an empty list or a null lock.
  explicit InterProcessMultiLock(std::vector<std::shared_ptr<InterProcessLock>> locks);
  /// Any locks, by reference (they must outlive this object).
  explicit InterProcessMultiLock(std::vector<std::reference_wrapper<InterProcessLock>> locks);
  ~InterProcessMultiLock() override;
  InterProcessMultiLock(const InterProcessMultiLock&) = delete;
  InterProcessMultiLock& operator=(const InterProcessMultiLock&) = delete;

  /// Blocks until every lock is held. Errors: the locks' (closed, session lost beyond the retry policy...).
  void acquire() override;
  void acquire(error_code& ec) override;
  /// Waits at most `timeout` in all; false on timeout, with nothing held or queued. As for the mutex, the
  /// timeout only stops waits: free locks are taken even with a zero timeout.
  /// Any duration, and `try_acquire_for`, `try_lock_for`, `try_lock_until`: see `InterProcessLock`.
  using InterProcessLock::acquire;
  /// Releases every lock, in reverse order. Paths form: one level of the calling thread's hold
  /// (`client_errc::not_owner` when it holds none). Locks form: each lock's `release` (Curator releases all
  /// of them, held or not).
  void release() override;
  void release(error_code& ec) override;
  /// Every lock is held in this process.
  bool is_acquired_in_this_process() const override;

  /// Paths form: the calling thread holds it.
  bool is_owned_by_current_thread() const;
  /// Paths form: the calling thread's fencing tokens, one per lock in list order (empty when it holds none).
  std::vector<std::int64_t> fencing_tokens() const;
  /// Paths form: the calling thread's lock nodes, in list order (empty when it holds none).
  std::vector<std::string> lock_paths() const;
  /// Paths form: the lock paths; locks form: empty.
  const std::vector<std::string>& paths() const noexcept { return paths_; }
  /// The number of locks.
  std::size_t size() const noexcept;
  /// Paths form: data of the lock nodes created from now on (nullopt: the client's default data).
  void set_node_data(std::optional<std::string> data);

  /// Acquires asynchronously, `void(error_code, MultiLease)`: one grant per node, in list order. The grants
  /// are independent of the blocking holds (owned by whoever holds the MultiLease, not by a thread).
  /// Per-operation cancellation (any type) deletes every node of the operation and gives back the locks
  /// already taken before completing with `operation_aborted`.
  /// Paths form: the batched algorithm. Locks form: each lock's own asynchronous acquire in list order (a
  /// mutex, read or write lock: `async_acquire`'s one Lease; a semaphore mutex: its Lease; a multi-lock: its
  /// leases); on a failure, a timeout or a cancellation, the grants taken are released in reverse order
  /// before it completes. A grant lost while a later lock is awaited (session expiry) is given back with the
  /// later ones and taken again (Curator would return it). The locks may belong to different clients; locks
  /// given by reference must outlive the operation.
  /// Handler: `void(error_code, MultiLease)`. Executor: the handler's, else the client's completion executor.
  /// Cancellation: terminal and partial, as above (nothing held or queued when it completes). Errors: as
  /// `acquire`; a lock class of your own (not of this library) in the list: `client_errc::invalid_argument`,
  /// through the handler. Thread-safety: any thread.
  template <
      boost::asio::completion_token_for<void(error_code, MultiLease)> Token = default_completion_token_t>
  auto async_acquire(Token&& token = {}) {
    return detail::async_run<MultiLease>(async_core(), acquire_info(), std::forward<Token>(token),
                                         [f = form_](auto done, auto cancel) mutable {
                                           start_acquire(f, std::nullopt, std::move(cancel), std::move(done));
                                         });
  }
  /// As `async_acquire`, giving up after `timeout` in all (any duration, as `try_acquire_for`), counted from
  /// when the operation starts: completes with no error and an empty MultiLease, with nothing held or queued.
  template <
      class Rep, class Period,
      boost::asio::completion_token_for<void(error_code, MultiLease)> Token = default_completion_token_t>
  auto async_try_acquire_for(std::chrono::duration<Rep, Period> timeout, Token&& token = {}) {
    return detail::async_run<MultiLease>(
        async_core(), acquire_info(), std::forward<Token>(token),
        [f = form_, timeout = detail::to_timeout(timeout)](auto done, auto cancel) mutable {
          start_acquire(f, detail::deadline_after(timeout), std::move(cancel), std::move(done));
        });
  }

 protected:
  bool timed_acquire(std::chrono::milliseconds timeout) override;
  bool timed_acquire(std::chrono::milliseconds timeout, error_code& ec) override;
  /// As a lock inside another multi-lock's locks form: this multi-lock's `async_acquire`, its leases.
  std::shared_ptr<detail::Core> grant_core() const override;
  bool hold_lost() const override;
  void start_grant(std::optional<std::chrono::steady_clock::time_point> deadline,
                   std::shared_ptr<detail::StopSignal> cancel,
                   detail::unique_function<void(error_code, std::vector<Lease>)> done) override;

 private:
  /// The form's asynchronous acquire (`form` keeps what it needs alive: the acquire may outlive this object).
  static void start_acquire(const std::shared_ptr<detail::MultiLockForm>& form,
                            std::optional<std::chrono::steady_clock::time_point> deadline,
                            std::shared_ptr<detail::CancelState> cancel,
                            detail::unique_function<void(error_code, MultiLease)> done);
  /// The client core of the asynchronous acquire; null when a lock has no asynchronous acquire.
  std::shared_ptr<detail::Core> async_core() const;
  /// The asynchronous acquire's `OpInfo`; refused (`client_errc::invalid_argument`) when a lock of the list
  /// has no asynchronous acquire (a lock class not of this library).
  detail::OpInfo acquire_info() const;
  /// The path named in errors: the first lock path (none for the locks form).
  std::string error_path() const;

  std::vector<std::string> paths_;               // paths form; empty for the locks form
  std::shared_ptr<detail::MultiLockForm> form_;  // the paths form (batched) or the locks form (one by one)
};

}  // namespace zkr
