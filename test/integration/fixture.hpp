#pragma once
// Shared helpers of the recipe integration tests: a real ZooKeeper started per test case, clients on it, a
// client's I/O thread held or drained, and bounded waiting (`eventually`, from test/support: never a hang,
// never a timing assertion).

#include <spdlog/logger.h>

#include <boost/asio/post.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <zkr/test/eventually.hpp>
#include <zkr/test/test_logger.hpp>
#include <zkr/testing/testing_server.hpp>
#include <zkr/zkrecipes.hpp>

namespace zkr::test {

using namespace std::chrono_literals;

struct ClientOptions {
  std::chrono::milliseconds session_timeout = 10s;
  std::chrono::milliseconds connection_timeout = 5s;
  std::string namespace_name;
  RetryPolicyPtr retry = std::make_shared<ExponentialBackoffRetry>(Millis(100), 10);
  bool use_container_parents = true;
  std::shared_ptr<spdlog::logger> logger;  // null: the client's own (warnings to stderr), or ZKR_TEST_LOG's
};

/// The configuration of a test client of `connect`.
inline ClientConfig client_config(const std::string& connect, const ClientOptions& o) {
  ClientConfig c;
  c.connect_string = connect;
  c.session_timeout = o.session_timeout;
  c.connection_timeout = o.connection_timeout;
  c.namespace_name = o.namespace_name;
  c.retry_policy = o.retry;
  c.use_container_parents = o.use_container_parents;
  // ZKR_TEST_LOG (client_support.hpp) turns every test client's log on, at that level.
  const char* log_level = std::getenv("ZKR_TEST_LOG");
  c.logger = o.logger ? o.logger : (log_level && *log_level ? test_logger() : nullptr);
  return c;
}

/// A started client connected to `connect`.
inline std::unique_ptr<CuratorFramework> make_client(const std::string& connect, ClientOptions o = {}) {
  auto client = std::make_unique<CuratorFramework>(client_config(connect, o));
  client->start();
  if (!client->block_until_connected(20s))
    throw std::runtime_error("test client could not connect to " + connect);
  return client;
}

/// One standalone server per test case (started by the fixture itself), and helpers around it.
struct ServerFixture {
  zkr::testing::TestingServer server;
  std::unique_ptr<CuratorFramework> admin = make_client(server.connect_string());

  std::unique_ptr<CuratorFramework> client(ClientOptions o = {}) {
    return make_client(server.connect_string(), o);
  }

  /// Children of `path` as seen by an independent client (empty when it does not exist).
  std::vector<std::string> children(const std::string& path) {
    error_code ec;
    auto c = admin->get_children(path, {}, ec);
    return ec ? std::vector<std::string>{} : c;
  }
};

/// Holds a client's I/O thread inside a handler until `end()` (at the latest after 30 s, so that a failing
/// test cannot hang the client): what happens meanwhile was not done by that thread.
class IoStall {
 public:
  explicit IoStall(CuratorFramework& c) {
    std::promise<void> stalled;
    boost::asio::post(zkr::detail::access::core(c)->io_executor(),
                      [&stalled, until = unstall_.get_future().share()] {
                        stalled.set_value();
                        until.wait_for(30s);
                      });
    stalled.get_future().wait();
  }
  IoStall(const IoStall&) = delete;
  IoStall& operator=(const IoStall&) = delete;
  ~IoStall() { end(); }
  void end() {
    if (!ended_) unstall_.set_value();
    ended_ = true;
  }

 private:
  std::promise<void> unstall_;
  bool ended_ = false;
};

/// Returns once the client's I/O thread has run everything posted to it before this call.
inline bool drain_io(CuratorFramework& c) {
  std::promise<void> reached;
  boost::asio::post(zkr::detail::access::core(c)->io_executor(), [&reached] { reached.set_value(); });
  return reached.get_future().wait_for(10s) == std::future_status::ready;
}

/// Runs `lease.release(ec)` (a blocking release) on a thread of its own; the future has its error.
template <class L>
std::future<error_code> release_in_thread(L& lease) {
  return std::async(std::launch::async, [&lease] {
    error_code ec;
    lease.release(ec);
    return ec;
  });
}

}  // namespace zkr::test
