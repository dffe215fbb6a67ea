#pragma once
/// \file
/// `InterProcessMutex`: Curator's reentrant, fair, cross-process mutex, wire-compatible with Curator 5.x
/// (nodes `<path>/_c_<uuid>-lock-<seq>`), with blocking twins for ported Java code and asynchronous twins
/// that return a `Lease`.

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>
#include <zkr/framework/detail/access.hpp>
#include <zkr/recipes/detail/lock_internals.hpp>
#include <zkr/recipes/inter_process_lock.hpp>
#include <zkr/recipes/locker.hpp>  // Locker was declared here before 0.2: code that includes only this header keeps it

namespace zkr {

/// What an asynchronous acquire tells as it goes (`InterProcessMutex::async_acquire(AcquireEvents, token)`),
/// on the client's completion executor. Either may be empty.
struct AcquireEvents {
  /// Our lock node exists: its path, without the client's namespace.
  std::function<void(const std::string& node_path)> on_queued;
  /// The attempt waits, its watch set on the node ahead: queued and waiting.
  std::function<void(const std::string& node_path)> on_waiting;
};

/// A reentrant mutex shared across processes.
///
/// Blocking API (Curator's): holds belong to the calling *thread*, counted for reentrancy; another thread
/// using the same object queues as a separate contender; `release()` must come from the owning thread.
/// Asynchronous API: `async_acquire` grants a `Lease` owned by whoever holds it (any thread may release it);
/// a lease does not take part in the per-thread reentrancy.
///
/// Models `Lockable` and `TimedLockable` (`lock`, `try_lock`, `try_lock_for`, `try_lock_until`, `unlock`), so
/// `std::unique_lock` and `std::scoped_lock` work.
///
/// Thread-safety: all members are thread-safe. Lifetime: the object may be destroyed while asynchronous
/// acquires are pending; they complete normally (the engine is shared).
class InterProcessMutex : public InterProcessLock {
 public:
  static constexpr std::string_view lock_name = "lock-";

  /// `path` is validated by Curator's rules (`Error` with `client_errc::invalid_path`). The driver is
  /// `PrewatchLockDriver`: Curator's policy (same nodes, same order, same grants, so it shares a path with
  /// Curator's mutex) plus the pre-watch, which is not Curator's request pattern: a waiter with two or more
  /// nodes ahead also watches the node ahead of its predecessor, so its turn needs no listing (one more read
  /// and one more watch event per hand-off). `StandardLockDriver` is Curator's exact pattern.
  InterProcessMutex(CuratorFramework& client, std::string path);
  /// With a custom driver (Curator's constructor taking a `LockInternalsDriver`); null: the default above.
  /// `std::make_shared<StandardLockDriver>()` gives Curator's exact request pattern.
  InterProcessMutex(CuratorFramework& client, std::string path, std::shared_ptr<const LockDriver> driver);
  virtual ~InterProcessMutex();

  InterProcessMutex(const InterProcessMutex&) = delete;
  InterProcessMutex& operator=(const InterProcessMutex&) = delete;

  /// Blocks until held by the calling thread (reentrant). Errors: the client's (closed, connection timeout,
  /// session lost beyond the retry policy...).
  void acquire() override;
  void acquire(error_code& ec) override;
  /// Waits at most `timeout`; false on timeout, leaving no node behind (Curator's `acquire(time, unit)`). Any
  /// duration, and `try_acquire_for`, `try_lock_for`, `try_lock_until`: see `InterProcessLock`.
  using InterProcessLock::acquire;

  /// Releases one level of the calling thread's hold. Errors: `client_errc::not_owner` when the calling
  /// thread does not hold it (Curator's IllegalMonitorStateException). The hold is forgotten even when the
  /// delete fails (the guaranteed delete keeps trying in the background), as Curator does.
  void release() override;
  void release(error_code& ec) override;

