// The client: drives the single-threaded ZooKeeper C client from one Asio I/O thread (see
// docs/architecture.md for why), with Curator's retry loop, connection states, protected create and
// guaranteed delete.

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <condition_variable>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <zkr/framework/curator_framework.hpp>

#include "session.hpp"
#include "st_session.hpp"
#include "zk_glue.hpp"

namespace asio = boost::asio;

namespace zkr {

AclList open_acl_unsafe() { return {Acl{perms::all, Id{"world", "anyone"}}}; }
AclList creator_all_acl() { return {Acl{perms::all, Id{"auth", ""}}}; }
AclList read_acl_unsafe() { return {Acl{perms::read, Id{"world", "anyone"}}}; }

namespace detail {
namespace {

using Clock = std::chrono::steady_clock;

/// Internal result code: no connection within the connection timeout (mapped to errc::connection_timeout).
constexpr int kConnectionTimeoutRc = -100000;
/// Internal result code: the operation's stop was requested before a try (mapped to operation_aborted).
constexpr int kAbortedRc = -100001;

std::string local_address() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "127.0.0.1";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host, nullptr, &hints, &res) != 0 || !res) return "127.0.0.1";
  char buf[INET_ADDRSTRLEN] = {};
  auto* sin = reinterpret_cast<sockaddr_in*>(res->ai_addr);
  ::inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf);
  ::freeaddrinfo(res);
  return buf;
}

bool valid_connect_string(std::string_view cs) {
  // host:port[,host:port...][/chroot]; we accept a chroot suffix like the C client does.
  if (cs.empty()) return false;
  auto slash = cs.find('/');
  auto hosts = cs.substr(0, slash);
  if (hosts.empty()) return false;
  while (!hosts.empty()) {
    auto comma = hosts.find(',');
    auto one = hosts.substr(0, comma);
    auto colon = one.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == one.size()) return false;
    const auto digits = one.substr(colon + 1);
    if (digits.size() > 5) return false;
    int port = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      port = port * 10 + (c - '0');
    }
    if (port < 1 || port > 65535) return false;  // the C client would silently truncate it
    if (comma == std::string_view::npos) break;
    hosts.remove_prefix(comma + 1);
    if (hosts.empty()) return false;
  }
  return true;
}

struct IoRuntime {
  asio::io_context ioc{1};
  std::thread thread;
  std::thread::id thread_id;
  std::promise<void> ran_out;  // set when ioc.run() has returned for good
};

}  // namespace

class CoreImpl final : public Core, public SessionEvents, public std::enable_shared_from_this<CoreImpl> {
 public:
  friend class zkr::CuratorFramework;  // async_block_until_connected waits through when_connected
  explicit CoreImpl(ClientConfig cfg);
  ~CoreImpl() override;

  // Core
  asio::io_context::executor_type io_executor() noexcept override { return rt_->ioc.get_executor(); }
  asio::any_io_executor completion_executor() noexcept override { return completion_ex_; }
  bool running_in_io_thread() const noexcept override { return std::this_thread::get_id() == rt_->thread_id; }
  const std::shared_ptr<spdlog::logger>& logger() const noexcept override { return log_; }
  const RetryPolicy& retry_policy() const noexcept override { return *cfg_.retry_policy; }
  const std::string& default_data() const noexcept override { return default_data_; }
  bool use_container_parents() const noexcept override { return cfg_.use_container_parents; }
  bool is_open() const noexcept override { return started_ && !closed_; }
  std::int64_t session_id() const noexcept override { return session_id_; }
  bool is_connected() const noexcept override { return connected_; }
  std::chrono::milliseconds session_timeout() const noexcept override {
    return std::chrono::milliseconds(negotiated_timeout_ms_.load());
  }

  void create(std::string path, CreateOptions options, CreateCallback cb, RequestOptions ro) override;
  bool remove_from_caller(std::vector<std::string> paths, VoidCallback& cb) override;
  void remove(std::string path, int version, bool guaranteed, bool quietly, VoidCallback cb,
              RequestOptions ro) override;
  WatchId exists(std::string path, WatchCallback watch, StatCallback cb, RequestOptions ro) override;
  WatchId get_data(std::string path, WatchCallback watch, DataCallback cb, RequestOptions ro) override;
  WatchId get_children(std::string path, WatchCallback watch, ChildrenCallback cb, RequestOptions ro) override;
  void set_data(std::string path, std::string data, int version, StatCallback cb, RequestOptions ro) override;
  void multi(std::vector<Op> ops, MultiCallback cb, RequestOptions ro) override;
  void sync(std::string path, VoidCallback cb, RequestOptions ro) override;
  void remove_watch(WatchId id) override;
  /// Registers `watch` (none: returns 0) for the requests that set it on `path`.
  WatchId add_watch(WatchCallback watch, const std::string& path, zk::WatchKind kind);
  std::uint64_t add_state_listener(StateCallback cb) override;
  void remove_state_listener(std::uint64_t id) override;

  // Client-level (any thread)
  error_code start();
  void close() noexcept;
  bool block_until_connected(std::chrono::milliseconds timeout);
  std::uint64_t add_public_listener(ConnectionStateListener l);
  void remove_public_listener(std::uint64_t id);
  std::size_t pending_deletes() const { return pending_delete_count_; }
  const ClientConfig& config() const { return cfg_; }
  void remove_all_watches(std::string path, VoidCallback cb) override;
  void delete_children_then(std::string path, int version, bool guaranteed, bool quietly, VoidCallback cb,
                            StopPtr stop = {});
  error_code inject_session_expiration();

  // SessionEvents
  void on_session_state(SessionState state) override;
  void on_watch_event(WatchId id, EventType type) override;
  void on_auth_failed() override { handle_auth_failed(); }
  bool believes_connected() const override { return connected_; }
  /// What a request gets when there is no session: the client closed, auth failed, or the session is being
  /// replaced after a loss.
  int no_session_rc() const override {
    return closed_ ? ZCLOSING : auth_failed_ ? ZAUTHFAILED : ZSESSIONEXPIRED;
  }

 private:
  struct WatchEntry {
    WatchCallback cb;
    std::string path;  // un-namespaced
    zk::WatchKind kind = zk::WatchKind::data;
  };
  struct RetryState;
  using Attempt = unique_function<void(unique_function<void(int)>)>;

  /// Ends the session (pending requests complete with ZCLOSING).
  void end_session();

  // state machine
  void emit(ConnectionState s);
  void handle_session_lost(const char* why);
  void handle_auth_failed();
  void fail_connection_waiters();
  void fail_all_watches();
  /// Calls `k(true)` once connected, `k(false)` after `timeout` or on close; returns an id for
  /// `cancel_connection_wait` (0 when `k` was posted at once).
  std::uint64_t when_connected(std::chrono::milliseconds timeout, unique_function<void(bool)> k);
  /// Ends a wait of `when_connected` early: its `k(false)` runs now.
  void cancel_connection_wait(std::uint64_t id);

  // plumbing
  std::string fix(std::string_view path) const;
  std::string unfix(std::string_view path) const;
  AclList acl_for(const std::string& full_path, const std::optional<AclList>& explicit_acl) const;
  error_code gate(std::string_view path, bool sequential = false) const;
  template <class F>
  void post(F&& f) {
    asio::post(rt_->ioc, std::forward<F>(f));
  }
  error_code map_rc(int rc) const {
    if (rc == ZCLOSING) return closed_ ? error_code(errc::closed) : error_code(zk_errc::session_expired);
    if (rc == kConnectionTimeoutRc) return errc::connection_timeout;
    if (rc == kAbortedRc) return asio::error::operation_aborted;
    return zk_error(rc);
  }
  void with_retry(const RequestOptions& ro,
                  std::shared_ptr<Attempt> attempt,
                  unique_function<void(int)> done);
  /// `attempt` preceded by the creation of the namespace, until that has succeeded once: it then runs under
  /// the operation's retry loop, after its connection wait (Curator's NamespaceImpl uses callWithRetry).
  /// `root_gone(rc)` says whether a try's failure may mean that the namespace's root no longer exists (a create
  /// right under it failed with no node): a container root is deleted by the server once it is empty. The root
  /// is then made again and the try repeated once. Curator makes the root only once.
  std::shared_ptr<Attempt> in_namespace(std::shared_ptr<Attempt> attempt,
                                        std::function<bool(int)> root_gone = nullptr);
  /// Whether `full_path` names a node right under the namespace's root (never without a namespace).
  bool under_namespace_root(const std::string& full_path) const {
    return !ns_prefix_.empty() && parent_path(full_path) == ns_prefix_;
  }
  void ensure_namespace(unique_function<void(int)> k);
  void mkdirs(std::string full_path, bool make_last, bool containers, unique_function<void(int)> k);
  void mkdirs_down(std::shared_ptr<std::vector<std::string>> todo, std::size_t i, bool containers,
                   unique_function<void(int)> k);
  void mkdirs_probe(std::shared_ptr<std::vector<std::string>> todo, std::size_t n, bool containers,
                    unique_function<void(int)> k);
  void find_protected(std::string full_path, std::string protected_id, bool ephemeral,
                      unique_function<void(int, std::optional<CreateResult>)> k);
  void find_and_delete_in_background(std::string parent_full, std::string protected_id, int attempt);
  void background_delete(std::string full_path, int attempt);
  std::uint64_t add_sleeper(asio::steady_timer* t);
  void remove_sleeper(std::uint64_t id);

