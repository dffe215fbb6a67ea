// Opening a session: at once over plain text; over TLS only after zkrecipes's own checks (docs/tls.md): the
// files, then the preflight (tls/tls_preflight.hpp), a TLS handshake of our own with the ensemble. A
// refusal ends the client with a typed error (give_up); a server that closes every handshake half-way (a
// plain-text port, most likely) does so once the connection timeout has passed; an unreachable ensemble is
// tried again, with a growing pause, as the C client would.

#include "core_impl.hpp"
#include "tls/tls_checks.hpp"

namespace zkr::detail {

bool CoreImpl::open_session() {
  if (!cfg_.tls) return session_->open();
  opening_since_ = Clock::now();
  preflight_rounds_ = 0;
  preflight_round();
  return true;
}

void CoreImpl::preflight_round() {
  if (life_.ended()) return;
  if (preflight_rounds_ == 0 || preflight_rounds_ % 10 == 0) {
    // The files may have changed since start() (a certificate rotated): the C client would spin on them.
    auto problem = check_tls_settings(*cfg_.tls);
    if (problem.ec)
      return give_up(problem.ec, "TLS settings refused: " + problem.subject + ": " + problem.reason);
  }
  ++preflight_rounds_;
  // A first handshake with a freshly started server's JVM takes up to about a second (docs/tls.md).
  const auto bound = std::max(2 * cfg_.handshake_timeout, std::chrono::milliseconds(2000));
  preflight_->run(bound, [this](TlsVerdict v) { on_preflight(std::move(v)); });
}

void CoreImpl::on_preflight(TlsVerdict v) {
  if (life_.ended()) return;
  using O = TlsVerdict::Outcome;
  if (v.outcome == O::verified) {
    if (log_->should_log(spdlog::level::debug)) log_->debug("TLS preflight passed with {}", v.server);
    if (!session_->open()) log_->error("the ZooKeeper C client refused to open a TLS session");
    return;
  }
  if (v.outcome == O::refused)
    return give_up(v.ec, "TLS refused by " + (v.server.empty() ? std::string("the ensemble") : v.server) +
                             ": " + v.reason);
  const auto elapsed = Clock::now() - opening_since_;
  if (v.outcome == O::suspect && elapsed >= cfg_.connection_timeout)
    return give_up(v.ec, "TLS handshake with " + v.server + " failed on every attempt for " +
                             std::to_string(std::chrono::duration_cast<Millis>(elapsed).count()) +
                             " ms: " + v.reason);
  if (preflight_rounds_ == 1 || preflight_rounds_ % 10 == 0)
    log_->warn("TLS: no server of the ensemble passed the handshake yet (attempt {}): {}: {}; trying again",
               preflight_rounds_, v.server, v.reason);
  // 100 ms, doubling to 3.2 s: about the C client's own pace against a server that is down.
  const auto pause = Millis(100) * (1 << std::min(preflight_rounds_ - 1, 5));
  preflight_timer_.expires_after(pause);
  preflight_timer_.async_wait([this](error_code ec) {
    if (!ec) preflight_round();
  });
}

}  // namespace zkr::detail
