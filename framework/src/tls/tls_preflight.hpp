#pragma once
// The TLS preflight: before the C client opens a session over TLS, zkrecipes makes a TLS handshake of its own
// with every address of the connect string (docs/tls.md, "What zkrecipes checks"). It trusts only the
// configured CA and checks the host name, which the C client does not; and unlike the C client, it tells a
// refusal (the server's certificate failed the checks, the server refused ours, or no TLS there) from a
// server that is only unreachable, and it never blocks the I/O thread: everything is asynchronous, and a
// round is bounded. After the handshake it sends the four-letter word `isro`: the server answers any such
// word (whitelisted or not), which shows that it accepted our certificate (TLS 1.3 servers check it only
// after the client's handshake is done).

#include <spdlog/logger.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/framework/detail/unique_function.hpp>

namespace zkr::detail {

/// A round's outcome, the best over the ensemble's addresses.
struct TlsVerdict {
  enum class Outcome {
    verified,     ///< at least one server passed every check
    refused,      ///< none passed, and one refused for good (`ec`: tls_handshake_failed or a file error)
    suspect,      ///< none passed, and one closed the connection in the middle of the handshake
    unreachable,  ///< none answered (refused connections, timeouts, resolution failures)
  };
  Outcome outcome = Outcome::unreachable;
  error_code ec;
  std::string server;  // the address the verdict is about ("host:port")
  std::string reason;
};

class TlsPreflight {
 public:
  /// `config` (with `tls` set) and `log` outlive it; it runs on `ioc`'s thread.
  TlsPreflight(boost::asio::io_context& ioc, const ClientConfig& config, spdlog::logger& log);
  ~TlsPreflight();
  TlsPreflight(const TlsPreflight&) = delete;
  TlsPreflight& operator=(const TlsPreflight&) = delete;

  /// One round over every address of the connect string, at once, each bounded by `bound`; `done` runs once,
  /// posted, unless `cancel` comes first.
  void run(std::chrono::milliseconds bound, unique_function<void(TlsVerdict)> done);
  /// Ends the round in progress: its `done` is dropped.
  void cancel();

 private:
  struct Round;
  boost::asio::io_context& ioc_;
  const ClientConfig& cfg_;
  spdlog::logger& log_;
  std::shared_ptr<Round> round_;
};

}  // namespace zkr::detail
