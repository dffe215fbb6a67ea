// The session over the single-threaded ZooKeeper C client: the handle's life, the pump that drives it from
// Asio (with the handshake bound and the corking of each turn's requests), and the one submit path through
// which every request type reaches the C client (a request description, sent by `send`, and a completion
// adapter per C completion signature that turns the C client's answer into a `zk::Reply` posted to the I/O
// thread).

#include "st_session.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cstring>
#include <type_traits>

namespace asio = boost::asio;

namespace zkr::detail {
namespace {

// Errors are ignored: an uncorkable socket only costs segments, and a broken one is the C client's to report.
void set_cork(int fd, bool on) {
  const int v = on ? 1 : 0;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_CORK, &v, sizeof v);
}

void global_watcher(zhandle_t*, int type, int state, const char*, void* ctx) {
  if (type != ZOO_SESSION_EVENT) return;
  auto* h = static_cast<StSession::HandleCtx*>(ctx);
  if (h && h->session) h->session->on_c_session_event(h->generation, state);
}

void node_watcher(zhandle_t* zh, int type, int, const char*, void* ctx) {
  if (type == ZOO_SESSION_EVENT) return;  // session events are handled by the global watcher
  auto* h = static_cast<const StSession::HandleCtx*>(zoo_get_context(zh));
  if (h && h->session)
    h->session->on_c_watch_event(static_cast<WatchId>(reinterpret_cast<std::uintptr_t>(ctx)), type);
}

void* watch_ctx(WatchId id) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(id)); }

// ---------------------------------------------------------------------------------------------------------
// The submit path. A request in flight: everything the C client may read until its completion, which takes it
// back (the completion adapters below) and posts the reply to the I/O thread.

struct Pending {
  asio::io_context* ioc;
  zk::Request request;
  zk::ReplyCallback cb;
  zk::Reply reply;
  // Multi: the op array, the results and created paths the C client fills, the ACLs it reads.
  std::vector<std::unique_ptr<CAclVector>> cacls;
  std::vector<std::vector<char>> path_bufs;
  std::vector<::Stat> stats;
  std::vector<zoo_op_t> cops;
  std::vector<zoo_op_result_t> results;
};

std::unique_ptr<Pending> take(const void* data) {
  return std::unique_ptr<Pending>(static_cast<Pending*>(const_cast<void*>(data)));
}

/// Delivers `p`'s reply on the I/O thread (never inline: completions run inside zookeeper_process).
void deliver(std::unique_ptr<Pending> p, int rc) {
  p->reply.rc = rc;
  if (!p->cb) return;
  auto* ioc = p->ioc;
  asio::post(*ioc, [cb = std::move(p->cb), reply = std::move(p->reply)]() mutable { cb(std::move(reply)); });
}

// The completion adapters, one per C completion signature.
void void_done(int rc, const void* data) { deliver(take(data), rc); }
void stat_done(int rc, const ::Stat* stat, const void* data) {
  auto p = take(data);
  if (rc == ZOK) p->reply.stat = to_stat(stat);
  deliver(std::move(p), rc);
}
void string_stat_done(int rc, const char* value, const ::Stat* stat, const void* data) {
  auto p = take(data);
  p->reply.path = value ? value : "";
  if (rc == ZOK) p->reply.stat = to_stat(stat);
  deliver(std::move(p), rc);
}
void string_done(int rc, const char*, const void* data) { deliver(take(data), rc); }
void data_done(int rc, const char* value, int len, const ::Stat* stat, const void* data) {
  auto p = take(data);
  if (rc == ZOK && value && len > 0) p->reply.data.assign(value, static_cast<std::size_t>(len));
  if (rc == ZOK) p->reply.stat = to_stat(stat);
  deliver(std::move(p), rc);
}
void children_done(int rc, const String_vector* strings, const ::Stat* stat, const void* data) {
  auto p = take(data);
  if (rc == ZOK && strings) {
    p->reply.children.reserve(static_cast<std::size_t>(strings->count));
    for (int i = 0; i < strings->count; ++i) p->reply.children.emplace_back(strings->data[i]);
  }
  if (rc == ZOK) p->reply.stat = to_stat(stat);
  deliver(std::move(p), rc);
}
void multi_done(int rc, const void* data) {
  auto p = take(data);
  const auto& ops = std::get<zk::Multi>(p->request).ops;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    OpResult o;
    o.ec = zk_error(p->results[i].err);
    if (ops[i].kind == Op::Kind::create && p->results[i].err == ZOK) o.path = p->path_bufs[i].data();
    if (ops[i].kind == Op::Kind::set_data && p->results[i].err == ZOK) o.stat = to_stat(&p->stats[i]);
    p->reply.results.push_back(std::move(o));
  }
  deliver(std::move(p), rc);
}
/// The remove-watches calls' prototypes say `void_completion_t*`, but the C client calls the argument itself
/// as the function (and asserts on a missing one): pass the function.
void_completion_t* remove_watches_completion() {
  const void_completion_t f = void_done;
  return reinterpret_cast<void_completion_t*>(f);
}

