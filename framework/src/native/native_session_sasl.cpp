// The native session's SASL phase (ClientConfig::sasl): between the server's connect response and the
// connection counting as up, the tokens of one SaslExchange go out with normal xids (GetSASLRequest) and
// come back in SetSASLResponse, while every other packet (pings, auth, SetWatches, the caller's requests)
// waits: a server that enforces SASL closes a connection that sends anything else first. The phase runs
// under the attempt timer of the connection (a fresh bound from the connect response), so a server that
// stops answering is given up like a silent handshake; so is a KDC that does not answer GSSAPI's start, which
// runs off this thread (blocking_calls.hpp). A refusal ends the client (SessionEvents::on_refused),
// never a quiet anonymous session.

#include <boost/asio/post.hpp>

#include "../sasl/sasl_settings.hpp"
#include "native_session.hpp"

namespace asio = boost::asio;

namespace zkr::detail::native {

namespace {

std::string ip_port(const asio::ip::tcp::endpoint& e) {
  return e.address().to_string() + ";" + std::to_string(e.port());
}

}  // namespace

void NativeSession::begin_sasl(bool read_only) {
  phase_ = Phase::sasl;
  sasl_read_only_ = read_only;
  error_code lec, rec;
  const auto local = stream_.socket().local_endpoint(lec);
  const auto remote = stream_.socket().remote_endpoint(rec);
  if (lec || rec) return drop("the socket closed before SASL");
  attempt_timer_.expires_after(attempt_bound());
  attempt_timer_.async_wait([this, g = gen_](error_code ec) {
    if (ec || g != gen_) return;
    ++attempts_abandoned_;
    attempt_failed("no answer to SASL within the bound");
  });
  const auto& hp = current_host();
  sasl_ = std::make_shared<SaslExchange>(*cfg_.sasl, ip_port(local), ip_port(remote), hp.host, sasl_state_);
  if (log_.should_log(spdlog::level::debug))
    log_.debug("session 0x{:x}: SASL {} as '{}'", session_id_, to_string(cfg_.sasl->mechanism),
               sasl_identity(*cfg_.sasl));
  if (cfg_.sasl->mechanism != SaslMechanism::gssapi) return sasl_step(sasl_->start());
  // GSSAPI's first token may need tickets from the KDC, which MIT's library asks for blocking: on the pool,
  // so that this thread's timers (the attempt's bound among them), pings and callbacks go on meanwhile. A
  // connection given up in the meantime leaves the exchange to finish there, and its result unused.
  kdc_calls_.run([exchange = sasl_] { return exchange->start(); },
                 [this, g = gen_, exchange = sasl_](SaslExchange::Step step) {
                   if (g != gen_ || sasl_ != exchange || phase_ != Phase::sasl) return;
                   sasl_step(step);
                 });
}

bool NativeSession::on_sasl_reply(jute::Reader& in) {
  const auto h = decode_reply_header(in);
  if (in.error()) return false;
  if (h.xid == xid::notification || h.xid == xid::ping) return true;  // none expected: nothing was set yet
  if (h.xid != sasl_xid_) return false;
  if (h.err != 0) {
    const auto& hp = current_host();
    sasl_step({SaslExchange::Step::Kind::failed,
               {},
               client_errc::sasl_auth_failed,
               "the server " + hp.host + ":" + hp.port + " refused " +
                   std::string(to_string(cfg_.sasl->mechanism)) + " as '" + sasl_identity(*cfg_.sasl) +
                   "' (" + zk_error(h.err).message() + ")"});
    return true;
  }
  const auto token = decode_sasl_response(in);
  if (in.error()) return false;
  sasl_step(sasl_->on_server_token(token));
  return true;
}

void NativeSession::sasl_step(const SaslExchange::Step& step) {
  using Kind = SaslExchange::Step::Kind;
  if (step.kind == Kind::send) {
    sasl_xid_ = next_xid();
    encode_sasl(out_, sasl_xid_, step.token);
    return flush();
  }
  if (step.kind == Kind::done) {
    sasl_.reset();
    if (log_.should_log(spdlog::level::debug))
      log_.debug("session 0x{:x}: SASL authenticated as '{}'", session_id_, sasl_identity(*cfg_.sasl));
    return connected(sasl_read_only_);
  }
  // Refused for good: the session ends here, the framework gives the client up with the reason.
  shut_socket();
  phase_ = Phase::dead;
  dead_rc_ = static_cast<std::int32_t>(zk_errc::auth_failed);
  asio::post(ioc_, [this, g = open_gen_, ec = step.ec, why = "SASL authentication failed: " + step.reason] {
    if (g == open_gen_) events_.on_refused(ec, why);
  });
}

}  // namespace zkr::detail::native
