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

#include "tls_verdict.hpp"

namespace zkr::detail {

class TlsPreflight {
 public:
  /// `config` (with `tls` set) and `log` outlive it; it runs on `ioc`'s thread.
  TlsPreflight(boost::asio::io_context& ioc, const ClientConfig& config, spdlog::logger& log);
  ~TlsPreflight();
  TlsPreflight(const TlsPreflight&) = delete;
  TlsPreflight& operator=(const TlsPreflight&) = delete;

  /// One round over every address of the connect string, at once, each bounded by `bound`; `done` runs once,
  /// posted, unless `cancel` comes first, with the best verdict over the addresses (best_verdict).
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