ZooWatcherType to_c_watch_type(zk::WatchKind k) {
  switch (k) {
    case zk::WatchKind::data:
      return ZWATCHTYPE_DATA;
    case zk::WatchKind::children:
      return ZWATCHTYPE_CHILD;
    case zk::WatchKind::any:
      return ZWATCHTYPE_ANY;
  }
  return ZWATCHTYPE_ANY;
}

/// Hands `p`'s request to the C client (under the C-client mutex); `p` is the completion's context. Returns
/// the call's code: anything but ZOK means the C client refused it and will not call the completion.
int send(zhandle_t* zh, Pending& p) {
  return std::visit(
      [&](auto& r) -> int {
        using R = std::decay_t<decltype(r)>;
        void* ctx = &p;
        if constexpr (std::is_same_v<R, zk::Create>) {
          const CAclVector acl(r.acl);
          const int mode = to_c_mode(r.mode);
          const int len = static_cast<int>(r.data.size());
          if (mode == ZOO_PERSISTENT_WITH_TTL || mode == ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL)
            return zoo_acreate2_ttl(zh, r.path.c_str(), r.data.data(), len, acl.get(), mode, r.ttl_ms,
                                    string_stat_done, ctx);
          return zoo_acreate2(zh, r.path.c_str(), r.data.data(), len, acl.get(), mode, string_stat_done, ctx);
        } else if constexpr (std::is_same_v<R, zk::Delete>) {
          return zoo_adelete(zh, r.path.c_str(), r.version, void_done, ctx);
        } else if constexpr (std::is_same_v<R, zk::Exists>) {
          return zoo_awexists(zh, r.path.c_str(), r.watch ? node_watcher : nullptr, watch_ctx(r.watch),
                              stat_done, ctx);
        } else if constexpr (std::is_same_v<R, zk::GetData>) {
          return zoo_awget(zh, r.path.c_str(), r.watch ? node_watcher : nullptr, watch_ctx(r.watch),
                           data_done, ctx);
        } else if constexpr (std::is_same_v<R, zk::GetChildren>) {
          return zoo_awget_children2(zh, r.path.c_str(), r.watch ? node_watcher : nullptr, watch_ctx(r.watch),
                                     children_done, ctx);
        } else if constexpr (std::is_same_v<R, zk::SetData>) {
          return zoo_aset(zh, r.path.c_str(), r.data.data(), static_cast<int>(r.data.size()), r.version,
                          stat_done, ctx);
        } else if constexpr (std::is_same_v<R, zk::Multi>) {
          const auto n = r.ops.size();
          p.stats.assign(n, ::Stat{});
          p.cops.assign(n, zoo_op_t{});
          p.results.assign(n, zoo_op_result_t{});
          p.path_bufs.reserve(n);  // the C client keeps pointers into them: no reallocation
          for (std::size_t i = 0; i < n; ++i) {
            auto& op = r.ops[i];
            const char* path = op.path.c_str();
            // The C client truncates a created path to its buffer: room for the path, a sequence suffix, the
            // NUL.
            p.path_bufs.emplace_back(op.kind == Op::Kind::create ? op.path.size() + 11 + 1 : 0, '\0');
            switch (op.kind) {
              case Op::Kind::create:
                // The ACL vector points into the op's ACL, which lives in `p` until the completion.
                if (!op.acl) op.acl = open_acl_unsafe();
                p.cacls.push_back(std::make_unique<CAclVector>(*op.acl));
                zoo_create_op_init(&p.cops[i], path, op.data.data(), static_cast<int>(op.data.size()),
                                   p.cacls.back()->get(), to_c_mode(op.mode), p.path_bufs[i].data(),
                                   static_cast<int>(p.path_bufs[i].size()));
                break;
              case Op::Kind::remove:
                zoo_delete_op_init(&p.cops[i], path, op.version);
                break;
              case Op::Kind::set_data:
                zoo_set_op_init(&p.cops[i], path, op.data.data(), static_cast<int>(op.data.size()),
                                op.version, &p.stats[i]);
                break;
              case Op::Kind::check:
                zoo_check_op_init(&p.cops[i], path, op.version);
                break;
            }
          }
          return zoo_amulti(zh, static_cast<int>(n), p.cops.data(), p.results.data(), multi_done, ctx);
        } else if constexpr (std::is_same_v<R, zk::Sync>) {
          return zoo_async(zh, r.path.c_str(), string_done, ctx);
        } else {
          static_assert(std::is_same_v<R, zk::RemoveWatches>);
          if (r.watch != 0)
            return zoo_aremove_watches(zh, r.path.c_str(), to_c_watch_type(r.kind), node_watcher,
                                       watch_ctx(r.watch), 0, remove_watches_completion(), ctx);
          return zoo_aremove_all_watches(zh, r.path.c_str(), to_c_watch_type(r.kind), 0,
                                         remove_watches_completion(), ctx);
        }
      },
      p.request);
}

}  // namespace

