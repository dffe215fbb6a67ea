#pragma once
// Shared helpers of the integration tests: a real ZooKeeper started per test case, clients on it, and bounded
// waiting (never a hang, never a timing assertion).

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include <zkr/testing/testing_server.hpp>
#include <zkr/zkrecipes.hpp>

namespace zkr::test {

using namespace std::chrono_literals;

/// Waits until `pred()` holds, polling; false when `limit` passed first.
inline bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds limit = 20s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

struct ClientOptions {
  std::chrono::milliseconds session_timeout = 10s;
  std::chrono::milliseconds connection_timeout = 5s;
  std::string namespace_name;
  RetryPolicyPtr retry = std::make_shared<ExponentialBackoffRetry>(Millis(100), 10);
  bool use_container_parents = true;
};

/// A started client connected to `connect`.
inline std::unique_ptr<CuratorFramework> make_client(const std::string& connect, ClientOptions o = {}) {
  ClientConfig c;
  c.connect_string = connect;
  c.session_timeout = o.session_timeout;
  c.connection_timeout = o.connection_timeout;
  c.namespace_name = o.namespace_name;
  c.retry_policy = o.retry;
  c.use_container_parents = o.use_container_parents;
  auto client = std::make_unique<CuratorFramework>(std::move(c));
  client->start();
  if (!client->block_until_connected(20s)) throw std::runtime_error("test client could not connect to " + connect);
  return client;
}

/// One standalone server per test case (started by the fixture itself), and helpers around it.
struct ServerFixture {
  zkr::testing::TestingServer server;
  std::unique_ptr<CuratorFramework> admin = make_client(server.connect_string());

  std::unique_ptr<CuratorFramework> client(ClientOptions o = {}) { return make_client(server.connect_string(), o); }

  /// Children of `path` as seen by an independent client (empty when it does not exist).
  std::vector<std::string> children(const std::string& path) {
    error_code ec;
    auto c = admin->get_children(path, {}, ec);
    return ec ? std::vector<std::string>{} : c;
  }
};

}  // namespace zkr::test
