#pragma once
/// \file
/// `Lease`: proof of a grant (a held lock or semaphore lease), with its fencing token and loss signal.

#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include <zkr/framework/detail/access.hpp>
#include <zkr/framework/detail/async.hpp>
#include <zkr/framework/error.hpp>

namespace zkr {

/// What is known about a grant. A persistent lock node (`LockNodeMode::persistent_sequential`) is not the
/// session's: its grant goes `maybe_lost` (not `lost`) when the session ends or the client closes, and `held`
/// again once a new connection finds the node; `lost` only when the node is gone.
enum class LeaseStatus {
  held,        ///< the node exists and the session is connected
  maybe_lost,  ///< the connection is SUSPENDED, or READ_ONLY (a server cut off from its quorum, which may
               ///< expire the session): the session (and the lock) may already be gone
  lost,        ///< the session expired, the client closed, or the node was deleted: the grant is void
  released,    ///< given back by its holder
};

std::string_view to_string(LeaseStatus s) noexcept;

namespace detail {
class LeaseCore;
}
class MultiLease;

/// A move-only handle to one grant, owned by whoever holds it (not by a thread). The destructor gives the
/// grant back without throwing and without blocking (a guaranteed delete in the background).
///
/// Beyond Curator: `fencing_token()` is the lock node's czxid, taken from the create reply at no extra cost.
/// ZooKeeper's zxids only grow, so a later grant on the same lock always has a larger token: a resource that
/// remembers the largest token it has seen can reject a late writer that lost its lock without knowing.
///
/// Thread-safety: distinct objects are independent; one object must not be used concurrently. The exception:
/// the queries `status()`, `fencing_token()`, `session_id()`, `node_path()` and `node_name()` may run on any
/// threads at once (the client's own threads update the state they read), but not at the same time as a
/// member that empties or replaces the handle (`release`, `async_release`, move-assignment, destruction).
///
/// Asynchronous twins: every error of the operation goes to the handler, never thrown by the initiating call:
/// an empty handle (moved from, or already released through this handle) completes the handler with
/// `client_errc::not_acquired` (posted; with no client to run it on, a handler without an associated executor
/// then runs on the system executor). See docs/async.md.
class Lease {
 public:
  Lease() noexcept;
  Lease(Lease&&) noexcept;
  Lease& operator=(Lease&&) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease();

  /// True when this handle refers to a grant that was not released (it may have been lost).
  bool valid() const noexcept;
  explicit operator bool() const noexcept { return valid(); }

  /// The lock or lease node, without the client's namespace, e.g. "/locks/a/_c_<uuid>-lock-0000000003".
  const std::string& node_path() const noexcept;
  /// The last segment of `node_path()` (Curator's `Lease.getNodeName()`).
  std::string node_name() const;
  /// The node's czxid: strictly larger for every later grant of the same lock.
  std::int64_t fencing_token() const noexcept;
  /// The session that owns the node (a persistent lock node: the session that created it).
  std::int64_t session_id() const noexcept;

  /// The node's data, read from the server (Curator's `Lease.getData()`): what `set_node_data` (or the
  /// client's default data, the local address) put there when the node was created. Errors:
  /// `client_errc::not_acquired` for an empty or released handle, `zk_errc::no_node` when the node is gone
  /// (the grant was lost), and the client's errors under its retry policy.
  std::string data() const;
  std::string data(error_code& ec) const;
  /// `data`, asynchronously. Handler: `void(error_code, std::string)`. Executor: the handler's, else the
  /// client's completion executor. Cancellation: terminal, partial, total: completes at once with
  /// `operation_aborted`. Errors: as `data` (`client_errc::not_acquired` for an empty handle, through the
  /// handler). Thread-safety: as the class.
  template <
      boost::asio::completion_token_for<void(error_code, std::string)> Token = default_completion_token_t>
  auto async_data(Token&& token = {}) const {
    return detail::async_run<std::string>(async_core(), info("get_data", detail::Cancellation::read),
                                          std::forward<Token>(token),
                                          [c = core_](auto cb, detail::StopPtr stop) mutable {
                                            data_start(c, std::move(cb), std::move(stop));
                                          });
  }

