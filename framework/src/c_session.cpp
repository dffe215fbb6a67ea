// The C-client sessions' shared part (see c_session.hpp): the handle with our watchers, the C client's
// callbacks mapped to `SessionEvents`, and the one submit path (a request description sent by `send`, and a
// completion adapter per C completion signature that turns the C client's answer into a posted `zk::Reply`).

#include "c_session.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

#include "sasl/sasl_settings.hpp"
#include "tls/tls_checks.hpp"
#if ZKR_HAVE_C_CLIENT_SASL
#include "sasl/cyrus_callbacks.hpp"
#endif

namespace asio = boost::asio;

namespace zkr::detail {

namespace {

// The host that every member of `connect_string` is on ("host:port,host:port/chroot", "[v6]:port"), with
// any number of ports; empty when they name several.
[[maybe_unused]] std::string connect_string_single_host(std::string_view connect_string) {
  const auto hosts = connect_string.substr(0, connect_string.find('/'));
  std::string only;
  for (std::size_t start = 0; start <= hosts.size();) {
    const auto end = std::min(hosts.find(',', start), hosts.size());
    auto host = hosts.substr(start, end - start);
    if (!host.empty() && host.front() == '[')
      host = host.substr(1, host.find(']') - 1);
    else if (const auto colon = host.rfind(':'); colon != std::string_view::npos)
      host = host.substr(0, colon);
    if (start == 0)
      only = host;
    else if (only != host)
      return {};
    start = end + 1;
  }
  return only;
}

}  // namespace

struct Pending {
  asio::io_context* ioc;
  InFlight* in_flight;
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

void PendingDeleter::operator()(Pending* p) const noexcept { delete p; }

PendingPtr make_pending(asio::io_context& ioc, zk::Request request, zk::ReplyCallback reply,
                        InFlight* in_flight) {
  return PendingPtr(
      new Pending{&ioc, in_flight, std::move(request), std::move(reply), {}, {}, {}, {}, {}, {}});
}

void InFlight::add(Pending* p) {
  const std::lock_guard lock(mu_);
  pending_.insert(p);
}

void InFlight::remove(Pending* p) {
  const std::lock_guard lock(mu_);
  pending_.erase(p);
}

std::vector<PendingPtr> InFlight::take_all() {
  const std::lock_guard lock(mu_);
  std::vector<PendingPtr> out;
  out.reserve(pending_.size());
  for (Pending* p : pending_) out.emplace_back(p);
  pending_.clear();
  return out;
}

void deliver(PendingPtr p, int rc) { deliver(std::move(p), zk_error(rc)); }

void deliver(PendingPtr p, error_code ec) {
  p->reply.ec = ec;
  if (!p->cb) return;
  auto* ioc = p->ioc;
  asio::post(*ioc, [cb = std::move(p->cb), reply = std::move(p->reply)]() mutable { cb(std::move(reply)); });
}

void take_back(PendingPtr p, zk::Request& request, zk::ReplyCallback& reply) {
  request = std::move(p->request);
  reply = std::move(p->cb);
}

namespace {

/// The completion's context back as the request in flight.
PendingPtr take(const void* data) {
  PendingPtr p(static_cast<Pending*>(const_cast<void*>(data)));
  if (p->in_flight) p->in_flight->remove(p.get());
  return p;
}

void global_watcher(zhandle_t*, int type, int state, const char*, void* ctx) {
  if (type != ZOO_SESSION_EVENT) return;
  auto* h = static_cast<const CSession::HandleCtx*>(ctx);
  if (h) h->session->on_c_session_event(h->generation, state);
}

void node_watcher(zhandle_t* zh, int type, int, const char* path, void* ctx) {
  if (type == ZOO_SESSION_EVENT) return;  // session events are handled by the global watcher
  auto* h = static_cast<const CSession::HandleCtx*>(zoo_get_context(zh));
  if (h)
    h->session->on_c_watch_event(h->generation, static_cast<WatchId>(reinterpret_cast<std::uintptr_t>(ctx)),
                                 type, path ? path : "");
}

void* watch_ctx(WatchId id) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(id)); }

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
/// The C client frees `acl` (and `stat`) itself once this returns (deallocate_GetACLResponse after the
/// completion): copy, never free. `deallocate_ACL_vector` is for the synchronous `zoo_get_acl` only.
void acl_done(int rc, ::ACL_vector* acl, ::Stat* stat, const void* data) {
  auto p = take(data);
  if (rc == ZOK && acl) {
    p->reply.acl.reserve(static_cast<std::size_t>(acl->count));
    for (int i = 0; i < acl->count; ++i) {
      const ::ACL& a = acl->data[i];
      p->reply.acl.push_back(Acl{a.perms, Id{a.id.scheme ? a.id.scheme : "", a.id.id ? a.id.id : ""}});
    }
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
    case zk::WatchKind::persistent:  // never sent (no persistent watch exists over the C client)
    case zk::WatchKind::persistent_recursive:
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
        } else if constexpr (std::is_same_v<R, zk::GetAcl>) {
          return zoo_aget_acl(zh, r.path.c_str(), acl_done, ctx);
        } else if constexpr (std::is_same_v<R, zk::SetAcl>) {
          // Serialized inside the call: the vector need not outlive it (as the create's).
          const CAclVector acl(r.acl);
          return zoo_aset_acl(zh, r.path.c_str(), r.version, const_cast<::ACL_vector*>(acl.get()), void_done,
                              ctx);
        } else if constexpr (!std::is_same_v<R, zk::RemoveWatches>) {
          // ZooKeeper 3.6+'s requests: the C client has no call for them (the framework asks `speaks_3_6()`
          // first and never sends one here).
          return ZUNIMPLEMENTED;
        } else {
          if (r.kind == zk::WatchKind::persistent || r.kind == zk::WatchKind::persistent_recursive)
            return ZUNIMPLEMENTED;
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

int send_pending(zhandle_t* zh, PendingPtr& p) {
  // Registered before the call: the completion may run on another thread before it returns.
  if (p->in_flight) p->in_flight->add(p.get());
  const int rc = send(zh, *p);
  if (rc != ZOK && p->in_flight) p->in_flight->remove(p.get());
  if (rc == ZOK) (void)p.release();  // owned by the C client's completion now
  return rc;
}

CSession::CSession(asio::io_context& ioc, const ClientConfig& config, spdlog::logger& log,
                   SessionEvents& events)
    : ioc_(ioc), cfg_(config), log_(log), events_(events) {
  // The C client's log level is process-wide: the last client made sets it.
  const auto level = log_.should_log(spdlog::level::debug)  ? ZOO_LOG_LEVEL_DEBUG
                     : log_.should_log(spdlog::level::info) ? ZOO_LOG_LEVEL_INFO
                                                            : ZOO_LOG_LEVEL_WARN;
  zoo_set_debug_level(level);
}

std::int64_t CSession::session_id() const {
  const clientid_t* cid = zh_ ? zoo_client_id(zh_) : nullptr;
  return cid ? cid->client_id : 0;
}

int CSession::negotiated_timeout_ms() const { return zh_ ? zoo_recv_timeout(zh_) : 0; }

int CSession::refused_rc(int rc) const {
  if (rc != ZINVALIDSTATE) return rc;
  return zh_ && zoo_state(zh_) == ZOO_AUTH_FAILED_STATE ? ZAUTHFAILED : ZSESSIONEXPIRED;
}

bool CSession::is_connected_state(int state) noexcept {
  return state == ZOO_CONNECTED_STATE || state == ZOO_READONLY_STATE;
}

std::chrono::milliseconds handshake_bound(std::chrono::milliseconds timeout, int abandoned_in_a_row) {
  return timeout * (1 << std::clamp(abandoned_in_a_row - 1, 0, 4));
}

void CSession::on_c_session_event(std::uint64_t generation, int state) {
  asio::post(ioc_, [this, generation, state] {
    if (generation != generation_ || !zh_) return;
    on_session_event(state);
    if (state == ZOO_CONNECTED_STATE)
      events_.on_session_state(SessionState::connected);
    else if (state == ZOO_READONLY_STATE)
      events_.on_session_state(SessionState::read_only);
    else if (state == ZOO_CONNECTING_STATE || state == ZOO_ASSOCIATING_STATE)
      events_.on_session_state(SessionState::connecting);
    else if (state == ZOO_EXPIRED_SESSION_STATE)
      events_.on_session_state(SessionState::expired);
    else if (state == ZOO_AUTH_FAILED_STATE)
      cfg_.sasl ? report_auth_failed() : events_.on_session_state(SessionState::auth_failed);
  });
}

void CSession::report_auth_failed() {
  if (!cfg_.sasl) return events_.on_auth_failed();
  std::string reason;
#if ZKR_HAVE_C_CLIENT_SASL
  if (sasl_callbacks_ && sasl_callbacks_->password_unreadable(reason))
    return events_.on_refused(client_errc::sasl_config_error, "SASL authentication failed: " + reason);
#endif
  // The server the handle was last talking to: the one that refused (the C client keeps its address).
  const char* server = zh_ ? zoo_get_current_server(zh_) : nullptr;
  const bool gssapi = cfg_.sasl->mechanism == SaslMechanism::gssapi;
  reason = "SASL authentication failed: " +
           (server && *server ? "the server " + std::string(server) + " of " : std::string("the ensemble ")) +
           cfg_.connect_string + " refused " + std::string(to_string(cfg_.sasl->mechanism)) + " as '" +
           sasl_identity(*cfg_.sasl) +
           (gssapi ? "', or no service ticket for it was had (a server principal the realm does not know, "
                     "the KDC unreachable, or a mechanism it does not offer)"
                   : "' (wrong password, unknown user, or a mechanism it does not offer)");
  events_.on_refused(client_errc::sasl_auth_failed, reason);
}

void CSession::on_c_watch_event(std::uint64_t generation, WatchId id, int type, std::string path) {
  EventType ev = EventType::session_lost;  // ZOO_NOTWATCHING_EVENT: the watch is gone
  if (type == ZOO_CREATED_EVENT)
    ev = EventType::node_created;
  else if (type == ZOO_DELETED_EVENT)
    ev = EventType::node_deleted;
  else if (type == ZOO_CHANGED_EVENT)
    ev = EventType::node_data_changed;
  else if (type == ZOO_CHILD_EVENT)
    ev = EventType::node_children_changed;
  asio::post(ioc_, [this, generation, id, ev, path = std::move(path)] {
    if (generation == generation_ && zh_) events_.on_watch_event(id, ev, path);
  });
}

zhandle_t* CSession::init_handle() {
  // The C client's lines from this (the I/O) thread go to this client's logger.
  set_thread_log_target(&log_);
  handle_ctx_ = new HandleCtx{this, ++generation_};
  const int timeout = static_cast<int>(cfg_.session_timeout.count());
  const int flags = cfg_.can_be_read_only ? ZOO_READONLY : 0;
  zhandle_t* zh = nullptr;
  if (cfg_.tls) {
#if ZKR_HAVE_ZOOKEEPER_TLS
    // The files were checked (tls/tls_checks.hpp). The C client keeps its own copies of the string.
    std::string cert = c_client_cert_string(*cfg_.tls);
    route_c_log_stream();
    zh = zookeeper_init_ssl(cfg_.connect_string.c_str(), cert.c_str(), global_watcher, timeout, nullptr,
                            handle_ctx_, flags);
    for (volatile char& c : cert) c = '\0';  // it held the key's password
    // zookeeper_init_ssl takes no log callback: its lines until this one is set go through the C client's
    // process-wide log stream, which route_c_log_stream has pointed at route_c_log.
    if (zh) zoo_set_log_callback(zh, route_c_log);
#else
    log_.error("TLS was asked for, but this build's ZooKeeper C client has no TLS support");
    free_handle_ctx();
    return nullptr;
#endif
  } else if (cfg_.sasl) {
#if ZKR_HAVE_C_CLIENT_SASL
    // The settings were checked at start() (sasl/sasl_settings.hpp); the password is read by the callback
    // at each connection. The C client copies the strings and keeps the callbacks' pointer.
    if (int rc = init_cyrus_client(); rc != SASL_OK) {
      log_.error("SASL cannot start: Cyrus SASL's client does not initialise: {}",
                 sasl_errstring(rc, nullptr, nullptr));
      free_handle_ctx();
      return nullptr;
    }
    if (!sasl_callbacks_)
      sasl_callbacks_ = {new CyrusCallbacks(*cfg_.sasl), [](CyrusCallbacks* c) { delete c; }};
    // GSSAPI names the server by its host (the service ticket's principal, zookeeper/<host>), and the C
    // client takes one name for every member: none (null) makes it name each by its address.
    const std::string host = sasl_server_host(*cfg_.sasl, connect_string_single_host(cfg_.connect_string));
    const std::string mech(to_string(cfg_.sasl->mechanism));
    zoo_sasl_params_t params{cfg_.sasl->service.c_str(), host.empty() ? nullptr : host.c_str(), mech.c_str(),
                             sasl_callbacks_->list()};
    zh = zookeeper_init_sasl(cfg_.connect_string.c_str(), global_watcher, timeout, nullptr, handle_ctx_,
                             flags, route_c_log, &params);
#else
    log_.error("SASL was asked for, but this build's ZooKeeper C client has no SASL support");
    free_handle_ctx();
    return nullptr;
#endif
  } else {
    zh = zookeeper_init2(cfg_.connect_string.c_str(), global_watcher, timeout, nullptr, handle_ctx_, flags,
                         route_c_log);
  }
  if (!zh) {
    log_.error("zookeeper_init failed for '{}': {}", cfg_.connect_string, std::strerror(errno));
    free_handle_ctx();
    return nullptr;
  }
  // The C client's default re-resolves the connect string (getaddrinfo: a netlink dump and more) every time
  // it is asked which events to wait for (zookeeper_interest: our pump, or the multi-threaded client's I/O
  // loop), so about six system calls per request, a third of an uncontended lock pair's client time on the
  // single-threaded client. -1 resolves when connecting, as the Java client does.
  zoo_set_servers_resolution_delay(zh, -1);
  for (const auto& a : cfg_.auth)
    zoo_add_auth(zh, a.scheme.c_str(), a.auth.data(), static_cast<int>(a.auth.size()), nullptr, nullptr);
  return zh;
}

void CSession::free_handle_ctx() noexcept {
  delete handle_ctx_;
  handle_ctx_ = nullptr;
}

}  // namespace zkr::detail