  template <class Cb, class... A>
  void post_result(Cb cb, A... a) {
    post([cb = std::move(cb), ... a = std::move(a)]() mutable { cb(std::move(a)...); });
  }

  std::shared_ptr<IoRuntime> rt_;  // first: outlives everything bound to the io_context
  ClientConfig cfg_;
  std::shared_ptr<spdlog::logger> log_;
  std::string default_data_;
  std::string ns_prefix_;  // "/ns" or ""
  asio::any_io_executor completion_ex_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_;

  std::atomic<bool> started_{false};
  std::atomic<bool> closed_{false};
  std::atomic<bool> finishing_{false};  // close() has begun its work (once)
  std::atomic<bool> connected_{false};
  std::atomic<bool> auth_failed_{false};  // the server refused our auth info: the handle is closed for good
  std::atomic<std::int64_t> session_id_{0};
  std::atomic<int> negotiated_timeout_ms_{0};
  std::atomic<std::size_t> pending_delete_count_{0};

  // I/O thread only
  std::unique_ptr<Session> session_;  // after rt_: its timers and socket are bound to the io_context
  asio::steady_timer suspended_timer_;
  std::optional<ConnectionState> last_state_;
  bool ever_connected_ = false;  // read-write: the first gives CONNECTED, later ones RECONNECTED
  bool was_connected_ = false;   // read-write or read-only: a disconnect is SUSPENDED from then on
  std::unordered_map<WatchId, WatchEntry> watches_;
  WatchId next_watch_id_ = 1;
  // shared: a listener that removes itself while it runs must not destroy its own closure (emit)
  std::map<std::uint64_t, std::shared_ptr<StateCallback>> state_listeners_;
  std::uint64_t next_listener_id_ = 1;
  struct ConnWaiter {
    unique_function<void(bool)> k;
    std::unique_ptr<asio::steady_timer> timer;
  };
  std::map<std::uint64_t, ConnWaiter> conn_waiters_;
  std::uint64_t next_waiter_id_ = 1;
  std::map<std::uint64_t, asio::steady_timer*> sleepers_;
  std::uint64_t next_sleeper_id_ = 1;
  std::multiset<std::string> pending_deletes_;
  bool ns_ready_ = false;
  bool ns_in_progress_ = false;
  std::vector<unique_function<void(int)>> ns_waiters_;

  // any thread
  mutable std::mutex pub_mu_;
  std::map<std::uint64_t, ConnectionStateListener> public_listeners_;
  std::uint64_t next_public_id_ = 1;
  asio::strand<asio::any_io_executor> listener_strand_;
  std::mutex state_mu_;
  std::condition_variable state_cv_;
};