std::unique_ptr<Session> make_default_session(asio::io_context& ioc, const ClientConfig& config,
                                              spdlog::logger& log, SessionEvents& events) {
  return std::make_unique<StSession>(ioc, config, log, events);
}

StSession::StSession(asio::io_context& ioc, const ClientConfig& config, spdlog::logger& log,
                     SessionEvents& events)
    : ioc_(ioc), cfg_(config), log_(log), events_(events), sd_(ioc), pump_timer_(ioc) {
  // The C client's log level is process-wide: the last client made sets it.
  const auto level = log_.should_log(spdlog::level::debug)  ? ZOO_LOG_LEVEL_DEBUG
                     : log_.should_log(spdlog::level::info) ? ZOO_LOG_LEVEL_INFO
                                                            : ZOO_LOG_LEVEL_WARN;
  zoo_set_debug_level(level);
}

StSession::~StSession() { close(); }

std::int64_t StSession::session_id() const {
  const clientid_t* cid = zh_ ? zoo_client_id(zh_) : nullptr;
  return cid ? cid->client_id : 0;
}

int StSession::negotiated_timeout_ms() const { return zh_ ? zoo_recv_timeout(zh_) : 0; }

int StSession::refused_rc(int rc) const {
  if (rc != ZINVALIDSTATE) return rc;
  return zh_ && zoo_state(zh_) == ZOO_AUTH_FAILED_STATE ? ZAUTHFAILED : ZSESSIONEXPIRED;
}

void StSession::submit(zk::Request request, zk::ReplyCallback reply) {
  auto p =
      std::make_unique<Pending>(Pending{&ioc_, std::move(request), std::move(reply), {}, {}, {}, {}, {}, {}});
  if (!zh_) return deliver(std::move(p), events_.no_session_rc());
  cork_turn();
  int rc;
  {
    const std::lock_guard c_lock(c_client_mutex());
    rc = send(zh_, *p);
    if (rc != ZOK) rc = refused_rc(rc);
  }
  if (rc != ZOK) return deliver(std::move(p), rc);
  p.release();  // owned by the C client's completion now
  request_pump();
}

