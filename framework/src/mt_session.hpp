#pragma once
// The session over the multi-threaded ZooKeeper C client (libzookeeper_mt, built with THREADED): the C client
// runs its own I/O thread (connect, handshake, send, receive, pings) and completion thread (completions and
// watch events). Every completion and event is posted from there to the client's Asio I/O thread, so
// everything above the seam stays on that one thread, as over the single-threaded client. Its requests go
// through c_session.hpp.
//
// The 3.8 multi-threaded client can drop completions at zookeeper_close: it queues every pending request's
// ZCLOSING completion for its completion thread, which may already have made its last pass, and the handle's
// destruction processes that queue only in the single-threaded build (process_async). The session therefore
// keeps its requests in flight (`InFlight`) and completes those the C client left with ZCLOSING itself, once
// zookeeper_close has returned and no callback of the handle can run any more.
//
// The handshake bound (see st_session.cpp) holds here too, though the C client's own thread owns the socket:
// a timer on the I/O thread watches each connection attempt's socket, which it reads from the handle (see
// attempt_socket in mt_session.cpp), and shuts an overdue one down through a duplicate of its own. Over TLS
// that is also what ends a handshake with a peer that never answers, which would otherwise hold the C
// client's I/O thread, and with it zookeeper_close, for good. What this session cannot do: the corking of
// each turn's requests into one segment.

#include <spdlog/logger.h>
#include <sys/stat.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <zkr/framework/curator_framework.hpp>

#include "c_session.hpp"

namespace zkr::detail {

class MtSession final : public CSession {
 public:
  /// `config`, `log` and `events` outlive the session; it delivers on `ioc`'s (single) thread.
  MtSession(boost::asio::io_context& ioc, const ClientConfig& config, spdlog::logger& log,
            SessionEvents& events);
  ~MtSession() override;

  bool open() override;
  void close() override;
  void submit(zk::Request request, zk::ReplyCallback reply) override;
  bool submit_from_caller(zk::Request& request, zk::ReplyCallback& reply) override;

 private:
  /// Held while zh_ is written (I/O thread) and while submit_from_caller uses it (other threads), so that a
  /// caller never sends on a handle being closed.
  std::mutex handle_mu_;
  /// The requests the C client holds (see close()).
  InFlight in_flight_;

  // The attempt watch (mt_session.cpp): every 100 ms while the handle is open and not connected; it also
  // notices a refused SASL exchange.
  void watch_attempt();
  void on_session_event(int state) override;
  /// Keeps a duplicate of the handle's current attempt socket (a new one when it changed); false: none.
  bool track_attempt();
  void forget_attempt();
  std::chrono::milliseconds attempt_bound(int state) const;
  boost::asio::steady_timer watch_timer_;
  std::uint64_t watch_gen_ = 0;
  int attempt_fd_ = -1;  // our duplicate of the attempt's socket
  ino_t attempt_ino_ = 0;
  std::chrono::steady_clock::time_point attempt_since_{};
  int attempts_abandoned_ = 0;
  bool watch_supported_ = false;
  bool watching_ = false;     // its timer is armed
  int last_event_state_ = 0;  // the handle's last session event delivered (0: none yet)
};

}  // namespace zkr::detail