CoreImpl::CoreImpl(ClientConfig cfg)
    : rt_(std::make_shared<IoRuntime>()),
      cfg_(std::move(cfg)),
      suspended_timer_(rt_->ioc),
      listener_strand_(asio::make_strand(cfg_.executor ? *cfg_.executor
                                                       : asio::any_io_executor(rt_->ioc.get_executor()))) {
  log_ = cfg_.logger;
  if (!log_) {
    log_ = std::make_shared<spdlog::logger>("zkrecipes", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    log_->set_level(spdlog::level::warn);
  }
  if (!cfg_.retry_policy) cfg_.retry_policy = std::make_shared<ExponentialBackoffRetry>(Millis(1000), 3);
  default_data_ = cfg_.default_data ? *cfg_.default_data : local_address();
  if (!cfg_.namespace_name.empty()) ns_prefix_ = "/" + cfg_.namespace_name;
  completion_ex_ = cfg_.executor ? *cfg_.executor : asio::any_io_executor(rt_->ioc.get_executor());
  negotiated_timeout_ms_ = static_cast<int>(cfg_.session_timeout.count());
  work_.emplace(rt_->ioc.get_executor());
  session_ = std::make_unique<StSession>(rt_->ioc, cfg_, *log_, *this);
  std::promise<void> ready;
  auto fut = ready.get_future();
  rt_->thread = std::thread([rt = rt_, log = log_.get(), &ready] {
    rt->thread_id = std::this_thread::get_id();
    set_thread_log_target(log);
    ready.set_value();
    for (;;) {
      try {
        rt->ioc.run();
        break;
      } catch (const std::exception& e) {
        // A handler threw (a user callback on our executor): log and keep the loop alive.
        set_thread_log_target(nullptr);
        std::fprintf(stderr, "zkrecipes: exception escaped a handler on the I/O thread: %s\n", e.what());
      }
    }
    rt->ran_out.set_value();
  });
  fut.wait();
}

CoreImpl::~CoreImpl() {
  close();
  work_.reset();
  if (!rt_->thread.joinable()) return;
  if (running_in_io_thread()) {
    // Handlers still queued would run after this object is gone: drop them.
    rt_->ioc.stop();
    rt_->thread.detach();  // the thread holds the runtime alive until it returns
    return;
  }
  // Let the queue drain instead of stopping it: close() queued completions (errc::closed) that queue the
  // callers' handlers in turn, and those must run. close() cancelled our timers and the socket wait, so the
  // loop runs out of work once drained; what still holds it after two seconds (a caller's timer on our
  // executor) is dropped.
  if (rt_->ran_out.get_future().wait_for(std::chrono::seconds(2)) != std::future_status::ready) {
    log_->warn("the I/O thread still had work two seconds after close; dropping it");
    rt_->ioc.stop();
  }
  rt_->thread.join();
}

// ---------------------------------------------------------------------------------------------------------
// start / close

error_code CoreImpl::start() {
  if (closed_) return errc::closed;
  if (!valid_connect_string(cfg_.connect_string)) return errc::invalid_connect_string;
  if (cfg_.handshake_timeout < std::chrono::milliseconds::zero()) return errc::invalid_argument;
  if (!cfg_.namespace_name.empty() && path_error(ns_prefix_)) return errc::invalid_path;
  if (started_.exchange(true)) return {};
  error_code ec;
  run_blocking_void(
      *this,
      [this](VoidCallback done) {
        // A close() that raced this start() (and saw it not started) finishes nothing: open no handle.
        if (closed_) return done(errc::closed);
        done(session_->open() ? error_code{} : error_code(errc::invalid_connect_string));
      },
      ec);
  if (ec) started_ = false;
  return ec;
}

void CoreImpl::close() noexcept {
  if (!started_) {
    closed_ = true;
    // A start() that set started_ before this store may have checked closed_ before it too, and opened a
    // handle: finish as a started client. One that set it after sees closed_ and opens none.
    if (!started_) return;
  }
  // Give pending guaranteed deletes up to max_close_wait while the client still runs: once closed_ is set they
  // are dropped at their next step (and with_retry/when_connected refuse to run), so waiting afterwards would
  // only wait for them to give up.
  if (!running_in_io_thread()) {
    const auto deadline = Clock::now() + cfg_.max_close_wait;
    while (pending_delete_count_ > 0 && !closed_ && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (finishing_.exchange(true)) return;
  closed_ = true;
  auto finish = [this] {
    suspended_timer_.cancel();
    for (auto& [id, t] : sleepers_) t->cancel();
    fail_connection_waiters();
    auto ns_waiters = std::move(ns_waiters_);
    for (auto& k : ns_waiters) post([k = std::move(k)]() mutable { k(ZCLOSING); });
    end_session();
    fail_all_watches();
    session_id_ = 0;
    {
      std::lock_guard lk(state_mu_);
    }
    state_cv_.notify_all();
  };
  if (running_in_io_thread()) {
    finish();
    return;
  }
  if (pending_delete_count_ > 0)
    log_->warn("closing with {} guaranteed delete(s) still pending; the server removes ephemeral ones with the "
               "session", pending_delete_count_.load());
  std::promise<void> done;
  auto fut = done.get_future();
  // finish() queues the completions of what it cancels (connection waiters, sleeping retries, requests failed by
  // the handle close). Signal from a handler queued after them, so that they have run (pending guaranteed deletes
  // have given up, pending_guaranteed_deletes() is 0) when close() returns. It must be posted from the I/O
  // thread: with a concurrency hint of 1, what a handler posts is queued only when that handler returns, so a
  // post from this thread could overtake it.
  post([&] {
    finish();
    post([&] { done.set_value(); });
  });
  fut.wait();
}

bool CoreImpl::block_until_connected(std::chrono::milliseconds timeout) {
  std::unique_lock lk(state_mu_);
  return state_cv_.wait_for(lk, timeout, [&] { return connected_.load() || closed_.load() || auth_failed_.load(); }) &&
         connected_;
}

error_code CoreImpl::inject_session_expiration() {
  if (closed_) return errc::closed;
  if (!started_) return errc::not_started;
  // Like ZooKeeper's Java testable hook: the client ends its own session (closeSession from the connection that
  // owns it, so the server deletes its ephemeral nodes at once), reports LOST, and starts a new session.
  // Doing it from a second handle on the same session id races with our own reconnect (the session moves back
  // and the second handle's close is refused).
  if (closed_) return errc::closed;
  if (!started_) return errc::not_started;
  error_code ec;
  run_blocking_void(
      *this,
      [this](VoidCallback done) {
        if (!session_->is_open())
          return done(auth_failed_ ? error_code(zk_errc::auth_failed) : error_code(errc::closed));
        handle_session_lost("session expiration injected");
        done({});
      },
      ec);
  return ec;
}

// ---------------------------------------------------------------------------------------------------------
// Connection states

void CoreImpl::on_session_state(SessionState state) {
  if (state == SessionState::connected || state == SessionState::read_only) {
    session_id_ = session_->session_id();
    negotiated_timeout_ms_ = session_->negotiated_timeout_ms();
    suspended_timer_.cancel();
    {
      std::lock_guard lk(state_mu_);
      connected_ = true;
    }
    state_cv_.notify_all();
    was_connected_ = true;
    if (state == SessionState::read_only)
      emit(ConnectionState::read_only);
    else if (!ever_connected_) {
      ever_connected_ = true;
      emit(ConnectionState::connected);
    } else
      emit(ConnectionState::reconnected);
    auto waiters = std::move(conn_waiters_);
    conn_waiters_.clear();
    for (auto& [id, w] : waiters) {
      if (w.timer) w.timer->cancel();
      post([k = std::move(w.k)]() mutable { k(true); });
    }
  } else if (state == SessionState::connecting) {
    connected_ = false;
    // As Curator, a read-only connection counts: its loss is SUSPENDED, then LOST.
    if (was_connected_ && last_state_ != ConnectionState::suspended && last_state_ != ConnectionState::lost) {
      emit(ConnectionState::suspended);
      const auto pct = std::clamp(cfg_.simulated_session_expiration_percent, 1, 100);
      suspended_timer_.expires_after(std::chrono::milliseconds(negotiated_timeout_ms_.load()) * pct / 100);
      suspended_timer_.async_wait([this](error_code ec) {
        if (ec || connected_ || closed_) return;
        if (last_state_ == ConnectionState::suspended)
          handle_session_lost("the session timeout elapsed while disconnected");
      });
    }
  } else if (state == SessionState::expired) {
    handle_session_lost("session expired");
  } else if (state == SessionState::auth_failed) {
    handle_auth_failed();
  }
}

// As ZooKeeper's Java client, which closes for good on AuthFailed: pending and new requests fail with
// auth_failed and are not retried (Curator gets AuthFailedException). Curator reports no state for it; we
// report LOST after an earlier state, as the session is given up and recipes holding locks must learn so.
void CoreImpl::handle_auth_failed() {
  if (auth_failed_ || closed_ || !session_->is_open()) return;
  log_->error("ZooKeeper authentication failed: the server refused the auth info; the client stops connecting "
              "and its operations fail with auth_failed");
  {
    std::lock_guard lk(state_mu_);
    auth_failed_ = true;
    connected_ = false;
  }
  state_cv_.notify_all();
  session_id_ = 0;
  suspended_timer_.cancel();
  for (auto& [id, t] : sleepers_) t->cancel();  // sleeping retries end now, with auth_failed
  fail_connection_waiters();
  if (last_state_ && last_state_ != ConnectionState::lost) emit(ConnectionState::lost);
  fail_all_watches();
  end_session();  // pending requests complete with ZCLOSING, which with_retry reports as auth_failed
}

void CoreImpl::fail_connection_waiters() {
  auto waiters = std::move(conn_waiters_);
  conn_waiters_.clear();
  for (auto& [id, w] : waiters) {
    if (w.timer) w.timer->cancel();
    post([k = std::move(w.k)]() mutable { k(false); });
  }
}

void CoreImpl::handle_session_lost(const char* why) {
  log_->warn("session lost: {}", why);
  connected_ = false;
  session_id_ = 0;
  emit(ConnectionState::lost);
  fail_all_watches();
  // A fresh handle, hence a fresh session (Curator's handle reset).
  end_session();
  if (!closed_) session_->open();
}

void CoreImpl::end_session() {
  session_->close();
  connected_ = false;
}

void CoreImpl::fail_all_watches() {
  auto watches = std::move(watches_);
  watches_.clear();
  for (auto& [id, w] : watches) {
    post([cb = std::move(w.cb), path = std::move(w.path)]() mutable {
      cb(WatchedEvent{EventType::session_lost, std::move(path)});
    });
  }
}

void CoreImpl::emit(ConnectionState s) {
  if (last_state_ == s) return;
  last_state_ = s;
  if (log_->should_log(spdlog::level::info)) log_->info("connection state: {}", to_string(s));
  std::vector<std::uint64_t> ids;
  for (auto& [id, cb] : state_listeners_) ids.push_back(id);
  for (auto id : ids) {
    auto it = state_listeners_.find(id);
    if (it == state_listeners_.end()) continue;
    const auto cb = it->second;  // kept alive should the listener remove itself
    (*cb)(s);
  }
  asio::post(listener_strand_, [self = shared_from_this(), s] {
    std::vector<ConnectionStateListener> ls;
    {
      std::lock_guard lk(self->pub_mu_);
      for (auto& [id, l] : self->public_listeners_) ls.push_back(l);
    }
    for (auto& l : ls) {
      try {
        l(s);
      } catch (const std::exception& e) {
        self->log_->error("connection state listener threw: {}", e.what());
      }
    }
  });
}

std::uint64_t CoreImpl::add_state_listener(StateCallback cb) {
  auto id = next_listener_id_++;
  state_listeners_.emplace(id, std::make_shared<StateCallback>(std::move(cb)));
  return id;
}
void CoreImpl::remove_state_listener(std::uint64_t id) { state_listeners_.erase(id); }

std::uint64_t CoreImpl::add_public_listener(ConnectionStateListener l) {
  std::lock_guard lk(pub_mu_);
  auto id = next_public_id_++;
  public_listeners_.emplace(id, std::move(l));
  return id;
}
void CoreImpl::remove_public_listener(std::uint64_t id) {
  std::lock_guard lk(pub_mu_);
  public_listeners_.erase(id);
}

std::uint64_t CoreImpl::when_connected(std::chrono::milliseconds timeout, unique_function<void(bool)> k) {
  if (closed_ || connected_ || auth_failed_) {
    post([k = std::move(k), ok = !closed_ && !auth_failed_]() mutable { k(ok); });
    return 0;
  }
  auto id = next_waiter_id_++;
  auto& w = conn_waiters_[id];
  w.k = std::move(k);
  w.timer = std::make_unique<asio::steady_timer>(rt_->ioc, timeout);
  w.timer->async_wait([this, id](error_code ec) {
    if (ec) return;
    auto it = conn_waiters_.find(id);
    if (it == conn_waiters_.end()) return;
    auto k = std::move(it->second.k);
    conn_waiters_.erase(it);
    k(false);
  });
  return id;
}

void CoreImpl::cancel_connection_wait(std::uint64_t id) {
  auto it = conn_waiters_.find(id);
  if (it == conn_waiters_.end()) return;
  auto k = std::move(it->second.k);
  conn_waiters_.erase(it);  // its timer is destroyed with it, so its handler finds no waiter
  k(false);
}

std::uint64_t CoreImpl::add_sleeper(asio::steady_timer* t) {
  auto id = next_sleeper_id_++;
  sleepers_[id] = t;
  return id;
}
void CoreImpl::remove_sleeper(std::uint64_t id) { sleepers_.erase(id); }

// ---------------------------------------------------------------------------------------------------------
// Retry loop (Curator's RetryLoop.callWithRetry): wait for the connection up to the connection timeout, try,
// and on a retryable code let the policy decide and sleep on a timer.

struct CoreImpl::RetryState {
  std::shared_ptr<Attempt> attempt;
  unique_function<void(int)> done;
  Clock::time_point start = Clock::now();
  int retries = 0;
  bool retry = true;
  StopPtr stop;
  std::unique_ptr<asio::steady_timer> timer;

  bool stopped() const noexcept { return stop && stop->requested(); }
  /// While the loop waits, a stop request runs `wake` (empty: the wait is over).
  void wake_on_stop(unique_function<void()> wake) {
    if (stop) stop->on_request(std::move(wake));
  }
};

void CoreImpl::with_retry(const RequestOptions& ro,
                          std::shared_ptr<Attempt> attempt,
                          unique_function<void(int)> done) {
  auto st = std::make_shared<RetryState>();
  st->attempt = std::move(attempt);
  st->done = std::move(done);
  st->retry = ro.retry;
  st->stop = ro.stop;
  auto run = std::make_shared<unique_function<void()>>();
  *run = [this, st, weak_run = std::weak_ptr(run)]() {
    auto self_run = weak_run.lock();
    if (closed_) return st->done(ZCLOSING);
    if (auth_failed_) return st->done(ZAUTHFAILED);
    if (st->stopped()) return st->done(kAbortedRc);
    auto go = [this, st, self_run] {
      (*st->attempt)([this, st, self_run](int rc) {
        // A request cut off by the auth failure (or refused after it) fails with it.
        if (auth_failed_ && !closed_ && (rc == ZCLOSING || rc == ZINVALIDSTATE || is_retryable(zk_error(rc))))
          rc = ZAUTHFAILED;
        // A request cut off because we replaced the handle after a session loss (not because the client
        // closed) failed with its session: retry it like an expiry.
        if (rc == ZCLOSING && !closed_) rc = ZSESSIONEXPIRED;
        error_code ec = zk_error(rc);
        if (rc != ZOK && st->retry && !closed_ && !st->stopped() && cfg_.retry_policy->allow_retry(ec)) {
          auto elapsed = std::chrono::duration_cast<Millis>(Clock::now() - st->start);
          if (auto sleep = cfg_.retry_policy->allow_retry(st->retries++, elapsed)) {
            if (log_->should_log(spdlog::level::debug))
              log_->debug("retrying after {} (retry {}, sleeping {} ms)", ec.message(), st->retries,
                          sleep->count());
            st->timer = std::make_unique<asio::steady_timer>(rt_->ioc, *sleep);
            auto sid = add_sleeper(st->timer.get());
            st->timer->async_wait([this, sid, st, self_run](error_code) {
              remove_sleeper(sid);
              st->wake_on_stop({});
              (*self_run)();
            });
            st->wake_on_stop([weak = std::weak_ptr(st)] {
              if (auto s = weak.lock(); s && s->timer) s->timer->cancel();
            });
            return;
          }
        }
        st->done(rc);
      });
    };
    if (connected_) return go();
    auto wid = when_connected(cfg_.connection_timeout, [this, st, go](bool ok) mutable {
      st->wake_on_stop({});
      if (closed_) return st->done(ZCLOSING);
      if (auth_failed_) return st->done(ZAUTHFAILED);
      if (st->stopped()) return st->done(kAbortedRc);
      if (!ok) return st->done(kConnectionTimeoutRc);
      go();
    });
    if (wid != 0) st->wake_on_stop([this, wid] { cancel_connection_wait(wid); });
  };
  (*run)();
}

// ---------------------------------------------------------------------------------------------------------
// Paths, namespaces, ACLs

std::string CoreImpl::fix(std::string_view path) const {
  if (ns_prefix_.empty()) return std::string(path);
  if (path == "/") return ns_prefix_;
  return ns_prefix_ + std::string(path);
}

std::string CoreImpl::unfix(std::string_view path) const {
  if (ns_prefix_.empty()) return std::string(path);
  if (path.substr(0, ns_prefix_.size()) == ns_prefix_ &&
      (path.size() == ns_prefix_.size() || path[ns_prefix_.size()] == '/')) {
    auto rest = path.substr(ns_prefix_.size());
    return rest.empty() ? "/" : std::string(rest);
  }
  return std::string(path);
}

AclList CoreImpl::acl_for(const std::string& full_path, const std::optional<AclList>& explicit_acl) const {
  if (explicit_acl && !explicit_acl->empty()) return *explicit_acl;
  if (cfg_.acl_provider) {
    auto acl = cfg_.acl_provider(full_path);
    if (!acl.empty()) return acl;
  }
  return open_acl_unsafe();
}

error_code CoreImpl::gate(std::string_view path, bool sequential) const {
  if (closed_) return errc::closed;
  if (!started_) return errc::not_started;
  if (path_error(path, sequential)) return errc::invalid_path;
  return {};
}

std::shared_ptr<CoreImpl::Attempt> CoreImpl::in_namespace(std::shared_ptr<Attempt> attempt,
                                                          std::function<bool(int)> root_gone) {
  if (ns_prefix_.empty()) return attempt;
  return std::make_shared<Attempt>([this, attempt, root_gone](unique_function<void(int)> k) {
    ensure_namespace([this, attempt, root_gone, k = std::move(k)](int rc) mutable {
      if (rc != ZOK) return k(rc);
      if (!root_gone) return (*attempt)(std::move(k));
      (*attempt)([this, attempt, root_gone, k = std::move(k)](int rc) mutable {
        if (rc == ZOK || !ns_ready_ || !root_gone(rc)) return k(rc);
        log_->info("namespace {} is gone (an empty container is deleted by the server): making it again",
                   ns_prefix_);
        ns_ready_ = false;
        ensure_namespace([attempt, k = std::move(k)](int rc) mutable {
          if (rc != ZOK) return k(rc);
          (*attempt)(std::move(k));
        });
      });
    });
  });
}

// One creation at a time: the tries of other operations meanwhile wait for its result.
void CoreImpl::ensure_namespace(unique_function<void(int)> k) {
  if (ns_ready_) return k(ZOK);
  ns_waiters_.push_back(std::move(k));
  if (ns_in_progress_) return;
  ns_in_progress_ = true;
  mkdirs(ns_prefix_, true, cfg_.use_container_parents, [this](int rc) {
    ns_in_progress_ = false;
    if (rc == ZOK) ns_ready_ = true;
    auto ws = std::move(ns_waiters_);
    ns_waiters_.clear();
    for (auto& w : ws) w(rc);
  });
}

void CoreImpl::mkdirs(std::string full_path, bool make_last, bool containers, unique_function<void(int)> k) {
  // Walk up with exists() to the deepest existing ancestor (no read access needed above it), then create
  // downwards, ignoring NodeExists (Curator's ZKPaths.mkdirs).
  auto todo = std::make_shared<std::vector<std::string>>();
  std::string p = make_last ? full_path : parent_path(full_path);
  while (!p.empty() && p != "/") {
    todo->push_back(p);
    p = parent_path(p);
  }
  std::reverse(todo->begin(), todo->end());  // top-down
  if (todo->empty()) return post_result(std::move(k), ZOK);
  mkdirs_probe(todo, todo->size(), containers, std::move(k));
}

void CoreImpl::mkdirs_probe(std::shared_ptr<std::vector<std::string>> todo, std::size_t n, bool containers,
                            unique_function<void(int)> k) {
  if (n == 0) return mkdirs_down(todo, 0, containers, std::move(k));
  auto path = (*todo)[n - 1];
  session_->submit(zk::Exists{path}, [this, todo, n, containers, k = std::move(k)](zk::Reply r) mutable {
    const int rc = r.rc;
    if (rc == ZOK) return mkdirs_down(todo, n, containers, std::move(k));
    if (rc == ZNONODE) return mkdirs_probe(todo, n - 1, containers, std::move(k));
    k(rc);
  });
}

void CoreImpl::mkdirs_down(std::shared_ptr<std::vector<std::string>> todo, std::size_t i, bool containers,
                           unique_function<void(int)> k) {
  if (i >= todo->size()) return k(ZOK);
  const auto& path = (*todo)[i];
  session_->submit(zk::Create{path, std::string(), acl_for(path, std::nullopt),
                              containers ? CreateMode::container : CreateMode::persistent},
                   [this, todo, i, containers, k = std::move(k)](zk::Reply r) mutable {
                     if (r.rc != ZOK && r.rc != ZNODEEXISTS) return k(r.rc);
                     mkdirs_down(todo, i + 1, containers, std::move(k));
                   });
}

// ---------------------------------------------------------------------------------------------------------
// Operations

void CoreImpl::create(std::string path, CreateOptions options, CreateCallback cb, RequestOptions ro) {
  const bool sequential = is_sequential(options.mode);
  if (auto ec = gate(path, sequential)) return post_result(std::move(cb), ec, CreateResult{});
  std::string data = options.data ? *options.data : default_data_;
  if (data.size() > cfg_.max_data_size) return post_result(std::move(cb), error_code(errc::data_too_large), CreateResult{});
  if ((options.mode == CreateMode::persistent_with_ttl || options.mode == CreateMode::persistent_sequential_with_ttl) &&
      options.ttl.count() <= 0)
    return post_result(std::move(cb), error_code(errc::invalid_argument), CreateResult{});

  struct State {
    std::string full;
    std::string protected_id;
    std::string data;
    CreateOptions opts;
    int attempts = 0;
    std::optional<CreateResult> found;
    CreateResult result;
  };
  auto st = std::make_shared<State>();
  st->opts = std::move(options);
  st->data = std::move(data);
  st->full = fix(path);
  if (st->opts.protection) {
    st->protected_id = protected_names::new_protected_id();
    st->full = protected_names::to_protected_path(st->full, st->protected_id);
  }
  const bool parents = st->opts.creating_parents || st->opts.parents_as_containers;
  const bool containers = st->opts.parents_as_containers && cfg_.use_container_parents;

  auto attempt =
      std::make_shared<Attempt>([this, st, parents, containers](unique_function<void(int)> k) mutable {
        auto do_create = [this, st, parents, containers](unique_function<void(int)> k) mutable {
          zk::Create request{st->full, st->data, acl_for(st->full, st->opts.acl), st->opts.mode,
                             st->opts.ttl.count()};
          auto done = [st](zk::Reply r, unique_function<void(int)>& k) {
            if (r.rc == ZOK) st->result = CreateResult{std::move(r.path), r.stat};
            k(r.rc);
          };
          session_->submit(
              request, [this, st, parents, containers, request, done, k = std::move(k)](zk::Reply r) mutable {
                if (r.rc == ZNONODE && parents) {
                  // The parents are made and the create is sent again, once.
                  return mkdirs(st->full, false, containers,
                                [this, request = std::move(request), done, k = std::move(k)](int rc) mutable {
                                  if (rc != ZOK) return k(rc);
                                  session_->submit(std::move(request),
                                                   [done, k = std::move(k)](zk::Reply r) mutable {
                                                     done(std::move(r), k);
                                                   });
                                });
                }
                done(std::move(r), k);
              });
        };
        if (st->attempts++ == 0) return do_create(std::move(k));
        if (st->protected_id.empty()) return do_create(std::move(k));
        // Protected mode, after a failed try: look for the node our earlier try may have created.
        find_protected(st->full, st->protected_id, is_ephemeral(st->opts.mode),
                       [st, do_create = std::move(do_create), k = std::move(k)](
                           int rc, std::optional<CreateResult> found) mutable {
                         if (rc != ZOK) return k(rc);
                         if (found) {
                           st->result = std::move(*found);
                           return k(ZOK);
                         }
                         do_create(std::move(k));
                       });
      });
  std::function<bool(int)> root_gone;
  if (!parents && under_namespace_root(st->full)) root_gone = [](int rc) { return rc == ZNONODE; };
  auto tried = in_namespace(std::move(attempt), std::move(root_gone));
  with_retry(ro, std::move(tried), [this, st, cb = std::move(cb)](int rc) mutable {
    if (rc != ZOK) {
      // A try whose outcome is unknown may have made the node: find it by its protected id and delete it.
      // A stop after a failed try counts as unknown (the loop did not get to look). With no try sent (never
      // connected), there is nothing to look for.
      if (!st->protected_id.empty() && !closed_ && st->attempts > 0 &&
          (rc == ZCONNECTIONLOSS || rc == ZOPERATIONTIMEOUT || rc == kConnectionTimeoutRc ||
           rc == kAbortedRc))
        find_and_delete_in_background(parent_path(st->full), st->protected_id, 0);
      return cb(map_rc(rc), CreateResult{});
    }
    st->result.path = unfix(st->result.path);
    cb({}, std::move(st->result));
  });
}

void CoreImpl::find_protected(std::string full_path, std::string protected_id,
                              bool ephemeral, unique_function<void(int, std::optional<CreateResult>)> k) {
  auto parent = parent_path(full_path);
  session_->submit(zk::GetChildren{parent}, [this, parent, protected_id, ephemeral,
                                             k = std::move(k)](zk::Reply r) mutable {
    if (r.rc == ZNONODE) return k(ZOK, std::nullopt);
    if (r.rc != ZOK) return k(r.rc, std::nullopt);
    const auto& names = r.children;
    const auto prefix = protected_names::prefix_for(protected_id);
    for (auto& n : names) {
      if (n.compare(0, prefix.size(), prefix) != 0) continue;
      auto path = make_path(parent, n);
      return session_->submit(zk::Exists{path}, [this, path, ephemeral,
                                                 k = std::move(k)](zk::Reply r) mutable {
        if (r.rc == ZNONODE) return k(ZOK, std::nullopt);
        if (r.rc != ZOK) return k(r.rc, std::nullopt);
        const auto& s = r.stat;
        // CURATOR-498/604: never adopt an ephemeral node of an earlier session.
        if (ephemeral && (s.ephemeral_owner != session_id_ || session_id_ == 0)) {
          log_->info("protected create: found {} of an earlier session; deleting it instead of adopting", path);
          background_delete(path, 0);
          return k(ZOK, std::nullopt);
        }
        k(ZOK, CreateResult{path, s});
      });
    }
    k(ZOK, std::nullopt);
  });
}

void CoreImpl::find_and_delete_in_background(std::string parent_full, std::string protected_id, int attempt) {
  if (closed_ || auth_failed_) return;
  ++pending_delete_count_;
  auto retry_later = [this, parent_full, protected_id, attempt] {
    auto t = std::make_shared<asio::steady_timer>(rt_->ioc, std::chrono::milliseconds(std::min(1000, 50 << std::min(attempt, 5))));
    auto sid = add_sleeper(t.get());
    t->async_wait([this, t, sid, parent_full, protected_id, attempt](error_code) {
      remove_sleeper(sid);
      --pending_delete_count_;
      find_and_delete_in_background(parent_full, protected_id, attempt + 1);
    });
  };
  auto go = [this, parent_full, protected_id, retry_later]() mutable {
    session_->submit(zk::GetChildren{parent_full}, [this, parent_full, protected_id,
                                                    retry_later](zk::Reply r) mutable {
      const int rc = r.rc;
      const auto& names = r.children;
      if (rc == ZNONODE) {
        --pending_delete_count_;
        return;
      }
      // As background_delete: only what retrying can fix is retried (ZCLOSING: the handle was replaced).
      if (rc != ZOK && (is_retryable(zk_error(rc)) || rc == ZCLOSING)) return retry_later();
      if (rc != ZOK) {
        log_->error("cannot look for the node of a failed protected create under {}: {}", parent_full,
                    zk_error(rc).message());
        --pending_delete_count_;
        return;
      }
      const auto prefix = protected_names::prefix_for(protected_id);
      for (auto& n : names)
        if (n.compare(0, prefix.size(), prefix) == 0) {
          log_->info("deleting {} left by a failed protected create", make_path(parent_full, n));
          background_delete(make_path(parent_full, n), 0);
        }
      --pending_delete_count_;
    });
  };
  if (connected_) return go();
  when_connected(cfg_.connection_timeout, [this, go, retry_later](bool ok) mutable {
    if (closed_ || auth_failed_) {
      --pending_delete_count_;
      return;
    }
    if (ok) return go();
    retry_later();
  });
}

void CoreImpl::background_delete(std::string full_path, int attempt) {
  if (closed_ || auth_failed_) {
    log_->warn("client {} with a guaranteed delete of {} pending", closed_ ? "closed" : "failed authentication",
               full_path);
    return;
  }
  if (attempt == 0) {
    ++pending_delete_count_;
    pending_deletes_.insert(full_path);
  }
  auto finish = [this, full_path] {
    auto it = pending_deletes_.find(full_path);
    if (it != pending_deletes_.end()) pending_deletes_.erase(it);
    --pending_delete_count_;
  };
  auto retry_later = [this, full_path, attempt, finish] {
    if (closed_ || auth_failed_) return finish();
    auto t = std::make_shared<asio::steady_timer>(
        rt_->ioc, std::chrono::milliseconds(std::min(1000, 50 << std::min(attempt, 5))));
    auto sid = add_sleeper(t.get());
    t->async_wait([this, t, sid, full_path, attempt, finish](error_code) {
      remove_sleeper(sid);
      if (closed_ || auth_failed_) return finish();
      background_delete(full_path, attempt + 1);
    });
  };
  auto go = [this, full_path, finish, retry_later] {
    session_->submit(zk::Delete{full_path}, [this, full_path, finish, retry_later](zk::Reply r) {
      const int rc = r.rc;
      if (rc == ZOK || rc == ZNONODE) return finish();
      if (is_retryable(zk_error(rc)) || rc == ZCLOSING) return retry_later();
      log_->error("guaranteed delete of {} failed for good: {}", full_path, zk_error(rc).message());
      finish();
    });
  };
  if (connected_) return go();
  when_connected(cfg_.connection_timeout, [go, retry_later](bool ok) {
    if (ok) return go();
    retry_later();
  });
}

void CoreImpl::remove(std::string path, int version, bool guaranteed, bool quietly, VoidCallback cb,
                      RequestOptions ro) {
  if (guaranteed) ro.stop.reset();  // a guaranteed delete keeps its guarantee when its caller stops waiting
  if (auto ec = gate(path)) return post_result(std::move(cb), ec);
  if (path == "/") return post_result(std::move(cb), error_code(errc::invalid_path));
  auto full = fix(path);
  auto attempt = std::make_shared<Attempt>([this, full, version](unique_function<void(int)> k) {
    session_->submit(zk::Delete{full, version}, [k = std::move(k)](zk::Reply r) mutable { k(r.rc); });
  });
  // A retryable failure to create the namespace keeps a guaranteed delete too.
  with_retry(ro, in_namespace(std::move(attempt)),
             [this, full, guaranteed, quietly, cb = std::move(cb)](int rc) mutable {
               if (rc == ZNONODE && quietly) return cb({});
               if (rc != ZOK && guaranteed && !closed_ &&
                   (is_retryable(zk_error(rc)) || rc == kConnectionTimeoutRc))
                 background_delete(full, 0);
               cb(map_rc(rc));
             });
}

void remove_each(Core& core, std::vector<std::string> paths, VoidCallback cb) {
  if (paths.empty()) return cb({});
  struct Join {
    std::size_t left;
    error_code first;
    VoidCallback cb;
  };
  auto j = std::make_shared<Join>(Join{paths.size(), {}, std::move(cb)});
  for (auto& p : paths)
    core.remove(std::move(p), -1, /*guaranteed=*/true, /*quietly=*/true, [j](error_code e) {
      if (e && !j->first) j->first = e;
      if (--j->left == 0) j->cb(j->first);
    });
}

bool CoreImpl::remove_from_caller(std::vector<std::string> paths, VoidCallback& cb) {
  if (paths.empty() || running_in_io_thread() || !is_open() || !connected_) return false;
  for (const auto& p : paths)
    if (gate(p) || p == "/") return false;
  zk::Request request;
  if (paths.size() == 1) {
    request = zk::Delete{fix(paths.front())};
  } else {
    zk::Multi m;
    for (const auto& p : paths) m.ops.push_back(Op::remove(fix(p)));
    request = std::move(m);
  }
  // Held apart from the reply callback, so that it goes back to the caller untouched when nothing was sent.
  auto held = std::make_shared<VoidCallback>(std::move(cb));
  zk::ReplyCallback reply = [this, paths = std::move(paths), held](zk::Reply r) mutable {
    if (r.rc == ZOK || (r.rc == ZNONODE && paths.size() == 1)) return (*held)({});
    // Anything else continues as the usual guaranteed, quiet removes, one per node (a multi fails whole when
    // one of its nodes is already gone).
    remove_each(*this, std::move(paths), std::move(*held));
  };
  if (session_->submit_from_caller(request, reply)) return true;
  cb = std::move(*held);
  return false;
}

void CoreImpl::delete_children_then(std::string path, int version, bool guaranteed, bool quietly, VoidCallback cb,
                                    StopPtr stop) {
  if (guaranteed) {
    // As Curator: the tree is deleted without the guarantee (and without the caller's stop, as in remove), and
    // a failure for a connection reason anywhere in it keeps the top path. The background delete removes that
    // node only, so it completes once the children are gone, or reports not_empty and gives up.
    return delete_children_then(path, version, false, quietly,
                                [this, path, cb = std::move(cb)](error_code ec) mutable {
                                  if (ec && !closed_ && (is_retryable(ec) || ec == errc::connection_timeout))
                                    background_delete(fix(path), 0);
                                  cb(ec);
                                });
  }
  get_children(path, nullptr,
               [this, path, version, quietly, stop, cb = std::move(cb)](error_code ec, Children c) mutable {
                 if (ec == zk_errc::no_node) return quietly ? cb({}) : cb(ec);
                 if (ec) return cb(ec);
                 auto names = std::make_shared<std::vector<std::string>>(std::move(c.names));
                 auto step = std::make_shared<unique_function<void(std::size_t)>>();
                 *step = [this, path, version, quietly, names, stop, weak = std::weak_ptr(step),
                          cb = std::move(cb)](std::size_t i) mutable {
                   if (i == names->size())
                     return remove(path, version, false, quietly, std::move(cb), {.stop = stop});
                   auto self = weak.lock();
                   delete_children_then(make_path(path, (*names)[i]), -1, false, true,
                                        [self, i, &cb](error_code ec) mutable {
                                          if (ec) return cb(ec);
                                          (*self)(i + 1);
                                        },
                                        stop);
                 };
                 (*step)(0);
               },
               {.stop = stop});
}

WatchId CoreImpl::exists(std::string path, WatchCallback watch, StatCallback cb, RequestOptions ro) {
  if (auto ec = gate(path)) {
    post_result(std::move(cb), ec, zkr::Stat{});
    return 0;
  }
  const WatchId id = add_watch(std::move(watch), path, zk::WatchKind::data);
  auto full = fix(path);
  auto result = std::make_shared<zkr::Stat>();
  auto attempt = std::make_shared<Attempt>([this, full, id, result](unique_function<void(int)> k) {
    session_->submit(zk::Exists{full, id}, [result, k = std::move(k)](zk::Reply r) mutable {
      *result = r.stat;
      k(r.rc);
    });
  });
  with_retry(ro, in_namespace(std::move(attempt)), [this, id, result, cb = std::move(cb)](int rc) mutable {
    if (rc != ZOK && rc != ZNONODE) watches_.erase(id);
    cb(map_rc(rc), *result);
  });
  return id;
}

WatchId CoreImpl::get_data(std::string path, WatchCallback watch, DataCallback cb, RequestOptions ro) {
  if (auto ec = gate(path)) {
    post_result(std::move(cb), ec, NodeData{});
    return 0;
  }
  const WatchId id = add_watch(std::move(watch), path, zk::WatchKind::data);
  auto full = fix(path);
  auto result = std::make_shared<NodeData>();
  auto attempt = std::make_shared<Attempt>([this, full, id, result](unique_function<void(int)> k) {
    session_->submit(zk::GetData{full, id}, [result, k = std::move(k)](zk::Reply r) mutable {
      result->data = std::move(r.data);
      result->stat = r.stat;
      k(r.rc);
    });
  });
  with_retry(ro, in_namespace(std::move(attempt)), [this, id, result, cb = std::move(cb)](int rc) mutable {
    if (rc != ZOK) watches_.erase(id);
    cb(map_rc(rc), std::move(*result));
  });
  return id;
}

WatchId CoreImpl::get_children(std::string path, WatchCallback watch, ChildrenCallback cb, RequestOptions ro) {
  if (auto ec = gate(path)) {
    post_result(std::move(cb), ec, Children{});
    return 0;
  }
  const WatchId id = add_watch(std::move(watch), path, zk::WatchKind::children);
  auto full = fix(path);
  auto result = std::make_shared<Children>();
  auto attempt = std::make_shared<Attempt>([this, full, id, result](unique_function<void(int)> k) {
    session_->submit(zk::GetChildren{full, id}, [result, k = std::move(k)](zk::Reply r) mutable {
      result->names = std::move(r.children);
      result->stat = r.stat;
      k(r.rc);
    });
  });
  with_retry(ro, in_namespace(std::move(attempt)), [this, id, result, cb = std::move(cb)](int rc) mutable {
    if (rc != ZOK) watches_.erase(id);
    cb(map_rc(rc), std::move(*result));
  });
  return id;
}

void CoreImpl::set_data(std::string path, std::string data, int version, StatCallback cb, RequestOptions ro) {
  if (auto ec = gate(path)) return post_result(std::move(cb), ec, zkr::Stat{});
  if (data.size() > cfg_.max_data_size)
    return post_result(std::move(cb), error_code(errc::data_too_large), zkr::Stat{});
  auto full = fix(path);
  auto result = std::make_shared<zkr::Stat>();
  auto d = std::make_shared<std::string>(std::move(data));
  auto attempt = std::make_shared<Attempt>([this, full, d, version, result](unique_function<void(int)> k) {
    session_->submit(zk::SetData{full, *d, version}, [result, k = std::move(k)](zk::Reply r) mutable {
      *result = r.stat;
      k(r.rc);
    });
  });
  with_retry(ro, in_namespace(std::move(attempt)),
             [this, result, cb = std::move(cb)](int rc) mutable { cb(map_rc(rc), *result); });
}

void CoreImpl::multi(std::vector<Op> ops, MultiCallback cb, RequestOptions ro) {
  if (closed_) return post_result(std::move(cb), error_code(errc::closed), std::vector<OpResult>{});
  if (!started_) return post_result(std::move(cb), error_code(errc::not_started), std::vector<OpResult>{});
  for (auto& op : ops) {
    // The C client 3.8 misreads multi replies for container and TTL creates: refuse them here.
    if (op.kind == Op::Kind::create &&
        (op.mode == CreateMode::container || op.mode == CreateMode::persistent_with_ttl ||
         op.mode == CreateMode::persistent_sequential_with_ttl))
      return post_result(std::move(cb), error_code(errc::invalid_argument), std::vector<OpResult>{});
    if (path_error(op.path, op.kind == Op::Kind::create && is_sequential(op.mode)))
      return post_result(std::move(cb), error_code(errc::invalid_path), std::vector<OpResult>{});
    if (op.data.size() > cfg_.max_data_size)
      return post_result(std::move(cb), error_code(errc::data_too_large), std::vector<OpResult>{});
  }
  if (ops.empty()) return post_result(std::move(cb), error_code{}, std::vector<OpResult>{});
  struct MultiState {
    std::vector<Op> ops;            // as given (un-namespaced)
    std::vector<std::string> full;  // their full paths
    std::vector<OpResult> out;
    std::vector<error_code> errors;  // the last try's per-op errors (none when it was never sent)
  };
  auto st = std::make_shared<MultiState>();
  st->ops = std::move(ops);
  for (const auto& op : st->ops) st->full.push_back(fix(op.path));
  auto attempt = std::make_shared<Attempt>([this, st](unique_function<void(int)> k) {
    zk::Multi request;
    request.ops.reserve(st->ops.size());
    for (std::size_t i = 0; i < st->ops.size(); ++i) {
      auto& op = request.ops.emplace_back(st->ops[i]);
      op.path = st->full[i];
      op.acl = acl_for(op.path, st->ops[i].acl);  // asked again on each try
    }
    st->errors.clear();
    session_->submit(std::move(request), [st, k = std::move(k)](zk::Reply r) mutable {
      if (!r.results.empty()) {
        for (const auto& o : r.results) st->errors.push_back(o.ec);
        st->out = std::move(r.results);
      }
      k(r.rc);
    });
  });
  // A transaction fails as a whole with the first failing operation's error: the root may be gone when that
  // operation is a create right under it.
  std::function<bool(int)> root_gone = [this, st](int rc) {
    if (rc != ZNONODE) return false;
    for (std::size_t i = 0; i < st->errors.size(); ++i)
      if (st->errors[i] == zk_errc::no_node)
        return st->ops[i].kind == Op::Kind::create && under_namespace_root(st->full[i]);
    return false;
  };
  auto tried = in_namespace(std::move(attempt), std::move(root_gone));
  with_retry(ro, std::move(tried), [this, st, cb = std::move(cb)](int rc) mutable {
    for (auto& o : st->out)
      if (!o.path.empty()) o.path = unfix(o.path);
    cb(map_rc(rc), std::move(st->out));
  });
}

void CoreImpl::sync(std::string path, VoidCallback cb, RequestOptions ro) {
  if (auto ec = gate(path)) return post_result(std::move(cb), ec);
  auto full = fix(path);
  auto attempt = std::make_shared<Attempt>([this, full](unique_function<void(int)> k) {
    session_->submit(zk::Sync{full}, [k = std::move(k)](zk::Reply r) mutable { k(r.rc); });
  });
  with_retry(ro, in_namespace(std::move(attempt)), [this, cb = std::move(cb)](int rc) mutable { cb(map_rc(rc)); });
}

WatchId CoreImpl::add_watch(WatchCallback watch, const std::string& path, zk::WatchKind kind) {
  if (!watch) return 0;
  const WatchId id = next_watch_id_++;
  watches_.emplace(id, WatchEntry{std::move(watch), path, kind});
  return id;
}

void CoreImpl::remove_watch(WatchId id) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return;
  auto full = fix(it->second.path);
  const auto kind = it->second.kind;
  watches_.erase(it);
  // The server-side registration goes in the background; the reply is not waited for.
  if (session_->is_open() && connected_) session_->submit(zk::RemoveWatches{std::move(full), kind, id}, {});
}

void CoreImpl::remove_all_watches(std::string path, VoidCallback cb) {
  if (auto ec = gate(path)) return post_result(std::move(cb), ec);
  for (auto it = watches_.begin(); it != watches_.end();)
    it = it->second.path == path ? watches_.erase(it) : std::next(it);
  if (!session_->is_open())
    return post_result(std::move(cb), auth_failed_ ? error_code(zk_errc::auth_failed) : error_code(errc::closed));
  session_->submit(
      zk::RemoveWatches{fix(path), zk::WatchKind::any},
      [cb = std::move(cb)](zk::Reply r) mutable { cb(r.rc == ZNOWATCHER ? error_code{} : zk_error(r.rc)); });
}

void CoreImpl::on_watch_event(WatchId id, EventType type) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return;
  WatchedEvent ev;
  ev.path = it->second.path;
  ev.type = type;
  auto cb = std::move(it->second.cb);
  watches_.erase(it);
  cb(ev);
}

}  // namespace detail

