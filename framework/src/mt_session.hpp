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
// What the single-threaded session does that this one cannot: the handshake bound (the C client's own thread
// owns the socket; an unanswered attempt holds it for the C client's 2/3 of the session timeout, though
// nothing of ours waits on it meanwhile) and the corking of each turn's requests into one segment.

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
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
};

}  // namespace zkr::detail
