#pragma once
/// \file
/// The engine room of a client, for the layers above the framework (the lock engine). Not for applications:
/// every member must be called on the client's I/O thread (`io_executor()`), and every callback runs there,
/// never inline from the call that started the operation.
///
/// All paths are *un-namespaced*; the core applies the client's namespace.

#include <spdlog/fwd.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <memory>
#include <string>
#include <vector>
#include <zkr/framework/connection_state.hpp>
#include <zkr/framework/detail/unique_function.hpp>
#include <zkr/framework/error.hpp>
#include <zkr/framework/retry.hpp>
#include <zkr/framework/types.hpp>

namespace zkr::detail {

using VoidCallback = unique_function<void(error_code)>;
using CreateCallback = unique_function<void(error_code, CreateResult)>;
using StatCallback = unique_function<void(error_code, Stat)>;
using DataCallback = unique_function<void(error_code, NodeData)>;
using ChildrenCallback = unique_function<void(error_code, Children)>;
using AclCallback = unique_function<void(error_code, AclResult)>;
using MultiCallback = unique_function<void(error_code, std::vector<OpResult>)>;
using ReadsCallback = unique_function<void(error_code, std::vector<ReadResult>)>;
using PathsCallback = unique_function<void(error_code, std::vector<std::string>)>;
using CountCallback = unique_function<void(error_code, std::int32_t)>;
using IdentitiesCallback = unique_function<void(error_code, std::vector<ClientIdentity>)>;
using WatchCallback = unique_function<void(const WatchedEvent&)>;
using StateCallback = unique_function<void(ConnectionState)>;

/// Identifies a registered one-shot watch (0 = none).
using WatchId = std::uint64_t;

/// A request to stop one operation (I/O thread only). The public async twins make one when their handler has
/// a cancellation slot, and request it when that slot is emitted. The retry loop then sends no further try:
/// it checks before each try, and a request ends its sleep between tries or its wait for the connection at
/// once. A try already sent is not recalled; its result goes to the operation's abandon hook.
class StopSignal {
 public:
  bool requested() const noexcept { return requested_; }
  void request() {
    if (requested_) return;
    requested_ = true;
    if (wake_) {
      auto w = std::move(wake_);
      wake_ = {};
      w();
    }
  }
  /// What ends the operation's current wait early; replaced by each wait, cleared (empty) when it ends.
  void on_request(unique_function<void()> wake) { wake_ = std::move(wake); }

 private:
  bool requested_ = false;
  unique_function<void()> wake_;
};
using StopPtr = std::shared_ptr<StopSignal>;

/// Per-request knobs.
struct RequestOptions {
  /// Run under the client's retry policy (Curator's `RetryLoop.callWithRetry`).
  bool retry = true;
  /// Optional: stops the retry loop (the operation then fails with `operation_aborted`).
  StopPtr stop;
  /// For a conditional write: `set_data` or `remove` with a version (not -1), `create` of a node that is
  /// neither sequential nor protected. A try whose answer is lost (a retryable error) may have been applied,
  /// and sent again it would meet `bad_version` or `node_exists`. Instead, after the policy's pause and once
  /// connected, the retry loop syncs the path and reads its Stat: as before the write (the version expected;
  /// for a create, no node) means not applied, and the write is sent again; anything else ends it with
  /// `client_errc::outcome_unknown`. Each look counts as one of the policy's retries. Ignored elsewhere.
  bool conditional = false;
};

class Core {
 public:
  virtual ~Core() = default;

  virtual boost::asio::io_context::executor_type io_executor() noexcept = 0;
  /// The executor on which handlers without an associated executor complete.
  virtual boost::asio::any_io_executor completion_executor() noexcept = 0;
  virtual bool running_in_io_thread() const noexcept = 0;
  virtual const std::shared_ptr<spdlog::logger>& logger() const noexcept = 0;
  virtual const RetryPolicy& retry_policy() const noexcept = 0;
  virtual const std::string& default_data() const noexcept = 0;
  /// Whether recipes make their missing directories containers (false after `dont_use_container_parents`).
  virtual bool use_container_parents() const noexcept { return true; }

  /// Started and not closed.
  virtual bool is_open() const noexcept = 0;
  /// The current session id (0 when none is established).
  virtual std::int64_t session_id() const noexcept = 0;
  /// Whether the client is connected now.
  virtual bool is_connected() const noexcept = 0;
  /// The negotiated (or configured) session timeout.
  virtual std::chrono::milliseconds session_timeout() const noexcept = 0;