// ===========================================================================================================
// CuratorFramework: the public twins over CoreImpl.

CuratorFramework::CuratorFramework(ClientConfig config)
    : impl_(std::make_shared<detail::CoreImpl>(std::move(config))), core_(impl_) {}
CuratorFramework::CuratorFramework(CuratorFramework&&) noexcept = default;
CuratorFramework& CuratorFramework::operator=(CuratorFramework&& o) noexcept {
  if (this != &o) {
    close();
    impl_ = std::move(o.impl_);
    core_ = std::move(o.core_);
  }
  return *this;
}
CuratorFramework::~CuratorFramework() { close(); }

const std::shared_ptr<detail::Core>& CuratorFramework::core() const { return core_; }

void CuratorFramework::start() { throw_if(impl_->start(), "start", impl_->config().connect_string); }
void CuratorFramework::start(error_code& ec) { ec = impl_->start(); }
void CuratorFramework::close() noexcept {
  if (impl_) impl_->close();
}
bool CuratorFramework::block_until_connected(std::chrono::milliseconds timeout) {
  return impl_->block_until_connected(timeout);
}
bool CuratorFramework::is_started() const noexcept { return impl_->is_open(); }
bool CuratorFramework::is_connected() const noexcept { return impl_->is_connected(); }
std::int64_t CuratorFramework::session_id() const noexcept { return impl_->session_id(); }
const std::string& CuratorFramework::namespace_name() const noexcept { return impl_->config().namespace_name; }
std::uint64_t CuratorFramework::add_connection_state_listener(ConnectionStateListener l) {
  return impl_->add_public_listener(std::move(l));
}
void CuratorFramework::remove_connection_state_listener(std::uint64_t id) { impl_->remove_public_listener(id); }
std::size_t CuratorFramework::pending_guaranteed_deletes() const { return impl_->pending_deletes(); }