  /// The loss signal, as a query.
  LeaseStatus status() const noexcept;
  /// The loss signal, as a callback: runs on the client's executor on every change of `status()` (maybe_lost
  /// on SUSPENDED and READ_ONLY, held again on RECONNECTED to the same session, lost on expiry or when the
  /// node is deleted by someone else; for a persistent lock node see `LeaseStatus`). The node is watched from
  /// the first call on (one extra request).
  void on_status_change(std::function<void(LeaseStatus)> listener);

  /// Completes once the grant is lost (or released). Handler: `void(error_code, LeaseStatus)`. Executor: the
  /// handler's, else the client's completion executor. Cancellation: terminal, partial, total (e.g. racing a
  /// timer with `||`): completes at once with `operation_aborted` and withdraws. Errors:
  /// `client_errc::not_acquired` for an empty handle. Thread-safety: as the class.
  template <
      boost::asio::completion_token_for<void(error_code, LeaseStatus)> Token = default_completion_token_t>
  auto async_wait_lost(Token&& token = {}) {
    auto id = std::make_shared<std::uint64_t>(0);
    return detail::async_run<LeaseStatus>(
        async_core(), info("wait_lost", detail::Cancellation::read), std::forward<Token>(token),
        [c = core_, id](auto cb) mutable { *id = wait_lost_start(c, std::move(cb)); }, detail::NoAbandon{},
        [c = core_, id] { forget_lost_waiter(c, *id); });
  }

  /// Beyond Curator: a transaction that commits only while this grant holds. `ops` run as one `multi`
  /// (through the client that holds the grant, paths without its namespace) behind a `check` that this
  /// grant's node still exists, and ZooKeeper applies the check and the writes atomically. So a holder whose
  /// grant was lost without it knowing (a pause longer than its session, an administrator deleting its node)
  /// cannot write: the transaction fails whole with `client_errc::lock_lost` and nothing of `ops` is applied.
  /// This is the fencing token's guarantee for state kept in ZooKeeper itself, with nothing for the state to
  /// remember. Returns the results of `ops`, in order (the check's own result is not among them); on another
  /// failure the error is the first failing operation's, as `CuratorFramework::multi`, whose retry policy and
  /// restrictions apply. With no `ops` it only asks the server whether the grant still holds.
  /// Errors: `client_errc::not_acquired` for an empty or released handle, `client_errc::lock_lost` at once
  /// when the grant is already known lost (nothing is sent in either case).
  std::vector<OpResult> multi_while_held(std::vector<Op> ops) const;
  std::vector<OpResult> multi_while_held(std::vector<Op> ops, error_code& ec) const;
  /// `multi_while_held`, asynchronously. Handler: `void(error_code, std::vector<OpResult>)`. Executor: the
  /// handler's, else the client's completion executor. Cancellation: terminal only: completes at once with
  /// `operation_aborted`; a try already sent may still commit. Errors: as `multi_while_held`
  /// (`client_errc::not_acquired` for an empty handle, through the handler). Thread-safety: as the class.
  template <boost::asio::completion_token_for<void(error_code, std::vector<OpResult>)> Token =
                default_completion_token_t>
  auto async_multi_while_held(std::vector<Op> ops, Token&& token = {}) const {
    return detail::async_run<std::vector<OpResult>>(
        async_core(), info("multi_while_held", detail::Cancellation::write), std::forward<Token>(token),
        [c = core_, ops = std::move(ops)](auto cb, detail::StopPtr stop) mutable {
          multi_while_held_start({c}, std::move(ops), std::move(cb), std::move(stop));
        });
  }

