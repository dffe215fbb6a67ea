#pragma once
// The client's engine room (`CoreImpl`, private to framework/src): one object per client, over parts with one
// job each (lifecycle.hpp, pauses.hpp, connection_states.hpp, background_deletes.hpp, namespace.hpp,
// watch_registry.hpp; see docs/architecture.md), its own members defined across the files below. I/O thread
// unless a member says so.
//
//   client.cpp                    the I/O thread and the client's life: construction, start, close
//   session_events.cpp            the session's events: to the connection states, a lost session replaced,
//                                 the client given up (auth failure, TLS refusal)
//   retry_loop.cpp                Curator's RetryLoop: the connection wait, the policy's sleeps, stops
//   namespace_acl.cpp             operations under the namespace (namespace.hpp), ACLs, parents (mkdirs)
//   protected_create.cpp          create, with protection: the GUID-named node found again or swept up
//   guaranteed_delete.cpp         delete, with the guarantee (background_deletes.hpp), deletes from the
//   caller operations.cpp                exists, get_data, get_children, set_data, multi, sync, get_acl,
//   set_acl
//                                 and the one-shot watches' removal and events (watch_registry.hpp)
//   session_opening.cpp           opening a session: at once, or after the TLS checks (SessionOpening, tls/)
//   c_session.cpp                 what both C-client sessions share: the handle, the callbacks, the requests
//   st_session.cpp                the session over the single-threaded C client (the pump), or
//   mt_session.cpp                the session over the multi-threaded C client (ZKR_ZOOKEEPER_CLIENT)
//   curator_framework.cpp         the public twins of CuratorFramework over this

#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/framework/paths.hpp>

#include "background_deletes.hpp"
#include "connection_states.hpp"
#include "lifecycle.hpp"
#include "namespace.hpp"
#include "pauses.hpp"
#include "session.hpp"
#include "session_opening.hpp"
#include "watch_registry.hpp"

namespace zkr::detail {

namespace asio = boost::asio;

using Clock = std::chrono::steady_clock;

struct IoRuntime {
  asio::io_context ioc{1};
  std::thread thread;
  std::thread::id thread_id;
  std::promise<void> ran_out;  // set when ioc.run() has returned for good
};

class CoreImpl final : public Core, public SessionEvents, public std::enable_shared_from_this<CoreImpl> {
 public:
  friend class zkr::CuratorFramework;  // async_block_until_connected waits through states_.when_connected
  explicit CoreImpl(ClientConfig cfg) : CoreImpl(std::move(cfg), make_default_session) {}
  /// A client over the session `make_session` makes (tests: a fake session).
  CoreImpl(ClientConfig cfg, const SessionFactory& make_session);
  ~CoreImpl() override;

  // Core
  asio::io_context::executor_type io_executor() noexcept override { return rt_->ioc.get_executor(); }
  asio::any_io_executor completion_executor() noexcept override { return completion_ex_; }
  bool running_in_io_thread() const noexcept override { return std::this_thread::get_id() == rt_->thread_id; }
  const std::shared_ptr<spdlog::logger>& logger() const noexcept override { return log_; }
  const RetryPolicy& retry_policy() const noexcept override { return *cfg_.retry_policy; }
  const std::string& default_data() const noexcept override { return *cfg_.default_data; }
  bool use_container_parents() const noexcept override { return cfg_.use_container_parents; }
  bool is_open() const noexcept override { return life_.is_open(); }
  std::int64_t session_id() const noexcept override { return states_.session_id(); }
  bool is_connected() const noexcept override { return states_.connected(); }
  std::chrono::milliseconds session_timeout() const noexcept override { return states_.session_timeout(); }