void CuratorFramework::inject_session_expiration() {
  throw_if(impl_->inject_session_expiration(), "inject_session_expiration", "");
}

CreateResult CuratorFramework::create(const std::string& path, const CreateOptions& options, error_code& ec) {
  return detail::run_blocking<CreateResult>(
      *core_, [&](detail::CreateCallback cb) { core_->create(path, options, std::move(cb)); }, ec);
}
CreateResult CuratorFramework::create(const std::string& path, const CreateOptions& options) {
  error_code ec;
  auto r = create(path, options, ec);
  throw_if(ec, "create", path);
  return r;
}

void CuratorFramework::connected_start(const std::shared_ptr<detail::CoreImpl>& impl,
                                       std::chrono::milliseconds timeout,
                                       detail::unique_function<void(error_code, bool)> cb, detail::StopPtr stop) {
  const auto id = impl->when_connected(timeout, [cb = std::move(cb)](bool ok) mutable { cb({}, ok); });
  if (id != 0 && stop)
    stop->on_request([weak = std::weak_ptr(impl), id] {
      if (auto i = weak.lock()) i->cancel_connection_wait(id);
    });
}

void CuratorFramework::remove_start(const std::shared_ptr<detail::Core>& core, std::string path,
                                    DeleteOptions options, detail::VoidCallback cb, detail::StopPtr stop) {
  auto* impl = static_cast<detail::CoreImpl*>(core.get());
  if (options.deleting_children)
    impl->delete_children_then(std::move(path), options.version, options.guaranteed, options.quietly, std::move(cb),
                               std::move(stop));
  else
    impl->remove(std::move(path), options.version, options.guaranteed, options.quietly, std::move(cb),
                 {.stop = std::move(stop)});
}
void CuratorFramework::remove(const std::string& path, const DeleteOptions& options, error_code& ec) {
  detail::run_blocking_void(
      *core_, [&](detail::VoidCallback cb) { remove_start(core_, path, options, std::move(cb)); }, ec);
}
void CuratorFramework::remove(const std::string& path, const DeleteOptions& options) {
  error_code ec;
  remove(path, options, ec);
  throw_if(ec, "delete", path);
}

