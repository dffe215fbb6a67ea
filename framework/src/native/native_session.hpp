#pragma once
// The native session: ZooKeeper's client protocol spoken by zkrecipes itself over a Boost.Asio socket, on
// the client's I/O thread (no thread of its own; only GSSAPI's KDC requests go to blocking_calls.hpp's pool),
// with no ZooKeeper C client. It owns the connection: the hosts of the connect string tried in a shuffled
// order, the connect handshake (resuming the session with its id and password on another server after a
// loss; an expired session reported as such), the auth packets, the one-shot watches set again with
// SetWatches, pings at a third of the negotiated timeout and the read timeout at two thirds, requests
// pipelined with ascending xids and the requests of one I/O turn written together, replies matched to
// requests in order. Over TLS when the client is configured for it: the connection is tls_stream.hpp's, which
// checks the server of every connection; while the session opens, a pass over the hosts that only refuses TLS
// is reported to the framework, which ends the client (native_session_tls.cpp). The bytes are records.hpp's;
// this file only frames, times and routes.

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>
#include <zkr/framework/curator_framework.hpp>

#include "../session.hpp"
#include "../tls/tls_verdict.hpp"
#include "blocking_calls.hpp"
#include "connect_string.hpp"
#include "records.hpp"
#include "sasl_exchange.hpp"
#include "stream.hpp"
#include "watch_table.hpp"

namespace zkr::detail::native {

class NativeSession final : public Session {
 public:
  /// `config`, `log` and `events` outlive the session; it runs on `ioc`'s (single) thread.
  NativeSession(boost::asio::io_context& ioc, const ClientConfig& config, spdlog::logger& log,
                SessionEvents& events);
  ~NativeSession() override;

  bool open() override;
  void close() override;
  bool is_open() const override { return open_; }
  void submit(zk::Request request, zk::ReplyCallback reply) override;
  /// Never sends from another thread (the socket is the I/O thread's): false, as the seam allows.
  bool submit_from_caller(zk::Request&, zk::ReplyCallback&) override { return false; }
  /// addWatch (persistent watches, set again with SetWatches2), multiRead, getEphemerals,
  /// getAllChildrenNumber, whoAmI.
  bool speaks_3_6() const override { return true; }
  /// Every TLS connection is its own, checked as the preflight would (docs/tls.md): no preflight.
  bool checks_tls() const override { return true; }
  std::int64_t session_id() const override { return session_id_; }
  int negotiated_timeout_ms() const override { return timeout_ms_; }

 private:
  using Clock = std::chrono::steady_clock;
  enum class Phase { idle, connecting, handshake, sasl, connected, dead };
  enum class Internal { none, set_watches, close };
  struct Pending {
    std::int32_t xid = 0;
    zk::Request request;
    zk::ReplyCallback cb;
    Internal internal = Internal::none;
  };

  // The connection.
  void connect_next();
  /// The attempt is over: `verdict` says what its TLS handshake found (unreachable, with `why`, by default).
  void attempt_failed(const char* why, TlsVerdict verdict = {});
  void on_stream_ready();
  // TLS (native_session_tls.cpp).
  void on_tcp_connected(const boost::asio::ip::tcp::endpoint& endpoint);
  /// The server refused TLS (`verdict`: refused, or suspect when it cut the handshake off): logged, and the
  /// attempt given up.
  void tls_refused(TlsVerdict verdict);
  /// While the session opens over TLS, `verdict` (one attempt's) joins the pass over the hosts; at the end of
  /// the pass (`pass_done`) the pass's verdict goes to the framework (SessionEvents::on_tls_opening).
  void opening_pass(TlsVerdict verdict, bool pass_done);
  const HostPort& current_host() const;
  void read_some();
  void on_read(std::size_t n);
  /// One frame's payload; false when it breaks the protocol (the connection is then dropped).
  bool on_frame(jute::ByteSpan payload);
  bool on_handshake(jute::Reader& in);
  /// The connection is up (and authenticated): report it, send its own packets and what waited.
  void connected(bool read_only);
  // SASL (ClientConfig::sasl): between the connect response and `connected`, every other packet held.
  void begin_sasl(bool read_only);
  bool on_sasl_reply(jute::Reader& in);
  void sasl_step(const SaslExchange::Step& step);
  bool on_reply(const ReplyHeader& h, jute::Reader& in);
  void on_notification(jute::Reader& in);
  void drop(const char* why);
  void end_session(SessionState state, std::int32_t rc);
  void tick();
  void arm_tick();
  // Writing.
  void send(Pending p);
  void schedule_flush();
  void flush();
  // Delivery (posted, in order).
  void deliver(zk::ReplyCallback cb, zk::Reply reply);
  void fail(std::deque<Pending>& queue, std::int32_t rc);
  void report(SessionState state);
  void register_watch(const zk::Request& request, std::int32_t err);
  std::chrono::milliseconds attempt_bound() const;
  std::int32_t next_xid();
  void shut_socket();
  void close_on_wire();

  boost::asio::io_context& ioc_;
  const ClientConfig& cfg_;
  spdlog::logger& log_;
  SessionEvents& events_;
  Stream stream_;
  boost::asio::ip::tcp::resolver resolver_;
  boost::asio::steady_timer attempt_timer_, tick_timer_, retry_timer_;

  ConnectString cs_;
  std::size_t next_host_ = 0, failed_in_pass_ = 0;
  int attempts_abandoned_ = 0;
  int tls_refusals_ = 0;          // TLS handshakes refused in a row
  bool opening_ = false;          // no connection of this session has been up yet
  std::vector<TlsVerdict> pass_;  // the TLS verdicts of the opening's pass so far, one per host tried
  std::string dialled_;           // the address the attempt's TCP connection reached
  std::uint64_t gen_ = 0;         // the connection's generation: handlers of an older one do nothing
  std::uint64_t open_gen_ = 0;    // the session's: events posted before a close are dropped
  Phase phase_ = Phase::idle;
  bool open_ = false;
  std::int32_t dead_rc_ = 0;  // what requests get once the session is over (expired, auth failed)

  std::int64_t session_id_ = 0;
  std::string passwd_ = std::string(16, '\0');
  int timeout_ms_ = 0;
  std::int64_t last_zxid_ = 0;
  bool seen_rw_ = false;
  std::int32_t xid_ = 0;

  std::deque<Pending> sent_;    // written (or about to be), awaiting replies in xid order
  std::size_t sent_peak_ = 0;   // its largest size since it was last given back
  std::deque<Pending> queued_;  // submitted while no connection was up
  jute::Bytes out_, writing_;
  bool writing_now_ = false, flush_posted_ = false;
  jute::Bytes in_;
  std::size_t in_len_ = 0;
  Clock::time_point last_recv_{}, last_send_{};
  WatchTable watches_;
  std::shared_ptr<SaslExchange> sasl_;                     // this connection's exchange, while it runs
  std::shared_ptr<SaslExchange::ClientState> sasl_state_;  // the client's, across connections (GSSAPI)
  BlockingCalls kdc_calls_{ioc_};                          // GSSAPI's start, which may ask the KDC
  std::int32_t sasl_xid_ = 0;
  bool sasl_read_only_ = false;
};

}  // namespace zkr::detail::native
