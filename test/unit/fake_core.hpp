#pragma once
/// \file
/// `FakeCore`: an in-memory `zkr::detail::Core` for the unit tests of the lock engine and the semaphore state
/// machine (STYLE.md §8: "state machines with a fault injected at each step"). Not a ZooKeeper: it exists
/// only to inject a fault, a session event or a concurrent change at one exact step of an algorithm and to
/// count round trips. Integration tests run against real servers.
///
/// Model:
///  - one client (one session at a time) over its own `io_context`, which the test runs (`run_until`,
///  `settle`);
///    `running_in_io_thread()` is true inside those runs;
///  - every request is logged when issued and applied later, in issue order, in a posted step (like a server
///    applying a session's requests in order); its callback runs in that step, never inline from the call;
///  - a znode tree with persistent / ephemeral / sequential / container nodes; the sequence number is the
///    parent's count of child creates (`%010d`), while its cversion counts creates and deletes (as the
///    server); czxid/mzxid come from one global zxid counter; an ephemeral node's owner is the session id;
///    containers are never reaped;
///  - one-shot watches (data, exists, children) fired in posted steps; `remove_watch` guarantees the callback
///    does not run, even if the event is already queued;
///  - a transaction (`multi`) is applied in one step, all or nothing, with one zxid for all its operations;
///    its watches fire only when it commits; a failed one reports, as the server does, the failing
///    operation's error, `ok` for the operations before it and `runtime_inconsistency` for those after;
///  - "other clients" are direct tree edits by the test (`put`, `erase`), which fire watches like any change;
///  - the fake never retries: an injected error reaches the caller as is. It does model the real retry
///    loop's look at a conditional write whose answer was lost (`RequestOptions::conditional`: a sync, then
///    the write again or `outcome_unknown`), and the two background clean-ups the real core promises (a
///    guaranteed delete after a retryable failure; the deletion of a protected node left by a failed
///    create), as background requests in the log.

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>
#include <zkr/framework/detail/core.hpp>

namespace fake {

/// The request kinds of `zkr::detail::Core` (`make_dirs`: one logged request for the whole batch).
enum class Op {
  create,
  remove,
  exists,
  get_data,
  get_children,
  set_data,
  multi,
  sync,
  get_acl,
  set_acl,
  make_dirs,
  add_watch,  ///< add_persistent_watch
};
std::string_view to_string(Op op) noexcept;

/// One logged request: what the caller asked (the path as given, before protection or sequence) and, once
/// applied, its result. Background requests are the fake's models of the real core's own clean-ups.
struct Request {
  Op op;
  std::string path;
  bool background = false;
  bool applied = false;  ///< the reply was delivered
  zkr::error_code result;
};

class FakeCore final : public zkr::detail::Core {
 public:
  using Clock = std::chrono::steady_clock;

  FakeCore();
  ~FakeCore() override;
  FakeCore(const FakeCore&) = delete;
  FakeCore& operator=(const FakeCore&) = delete;

  // ---- running the I/O context (on the test thread) ----
  boost::asio::io_context& context() noexcept { return ioc_; }
  /// Runs the context in slices until `pred()` holds or `limit` passes; returns `pred()`.
  bool run_until(const std::function<bool()>& pred,
                 std::chrono::milliseconds limit = std::chrono::seconds(5));
  /// Runs the context for `d` (timers included).
  void run_for(std::chrono::milliseconds d);
  /// Runs every ready handler, repeatedly, until none is ready (timers are not waited for).
  void settle();
  /// End of a test: settles, then drops every rule, watch and state listener (their callbacks may own objects
  /// that own this core, a cycle that would otherwise keep it alive).
  void shutdown();

