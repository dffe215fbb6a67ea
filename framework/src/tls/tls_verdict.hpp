#pragma once
// What zkrecipes's own TLS connections to the ensemble found, in one type for both of its users: the C
// client's preflight (tls_preflight.hpp), one verdict per round over every address, and the native transport
// (native/), one verdict per TLS handshake and per opening pass over the hosts of the connect string. The
// framework turns a verdict into the client's fate in one place (session_opening.hpp). No OpenSSL here: the
// native transport's plain-socket build includes it too.

#include <string>
#include <vector>
#include <zkr/framework/error.hpp>

namespace zkr::detail {

/// A handshake's outcome, or the best over several.
struct TlsVerdict {
  enum class Outcome {
    verified,     ///< a server passed every check
    refused,      ///< none passed, and one refused for good (`ec`: tls_handshake_failed or a file error)
    suspect,      ///< none passed, and one closed the connection in the middle of the handshake
    unreachable,  ///< none answered (refused connections, timeouts, resolution failures)
  };
  Outcome outcome = Outcome::unreachable;
  error_code ec;
  std::string server;  // the address the verdict is about ("host:port", with the address dialled if another)
  std::string reason;
};

/// How a verdict names a server: "host:port", and the address dialled when the host is a name.
inline std::string tls_server_label(const std::string& host, const std::string& port,
                                    const std::string& address) {
  auto label = host + ":" + port;
  if (!address.empty() && address != host) label += " (" + address + ")";
  return label;
}

/// The best of `verdicts`: one verified, else a refusal, else a suspect, else unreachable (the first of its
/// rank); unreachable, "no server to try", when there is none.
inline TlsVerdict best_verdict(const std::vector<TlsVerdict>& verdicts) {
  const TlsVerdict* best = nullptr;
  for (const auto& v : verdicts)
    if (best == nullptr || v.outcome < best->outcome) best = &v;
  if (best != nullptr) return *best;
  TlsVerdict none;
  none.reason = "no server to try";
  return none;
}

}  // namespace zkr::detail
