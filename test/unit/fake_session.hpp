#pragma once
/// \file
/// `FakeSession`: a scripted `zkr::detail::Session` for the unit tests of the framework's own algorithms (the
/// retry loop, protected create, guaranteed delete, the namespace root, the connection-state machine), the
/// layer below `FakeCore`. It is not a server and keeps no tree: it records every request the client sends
/// and the test answers each one, in any order, with whatever a server (or a broken connection) would have
/// said. "The create reached the server before the connection dropped" is then a create answered with
/// connection loss followed by a listing, answered by the test, that shows the node.
///
/// Model, as the real session (`StSession`):
///  - the client drives it on its own I/O thread; the test calls the members below from its own thread (all
///    are thread-safe), and everything it causes (a reply, a session state, a watch event) is posted to the
///    I/O thread, never run inline, in the order the test asked for it;
///  - `open` starts a session that is not connected until the test says so (`set_state(connected)`), which
///    gives it a new session id; `close` ends it and completes every unanswered request with
///    `zk_errc::closing`; a request sent without a session gets the client's `no_session_ec()`;
///  - state changes and watch events posted while no session is open are dropped (a closed handle's late
///    events are ignored);
///  - `submit_from_caller` records the request as sent from the calling thread while a session is open (and
///    `accept_from_caller` has not been turned off).

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "session.hpp"

namespace fake {

namespace zk = zkr::detail::zk;
using zkr::detail::SessionState;

/// One request the client sent, as the test sees it.
struct Call {
  using Clock = std::chrono::steady_clock;
  std::uint64_t seq = 0;  ///< 1-based, in the order sent
  zk::Request request;
  bool from_caller = false;  ///< sent by `submit_from_caller`
  std::int64_t session = 0;  ///< the session id it was sent in (0: not connected yet)
  Clock::time_point sent;    ///< when the client sent it
  bool wants_reply = true;  ///< false for a request whose reply nobody waits for (a background RemoveWatches)

  template <class T>
  const T* as() const noexcept {
    return std::get_if<T>(&request);
  }
  template <class T>
  bool is() const noexcept {
    return as<T>() != nullptr;
  }
  /// "create", "delete", "exists", "get_data", "get_children", "set_data", "multi", "sync", "remove_watches",
  /// "get_acl", "set_acl".
  std::string_view kind() const noexcept;
  /// The request's path (a multi's: its first operation's).
  std::string path() const;
  /// The watch the request sets (0: none).
  zkr::detail::WatchId watch() const noexcept;
};

/// Replies, for `FakeSession::reply`.
zk::Reply rc(zkr::error_code code);
zk::Reply with_stat(zkr::Stat stat, zkr::error_code code = {});
zk::Reply with_children(std::vector<std::string> names);
zk::Reply with_data(std::string data, zkr::Stat stat = {});
/// A stat whose node is ephemeral, owned by `session`.
zkr::Stat ephemeral_stat(std::int64_t session);

class FakeSession final : public zkr::detail::Session {
 public:
  using Clock = std::chrono::steady_clock;

  FakeSession(boost::asio::io_context& ioc, const zkr::ClientConfig& config,
              zkr::detail::SessionEvents& events);
  ~FakeSession() override;

  /// A factory for `CoreImpl`; `out` is set to the session it makes (owned by the client) and must outlive
  /// it.
  static zkr::detail::SessionFactory factory(FakeSession*& out);

  // ---- zkr::detail::Session (the client's I/O thread; submit_from_caller: any thread) ----
  bool open() override;
  void close() override;
  bool is_open() const override;
  void submit(zk::Request request, zk::ReplyCallback reply) override;
  bool submit_from_caller(zk::Request& request, zk::ReplyCallback& reply) override;
  std::int64_t session_id() const override;
  int negotiated_timeout_ms() const override;

  // ---- the test's side (any thread) ----
  /// Waits up to `limit` for the next request the test has not taken yet and takes it; nullopt when none
  /// came.
  std::optional<Call> next(std::chrono::milliseconds limit = std::chrono::seconds(5));
  /// Answers `call` (posted). Create: an `ok` reply without a path gets the requested path. False when it was
  /// answered already or its session closed it (`zk_errc::closing`) first.
  bool reply(const Call& call, zk::Reply reply);
  bool reply(const Call& call, zkr::error_code code) { return reply(call, rc(code)); }
  bool reply(const Call& call, zkr::zk_errc code) { return reply(call, rc(code)); }
  /// When the reply to `call` was delivered to the client (posted handler ran); nullopt while it has not
  /// been.
  std::optional<Clock::time_point> delivered(const Call& call) const;

  /// Reports a session state (posted). `connected` and `read_only` give a session without an id yet its id.
  void set_state(SessionState state);
  /// Reports a watch event for `watch` (posted).
  void fire_watch(zkr::detail::WatchId watch, zkr::EventType type);
  /// The session timeout the next connection negotiates (default: the configured one).
  void set_negotiated_timeout(std::chrono::milliseconds t);
  /// Whether `submit_from_caller` sends (default true).
  void accept_from_caller(bool on);

  /// Sessions opened and closed so far.
  int opens() const;
  int closes() const;
  /// The id of the open session once it connected (0 before, or with no session).
  std::int64_t current_session() const { return session_id(); }
  /// Requests sent so far, taken or not.
  std::size_t sent() const;
  /// Requests neither answered by the test nor ended by a close.
  std::size_t unanswered() const;

 private:
  struct Entry {
    Call call;
    zk::ReplyCallback cb;  // empty once answered
    bool answered = false;
    std::optional<Clock::time_point> delivered;
  };
  Entry* find(std::uint64_t seq);
  const Entry* find(std::uint64_t seq) const;
  void record(zk::Request request, zk::ReplyCallback reply, bool from_caller);
  void deliver(std::uint64_t seq, zk::ReplyCallback cb, zk::Reply r);

  boost::asio::io_context& ioc_;
  zkr::detail::SessionEvents& events_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Entry> log_;
  std::size_t taken_ = 0;  // requests handed to the test by `next`
  bool open_ = false;
  std::int64_t session_ = 0;  // id of the open session, once connected
  std::int64_t next_session_ = 0x1000;
  int timeout_ms_ = 0;     // negotiated by the next connection
  int negotiated_ms_ = 0;  // of the current connection
  bool accept_from_caller_ = true;
  int opens_ = 0;
  int closes_ = 0;
};

}  // namespace fake