detail::WatchCallback CuratorFramework::wrap_watcher(const std::shared_ptr<detail::Core>& core, Watcher w) {
  if (!w) return {};
  return [ex = core->completion_executor(), w = std::move(w)](const WatchedEvent& ev) {
    boost::asio::post(ex, [w, ev] { w(ev); });
  };
}

detail::WatchId CuratorFramework::exists_start(const std::shared_ptr<detail::Core>& core, std::string path,
                                               Watcher w,
                                               detail::unique_function<void(error_code, std::optional<Stat>)> cb,
                                               detail::StopPtr stop) {
  return core->exists(
      std::move(path), wrap_watcher(core, std::move(w)),
      [cb = std::move(cb)](error_code ec, Stat s) {
        if (ec == zk_errc::no_node) return cb({}, std::nullopt);
        if (ec) return cb(ec, std::nullopt);
        cb({}, s);
      },
      {.stop = std::move(stop)});
}
std::optional<Stat> CuratorFramework::exists(const std::string& path, Watcher watcher, error_code& ec) {
  return detail::run_blocking<std::optional<Stat>>(
      *core_,
      [&](detail::unique_function<void(error_code, std::optional<Stat>)> cb) {
        exists_start(core_, path, std::move(watcher), std::move(cb));
      },
      ec);
}
std::optional<Stat> CuratorFramework::exists(const std::string& path, Watcher watcher) {
  error_code ec;
  auto r = exists(path, std::move(watcher), ec);
  throw_if(ec, "exists", path);
  return r;
}