  // ---- fault injection ----
  /// Fails the next request of kind `op` (whose path contains `path_filter`) with `ec`; nothing is applied.
  void fail_next(Op op, zkr::error_code ec, std::string path_filter = {});
  /// Fails the `n`-th (1-based) such request from now on.
  void fail_nth(Op op, int n, zkr::error_code ec, std::string path_filter = {});
  /// Applies the next such request, then reports `ec` (e.g. a create whose reply was lost).
  void fail_next_applied(Op op, zkr::error_code ec, std::string path_filter = {});
  /// Applies the next `multi` (whose path contains `path_filter`) twice and replies with the second result:
  /// the real core retrying a transaction whose first try committed but whose reply was lost.
  void apply_next_multi_twice(std::string path_filter = {});
  /// Runs `fn` in the step that applies the next such request, just before it is applied (a concurrent
  /// change, a session event or a cancellation that lands while the request is in flight).
  void before_next(Op op, std::function<void()> fn, std::string path_filter = {});
  /// Same, for the `n`-th such request.
  void before_nth(Op op, int n, std::function<void()> fn, std::string path_filter = {});
  /// Runs `fn` after the next such request is applied, before its reply; the reply then comes after whatever
  /// `fn` caused (e.g. a watch event that overtakes the reply of the request that set the watch).
  void after_next(Op op, std::function<void()> fn, std::string path_filter = {});
  /// Drops every pending rule.
  void clear_faults();
  /// Whether every rule has fired.
  bool faults_consumed() const noexcept { return rules_.empty(); }

  /// Model the real core's background clean-ups (guaranteed delete, failed protected create). Default: on.
  void set_background_cleanup(bool on) noexcept { background_cleanup_ = on; }

  // ---- the request log ----
  const std::vector<Request>& requests() const noexcept { return log_; }
  /// Foreground requests of kind `op` whose path contains `path_filter`.
  std::size_t count(Op op, std::string_view path_filter = {}) const;
  /// Every foreground request.
  std::size_t count_all() const;
  /// "create /a/lock-, get_children /a, ..." for diagnostics.
  std::string describe_log() const;
  /// Forgets the log so far (replies to requests already issued are then not recorded).
  void clear_log();

  // ---- the tree, for the test (applied at once, fire watches as any change) ----
  bool has(const std::string& path) const { return nodes_.count(path) != 0; }
  /// Child names, sorted by name.
  std::vector<std::string> children(const std::string& path) const;
  std::optional<zkr::Stat> stat(const std::string& path) const;
  std::optional<std::string> data(const std::string& path) const;
  /// Creates a node as another client would (owner: the session of an ephemeral node, e.g. `other_session`),
  /// creating missing parents as persistent nodes. Returns the created path (with the sequence suffix).
  std::string put(const std::string& path, zkr::CreateMode mode = zkr::CreateMode::persistent,
                  std::int64_t owner = 0, std::string data = {});
  /// Deletes a node (and fires the watches) as another client would; false when it does not exist.
  bool erase(const std::string& path);
  /// Sets a node's data as another client would.
  bool set(const std::string& path, std::string data);
  /// A session id that is never this client's.
  static constexpr std::int64_t other_session = 0x7777;

  /// Registered (not yet fired or removed) watches, on `path` or in all.
  std::size_t watch_count(std::string_view path = {}) const;
  /// State listeners registered.
  std::size_t state_listener_count() const noexcept { return listeners_.size(); }

  // ---- session and connection ----
  /// The session expires: unless `drop_ephemerals` is false (the server has not removed them yet), its
  /// ephemeral nodes go; every watch fires with `session_lost`; a new session is established; the state
  /// listeners see LOST then RECONNECTED (in a posted step).
  void expire_session(bool drop_ephemerals = true);
  /// The connection drops (SUSPENDED); requests fail with connection_loss until `reconnect()`.
  void suspend();
  /// The connection comes back with the same session (RECONNECTED), or, with `read_only`, to a server cut off
  /// from its quorum (READ_ONLY; requests still run, as the fake has no write refusal).
  void reconnect(bool read_only = false);
  /// The client closes: requests fail with `client_errc::closed`, watches fire with `session_lost`.
  void close();

