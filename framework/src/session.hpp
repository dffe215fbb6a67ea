#pragma once
// The session seam: what the framework above needs from a ZooKeeper transport. "Send this request, call me
// with its reply" (`Session::submit`, one path for every request type) and "the session changed / a watch
// fired" (`SessionEvents`). Everything above it (the connection-state machine, the retry loop, namespaces,
// protected create, guaranteed delete, the watch registry) talks to ZooKeeper only through it, in the types
// below: no client library's header, type or code crosses it. The transports this build may link: the C
// client's (c_session.hpp: `StSession` drives the single-threaded client from the I/O thread, `MtSession`
// posts from the multi-threaded client's threads), chosen by `make_default_session`; the unit tests plug a
// scripted one in through a `SessionFactory`.
//
// Threading: every member is called on the client's I/O thread (`submit_from_caller` excepted), and every
// reply and event is delivered there, in a handler of its own, never inline from the call that caused it.
// Paths are full (the namespace applied). Results are `error_code`s: the server's codes as `zk_errc` (a
// request cut off by the end of its session: `zk_errc::closing`); a request sent while there is no session
// gets `SessionEvents::no_session_ec()`.

#include <spdlog/logger.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <variant>
#include <vector>
#include <zkr/framework/detail/core.hpp>
#include <zkr/framework/types.hpp>

#include "tls/tls_verdict.hpp"

namespace spdlog {
class logger;
}
namespace boost::asio {
class io_context;
}

namespace zkr {
struct ClientConfig;
}