  virtual void create(std::string path, CreateOptions options, CreateCallback cb, RequestOptions ro = {}) = 0;
  /// Makes each of `paths` and its ancestors where they do not exist (Curator's `ZKPaths.mkdirs`, for several
  /// paths at once): one pipelined round of `exists` for all of them, then one pipelined round of creates per
  /// depth, parents first. Containers unless `use_container_parents()` is false, then persistent nodes; the
  /// ACL provider's ACL; node-exists is not an error (another client made it first). Under the retry policy
  /// as a whole; a stop also ends it between its rounds (`operation_aborted`; what exists stays).
  virtual void make_dirs(std::vector<std::string> paths, VoidCallback cb, RequestOptions ro = {}) = 0;
  /// Deletes, in the background, every child of `parent_path` whose name starts with `protected_prefix`
  /// (`protected_names::prefix_for(id)`): what a create or a transaction whose reply was lost may have left.
  /// Never reports: it lists the parent (again, after a pause, while that fails with a retryable error) and
  /// guaranteed-deletes each node found, until done or the client closes. An empty prefix does nothing.
  virtual void sweep_protected(std::string parent_path, std::string protected_prefix) = 0;
  /// `guaranteed`: a retryable failure leaves the delete to the background until it succeeds or the client
  /// closes. No-node counts as success when `quietly`.
  virtual void remove(std::string path, int version, bool guaranteed, bool quietly, VoidCallback cb,
                      RequestOptions ro = {}) = 0;
  /// `remove(path, -1, /*guaranteed=*/true, /*quietly=*/true, cb)` for each of `paths`, whose first attempt
  /// is sent from the calling thread, which must not be the I/O thread: one delete, or for several paths one
  /// `multi` of deletes. The request leaves at once instead of after the I/O thread wakes: where it ends a
  /// lock hold, that wake-up would be on the next holder's critical path. A reply other than ok (or no-node
  /// for one path) continues as those `remove`s do (the retry policy, then the background delete), one per
  /// path, joined into `cb` with the first error. `cb` runs on the I/O thread. Returns false, and leaves `cb`
  /// untouched, when nothing could be sent (not connected, closed, a bad path, or this core cannot): the
  /// caller then goes the usual way.
  virtual bool remove_from_caller(std::vector<std::string> paths, VoidCallback& cb) {
    (void)paths;
    (void)cb;
    return false;
  }
  bool remove_from_caller(const std::string& path, VoidCallback& cb) {
    return remove_from_caller(std::vector<std::string>{path}, cb);
  }
  // The reads' watches: a watch set in a session that is lost gets one `session_lost` event. A read still in
  // flight when its session goes is retried in the next one (per the retry policy) and sets its watch there:
  // the id it returns is alive whenever the read succeeds.
  /// `watch` (optional): one-shot; set on success and on no-node (an exists watch waits for a create).
  virtual WatchId exists(std::string path, WatchCallback watch, StatCallback cb, RequestOptions ro = {}) = 0;
  /// `watch` (optional): set only when the node exists, so a vanished node leaves no watch.
  virtual WatchId get_data(std::string path, WatchCallback watch, DataCallback cb,
                           RequestOptions ro = {}) = 0;
  virtual WatchId get_children(std::string path, WatchCallback watch, ChildrenCallback cb,
                               RequestOptions ro = {}) = 0;
  virtual void set_data(std::string path, std::string data, int version, StatCallback cb,
                        RequestOptions ro = {}) = 0;
  virtual void multi(std::vector<Op> ops, MultiCallback cb, RequestOptions ro = {}) = 0;
  /// The node's ACL and Stat (ZooKeeper's getACL).
  virtual void get_acl(std::string path, AclCallback cb, RequestOptions ro = {}) = 0;
  /// Replaces the node's ACL when its ACL version (`Stat::aversion`) is `version` (-1: any); `cb` gets the
  /// new Stat. `acl` is sent as given: the server refuses an empty list (`invalid_acl`).
  virtual void set_acl(std::string path, AclList acl, int version, StatCallback cb,
                       RequestOptions ro = {}) = 0;
  virtual void sync(std::string path, VoidCallback cb, RequestOptions ro = {}) = 0;
  /// Whether the transport speaks ZooKeeper 3.6+'s requests: persistent watches (`add_persistent_watch`),
  /// `multi_read`, `get_ephemerals`, `get_all_children_number`, `who_am_i`. Where it does not, each of them
  /// fails with `client_errc::unsupported_by_transport`: never a silent one-shot watch or a read split up
  /// instead.
  virtual bool supports_persistent_watches() const noexcept { return false; }
  /// Adds a watch that stays until removed (`remove_watch(id)`, which also removes it on the server): every
  /// event of `path` (and, `persistent_recursive`, of its descendants, but for children-changed) runs
  /// `watch`, with the event's own path. It is set again on each new connection of the same session; when
  /// the session is lost `watch` gets one `session_lost` event and the watch is gone. `cb` runs once the
  /// server has it (the id is valid before). Returns 0 (and `cb` gets the error) where it cannot.
  virtual WatchId add_persistent_watch(std::string path, AddWatchMode mode, WatchCallback watch,
                                       VoidCallback cb, RequestOptions ro = {}) {
    (void)path;
    (void)mode;
    (void)watch;
    (void)ro;
    refuse(std::move(cb));
    return 0;
  }
  /// Several reads in one request (ZooKeeper 3.6+'s multiRead): one result per op, each read succeeding or
  /// failing on its own; `cb`'s error is the request's (connection, session), not an op's.
  virtual void multi_read(std::vector<ReadOp> ops, ReadsCallback cb, RequestOptions ro = {}) {
    (void)ops;
    (void)ro;
    refuse(std::move(cb), std::vector<ReadResult>{});
  }
  /// This session's ephemeral nodes whose path starts with `path` (a string prefix, as ZooKeeper matches
  /// it: "/a" finds "/a", "/a/x" and "/ab"; "/" finds all), un-namespaced.
  virtual void get_ephemerals(std::string path, PathsCallback cb, RequestOptions ro = {}) {
    (void)path;
    (void)ro;
    refuse(std::move(cb), std::vector<std::string>{});
  }
  /// The number of the node's descendants (all levels).
  virtual void get_all_children_number(std::string path, CountCallback cb, RequestOptions ro = {}) {
    (void)path;
    (void)ro;
    refuse(std::move(cb), std::int32_t{0});
  }
  /// The identities the server holds for this session (ZooKeeper 3.7+).
  virtual void who_am_i(IdentitiesCallback cb, RequestOptions ro = {}) {
    (void)ro;
    refuse(std::move(cb), std::vector<ClientIdentity>{});
  }
  /// Forgets a watch: its callback will not run. The server-side registration is removed in the background.
  virtual void remove_watch(WatchId id) = 0;
  /// Removes every watch this client holds on `path`, locally (their callbacks will not run) and on the
  /// server.
  virtual void remove_all_watches(std::string path, VoidCallback cb) = 0;