  /// Some thread of this object holds the lock (Curator's `isAcquiredInThisProcess`).
  bool is_acquired_in_this_process() const override;
  bool is_owned_by_current_thread() const;
  /// Sorted full paths of every contender's node (the read and write locks list only their own kind).
  std::vector<std::string> participant_nodes() const;
  /// `participant_nodes`, asynchronously.
  /// Handler: `void(error_code, std::vector<std::string>)`. Executor: the handler's, else the client's
  /// completion executor. Cancellation: terminal, partial, total: completes at once with `operation_aborted`.
  /// Errors: as `participant_nodes`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code, std::vector<std::string>)> Token =
                default_completion_token_t>
  auto async_participant_nodes(Token&& token = {}) const {
    return detail::async_run<std::vector<std::string>>(
        engine_->core(), {"participant_nodes", path(), detail::Cancellation::read},
        std::forward<Token>(token), [e = engine_, kind = participant_kind()](auto cb) mutable {
          participants_start(e, kind, std::move(cb));
        });
  }
  /// The calling thread's lock node ("" when it holds none).
  std::string lock_path() const;
  /// The calling thread's fencing token (0 when it holds none).
  std::int64_t fencing_token() const;
  /// The loss signal of the calling thread's hold (`LeaseStatus::released` when none).
  LeaseStatus lease_status() const;
  /// The calling thread's lease, for `on_status_change` (nullptr when none). Valid until its release.
  const Lease* lease() const;

  /// Data of the lock nodes created from now on (nullopt: the client's default data).
  void set_node_data(std::optional<std::string> data);

  /// Curator's `makeRevocable`: the next blocking acquires (of any thread) make revocable holds. Their nodes
  /// are created with empty data (instead of `set_node_data`'s), and once a hold is granted its node is
  /// watched: when someone calls `Revoker::attempt_revoke` on it, `listener(*this)` runs on the client's
  /// executor (the I/O thread by default: do not block there; holds belong to the threads that acquired
  /// them, so a `release()` there fails with `client_errc::not_owner`). Revocation is cooperative: the
  /// listener typically tells the owning thread to release. As in Curator, revocability is cleared by every
  /// release that frees a hold, so call this again before the next acquire. Asynchronous acquires
  /// (`async_acquire`) are never revocable. The listener is not called after this object is destroyed (a
  /// destruction waits for a listener call in progress). Thread-safe.
  void make_revocable(std::function<void(InterProcessMutex&)> listener);

  /// Acquires asynchronously; the Lease is independent of the calling thread's blocking holds.
  /// Handler: `void(error_code, Lease)`. Executor: the handler's, else the client's completion executor.
  /// Cancellation: terminal and partial: our lock node is deleted before it completes with
  /// `operation_aborted`. Errors: as `acquire`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code, Lease)> Token = default_completion_token_t>
  auto async_acquire(Token&& token = {}) {
    return async_acquire(std::function<void(const std::string&)>(), std::forward<Token>(token));
  }
  /// As `async_acquire`, giving up after `timeout` (any duration, as `try_acquire_for`), counted from when
  /// the operation starts (a deferred one: when launched): completes with no error and an empty Lease on
  /// timeout.
  template <class Rep, class Period,
            boost::asio::completion_token_for<void(error_code, Lease)> Token = default_completion_token_t>
  auto async_try_acquire_for(std::chrono::duration<Rep, Period> timeout, Token&& token = {}) {
    return detail::async_run<Lease>(engine_->core(), {"acquire", path(), detail::Cancellation::cleanup},
                                    std::forward<Token>(token),
                                    [e = engine_, data = node_data(), timeout = detail::to_timeout(timeout)](
                                        auto done, auto cancel) mutable {
                                      detail::AcquireOptions o;
                                      o.node_data = std::move(data);
                                      o.deadline = detail::deadline_after(timeout);
                                      e->attempt_lock(std::move(o), std::move(cancel), std::move(done));
                                    });
  }
  /// As `async_acquire`, telling `events` (on the client's completion executor) how the attempt goes:
  /// `on_queued` with the path of our lock node as soon as it exists, before the attempt knows whether it
  /// holds (CURATOR-592), again for a node made again after a session loss; `on_waiting` with that path once
  /// the attempt waits with its watch set on the node ahead (that node's deletion will wake it), again each
  /// time it waits anew. A grant at once tells `on_queued` only.
  template <boost::asio::completion_token_for<void(error_code, Lease)> Token = default_completion_token_t>
  auto async_acquire(AcquireEvents events, Token&& token = {}) {
    return detail::async_run<Lease>(
        engine_->core(), {"acquire", path(), detail::Cancellation::cleanup}, std::forward<Token>(token),
        [e = engine_, data = node_data(), events = std::move(events)](auto done, auto cancel) mutable {
          detail::AcquireOptions o;
          o.node_data = std::move(data);
          o.on_queued = std::move(events.on_queued);
          o.on_waiting = std::move(events.on_waiting);
          e->attempt_lock(std::move(o), std::move(cancel), std::move(done));
        });
  }
  /// `async_acquire(AcquireEvents{.on_queued = on_queued}, token)`.
  template <boost::asio::completion_token_for<void(error_code, Lease)> Token = default_completion_token_t>
  auto async_acquire(std::function<void(const std::string& node_path)> on_queued, Token&& token = {}) {
    return async_acquire(AcquireEvents{.on_queued = std::move(on_queued), .on_waiting = {}},
                         std::forward<Token>(token));
  }
  /// Releases a lease from `async_acquire` (same as `lease.async_release(token)`, whose contract applies).
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_release(Lease lease, Token&& token = {}) {
    return lease.async_release(std::forward<Token>(token));
  }