  void create(std::string path, CreateOptions options, CreateCallback cb, RequestOptions ro) override;
  void make_dirs(std::vector<std::string> paths, VoidCallback cb, RequestOptions ro) override;
  void sweep_protected(std::string parent, std::string protected_prefix) override;
  bool remove_from_caller(std::vector<std::string> paths, VoidCallback& cb) override;
  void remove(std::string path, int version, bool guaranteed, bool quietly, VoidCallback cb,
              RequestOptions ro) override;
  WatchId exists(std::string path, WatchCallback watch, StatCallback cb, RequestOptions ro) override;
  WatchId get_data(std::string path, WatchCallback watch, DataCallback cb, RequestOptions ro) override;
  WatchId get_children(std::string path, WatchCallback watch, ChildrenCallback cb,
                       RequestOptions ro) override;
  void set_data(std::string path, std::string data, int version, StatCallback cb, RequestOptions ro) override;
  void multi(std::vector<Op> ops, MultiCallback cb, RequestOptions ro) override;
  void get_acl(std::string path, AclCallback cb, RequestOptions ro) override;
  void set_acl(std::string path, AclList acl, int version, StatCallback cb, RequestOptions ro) override;
  void sync(std::string path, VoidCallback cb, RequestOptions ro) override;
  // requests_3_6.cpp
  bool supports_persistent_watches() const noexcept override;
  WatchId add_persistent_watch(std::string path, AddWatchMode mode, WatchCallback watch, VoidCallback cb,
                               RequestOptions ro) override;
  void multi_read(std::vector<ReadOp> ops, ReadsCallback cb, RequestOptions ro) override;
  void get_ephemerals(std::string path, PathsCallback cb, RequestOptions ro) override;
  void get_all_children_number(std::string path, CountCallback cb, RequestOptions ro) override;
  void who_am_i(IdentitiesCallback cb, RequestOptions ro) override;
  void remove_watch(WatchId id) override;
  std::uint64_t add_state_listener(StateCallback cb) override { return states_.add_listener(std::move(cb)); }
  void remove_state_listener(std::uint64_t id) override { states_.remove_listener(id); }

  // Client-level (any thread)
  /// `subject`, when given, names what a refusal is about (the TLS file at fault).
  error_code start(std::string* subject = nullptr);
  void close() noexcept;
  bool block_until_connected(std::chrono::milliseconds timeout) { return states_.wait_connected(timeout); }
  std::uint64_t add_public_listener(ConnectionStateListener l) {
    return states_.add_public_listener(std::move(l));
  }
  void remove_public_listener(std::uint64_t id) { states_.remove_public_listener(id); }
  std::size_t pending_deletes() const { return deletes_.pending(); }
  const ClientConfig& config() const { return cfg_; }
  void remove_all_watches(std::string path, VoidCallback cb) override;
  void delete_children_then(std::string path, int version, bool guaranteed, bool quietly, VoidCallback cb,
                            StopPtr stop = {});
  error_code inject_session_expiration();

  // SessionEvents
  void on_session_state(SessionState state) override;
  void on_watch_event(WatchId id, EventType type, const std::string& path) override;
  void on_auth_failed() override { handle_auth_failed(); }
  void on_refused(error_code ec, const std::string& why) override {
    if (!life_.ended() && session_->is_open()) give_up(ec, why);
  }
  void on_tls_opening(const TlsVerdict& verdict) override {
    if (!life_.ended() && session_->is_open()) opening_.on_verdict(verdict);
  }
  bool believes_connected() const override { return states_.connected(); }
  /// What a request gets when there is no session: the client closed, auth failed, or the session is being
  /// replaced after a loss.
  error_code no_session_ec() const override {
    if (life_.closed()) return client_errc::closed;
    if (life_.given_up()) return life_.reason();
    return zk_errc::session_expired;
  }

 private:
  using Done = unique_function<void(error_code)>;
  using Attempt = unique_function<void(Done)>;
  template <class F>
  void post(F&& f) {
    asio::post(rt_->ioc, std::forward<F>(f));
  }
  template <class Cb, class... A>
  void post_result(Cb cb, A... a) {
    post([cb = std::move(cb), ... a = std::move(a)]() mutable { cb(std::move(a)...); });
  }

  // session_events.cpp
  /// The session is gone: LOST, its watches fail, a fresh session is opened (unless the client closed).
  void handle_session_lost(const char* why);
  void handle_auth_failed();
  /// The client stops connecting for good (the server refused our auth info, or TLS failed): operations
  /// fail with `ec`, waits for the connection end, LOST follows an earlier state.
  void give_up(error_code ec, const std::string& why);
  /// Ends the session (pending requests complete with zk_errc::closing).
  void end_session();

  /// Opens a new session: at once, or with TLS after zkrecipes's own checks (session_opening.hpp). False only
  /// when the transport refused the connect string.
  bool open_session() { return opening_.open(); }
  // retry_loop.cpp
  struct RetryState;
  /// Runs `attempt` under the retry policy (when `ro.retry`) after the connection wait; `done(ec)` once, with
  /// the operation's result: a request cut off by the end of its session is `client_errc::closed` when the
  /// client closed, else `zk_errc::session_expired`; with no connection in time
  /// `client_errc::connection_timeout`; after a stop `operation_aborted`; after the client gave up, the
  /// reason.
  ///
  /// `recheck` (used when `ro.conditional`): after a retryable failure, each further round runs it instead
  /// of `attempt` until it says the write was not applied (`{}`: `attempt` follows at once); another error
  /// is handled as a try's (`client_errc::outcome_unknown` ends the operation).
  void with_retry(const RequestOptions& ro, std::shared_ptr<Attempt> attempt, Done done,
                  std::shared_ptr<Attempt> recheck = nullptr);

