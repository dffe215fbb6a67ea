#pragma once
// Helpers shared by the SASL integration tests (sasl_test.cpp, sasl_kerberos_test.cpp, cli_sasl_test.cpp).

#include <stdlib.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <zkr/testing/test_kdc.hpp>

#include "fixture.hpp"

namespace zkr::test {

/// The Kerberos realm of this test process (made at the first call), and $KRB5_CONFIG naming it: read by
/// each of MIT's contexts in this process, and inherited by the programs it starts (zkr).
inline zkr::testing::TestKdc& test_realm() {
  static zkr::testing::TestKdc realm;
  static const bool configured = ::setenv("KRB5_CONFIG", realm.krb5_conf().c_str(), 1) == 0;
  REQUIRE(configured);
  return realm;
}

/// Options of a client that must be refused: no retry, a 10 s connection bound, `logger` to capture the log.
inline ClientOptions quick(std::shared_ptr<spdlog::logger> logger = {}) {
  ClientOptions o;
  o.connection_timeout = 10s;
  o.retry = std::make_shared<RetryNTimes>(0, Millis(0));
  o.logger = std::move(logger);
  return o;
}

/// A started client of `c`, connected (and so authenticated) within 20 s, else \throws std::runtime_error.
inline std::unique_ptr<CuratorFramework> connected(const ClientConfig& c) {
  auto client = std::make_unique<CuratorFramework>(c);
  client->start();
  if (!client->block_until_connected(20s)) throw std::runtime_error("SASL client did not connect");
  return client;
}

/// For a transport without `what` (SASL, or Kerberos): says so (WARN) and checks that start() of a client
/// asking `sasl` is refused with `client_errc::sasl_unsupported`, before any server is dialled. Returns
/// false, for the caller's case to end.
inline bool refusal_checked(const SaslConfig& sasl, const std::string& what) {
  WARN(what << " checked as a refusal only: the " << std::string(to_string(*default_transport()))
            << " transport of this build has no " << what << " (docs/sasl.md)");
  ClientConfig c = client_config("127.0.0.1:2181", {});
  c.sasl = sasl;
  CuratorFramework client(c);
  error_code ec;
  client.start(ec);
  CHECK(ec == client_errc::sasl_unsupported);
  return false;
}

}  // namespace zkr::test