NodeData CuratorFramework::get_data(const std::string& path, Watcher watcher, error_code& ec) {
  return detail::run_blocking<NodeData>(
      *core_,
      [&](detail::DataCallback cb) { core_->get_data(path, wrap_watcher(core_, std::move(watcher)), std::move(cb)); },
      ec);
}
NodeData CuratorFramework::get_data(const std::string& path, Watcher watcher) {
  error_code ec;
  auto r = get_data(path, std::move(watcher), ec);
  throw_if(ec, "get_data", path);
  return r;
}

std::vector<std::string> CuratorFramework::get_children(const std::string& path, Watcher watcher, error_code& ec) {
  return detail::run_blocking<std::vector<std::string>>(
      *core_,
      [&](detail::unique_function<void(error_code, std::vector<std::string>)> cb) {
        core_->get_children(path, wrap_watcher(core_, std::move(watcher)),
                            [cb = std::move(cb)](error_code ec, Children c) { cb(ec, std::move(c.names)); });
      },
      ec);
}
std::vector<std::string> CuratorFramework::get_children(const std::string& path, Watcher watcher) {
  error_code ec;
  auto r = get_children(path, std::move(watcher), ec);
  throw_if(ec, "get_children", path);
  return r;
}

Stat CuratorFramework::set_data(const std::string& path, const std::string& data, int version, error_code& ec) {
  return detail::run_blocking<Stat>(
      *core_, [&](detail::StatCallback cb) { core_->set_data(path, data, version, std::move(cb)); }, ec);
}
Stat CuratorFramework::set_data(const std::string& path, const std::string& data, int version) {
  error_code ec;
  auto r = set_data(path, data, version, ec);
  throw_if(ec, "set_data", path);
  return r;
}