  /// Gives the grant back: deletes the node (guaranteed delete: a retryable failure leaves it to the
  /// background). A node already gone (session expired) is not an error. Errors: `client_errc::not_acquired`
  /// for an empty or already released handle. On the client's I/O thread (a listener, a completion handler),
  /// where waiting would block the thread that completes it, it starts the delete and returns without
  /// waiting.
  void release();
  void release(error_code& ec);
  /// `release`, asynchronously. Handler: `void(error_code)`. Executor: the handler's, else the client's
  /// completion executor. Cancellation: terminal only: completes at once with `operation_aborted`; the delete
  /// goes on (guaranteed delete). Errors: as `release` (`client_errc::not_acquired` for an empty handle,
  /// through the handler). Thread-safety: as the class. The operation owns the grant from the call on (this
  /// handle is empty after it): an operation that never starts (the default deferred operation never
  /// launched, an awaitable never awaited) gives the grant back when it is destroyed, as the destructor does.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_release(Token&& token = {}) {
    auto core = async_core();
    auto op = info("release", detail::Cancellation::write);
    auto owned = std::make_shared<Lease>(std::move(*this));
    // As the blocking release, the delete leaves from the initiating thread when it can.
    auto here = [owned](detail::VoidCallback& cb) {
      if (!release_here(owned->core_, cb)) return false;
      owned->core_ = nullptr;  // released: nothing left for the destructor
      return true;
    };
    return detail::async_run<>(
        std::move(core), std::move(op), std::forward<Token>(token),
        [owned](auto cb) mutable { release_start(std::exchange(owned->core_, nullptr), std::move(cb)); },
        detail::NoAbandon{}, detail::NoCancelHook{}, std::move(here));
  }

  friend struct detail::access;

 private:
  /// A grant's handle (the lock engine, `detail::make_lease`, through `detail::access::make<Lease>`).
  explicit Lease(std::shared_ptr<detail::LeaseCore> core) noexcept;
  /// The shared state, for the recipes (`detail::access::state`).
  const std::shared_ptr<detail::LeaseCore>& state() const noexcept { return core_; }
  std::shared_ptr<detail::Core> core_of() const;
  /// The client's core, null for an empty handle (whose asynchronous operations are refused).
  std::shared_ptr<detail::Core> async_core() const noexcept;
  /// An asynchronous operation on this grant's node; refused (`client_errc::not_acquired`) on an empty
  /// handle.
  detail::OpInfo info(std::string_view operation, detail::Cancellation cancellation) const;
  static void release_start(const std::shared_ptr<detail::LeaseCore>& c, detail::VoidCallback cb);
  /// `LeaseCore::release_from_caller`: the release's delete sent from this thread, when it can be.
  static bool release_here(const std::shared_ptr<detail::LeaseCore>& c, detail::VoidCallback& cb);
  /// Registers `cb` (or calls it at once: returns 0); returns its id for `forget_lost_waiter`.
  static std::uint64_t wait_lost_start(const std::shared_ptr<detail::LeaseCore>& c,
                                       detail::unique_function<void(error_code, LeaseStatus)> cb);
  static void forget_lost_waiter(const std::shared_ptr<detail::LeaseCore>& c, std::uint64_t id);
  static void data_start(const std::shared_ptr<detail::LeaseCore>& c,
                         detail::unique_function<void(error_code, std::string)> cb,
                         detail::StopPtr stop = nullptr);
  std::shared_ptr<detail::LeaseCore> core_;

  friend class MultiLease;
  /// For `multi_while_held` here and in `MultiLease` (I/O thread): the transaction of a check per grant, then
  /// `ops`, through the first grant's client.
  static void multi_while_held_start(std::vector<std::shared_ptr<detail::LeaseCore>> grants,
                                     std::vector<Op> ops,
                                     detail::unique_function<void(error_code, std::vector<OpResult>)> cb,
                                     detail::StopPtr stop = nullptr);
};

}  // namespace zkr
