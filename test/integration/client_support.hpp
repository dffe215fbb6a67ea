#pragma once
// Clients for the framework integration tests: the one shared test server, a quiet test logger, builders with
// short timeouts, unique paths, and helpers that read what a client left on the server.

#include <algorithm>
#include <atomic>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/test/eventually.hpp>
#include <zkr/test/test_logger.hpp>
#include <zkr/testing/testing_server.hpp>

namespace zkr::itest {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using zkr::test::eventually;
using zkr::test::test_logger;

/// Whether the tests run over the multi-threaded C client (ZKR_ZOOKEEPER_CLIENT, test/CMakeLists.txt). The
/// few behaviours only the single-threaded session has (the handshake bound, one segment per request) are
/// skipped there, with a warning that says so.
bool on_mt_client();  // client_flavour.cpp
/// Whether the tests run over the native transport (ZKR_ZOOKEEPER_TRANSPORT=native, or a native-only build).
bool on_native_transport();  // client_flavour.cpp
/// Whether a release sends its deletes from the calling thread (`Session::submit_from_caller`), so that they
/// leave while the client's I/O thread is busy: the C-client transports do; the native one sends every
/// request from the I/O thread (docs/native-transport.md), so there they leave once that thread runs.
inline bool sends_from_caller() { return !on_native_transport(); }

/// One server for the tests that do not disturb it (each uses its own paths). Started on first use, killed at
/// exit.
inline zkr::testing::TestingServer& shared_server() {
  static zkr::testing::TestingServer server;
  return server;
}

/// A path prefix unique in this process run: "/<tag>-<n>-<random>".
inline std::string unique_path(const std::string& tag) {
  static std::atomic<int> counter{0};
  static const auto salt = std::random_device{}();
  return "/" + tag + "-" + std::to_string(++counter) + "-" + std::to_string(salt % 100000);
}

/// Builder defaults for tests: short timeouts, a quick retry policy, fixed default data, quiet logger.
inline CuratorFrameworkFactory::Builder test_builder(const std::string& connect) {
  return CuratorFrameworkFactory::builder()
      .connect_string(connect)
      .retry_policy(std::make_shared<RetryNTimes>(3, Millis(100)))
      .session_timeout(10s)
      .connection_timeout(3s)
      .default_data("")
      .logger(test_logger());
}

/// Builds, starts and waits for the connection.
inline std::unique_ptr<CuratorFramework> started(const CuratorFrameworkFactory::Builder& b) {
  auto c = b.build();
  c->start();
  REQUIRE(c->block_until_connected(10s));
  return c;
}

inline std::unique_ptr<CuratorFramework> connect_shared() {
  return started(test_builder(shared_server().connect_string()));
}

/// Milliseconds since `t0`.
inline long long ms_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

/// "_c_<uuid>-" of a protected path's last segment.
inline std::string protected_prefix_of(const std::string& path) {
  return node_name(path).substr(0, protected_names::prefix_with_uuid_length);
}

/// Names of `parent`'s children seen by `client` that start with `prefix`.
inline std::vector<std::string> children_with_prefix(CuratorFramework& client, const std::string& parent,
                                                     const std::string& prefix) {
  std::vector<std::string> out;
  for (auto& n : client.get_children(parent))
    if (n.rfind(prefix, 0) == 0) out.push_back(n);
  return out;
}

/// Whether `path` is `prefix` followed by a sequential node's ten-digit counter.
inline bool is_sequential_name(const std::string& path, const std::string& prefix) {
  return path.size() == prefix.size() + 10 && path.compare(0, prefix.size(), prefix) == 0 &&
         std::all_of(path.begin() + static_cast<std::ptrdiff_t>(prefix.size()), path.end(),
                     [](char ch) { return ch >= '0' && ch <= '9'; });
}

/// The names of `v`, in order and without repeats (children compared whatever order the server listed them
/// in).
inline std::set<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

}  // namespace zkr::itest