  const std::string& path() const noexcept { return engine_->base_path(); }

  friend struct detail::access;

 protected:
  bool timed_acquire(std::chrono::milliseconds timeout) override;
  bool timed_acquire(std::chrono::milliseconds timeout, error_code& ec) override;
  InterProcessMutex(CuratorFramework& client, std::string path, std::string lock_name,
                    std::shared_ptr<const LockDriver> driver);
  // The hooks below are zkrecipes' own read and write locks' (`InterProcessReadWriteLock`), not an extension
  // point: their types are internal and may change with any release.
  /// Hook for subclasses (the read lock): the options of the next acquire of the calling thread.
  virtual detail::AcquireOptions make_options(
      std::optional<std::chrono::steady_clock::time_point> deadline) const;
  /// Hook for subclasses (the write lock refuses an upgrade): checked on the calling thread before a blocking
  /// acquire that is not a re-entry; an error fails the acquire at once (timed forms too).
  virtual error_code acquire_precondition() const { return {}; }
  /// Hook for subclasses (the read and write locks): `participant_nodes` keeps the nodes whose name contains
  /// this ("": every node).
  virtual std::string participant_kind() const { return {}; }
  std::optional<std::string> node_data() const;
  /// `InterProcessMultiLock`'s asynchronous locks form: this mutex's `async_acquire`.
  std::shared_ptr<detail::Core> grant_core() const override;
  bool hold_lost() const override;
  void start_grant(std::optional<std::chrono::steady_clock::time_point> deadline,
                   std::shared_ptr<detail::StopSignal> cancel,
                   detail::unique_function<void(error_code, std::vector<Lease>)> done) override;

 private:
  /// The lock engine, for the recipes built on this mutex (`detail::access::engine`).
  const std::shared_ptr<detail::LockInternals>& internals() const noexcept { return engine_; }
  struct Hold {
    Lease lease;
    int count = 0;
  };
  /// What a revocation listener reaches; cleared (under `m`) by the destructor.
  struct RevokeTarget {
    std::mutex m;
    InterProcessMutex* self = nullptr;
  };
  bool internal_lock(std::optional<std::chrono::milliseconds> timeout, error_code& ec);
  static void participants_start(const std::shared_ptr<detail::LockInternals>& engine, std::string kind,
                                 detail::unique_function<void(error_code, std::vector<std::string>)> cb);
  std::shared_ptr<detail::LockInternals> engine_;
  mutable std::mutex mu_;
  std::unordered_map<std::thread::id, Hold> holds_;
  std::optional<std::string> node_data_;
  std::function<void(InterProcessMutex&)> revocation_listener_;
  std::shared_ptr<RevokeTarget> revoke_target_;
};

}  // namespace zkr