bool StSession::submit_from_caller(zk::Request& request, zk::ReplyCallback& reply) {
  auto p =
      std::make_unique<Pending>(Pending{&ioc_, std::move(request), std::move(reply), {}, {}, {}, {}, {}, {}});
  int rc = ZINVALIDSTATE;
  {
    // Corked like an I/O-thread turn (cork_turn), so that the frame's length and body leave in one segment.
    // Our duplicate of the socket stays open while sd_mu_ is held; if the C client has replaced its socket
    // since, this corks the old one, which costs nothing but the extra segment.
    const std::lock_guard sd_lock(sd_mu_);
    const int own = sd_own_fd_;
    // zh_ is written under this mutex too (open, close), so it is read safely here. The single-threaded C
    // client sends the request from this thread before the call returns, unless the socket is full; the pump
    // posted below then sends the rest.
    const std::lock_guard c_lock(c_client_mutex());
    if (zh_ && own >= 0) set_cork(own, true);
    if (zh_) rc = send(zh_, *p);
    if (zh_ && own >= 0) set_cork(own, false);
  }
  if (rc != ZOK) {
    request = std::move(p->request);
    reply = std::move(p->cb);
    return false;
  }
  p.release();  // owned by the C client's completion now
  asio::post(ioc_, [this] { request_pump(); });
  return true;
}

void StSession::on_c_session_event(std::uint64_t generation, int state) {
  asio::post(ioc_, [this, generation, state] {
    if (generation != generation_ || !zh_) return;
    if (state == ZOO_CONNECTED_STATE)
      events_.on_session_state(SessionState::connected);
    else if (state == ZOO_READONLY_STATE)
      events_.on_session_state(SessionState::read_only);
    else if (state == ZOO_CONNECTING_STATE || state == ZOO_ASSOCIATING_STATE)
      events_.on_session_state(SessionState::connecting);
    else if (state == ZOO_EXPIRED_SESSION_STATE)
      events_.on_session_state(SessionState::expired);
    else if (state == ZOO_AUTH_FAILED_STATE)
      events_.on_session_state(SessionState::auth_failed);
  });
}

void StSession::on_c_watch_event(WatchId id, int type) {
  EventType ev = EventType::session_lost;  // ZOO_NOTWATCHING_EVENT: the watch is gone
  if (type == ZOO_CREATED_EVENT)
    ev = EventType::node_created;
  else if (type == ZOO_DELETED_EVENT)
    ev = EventType::node_deleted;
  else if (type == ZOO_CHANGED_EVENT)
    ev = EventType::node_data_changed;
  else if (type == ZOO_CHILD_EVENT)
    ev = EventType::node_children_changed;
  asio::post(ioc_, [this, id, ev] { events_.on_watch_event(id, ev); });
}

// ---------------------------------------------------------------------------------------------------------
// The handle

bool StSession::open() {
  handle_ctx_ = new HandleCtx{this, ++generation_};
  const std::lock_guard c_lock(c_client_mutex());
  zh_ = zookeeper_init2(cfg_.connect_string.c_str(), global_watcher,
                        static_cast<int>(cfg_.session_timeout.count()), nullptr, handle_ctx_,
                        cfg_.can_be_read_only ? ZOO_READONLY : 0, route_c_log);
  if (!zh_) {
    log_.error("zookeeper_init failed for '{}': {}", cfg_.connect_string, std::strerror(errno));
    delete handle_ctx_;
    handle_ctx_ = nullptr;
    return false;
  }
  // The C client's default re-resolves the connect string (getaddrinfo: a netlink dump and more) every time
  // it is asked which events to wait for, that is on every pump: about six system calls per request, a third
  // of an uncontended lock pair's client time. -1 resolves when connecting, as the Java client does.
  zoo_set_servers_resolution_delay(zh_, -1);
  for (const auto& a : cfg_.auth)
    zoo_add_auth(zh_, a.scheme.c_str(), a.auth.data(), static_cast<int>(a.auth.size()), nullptr, nullptr);
  request_pump();
  return true;
}