  void set_retry_policy(std::shared_ptr<const zkr::RetryPolicy> p) { retry_ = std::move(p); }

  // ---- zkr::detail::Core ----
  boost::asio::io_context::executor_type io_executor() noexcept override { return ioc_.get_executor(); }
  boost::asio::any_io_executor completion_executor() noexcept override { return ioc_.get_executor(); }
  bool running_in_io_thread() const noexcept override { return ioc_.get_executor().running_in_this_thread(); }
  const std::shared_ptr<spdlog::logger>& logger() const noexcept override { return logger_; }
  const zkr::RetryPolicy& retry_policy() const noexcept override { return *retry_; }
  const std::string& default_data() const noexcept override { return default_data_; }
  bool is_open() const noexcept override { return open_; }
  std::int64_t session_id() const noexcept override { return open_ ? session_ : 0; }
  bool is_connected() const noexcept override { return open_ && connected_; }
  std::chrono::milliseconds session_timeout() const noexcept override { return std::chrono::seconds(10); }

  void create(std::string path, zkr::CreateOptions options, zkr::detail::CreateCallback cb,
              zkr::detail::RequestOptions ro = {}) override;
  void remove(std::string path, int version, bool guaranteed, bool quietly, zkr::detail::VoidCallback cb,
              zkr::detail::RequestOptions ro = {}) override;
  /// The release's delete from a thread other than the I/O thread, as the real core's: declined (false, `cb`
  /// untouched) on the I/O thread, when closed or when disconnected; otherwise the deletes are issued in a
  /// posted step (one guaranteed, quiet `remove`, or a `multi` of deletes that falls back to one guaranteed
  /// remove per node) and `cb` runs on the I/O thread with their outcome. The real core sends them before it
  /// returns; here they are logged when the step runs, after the steps already posted.
  bool remove_from_caller(std::vector<std::string> paths, zkr::detail::VoidCallback& cb) override;
  /// One logged `make_dirs` request (its path: the first of `paths`), applied in one step: every missing
  /// directory and ancestor is created, as a container (the real core makes them in rounds; the framework's
  /// own tests cover those).
  void make_dirs(std::vector<std::string> paths, zkr::detail::VoidCallback cb,
                 zkr::detail::RequestOptions ro = {}) override;
  /// The real core's background sweep: a background listing of `parent_path` and a background delete of
  /// each child with `protected_prefix` (modelled only while background clean-ups are on).
  void sweep_protected(std::string parent_path, std::string protected_prefix) override;
  zkr::detail::WatchId exists(std::string path, zkr::detail::WatchCallback watch,
                              zkr::detail::StatCallback cb, zkr::detail::RequestOptions ro = {}) override;
  zkr::detail::WatchId get_data(std::string path, zkr::detail::WatchCallback watch,
                                zkr::detail::DataCallback cb, zkr::detail::RequestOptions ro = {}) override;
  zkr::detail::WatchId get_children(std::string path, zkr::detail::WatchCallback watch,
                                    zkr::detail::ChildrenCallback cb,
                                    zkr::detail::RequestOptions ro = {}) override;
  void set_data(std::string path, std::string data, int version, zkr::detail::StatCallback cb,
                zkr::detail::RequestOptions ro = {}) override;
  void multi(std::vector<zkr::Op> ops, zkr::detail::MultiCallback cb,
             zkr::detail::RequestOptions ro = {}) override;
  void sync(std::string path, zkr::detail::VoidCallback cb, zkr::detail::RequestOptions ro = {}) override;
  /// A node's ACL: what `set_acl` last set, else OPEN_ACL_UNSAFE (the fake's creates record no ACL).
  void get_acl(std::string path, zkr::detail::AclCallback cb, zkr::detail::RequestOptions ro = {}) override;
  /// As the server: no_node, bad_version (against `aversion`), invalid_acl for an empty list; bumps
  /// `aversion`.
  void set_acl(std::string path, zkr::AclList acl, int version, zkr::detail::StatCallback cb,
               zkr::detail::RequestOptions ro = {}) override;
  /// Persistent watches (off by default, as the C client's transport): `enable_persistent_watches(true)`
  /// models a 3.6+ transport. Events of `put`, `erase`, `set` and the client's own writes reach them (not
  /// those of a transaction); a session expiry or close gives each one `session_lost` and drops it.
  void enable_persistent_watches(bool on) noexcept { persistent_enabled_ = on; }
  bool supports_persistent_watches() const noexcept override { return persistent_enabled_; }
  /// One logged `add_watch` request, applied in a posted step (faults as any request).
  zkr::detail::WatchId add_persistent_watch(std::string path, zkr::AddWatchMode mode,
                                            zkr::detail::WatchCallback watch, zkr::detail::VoidCallback cb,
                                            zkr::detail::RequestOptions ro = {}) override;
  /// Persistent watches registered now.
  std::size_t persistent_watch_count() const noexcept { return persistent_.size(); }
  void remove_watch(zkr::detail::WatchId id) override;
  void remove_all_watches(std::string path, zkr::detail::VoidCallback cb) override;
  std::uint64_t add_state_listener(zkr::detail::StateCallback cb) override;
  void remove_state_listener(std::uint64_t id) override;

