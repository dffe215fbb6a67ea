#pragma once
// The connection states (a part of the client, see core_impl.hpp): Curator's ConnectionStateManager. The
// session's events, as the client hands them over, become the connection states (CONNECTED on the first
// read-write connection, RECONNECTED on every later one, READ_ONLY, SUSPENDED when a connection drops, LOST
// when the session is gone), each reported once to the client's own listeners (in order, on the I/O thread)
// and to the users' listeners (on a strand of the completion executor). A SUSPENDED that lasts the session
// timeout's `simulated_session_expiration_percent` counts the session lost (`timed_out`, which the client
// answers with `on_lost`, having replaced the session). Also the waits for the connection: "when connected"
// with a timeout (ConnectionWaits, for the retry loop and the other parts) and the blocking wait of
// block_until_connected. I/O thread only, but for the members marked "any thread".

#include <spdlog/logger.h>

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/framework/detail/core.hpp>

#include "connection_waits.hpp"
#include "lifecycle.hpp"

namespace zkr::detail {

class ConnectionStates final : public ConnectionWaits {
 public:
  /// What the states use: the I/O thread's context (timers, posted completions), the executor the users'
  /// listeners run on (a strand of it), the client's life (a wait ends with it), the log (kept by the users'
  /// listeners, which may run after the client is gone), the SUSPENDED → LOST percent of the session timeout.
  struct Uses {
    boost::asio::io_context& ioc;
    boost::asio::any_io_executor listener_executor;
    const Lifecycle& life;
    std::shared_ptr<spdlog::logger> log;
    int expiration_percent = 100;
  };
  /// `session_timeout`: the timeout asked for, until a session negotiates one. `timed_out` runs (on the I/O
  /// thread) when a SUSPENDED has lasted its share of the session timeout while the client is open.
  ConnectionStates(Uses uses, std::chrono::milliseconds session_timeout, unique_function<void()> timed_out);
  ConnectionStates(const ConnectionStates&) = delete;
  ConnectionStates& operator=(const ConnectionStates&) = delete;
  ~ConnectionStates() = default;

  // Any thread
  /// Whether the client counts itself connected now (read-write or read-only).
  bool connected() const noexcept override { return connected_; }
  /// The connected session's id; 0 without one.
  std::int64_t session_id() const noexcept { return session_id_; }
  /// The last session's negotiated timeout (the one asked for, before the first).
  std::chrono::milliseconds session_timeout() const noexcept {
    return std::chrono::milliseconds(negotiated_timeout_ms_.load());
  }
  /// Waits up to `timeout` for the connection; false when it did not come or the client ended. Not on the I/O
  /// thread.
  bool wait_connected(std::chrono::milliseconds timeout);
  /// The users' listeners: each state reported is passed to each of them, on the listener strand; one that
  /// throws is logged.
  std::uint64_t add_public_listener(ConnectionStateListener l);
  void remove_public_listener(std::uint64_t id);

  // The session's events (I/O thread)
  /// Connected (read-only when `read_only`) to session `session_id`, `timeout_ms` negotiated: CONNECTED the
  /// first time read-write, RECONNECTED later, READ_ONLY; the "when connected" waits get true.
  void on_connected(std::int64_t session_id, int timeout_ms, bool read_only);
  /// Connecting again: SUSPENDED (once) after a connection, and the SUSPENDED → LOST timer starts.
  void on_connecting();
  /// The session is gone (expired, timed out while SUSPENDED, replaced): LOST, no session.
  void on_lost();
  /// The client closed the session (it ends or replaces it): not connected.
  void on_session_closed() noexcept { connected_ = false; }

  // The client's end (I/O thread)
  /// The client gives up (`life.give_up(why)`, under the blocking waits' lock so that none misses it): false
  /// when it had ended already; else not connected, no session, no SUSPENDED timer, the blocking waits end.
  bool give_up(Lifecycle& life, error_code why);
  /// LOST, unless no state was reported yet or LOST was the last (the client gave up: recipes holding locks
  /// must learn so).
  void lost_after_earlier();
  /// The client closed: no SUSPENDED timer, no session, the blocking waits end.
  void closed();
  /// Every "when connected" wait ends now with false (posted).
  void fail_waits();

  // The client's own listeners (I/O thread): called in order, at once; one may remove itself, or another.
  std::uint64_t add_listener(StateCallback cb);
  void remove_listener(std::uint64_t id);

  // ConnectionWaits (I/O thread)
  std::uint64_t when_connected(std::chrono::milliseconds timeout, unique_function<void(bool)> k) override;
  void cancel_wait(std::uint64_t id) override;

 private:
  /// The users' listeners, shared with what is posted to their strand.
  struct PublicListeners {
    std::mutex mu;
    std::map<std::uint64_t, ConnectionStateListener> listeners;
    std::uint64_t next_id = 1;
    std::shared_ptr<spdlog::logger> log;
  };
  struct Waiter {
    unique_function<void(bool)> k;
    std::unique_ptr<boost::asio::steady_timer> timer;
  };

  void emit(ConnectionState s);
  /// Ends the blocking waits (after the state they wait on changed).
  void wake_blocking_waits();
  void end_waits(bool ok);

  Uses uses_;
  unique_function<void()> timed_out_;
  // Any thread: written on the I/O thread (connected_ also under mu_, for wait_connected)
  std::atomic<bool> connected_{false};
  std::atomic<std::int64_t> session_id_{0};
  std::atomic<int> negotiated_timeout_ms_;
  std::mutex mu_;  // with cv_: the blocking waits
  std::condition_variable cv_;
  // I/O thread
  boost::asio::steady_timer suspended_timer_;
  std::optional<ConnectionState> last_state_;
  bool ever_connected_ = false;  // read-write: the first gives CONNECTED, later ones RECONNECTED
  bool was_connected_ = false;   // read-write or read-only: a disconnect is SUSPENDED from then on
  // shared: a listener that removes itself while it runs must not destroy its own closure (emit)
  std::map<std::uint64_t, std::shared_ptr<StateCallback>> listeners_;
  std::uint64_t next_listener_id_ = 1;
  std::map<std::uint64_t, Waiter> waiters_;
  std::uint64_t next_waiter_id_ = 1;
  std::shared_ptr<PublicListeners> public_;
  boost::asio::strand<boost::asio::any_io_executor> listener_strand_;
};

}  // namespace zkr::detail
