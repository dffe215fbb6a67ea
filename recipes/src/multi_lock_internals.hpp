#pragma once
// What the multi-lock's source files share (private to recipes/src). The multi-lock is split by concern:
//
//   inter_process_multi_lock.cpp  the public class: its constructors and twins, forwarding to its form
//   multi_lock_paths_form.cpp     the paths form: the per-thread reentrant holds over the batched acquire
//   multi_acquire.cpp             the paths form's shared state and batched acquire (MultiAcquire: one
//                                 transaction, pipelined listings, then the engine for a lock that is taken)
//   multi_lock_locks_form.cpp     the locks form: any InterProcessLocks one after the other, blocking and
//                                 asynchronous (the sequencer, LocksRun)
//   multi_lease.cpp               MultiLease, and the deletes of several nodes in one transaction

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include <zkr/recipes/detail/multi_acquire.hpp>
#include <zkr/recipes/inter_process_multi_lock.hpp>

namespace zkr::detail {

/// The paths form's state, shared by the object and its asynchronous acquires (which may outlive it): one
/// mutex engine per path, in list order.
struct MultiShared {
  std::shared_ptr<Core> core;
  std::vector<std::shared_ptr<detail::LockInternals>> engines;
  std::mutex mu;  // guards node_data
  std::optional<std::string> node_data;
};

/// One form of `InterProcessMultiLock`: what the public class forwards to. Thread-safe, as the class.
class MultiLockForm {
 public:
  virtual ~MultiLockForm() = default;
  virtual std::size_t size() const noexcept = 0;
  /// The blocking acquire: waits at most `timeout` in all (none: no bound); false when not acquired.
  virtual bool acquire(std::optional<std::chrono::milliseconds> timeout, error_code& ec) = 0;
  virtual void release(error_code& ec) = 0;
  virtual bool is_acquired_in_this_process() const = 0;
  /// `InterProcessLock::hold_lost`: a hold of the calling thread (paths) or of a lock (locks) was lost.
  virtual bool hold_lost() const = 0;
  /// The client core of the asynchronous acquire; null when a lock has no asynchronous acquire.
  virtual std::shared_ptr<Core> grant_core() const = 0;
  /// The asynchronous acquire (on the I/O thread of `grant_core()`). It keeps what it needs alive itself.
  virtual void start_acquire(std::optional<std::chrono::steady_clock::time_point> deadline,
                             std::shared_ptr<CancelState> cancel,
                             unique_function<void(error_code, MultiLease)> done) = 0;

  // The calling thread's hold: the paths form only (the locks form has no holds of its own).
  virtual bool owned_by_current_thread() const { return false; }
  virtual std::vector<std::int64_t> fencing_tokens() const { return {}; }
  virtual std::vector<std::string> lock_paths() const { return {}; }
  virtual void set_node_data(std::optional<std::string>) {}
};

/// The paths form over `core` (validated: `Error` with `client_errc::invalid_argument` for an empty list or a
/// duplicate path).
std::shared_ptr<MultiLockForm> make_paths_form(std::shared_ptr<Core> core,
                                               const std::vector<std::string>& paths);
/// The locks form over `locks`, keeping `owned` alive (the locks given as shared_ptrs, else empty).
std::shared_ptr<MultiLockForm> make_locks_form(std::vector<InterProcessLock*> locks,
                                               std::vector<std::shared_ptr<InterProcessLock>> owned);

}  // namespace zkr::detail