 private:
  struct Node {
    std::string data;
    zkr::Stat stat;
    bool container = false;
    zkr::AclList acl;  // empty: OPEN_ACL_UNSAFE
  };
  enum class WatchKind { data, exists, children };
  struct Watch {
    WatchKind kind;
    std::string path;
    std::shared_ptr<zkr::detail::WatchCallback> cb;
  };
  struct Rule {
    Op op;
    int nth = 1;
    int seen = 0;
    zkr::error_code ec;
    bool apply = false;
    std::string path_filter;
    std::function<void()> before;
    bool after = false;  // `before` runs after the apply instead
    bool twice = false;  // a multi applied twice (apply_next_multi_twice)
  };
  /// What the rules decided for one request.
  struct Verdict {
    zkr::error_code ec;
    bool apply = true;
    bool twice = false;
    std::vector<std::function<void()>> after;
  };

  /// The real core's retry loop after a conditional write (`RequestOptions::conditional`) failed with a
  /// retryable `ec`: a sync of `path` (logged, faults as any request), then `k({})` when `unchanged()` (the
  /// write goes again), else `k(client_errc::outcome_unknown)`; a failed sync: `k(its error)`. Returns false
  /// (and does nothing) when the loop would not look: `ro` or `conditional` says no, or `ec` is not
  /// retryable.
  bool recheck(const zkr::detail::RequestOptions& ro, bool conditional, zkr::error_code ec, std::string path,
               std::function<bool()> unchanged, zkr::detail::VoidCallback k);
  std::size_t log_request(Op op, const std::string& path, bool background = false);
  Verdict judge(Op op, const std::string& path);
  void reply(std::size_t log_index, zkr::error_code ec);
  /// Records the result, runs the after-hooks and delivers the reply (queued behind their effects if any).
  template <class F>
  void complete(Verdict& v, std::size_t seq, zkr::error_code ec, F&& deliver);
  template <class F>
  void enqueue(F&& f);

