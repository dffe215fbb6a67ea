// The native session's TLS (native_session.hpp; docs/tls.md): the handshake of every connection, within the
// attempt's bound (the attempt timer, the same as the ZooKeeper handshake's), and what a refusal does. Each
// attempt's verdict is the preflight's reading of the handshake (tls/tls_context.hpp). While the session
// opens (no connection of it was up yet), the verdicts of one pass over the connect string's hosts go to the
// framework as one (SessionEvents::on_tls_opening), which ends the client when the ensemble only refuses,
// with the preflight's errors (session_opening.hpp). Once a connection was up, a refusal is one failed
// attempt: the next host is tried, and the framework's session timeout decides.

#include <boost/asio/post.hpp>
#include <string>

#include "native_session.hpp"

namespace asio = boost::asio;

namespace zkr::detail::native {

// Over TLS, the TLS handshake first: a server refused there is given up like any failed attempt, never
// spoken to in plain text.
void NativeSession::on_tcp_connected(const asio::ip::tcp::endpoint& endpoint) {
  error_code ec;
  stream_.socket().set_option(asio::ip::tcp::no_delay(true), ec);
  if (!stream_.tls()) return on_stream_ready();
  dialled_ = endpoint.address().to_string();
  stream_.async_handshake(current_host().host, cfg_.tls->verify_host_name, [this, g = gen_](TlsVerdict v) {
    if (g != gen_) return;
    if (v.outcome == TlsVerdict::Outcome::verified) return on_stream_ready();
    if (v.outcome == TlsVerdict::Outcome::unreachable) return attempt_failed("TLS handshake cut off", v);
    tls_refused(std::move(v));
  });
}

// The first refusal in a row and every tenth are logged (a server that keeps refusing is retried at the pace
// of the attempts), with the cause; nothing of the TLS settings but the host is named. At ERROR once a
// connection was up; while the session opens at WARN, as the framework logs the end at ERROR when the whole
// ensemble refuses.
void NativeSession::tls_refused(TlsVerdict verdict) {
  ++tls_refusals_;
  if (tls_refusals_ == 1 || tls_refusals_ % 10 == 0) {
    const auto& hp = current_host();
    log_.log(
        opening_ ? spdlog::level::warn : spdlog::level::err,
        "TLS handshake with {}:{} failed ({}): {}; trying the next server{}", hp.host, hp.port,
        error_code(client_errc::tls_handshake_failed).message(), verdict.reason,
        tls_refusals_ > 1 ? " (" + std::to_string(tls_refusals_) + " refusals in a row)" : std::string());
  }
  attempt_failed("TLS handshake refused", std::move(verdict));
}

// A pass's verdict is the best of its hosts' (tls_verdict.hpp), but unreachable while a host of the pass did
// not answer: only an ensemble whose every host refused TLS (or cut the handshake off) is one that refuses; a
// host that is down may yet accept.
void NativeSession::opening_pass(TlsVerdict verdict, bool pass_done) {
  if (!opening_ || !stream_.tls()) return;
  const auto& hp = current_host();
  verdict.server = tls_server_label(hp.host, hp.port, dialled_);
  pass_.push_back(std::move(verdict));
  if (!pass_done) return;
  auto v = best_verdict(pass_);
  for (const auto& one : pass_)
    if (one.outcome == TlsVerdict::Outcome::unreachable) v.outcome = TlsVerdict::Outcome::unreachable;
  pass_.clear();
  asio::post(ioc_, [this, g = open_gen_, v = std::move(v)] {
    if (g == open_gen_ && opening_) events_.on_tls_opening(v);
  });
}

}  // namespace zkr::detail::native
