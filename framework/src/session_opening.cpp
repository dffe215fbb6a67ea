// Opening a session (session_opening.hpp): the TLS checks, the preflight's rounds, and the one decision over
// the verdicts of the preflight and of a native session's opening passes.

#include "session_opening.hpp"

#include "tls/tls_checks.hpp"

namespace zkr::detail {

SessionOpening::SessionOpening(Uses uses) : uses_(std::move(uses)), pause_(uses_.ioc) {
  if (uses_.config.tls && !uses_.session.checks_tls())
    preflight_ = std::make_unique<TlsPreflight>(uses_.ioc, uses_.config, uses_.log);
}

bool SessionOpening::open() {
  if (!uses_.config.tls) return uses_.session.open();
  since_ = Clock::now();
  rounds_ = 0;
  if (preflight_) {
    preflight_round();
    return true;
  }
  return !settings_pass() || uses_.session.open();
}

void SessionOpening::cancel() {
  pause_.cancel();
  if (preflight_) preflight_->cancel();
}

bool SessionOpening::settings_pass() {
  // The C client would spin on a file that no longer loads; the native session reads them once per client.
  auto problem = check_tls_settings(*uses_.config.tls);
  if (!problem.ec) return true;
  uses_.give_up(problem.ec, "TLS settings refused: " + problem.subject + ": " + problem.reason);
  return false;
}

void SessionOpening::preflight_round() {
  if (uses_.life.ended()) return;
  if ((rounds_ == 0 || rounds_ % 10 == 0) && !settings_pass()) return;
  // A first handshake with a freshly started server's JVM takes up to about a second (docs/tls.md).
  const auto bound = std::max(2 * uses_.config.handshake_timeout, std::chrono::milliseconds(2000));
  preflight_->run(bound, [this](TlsVerdict v) { on_verdict(std::move(v)); });
}

void SessionOpening::on_verdict(TlsVerdict v) {
  if (uses_.life.ended()) return;
  using O = TlsVerdict::Outcome;
  auto& log = uses_.log;
  if (v.outcome == O::verified) {
    if (!preflight_) return;  // a session that checks TLS itself opened already: its passes never verify
    if (log.should_log(spdlog::level::debug)) log.debug("TLS preflight passed with {}", v.server);
    if (!uses_.session.open()) log.error("the ZooKeeper C client refused to open a TLS session");
    return;
  }
  if (v.outcome == O::refused)
    return uses_.give_up(
        v.ec,
        "TLS refused by " + (v.server.empty() ? std::string("the ensemble") : v.server) + ": " + v.reason);
  const auto elapsed = Clock::now() - since_;
  if (v.outcome == O::suspect && elapsed >= uses_.config.connection_timeout)
    return uses_.give_up(v.ec, "TLS handshake with " + v.server + " failed on every attempt for " +
                                   std::to_string(std::chrono::duration_cast<Millis>(elapsed).count()) +
                                   " ms: " + v.reason);
  ++rounds_;
  if (!preflight_) return;  // the session logs its refusals and tries the hosts again itself
  if (rounds_ == 1 || rounds_ % 10 == 0)
    log.warn("TLS: no server of the ensemble passed the handshake yet (attempt {}): {}: {}; trying again",
             rounds_, v.server, v.reason);
  // 100 ms, doubling to 3.2 s: about the C client's own pace against a server that is down.
  pause_.expires_after(Millis(100) * (1 << std::min(rounds_ - 1, 5)));
  pause_.async_wait([this](error_code ec) {
    if (!ec) preflight_round();
  });
}

}  // namespace zkr::detail