namespace zkr::detail {

/// The requests, one description per ZooKeeper request type.
namespace zk {
struct Create {
  std::string path;
  std::string data;
  AclList acl;
  CreateMode mode = CreateMode::persistent;
  std::int64_t ttl_ms = 0;  // TTL modes only
};
struct Delete {
  std::string path;
  int version = -1;
};
/// `watch` != 0 sets a one-shot watch reported as `SessionEvents::on_watch_event(watch, ...)`.
struct Exists {
  std::string path;
  WatchId watch = 0;
};
struct GetData {
  std::string path;
  WatchId watch = 0;
};
struct GetChildren {
  std::string path;
  WatchId watch = 0;
};
struct SetData {
  std::string path;
  std::string data;
  int version = -1;
};
/// The node's ACL and Stat.
struct GetAcl {
  std::string path;
};
/// Sent as given: an empty `acl` goes to the server, which refuses it (`zk_errc::invalid_acl`).
struct SetAcl {
  std::string path;
  AclList acl;
  int version = -1;  // the ACL version (Stat::aversion); -1: any
};
/// Every op's path full and its ACL resolved.
struct Multi {
  std::vector<Op> ops;
};
struct Sync {
  std::string path;
};
/// The kinds of watch: the one-shot ones, every kind on a path (`any`), and ZooKeeper 3.6+'s persistent ones.
enum class WatchKind { data, children, any, persistent, persistent_recursive };
/// `watch` != 0: that one watch of ours on `path` (of `kind`); 0: every watch of `kind` on `path`.
struct RemoveWatches {
  std::string path;
  WatchKind kind = WatchKind::any;
  WatchId watch = 0;
};

// ZooKeeper 3.6+'s requests: sent only where `Session::speaks_3_6()`.

/// addWatch: `watch` stays set until removed, reported as `SessionEvents::on_watch_event(watch, ...)` with
/// the path of each event (for a recursive one, the descendant's).
struct AddWatch {
  std::string path;
  AddWatchMode mode = AddWatchMode::persistent;
  WatchId watch = 0;
};
/// multiRead: the reply's `reads`, one per op (a failed op carries its own code).
struct MultiRead {
  std::vector<ReadOp> ops;
};
/// getEphemerals: the session's ephemeral nodes whose path starts with `prefix` (as a string); the reply's
/// `children` holds the full paths.
struct GetEphemerals {
  std::string path;  // the prefix
};
/// getAllChildrenNumber: the number of the node's descendants, in the reply's `count`.
struct GetAllChildrenNumber {
  std::string path;
};
/// whoAmI: the identities the server holds for the session, in the reply's `identities`.
struct WhoAmI {};

using Request =
    std::variant<Create, Delete, Exists, GetData, GetChildren, SetData, Multi, Sync, RemoveWatches, GetAcl,
                 SetAcl, AddWatch, MultiRead, GetEphemerals, GetAllChildrenNumber, WhoAmI>;

/// Whether `request` is one of ZooKeeper 3.6+'s requests, which only a session that `speaks_3_6()` sends.
inline bool needs_3_6(const Request& request) noexcept { return request.index() >= 11; }

/// A reply; which fields beyond `ec` are filled depends on the request (and on success).
struct Reply {
  error_code ec;                      // the server's result (`zk_errc`), or why the request got none
  std::string path;                   // Create: the created path
  std::string data;                   // GetData
  std::vector<std::string> children;  // GetChildren
  AclList acl;                        // GetAcl
  Stat stat;                          // Create, Exists, GetData, GetChildren, SetData, GetAcl, SetAcl
  /// Multi: one per op, when the server answered (empty when the request was never sent).
  std::vector<OpResult> results;
  std::vector<ReadResult> reads;           // MultiRead: one per op
  std::int32_t count = 0;                  // GetAllChildrenNumber
  std::vector<ClientIdentity> identities;  // WhoAmI
};
using ReplyCallback = unique_function<void(Reply)>;
}  // namespace zk

/// The session's state as its client library reports it.
enum class SessionState { connecting, connected, read_only, expired, auth_failed };

/// What a session reports to the framework above it (I/O thread, in handlers of their own).
class SessionEvents {
 public:
  virtual ~SessionEvents() = default;
  virtual void on_session_state(SessionState state) = 0;
  /// A watch set by a request fired (`node_*`), or is gone (`session_lost`). `path` is the full path the
  /// event is about (the namespace applied): a one-shot watch's own, or for a persistent recursive watch a
  /// descendant's.
  virtual void on_watch_event(WatchId watch, EventType type, const std::string& path) = 0;
  /// The server refused our auth info: the session is over for good (called from inside the session's work).
  virtual void on_auth_failed() = 0;
  /// The connection's authentication was refused for good with a reason of the library's own (SASL:
  /// `client_errc::sasl_auth_failed`, `client_errc::sasl_config_error`): the client gives up with `ec`,
  /// logging `why` (never a secret). Posted by the session, as `on_session_state` is.
  virtual void on_refused(error_code ec, const std::string& why) {
    (void)ec;
    (void)why;
    on_auth_failed();
  }
  /// A session that checks TLS itself (`Session::checks_tls`), while it opens: what one pass over the
  /// connect string's hosts found, none of them connected (session_opening.hpp decides: a refusal ends the
  /// client). Posted by the session, as `on_session_state` is; never once a connection of the session was up.
  virtual void on_tls_opening(const TlsVerdict& verdict) { (void)verdict; }
  /// Whether the framework counts the session as connected now (the session reports a silent disconnect).
  virtual bool believes_connected() const = 0;
  /// What a request gets while there is no session: `client_errc::closed` (the client closed), the reason the
  /// client gave up (auth failed, TLS refused), or `zk_errc::session_expired` (the session is being
  /// replaced).
  virtual error_code no_session_ec() const = 0;
};

class Session {
 public:
  virtual ~Session() = default;
  /// Starts a new session (connecting in the background); false when the client library refused.
  virtual bool open() = 0;
  /// Ends the session; every pending request completes (`zk_errc::closing`). No-op without one.
  virtual void close() = 0;
  /// Whether a session is open (between `open` and `close`).
  virtual bool is_open() const = 0;
  /// Sends `request`; `reply` runs once with its reply (posted; an empty `reply` is not called).
  virtual void submit(zk::Request request, zk::ReplyCallback reply) = 0;
  /// `submit` from a thread other than the I/O thread, for a `Delete` or a `Multi` only: sends at once from
  /// the calling thread. False (and `reply` left untouched) when it cannot send; `reply` runs on the I/O
  /// thread.
  virtual bool submit_from_caller(zk::Request& request, zk::ReplyCallback& reply) = 0;
  /// Whether the transport speaks ZooKeeper 3.6+'s requests (`needs_3_6`): addWatch with persistent
  /// watches set again on every new connection (SetWatches2), multiRead, getEphemerals,
  /// getAllChildrenNumber, whoAmI. A session that does not answers them with
  /// `client_errc::unsupported_by_transport`.
  virtual bool speaks_3_6() const { return false; }
  /// Whether the transport makes and checks every TLS connection itself, telling a refusal from an
  /// unreachable server (`SessionEvents::on_tls_opening`): the framework then runs no TLS preflight of its
  /// own before a session (docs/tls.md).
  virtual bool checks_tls() const { return false; }
  /// The session id and the negotiated session timeout, once connected.
  virtual std::int64_t session_id() const = 0;
  virtual int negotiated_timeout_ms() const = 0;
};

/// Makes a client's session. `config`, `log` and `events` outlive it; it delivers on `ioc`'s (single) thread.
using SessionFactory = std::function<std::unique_ptr<Session>(
    boost::asio::io_context& ioc, const ClientConfig& config, spdlog::logger& log, SessionEvents& events)>;

/// The session over the transport this build links (`ZKR_ZOOKEEPER_CLIENT`): defined by that transport.
std::unique_ptr<Session> make_default_session(boost::asio::io_context& ioc, const ClientConfig& config,
                                              spdlog::logger& log, SessionEvents& events);

}  // namespace zkr::detail