  // tree primitives (apply at once and fire watches)
  zkr::error_code do_create(const std::string& path, zkr::CreateMode mode, const std::string& data,
                            bool parents, bool containers, std::int64_t owner, std::string& created);
  zkr::error_code do_remove(const std::string& path, int version);
  zkr::error_code do_set(const std::string& path, std::string data, int version, zkr::Stat* out);
  /// All of `ops` or none; `results` gets one entry per operation.
  zkr::error_code do_multi(const std::vector<zkr::Op>& ops, std::vector<zkr::OpResult>& results);
  /// The zxid of the next change (inside a transaction: the transaction's).
  std::int64_t next_zxid() { return txn_zxid_ ? *txn_zxid_ : ++zxid_; }
  void fire(WatchKind kind, const std::string& path, zkr::EventType type);
  void fire_all(zkr::EventType type);
  void fire_persistent(const std::string& path, zkr::EventType type);
  struct PersistentWatch {
    std::string path;
    bool recursive;
    std::shared_ptr<zkr::detail::WatchCallback> cb;
  };
  std::map<zkr::detail::WatchId, PersistentWatch> persistent_;
  bool persistent_enabled_ = false;
  zkr::detail::WatchId new_watch_id() { return ++next_watch_id_; }
  void arm(zkr::detail::WatchId id, WatchKind kind, const std::string& path, zkr::detail::WatchCallback cb);
  void deliver(zkr::detail::WatchId id, std::shared_ptr<zkr::detail::WatchCallback> cb, zkr::WatchedEvent ev);
  void notify_state(std::vector<zkr::ConnectionState> states);
  void background_remove(std::string path);
  void background_find_and_delete(std::string parent, std::string protected_prefix);

  mutable boost::asio::io_context ioc_;  // mutable: running_in_io_thread() is const
  std::shared_ptr<spdlog::logger> logger_;
  std::shared_ptr<const zkr::RetryPolicy> retry_;
  std::string default_data_ = "127.0.0.1";
  bool open_ = true;
  bool connected_ = true;
  bool background_cleanup_ = true;
  std::int64_t session_ = 0x1000;
  std::int64_t zxid_ = 0;
  std::optional<std::int64_t> txn_zxid_;  // set while a transaction applies
  struct Fire {
    WatchKind kind;
    std::string path;
    zkr::EventType type;
  };
  std::vector<Fire>* deferred_fires_ = nullptr;  // set while a transaction applies: fired if it commits
  std::map<std::string, Node> nodes_;
  std::map<zkr::detail::WatchId, Watch> watches_;
  std::set<zkr::detail::WatchId> removed_before_armed_;
  std::set<zkr::detail::WatchId> pending_delivery_;  // fired, callback queued
  zkr::detail::WatchId next_watch_id_ = 0;
  std::map<std::uint64_t, std::shared_ptr<zkr::detail::StateCallback>> listeners_;
  std::uint64_t next_listener_id_ = 0;
  std::vector<Rule> rules_;
  std::vector<Request> log_;
  std::size_t log_base_ = 0;  // sequence number of log_.front()
};

/// Fault at every step (Boost.MySQL's `check_network_errors`): one foreground request of a clean run, as the
/// rule that fails that same request in a replay of the run (`fail_nth` of its kind and path).
struct FaultStep {
  Op op;
  std::string path;  ///< the request's path; for a protected node's (a random id), its directory + "/"
  int nth = 1;       ///< among the requests of this kind whose path contains `path`
};
/// The foreground requests logged so far, in issue order, each as the step that fails it.
std::vector<FaultStep> fault_steps(const FakeCore& core);
/// Fails `step` with `ec` in this run.
void fail(FakeCore& core, const FaultStep& step, zkr::error_code ec);
/// "get_children /a (#2)", for diagnostics.
std::string to_string(const FaultStep& step);

/// Releases `lease` (a `Lease` or a `MultiLease`) through its async twin and runs `core` until that
/// completes; nullopt when it did not complete within the run's limit.
template <class L>
std::optional<zkr::error_code> run_release(FakeCore& core, L& lease) {
  bool done = false;
  zkr::error_code ec;
  lease.async_release([&](zkr::error_code e) {
    ec = e;
    done = true;
  });
  if (!core.run_until([&] { return done; })) return std::nullopt;
  return ec;
}

}  // namespace fake