void StSession::close() {
  if (!zh_) return;
  release_descriptor();
  ++pump_timer_gen_;
  pump_timer_armed_ = false;
  pump_timer_.cancel();
  handle_ctx_->session = nullptr;  // late callbacks of this handle are ignored
  {
    const std::lock_guard c_lock(c_client_mutex());
    zhandle_t* zh = zh_;
    zh_ = nullptr;        // under the mutex: submit_from_caller reads it from other threads
    zookeeper_close(zh);  // completes every pending request (ZCLOSING); their results are posted
  }
  delete handle_ctx_;
  handle_ctx_ = nullptr;
}

// The pump: drives the C client from Asio. Readiness is re-checked with a zero-timeout poll() after every
// arm, because Asio's epoll reactor is edge-triggered and the C client does not drain the socket.

void StSession::request_pump() {
  if (in_pump_ || pump_posted_) return;
  pump_posted_ = true;
  boost::asio::post(ioc_, [this] { pump(); });
}

void StSession::release_descriptor() {
  uncork();
  ++sd_gen_;
  read_armed_ = write_armed_ = false;
  if (sd_.is_open()) {
    // sd_ holds our own duplicate of the C client's socket (see update_descriptor): closing it deregisters
    // it from epoll by a descriptor number that is ours, never one the C client closed and someone reused.
    const std::lock_guard sd_lock(sd_mu_);
    sd_own_fd_ = -1;
    error_code ignored;
    sd_.cancel(ignored);
    sd_.close(ignored);
  }
  sd_fd_ = -1;
  sd_connected_ = false;
}

void StSession::update_descriptor(int fd, bool connected) {
  if (fd < 0) {
    if (sd_.is_open()) release_descriptor();
    return;
  }
  // The C client may close its socket and open another with the same number: compare inodes. A socket
  // seen while connected cannot have been replaced while the client stayed connected (a new socket starts
  // in the connecting state, which the pump sees on its next zookeeper_interest), so skip the fstat then.
  if (sd_.is_open() && fd == sd_fd_ && connected && sd_connected_) return;
  sd_connected_ = false;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return;
  if (sd_.is_open() && fd == sd_fd_ && st.st_ino == sd_ino_) {
    sd_connected_ = connected;
    return;
  }
  if (sd_.is_open()) release_descriptor();
  // Watch a duplicate, not the C client's descriptor: the C client closes its socket on its own when the
  // connection breaks, and deregistering that number later (epoll_ctl) could hit a descriptor another thread
  // has opened since under the same number. The duplicate keeps the old socket open only until this pump
  // notices the change and closes it.
  const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) {
    log_.warn("cannot watch the ZooKeeper socket: {}", std::strerror(errno));
    return;
  }
  error_code ec;
  {
    const std::lock_guard sd_lock(sd_mu_);
    sd_.assign(own, ec);
    if (!ec) sd_own_fd_ = own;
  }
  if (ec) {
    ::close(own);
    log_.warn("cannot watch the ZooKeeper socket: {}", ec.message());
    return;
  }
  sd_fd_ = fd;
  sd_ino_ = st.st_ino;
  sd_connected_ = connected;
}

// The handshake bound. A connection attempt is a TCP connect, then the session handshake (the C client sends
// its ConnectRequest and waits for the server's answer); the C client itself gives an attempt 2/3 of the
// session timeout. A server that accepted the connection but never answers holds the client that long:
// ZooKeeper 3.8.0 does exactly that to a client that connects between the moment its port is bound and the
// moment its database is loaded (ZOOKEEPER-5051: the connection is refused with "ZooKeeperServer not
// running", but closing it throws a NullPointerException before the socket is closed, so the client waits in
// vain, 20 s with a 30 s session, on every restart that it happens to reach in that window). The pump
// therefore watches each attempt's socket (by inode): an attempt still not connected `handshake_bound()`
// after the pump first saw its socket is abandoned, the socket shut down so that the C client connects again
// at once. From the second attempt abandoned in a row on, the bound doubles with each (a server that is
// merely slow gets its answer through), up to 16 times; a connection starts it over.
std::chrono::milliseconds StSession::handshake_bound() const {
  return cfg_.handshake_timeout * (1 << std::clamp(handshakes_abandoned_ - 1, 0, 4));
}

