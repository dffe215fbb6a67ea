#pragma once
// Helpers shared by the SASL integration tests (sasl_test.cpp, sasl_kerberos_test.cpp).

#include <memory>
#include <stdexcept>

#include "fixture.hpp"

namespace zkr::test {

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

}  // namespace zkr::test
