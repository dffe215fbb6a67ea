// Built when no transport of this build speaks TLS (the C client has no TLS support, and the native transport
// is not carried or has no OpenSSL): a client configured for TLS fails at start() with
// client_errc::tls_unsupported, and never falls back to plain text.

#include <spdlog/logger.h>

#include <boost/asio/post.hpp>

#include "tls_checks.hpp"
#include "tls_preflight.hpp"

namespace zkr::detail {

TlsProblem check_tls_settings(const TlsConfig&) {
  return {client_errc::tls_unsupported, "TLS",
          "this build of zkrecipes links a ZooKeeper C client without TLS support (ZKR_ZOOKEEPER_TLS; "
          "docs/tls.md)"};
}

std::string c_client_cert_string(const TlsConfig&) { return {}; }

struct TlsPreflight::Round {};

TlsPreflight::TlsPreflight(boost::asio::io_context& ioc, const ClientConfig& config, spdlog::logger& log)
    : ioc_(ioc), cfg_(config), log_(log) {}
TlsPreflight::~TlsPreflight() = default;

void TlsPreflight::run(std::chrono::milliseconds, unique_function<void(TlsVerdict)> done) {
  boost::asio::post(ioc_, [done = std::move(done)]() mutable {
    done({TlsVerdict::Outcome::refused, client_errc::tls_unsupported, {}, "no TLS support in this build"});
  });
}

void TlsPreflight::cancel() {}

}  // namespace zkr::detail