std::vector<OpResult> CuratorFramework::multi(const std::vector<Op>& ops, error_code& ec) {
  return detail::run_blocking<std::vector<OpResult>>(
      *core_, [&](detail::MultiCallback cb) { core_->multi(ops, std::move(cb)); }, ec);
}
std::vector<OpResult> CuratorFramework::multi(const std::vector<Op>& ops) {
  error_code ec;
  auto r = multi(ops, ec);
  throw_if(ec, "multi", ops.empty() ? "" : ops.front().path);
  return r;
}

void CuratorFramework::sync(const std::string& path, error_code& ec) {
  detail::run_blocking_void(*core_, [&](detail::VoidCallback cb) { core_->sync(path, std::move(cb)); }, ec);
}
void CuratorFramework::sync(const std::string& path) {
  error_code ec;
  sync(path, ec);
  throw_if(ec, "sync", path);
}

void CuratorFramework::remove_watches(const std::string& path, error_code& ec) {
  detail::run_blocking_void(
      *core_, [&](detail::VoidCallback cb) { impl_->remove_all_watches(path, std::move(cb)); }, ec);
}
void CuratorFramework::remove_watches(const std::string& path) {
  error_code ec;
  remove_watches(path, ec);
  throw_if(ec, "remove_watches", path);
}

std::unique_ptr<CuratorFramework> CuratorFrameworkFactory::new_client(std::string connect_string,
                                                                      RetryPolicyPtr retry_policy) {
  ClientConfig c;
  c.connect_string = std::move(connect_string);
  c.retry_policy = std::move(retry_policy);
  return std::make_unique<CuratorFramework>(std::move(c));
}
std::unique_ptr<CuratorFramework> CuratorFrameworkFactory::new_client(std::string connect_string,
                                                                      std::chrono::milliseconds session_timeout,
                                                                      std::chrono::milliseconds connection_timeout,
                                                                      RetryPolicyPtr retry_policy) {
  ClientConfig c;
  c.connect_string = std::move(connect_string);
  c.session_timeout = session_timeout;
  c.connection_timeout = connection_timeout;
  c.retry_policy = std::move(retry_policy);
  return std::make_unique<CuratorFramework>(std::move(c));
}

}  // namespace zkr
