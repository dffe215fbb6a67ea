#pragma once
/// \file
/// `PersistentNode`: Curator's node that stays on the server while the object lives, through lost
/// connections, session expiries and deletions by others (Curator 5.x's `PersistentNode`, which generalised
/// `PersistentEphemeralNode`: CURATOR-97, -154, -287, -297, -483). docs/nodes.md has the guarantees.

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/framework/detail/access.hpp>
#include <zkr/framework/detail/async.hpp>
#include <zkr/recipes/detail/timeout.hpp>

namespace zkr {

class PersistentTtlNode;

/// Curator's `PersistentNodeListener`: runs with the node's path each time the node is created (the first
/// create and every re-creation; not when an existing node is adopted).
using PersistentNodeListener = std::function<void(const std::string& path)>;

/// A node kept on the server: created at `start()` in the given mode, and made again whenever it goes away
/// while the object is started: after a session expiry (an ephemeral node goes with its session), when
/// someone else deletes it (an exists watch on the actual path), or when a create failed for a connection
/// reason (again once connected). Each create runs under the client's retry policy.
///
/// - **Name.** The first create uses `base_path` in the given mode (with protection: `_c_<uuid>-` before the
///   last segment; sequential modes: a 10-digit suffix). Every re-creation makes the same name again (the
///   actual path, in the mode without "sequential"), as Curator does since CURATOR-483.
/// - **Data.** `set_data` changes the bytes of the node now and of every later re-creation; an existing node
///   found by a create (a non-sequential path someone else made, or our own node after a reconnect) is
///   adopted and given our bytes (CURATOR-154).
/// - **Parents** are made as containers (the client's `use_container_parents` decides) unless
///   `use_parent_creation` is false: then a missing parent is waited for (an exists watch on it), never made.
/// - **Close** deletes the node (a guaranteed delete, no-node ignored), also one adopted from someone else;
///   a create still in flight is stopped, and a node it makes after all is deleted when its reply comes
///   (CURATOR-297). An unprotected sequential node whose create reply was lost cannot be found again (as in
///   Curator); protected ones are found by their id and deleted.
///
/// Beyond Curator 5.4: `set_data` works before the first create (the first create writes it); a
/// reconnection reads the node back (one `exists`) instead of creating it again and rewriting its data; a
/// data change that failed while disconnected is written at the next reconnection; failures the retry policy
/// gave up on are tried again once connected (Curator loops at once), and a permanent failure (no_auth, an
/// invalid ACL, a TTL the server refuses) stops the node with that error (`failure()`).
///
/// Thread-safety: every member is thread-safe. Listeners run on the client's completion executor (its I/O
/// thread by default: do not block there) or the executor given. Lifetime: the destructor closes the node
/// without waiting for the delete (which goes on in the background).
class PersistentNode {
 public:
  enum class State { latent, started, closed };

  /// `mode`: any `CreateMode` (the TTL modes take the other constructor). `base_path` is validated by
  /// Curator's rules (`Error` with `client_errc::invalid_path`; a sequential mode may end it in `/`).
  /// `init_data` becomes the node's bytes.
  PersistentNode(CuratorFramework& client, CreateMode mode, bool use_protection, std::string base_path,
                 std::string init_data, bool use_parent_creation = true);
  /// With a time to live, for `persistent_with_ttl` and `persistent_sequential_with_ttl`. Errors (`Error`):
  /// `client_errc::invalid_argument` for a TTL mode with a TTL outside 1 ms .. 2^40-1 ms (the server's
  /// range), or a positive TTL with any other mode.
  PersistentNode(CuratorFramework& client, CreateMode mode, bool use_protection, std::string base_path,
                 std::string init_data, std::chrono::milliseconds ttl, bool use_parent_creation = true);
  ~PersistentNode();
  PersistentNode(const PersistentNode&) = delete;
  PersistentNode& operator=(const PersistentNode&) = delete;

  /// Starts keeping the node (once; in the background: it never blocks and works before the client is
  /// connected). Errors: `client_errc::invalid_argument` when already started, `client_errc::closed` when
  /// closed.
  void start();
  void start(error_code& ec);