bool StSession::handshake_overdue(int fd, int state, std::chrono::steady_clock::time_point now) {
  const bool attempting = fd >= 0 && sd_.is_open() && fd == sd_fd_ && state != ZOO_CONNECTED_STATE &&
                          state != ZOO_READONLY_STATE && state != ZOO_EXPIRED_SESSION_STATE &&
                          state != ZOO_AUTH_FAILED_STATE;
  if (!attempting) {
    if (state == ZOO_CONNECTED_STATE || state == ZOO_READONLY_STATE) handshakes_abandoned_ = 0;
    handshake_ino_ = 0;
    return false;
  }
  if (cfg_.handshake_timeout <= std::chrono::milliseconds::zero()) return false;
  if (handshake_ino_ != sd_ino_) {
    handshake_ino_ = sd_ino_;
    handshake_since_ = now;
    return false;
  }
  return now - handshake_since_ >= handshake_bound();
}

// The C client writes each frame with two send() calls on its TCP_NODELAY socket, the 4-byte length and then
// the body, and the single-threaded client sends at once from every zoo_a* call: every request left as two
// segments (seen with tcpdump; the Java client sends one). The first submission of an I/O-thread turn corks
// the socket and posts the uncork, so the requests submitted until that handler runs (a create and the
// listing pipelined behind it, say) leave together, in as few segments as the kernel can make.
void StSession::cork_turn() {
  if (corked_fd_ >= 0 || !sd_.is_open() || !sd_connected_) return;
  corked_fd_ = sd_.native_handle();
  set_cork(corked_fd_, true);
  boost::asio::post(ioc_, [this] { uncork(); });
}

void StSession::uncork() {
  if (corked_fd_ < 0) return;
  if (sd_.is_open() && sd_.native_handle() == corked_fd_) set_cork(corked_fd_, false);
  corked_fd_ = -1;
}