  // conditional_write.cpp
  /// A `recheck` for `with_retry`: a sync of `full_path`, then an exists; `{}` when `unchanged(stat)` (a
  /// null stat: no node), else `client_errc::outcome_unknown`. Null unless `ro.conditional`.
  std::shared_ptr<Attempt> lost_write_check(const RequestOptions& ro, const std::string& full_path,
                                            std::function<bool(const zkr::Stat*)> unchanged);
  /// `lost_write_check` for a versioned write (set_data, delete): unchanged while the node has `version`.
  /// Null for version -1.
  std::shared_ptr<Attempt> version_check(const RequestOptions& ro, const std::string& full_path, int version);

  // namespace_acl.cpp
  AclList acl_for(const std::string& full_path, const std::optional<AclList>& explicit_acl) const;
  error_code gate(std::string_view path, bool sequential = false) const;
  /// `attempt` preceded by the creation of the namespace, until that has succeeded once: it then runs under
  /// the operation's retry loop, after its connection wait (Curator's NamespaceImpl uses callWithRetry).
  /// `root_gone(ec)` says whether a try's failure may mean that the namespace's root no longer exists (a
  /// create right under it failed with no node): a container root is deleted by the server once it is empty.
  /// The root is then made again and the try repeated once. Curator makes the root only once.
  std::shared_ptr<Attempt> in_namespace(std::shared_ptr<Attempt> attempt,
                                        std::function<bool(error_code)> root_gone = nullptr);
  /// One try of making the directories `dirs` (full paths) with their missing ancestors: one pipelined round
  /// of `exists` for every one of them, then one pipelined round of creates per depth, parents first
  /// (containers or persistent nodes; node-exists ignored: a racing creator's node will do). `k(ec)` once:
  /// success, the first other failure, or operation_aborted when `stop` was requested before a round of
  /// creates.
  void mkdirs(const std::vector<std::string>& dirs, bool containers, StopPtr stop, Done k);
  struct Mkdirs;
  void mkdirs_create(std::shared_ptr<Mkdirs> m, std::size_t from);

  // operations.cpp
  /// A read (`Request`: zk::Exists, GetData, GetChildren) under the namespace and the retry loop, `fill`ing
  /// `Result` from the reply; its watch is registered first and forgotten when the read fails (but for
  /// no-node when `keep_watch_on_no_node`).
  template <class Request, class Result, class Fill>
  WatchId read(std::string path, WatchCallback watch, zk::WatchKind kind, bool keep_watch_on_no_node,
               unique_function<void(error_code, Result)> cb, RequestOptions ro, Fill fill);

  // requests_3_6.cpp
  /// A 3.6+ `request` about `path` (un-namespaced; what the gate checks) under the namespace and the retry
  /// loop, `fill`ing `Result` from a successful reply; `client_errc::unsupported_by_transport` where the
  /// session does not speak 3.6.
  template <class Request, class Result, class Fill>
  void request_3_6(std::string path, Request request, unique_function<void(error_code, Result)> cb,
                   RequestOptions ro, Fill fill);

  // protected_create.cpp
  void find_protected(std::string full_path, std::string protected_id, bool ephemeral,
                      unique_function<void(error_code, std::optional<CreateResult>)> k);
  // operations.cpp
  /// Watches get `session_lost` (posted): every one when the client ends (`all`); when only the session
  /// went, those the server had set (one whose request is in flight is set again by its retry).
  void fail_watches(bool all);
  /// The server answered the request that carries watch `id`, sent while the registry's generation was
  /// `generation`: set in this session, or (a session gone since) dead, with its `session_lost`.
  void watch_answered(WatchId id, std::uint64_t generation);
  /// Runs `w`'s callback with `session_lost`, posted.
  void post_session_lost(WatchRegistry::Watch w);

  // client.cpp: the I/O thread, the configuration, the client's life
  std::shared_ptr<IoRuntime> rt_;  // first: outlives everything bound to the io_context
  ClientConfig cfg_;
  std::shared_ptr<spdlog::logger> log_;
  asio::any_io_executor completion_ex_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;
  std::unique_ptr<Session> session_;  // after rt_: its timers and socket are bound to the io_context
  Lifecycle life_;
  Pauses pauses_;
  ConnectionStates states_;  // before deletes_, which waits for the connection through it
  BackgroundDeletes deletes_;
  Namespace ns_;
  WatchRegistry watches_;

  // session_opening.hpp: the TLS checks and preflight of the session being opened
  SessionOpening opening_;
};

}  // namespace zkr::detail
