#pragma once
// Opening a session (a part of the client, see core_impl.hpp): at once over plain text; over TLS after
// zkrecipes's own checks (docs/tls.md). The files are checked again before every session. Then, over a
// transport that cannot tell a TLS refusal from an unreachable server (the C client), the preflight
// (tls/tls_preflight.hpp), a TLS handshake of our own with the ensemble, comes first, round after round, and
// the session opens once a server passed; a transport that checks TLS itself (`Session::checks_tls`: the
// native one) opens at once and reports the passes of its opening over the hosts instead. Either way, one
// decision over the verdicts: a refusal ends the client with a typed error (its `give_up`); a server that
// closes every handshake half-way (a plain-text port, most likely) does so once the connection timeout has
// passed; an unreachable ensemble is tried again (by the preflight here with a growing pause, by the native
// session itself). I/O thread only.

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <zkr/framework/curator_framework.hpp>

#include "lifecycle.hpp"
#include "session.hpp"
#include "tls/tls_preflight.hpp"

namespace zkr::detail {

class SessionOpening {
 public:
  /// What the opening uses: the client's configuration, log and session (all outliving it), its life (an
  /// ended client opens nothing), and its way of stopping for good with a reason.
  struct Uses {
    boost::asio::io_context& ioc;
    const ClientConfig& config;
    spdlog::logger& log;
    Session& session;
    const Lifecycle& life;
    std::function<void(error_code, const std::string&)> give_up;
  };
  explicit SessionOpening(Uses uses);

  /// Opens a new session: at once, or over TLS after the checks (the first preflight round runs now). False
  /// only when the transport refused the connect string.
  bool open();
  /// What the opening's TLS handshakes found: a preflight round's verdict, or a pass of a session that checks
  /// TLS itself (SessionEvents::on_tls_opening). Opens the session (verified, preflight), ends the client
  /// (refused; suspect past the connection timeout), or waits for the next verdict.
  void on_verdict(TlsVerdict verdict);
  /// Stops the preflight round under way and its pause (the client closes or gives up).
  void cancel();

 private:
  using Clock = std::chrono::steady_clock;
  /// The files again (a certificate rotated since start()?): false, the client given up, when they fail.
  bool settings_pass();
  void preflight_round();

  Uses uses_;
  std::unique_ptr<TlsPreflight> preflight_;  // with TLS over a session that does not check it itself
  boost::asio::steady_timer pause_;          // between preflight rounds
  Clock::time_point since_{};                // the opening's start
  int rounds_ = 0;                           // verdicts so far that left the opening undecided
};

}  // namespace zkr::detail