  /// Waits at most `timeout` for the first create (or adoption) to complete; true once it has. False on
  /// timeout, when not started, closed, or stopped by a permanent failure (`failure()` says which).
  [[nodiscard]] bool wait_for_initial_create(std::chrono::milliseconds timeout);
  template <class Rep, class Period>
  [[nodiscard]] bool wait_for_initial_create(std::chrono::duration<Rep, Period> timeout) {
    return wait_for_initial_create(detail::to_timeout(timeout));
  }
  /// `wait_for_initial_create` without a limit, asynchronously (bound it with Asio's `cancel_after`); at once
  /// (posted) when already created. Handler: `void(error_code)`. Errors: `client_errc::not_started`,
  /// `client_errc::closed`, or the permanent failure. Executor: the handler's, else the client's completion
  /// executor. Cancellation: terminal, partial, total: completes at once with `operation_aborted` and
  /// withdraws the wait; the node is untouched. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_wait_for_initial_create(Token&& token = {}) {
    auto id = std::make_shared<std::uint64_t>(0);
    return detail::async_run<>(
        core(), {"PersistentNode::wait_for_initial_create", base_path(), detail::Cancellation::read},
        std::forward<Token>(token), [i = impl_, id](auto cb) mutable { *id = wait_start(i, std::move(cb)); },
        detail::NoAbandon{}, [i = impl_, id] { forget_waiter(i, *id); });
  }

  /// Stops keeping the node and deletes it (see the class comment); idempotent, and a node never started is
  /// simply closed. Blocks until the delete is done or handed to the client's guaranteed-delete machinery
  /// (a connection failure); on the client's I/O thread it does not wait. Errors: the delete's (not
  /// no-node, not a connection failure).
  void close();
  void close(error_code& ec);
  /// `close`, asynchronously. Handler: `void(error_code)`. Cancellation: terminal, partial, total: completes
  /// at once with `operation_aborted`; the close goes on. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_close(Token&& token = {}) {
    return detail::async_run<>(core(), {"PersistentNode::close", base_path(), detail::Cancellation::read},
                               std::forward<Token>(token),
                               [i = impl_](auto cb) mutable { close_start(i, std::move(cb)); });
  }

  /// Replaces the node's bytes, on the node now and for every re-creation. Completes once the node holds
  /// them (written, or created or adopted with them); before `start()`, at once (the first create writes
  /// them). Errors: `client_errc::closed`; the write's error when the node is there but the write failed, or
  /// the error that keeps the node from being made now (a connection failure): the bytes are kept either way
  /// and written when the node is next created, adopted or read back after a reconnection; the permanent
  /// failure.
  void set_data(std::string data);
  void set_data(std::string data, error_code& ec);
  /// `set_data`, asynchronously. Handler: `void(error_code)`. Cancellation: terminal: completes at once with
  /// `operation_aborted`; the bytes are kept and a write already sent may still apply. Thread-safety: any
  /// thread.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_set_data(std::string data, Token&& token = {}) {
    return detail::async_run<>(core(), {"PersistentNode::set_data", base_path(), detail::Cancellation::write},
                               std::forward<Token>(token), [i = impl_, d = std::move(data)](auto cb) mutable {
                                 set_data_start(i, std::move(d), std::move(cb));
                               });
  }
  /// The bytes the node has or will have (the last `set_data`, else the initial data).
  std::string get_data() const;

  /// The node's path once created (with its protection prefix and sequence suffix), "" before.
  std::string actual_path() const;
  const std::string& base_path() const noexcept;
  State state() const;
  /// The error that stopped the node for good (no_auth, invalid_acl, a TTL the server refuses, ...), none
  /// while it runs.
  error_code failure() const;

  /// Curator's `getListenable().addListener(listener[, executor])`: returns an id for `remove_listener`.
  std::uint64_t add_listener(PersistentNodeListener listener);
  std::uint64_t add_listener(PersistentNodeListener listener, boost::asio::any_io_executor executor);
  /// Removes a listener; its calls still pending are dropped.
  void remove_listener(std::uint64_t id);

  struct Impl;
  friend struct detail::access;
  friend class PersistentTtlNode;

 private:
  /// Over any `detail::Core` (the unit tests drive it over a fake core, through `detail::access`).
  PersistentNode(std::shared_ptr<detail::Core> core, CreateMode mode, bool use_protection,
                 std::string base_path, std::string init_data, std::chrono::milliseconds ttl,
                 bool use_parent_creation);
  explicit PersistentNode(std::shared_ptr<Impl> impl);
  std::shared_ptr<detail::Core> core() const;
  static std::uint64_t wait_start(const std::shared_ptr<Impl>& impl, detail::VoidCallback cb);
  static void forget_waiter(const std::shared_ptr<Impl>& impl, std::uint64_t id);
  static void close_start(const std::shared_ptr<Impl>& impl, detail::VoidCallback cb);
  static void set_data_start(const std::shared_ptr<Impl>& impl, std::string data, detail::VoidCallback cb);
  std::shared_ptr<Impl> impl_;
};

}  // namespace zkr
