#pragma once
/// \file
/// `InterProcessSemaphoreMutex`: Curator's non-reentrant mutex over a one-lease `InterProcessSemaphoreV2`
/// (same layout). Any thread may release it.

#include <mutex>
#include <zkr/recipes/inter_process_lock.hpp>
#include <zkr/recipes/inter_process_semaphore_v2.hpp>

namespace zkr {

/// A non-reentrant cross-process mutex. A second `acquire()` on the same object blocks (or times out): it is
/// a second contender. `release()` may come from any thread. Models `Lockable`/`TimedLockable`.
class InterProcessSemaphoreMutex : public InterProcessLock {
 public:
  InterProcessSemaphoreMutex(CuratorFramework& client, std::string path);

  void acquire() override;
  void acquire(error_code& ec) override;
  /// False on timeout, leaving no node behind. Any duration, and `try_acquire_for`, `try_lock_for`,
  /// `try_lock_until`: see `InterProcessLock`.
  using InterProcessLock::acquire;

  /// Errors: `client_errc::not_acquired` when not held (Curator's IllegalStateException "Not acquired"). On
  /// the client's I/O thread it starts the delete and returns without waiting (`Lease::release`).
  void release() override;
  void release(error_code& ec) override;

  bool is_acquired_in_this_process() const override;
  /// The current hold's fencing token (0 when not held).
  std::int64_t fencing_token() const;
  /// The loss signal of the current hold (`LeaseStatus::released` when none), as `InterProcessMutex`'s.
  LeaseStatus lease_status() const;
  /// The current hold's lease, for `on_status_change`, `session_id` or `multi_while_held` (nullptr when
  /// none). Valid until the hold is released; do not use it concurrently with `release()`.
  const Lease* lease() const;
  std::vector<std::string> participant_nodes() const { return semaphore_.participant_nodes(); }
  /// `participant_nodes`, asynchronously: `InterProcessSemaphoreV2::async_participant_nodes`'s contract.
  template <boost::asio::completion_token_for<void(error_code, std::vector<std::string>)> Token =
                default_completion_token_t>
  auto async_participant_nodes(Token&& token = {}) const {
    return semaphore_.async_participant_nodes(std::forward<Token>(token));
  }

  /// `void(error_code, Lease)`: a lease independent of this object's blocking hold; the semaphore's
  /// `async_acquire`, whose contract applies (cancellation: terminal and partial, the operation's nodes
  /// deleted before it completes with `operation_aborted`).
  template <boost::asio::completion_token_for<void(error_code, Lease)> Token = default_completion_token_t>
  auto async_acquire(Token&& token = {}) {
    return semaphore_.async_acquire(std::forward<Token>(token));
  }
  /// As `async_acquire`, giving up after `timeout` (any duration), counted from when the operation starts: no
  /// error and an empty Lease on timeout.
  template <class Rep, class Period,
            boost::asio::completion_token_for<void(error_code, Lease)> Token = default_completion_token_t>
  auto async_try_acquire_for(std::chrono::duration<Rep, Period> timeout, Token&& token = {}) {
    return semaphore_.async_try_acquire_for(timeout, std::forward<Token>(token));
  }

  InterProcessSemaphoreV2& semaphore() noexcept { return semaphore_; }

 protected:
  bool timed_acquire(std::chrono::milliseconds timeout) override;
  bool timed_acquire(std::chrono::milliseconds timeout, error_code& ec) override;
  /// `InterProcessMultiLock`'s asynchronous locks form: this lock's `async_acquire`.
  std::shared_ptr<detail::Core> grant_core() const override;
  bool hold_lost() const override;
  void start_grant(std::optional<std::chrono::steady_clock::time_point> deadline,
                   std::shared_ptr<detail::StopSignal> cancel,
                   detail::unique_function<void(error_code, std::vector<Lease>)> done) override;

 private:
  InterProcessSemaphoreV2 semaphore_;
  mutable std::mutex mu_;
  Lease lease_;
};

}  // namespace zkr