void StSession::pump() {
  pump_posted_ = false;
  if (!zh_ || in_pump_) return;
  in_pump_ = true;
  for (int iteration = 0; iteration < 64; ++iteration) {
    int fd = -1, interest = 0;
    timeval tv{};
    bool connected = false;
    bool auth_failed = false;
    int state_after = 0;
    {
      const std::lock_guard c_lock(c_client_mutex());
      const int state = zoo_state(zh_);
      // The server refused our auth info: the C client stays in this state for good, and zookeeper_interest
      // and zookeeper_process fail at once with a zero timeout, so pumping on would spin.
      auth_failed = state == ZOO_AUTH_FAILED_STATE;
      // A request call (zoo_a*) whose immediate send fails closes the socket and marks the handle not
      // connected without a session event; its reconnect then reports no CONNECTING either, as the handle was
      // not connected when it gave up. Deliver that event ourselves, or the framework stays connected, with
      // no SUSPENDED and no session-timeout clock. A duplicate of a real event still queued is harmless.
      if (events_.believes_connected() && state != ZOO_CONNECTED_STATE && state != ZOO_READONLY_STATE &&
          state != ZOO_EXPIRED_SESSION_STATE && state != ZOO_AUTH_FAILED_STATE)
        on_c_session_event(generation_, ZOO_CONNECTING_STATE);
      if (!auth_failed) {
        zookeeper_interest(zh_, &fd, &interest, &tv);
        state_after = zoo_state(zh_);
        connected = state_after == ZOO_CONNECTED_STATE;
      }
    }
    if (auth_failed) {
      in_pump_ = false;
      return events_.on_auth_failed();
    }
    if (!zh_) break;
    update_descriptor(fd, connected);
    const auto now = std::chrono::steady_clock::now();
    if (handshake_overdue(fd, state_after, now)) {
      // Shut the socket down (through our duplicate: same socket): the C client reads end-of-stream at once,
      // drops the connection as lost and connects again.
      std::string server;
      {
        const std::lock_guard c_lock(c_client_mutex());  // its text is in a buffer shared by all handles
        server = zoo_get_current_server(zh_);
      }
      log_.info("no answer to the connection handshake with {} within {} ms: connecting again", server,
                handshake_bound().count());
      ++handshakes_abandoned_;
      handshake_ino_ = 0;
      (void)::shutdown(sd_.native_handle(), SHUT_RDWR);
      continue;
    }
    short want = 0;
    if (interest & ZOOKEEPER_READ) want |= POLLIN;
    if (interest & ZOOKEEPER_WRITE) want |= POLLOUT;
    int ready = 0;
    if (fd >= 0 && want) {
      pollfd p{fd, want, 0};
      if (::poll(&p, 1, 0) > 0) {
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) ready |= ZOOKEEPER_READ;
        if (p.revents & POLLOUT) ready |= ZOOKEEPER_WRITE;
      }
    }
    const bool timed_out = tv.tv_sec == 0 && tv.tv_usec == 0;
    if (ready || timed_out) {
      // A flush of what the C client could not send at once, or a ping: corked like a turn's submissions
      // (cork_turn).
      const int cork =
          (ready & ZOOKEEPER_WRITE || timed_out) && corked_fd_ < 0 && sd_.is_open() && fd == sd_fd_
              ? sd_.native_handle()
              : -1;
      if (cork >= 0) set_cork(cork, true);
      {
        const std::lock_guard c_lock(c_client_mutex());
        zookeeper_process(zh_, ready);
      }
      if (cork >= 0 && sd_.is_open() && sd_.native_handle() == cork) set_cork(cork, false);
      if (!zh_) break;
      continue;
    }
    // Nothing to do now: arm the waits.
    if (fd >= 0 && (interest & ZOOKEEPER_READ) && !read_armed_ && sd_.is_open()) {
      read_armed_ = true;
      sd_.async_wait(asio::posix::stream_descriptor::wait_read, [this, g = sd_gen_](error_code ec) {
        if (g != sd_gen_) return;
        read_armed_ = false;
        if (!ec) pump();
      });
    }
    if (fd >= 0 && (interest & ZOOKEEPER_WRITE) && !write_armed_ && sd_.is_open()) {
      write_armed_ = true;
      sd_.async_wait(asio::posix::stream_descriptor::wait_write, [this, g = sd_gen_](error_code ec) {
        if (g != sd_gen_) return;
        write_armed_ = false;
        if (!ec) pump();
      });
    }
    // The C client's next deadline (pings, timeouts). A timer already due earlier is kept: it pumps, and the
    // pump arms the next one (re-arming on every pump would cost a timerfd_settime per request).
    auto deadline = now + std::chrono::seconds(tv.tv_sec) + std::chrono::microseconds(tv.tv_usec);
    if (handshake_ino_ != 0) deadline = std::min(deadline, handshake_since_ + handshake_bound());
    if (!pump_timer_armed_ || deadline < pump_timer_.expiry()) {
      pump_timer_armed_ = true;
      pump_timer_.expires_at(deadline);
      pump_timer_.async_wait([this, g = ++pump_timer_gen_](error_code ec) {
        if (ec || g != pump_timer_gen_) return;
        pump_timer_armed_ = false;
        pump();
      });
    }
    // Anything that became ready between the poll above and the arming would produce no edge: look again.
    in_pump_ = false;
    if (fd >= 0 && want) {
      pollfd p{fd, want, 0};
      if (::poll(&p, 1, 0) > 0) request_pump();
    }
    return;
  }
  in_pump_ = false;
  if (zh_) request_pump();
}

}  // namespace zkr::detail