  /// Internal connection-state listeners, called on the I/O thread in state order.
  virtual std::uint64_t add_state_listener(StateCallback cb) = 0;
  virtual void remove_state_listener(std::uint64_t id) = 0;

 protected:
  /// Completes `cb` (posted) with `client_errc::unsupported_by_transport` and `empty`: what a 3.6+ request
  /// gets from a core whose transport lacks it.
  template <class Cb, class... Empty>
  void refuse(Cb cb, Empty... empty) {
    boost::asio::post(io_executor(), [cb = std::move(cb), ... empty = std::move(empty)]() mutable {
      cb(client_errc::unsupported_by_transport, std::move(empty)...);
    });
  }
};

/// `core.remove(path, -1, /*guaranteed=*/true, /*quietly=*/true, ...)` for each of `paths`, all sent at once;
/// `cb` runs once every one has completed, with the first error (I/O thread). What a failed transaction of
/// deletes falls back to.
void remove_each(Core& core, std::vector<std::string> paths, VoidCallback cb);

/// Deletes `paths` on the I/O thread, guaranteed and quietly: one `remove` for one path, one `multi` of
/// deletes for several, and if that transaction fails (a node already gone, say), `remove_each`. `cb` runs
/// once every delete has answered, with the first error; at once when `paths` is empty or the client is
/// closed (its ephemeral nodes went with it). The same deletes sent from the caller's thread:
/// `Core::remove_from_caller`.
void remove_nodes(Core& core, std::vector<std::string> paths, VoidCallback cb);

}  // namespace zkr::detail
