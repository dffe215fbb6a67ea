// Integration tests of the handshake bound (ClientConfig::handshake_timeout, docs/architecture.md): a server
// that accepts a connection and never answers it holds a connection attempt for the bound, not for the C
// client's 2/3 of the session timeout. The silent server is a listening socket of the test (the fault
// ZooKeeper 3.8.0 shows to a client that reaches it while it starts up); the server the client then reaches
// is a real one.

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "client_support.hpp"

using namespace zkr;
using namespace zkr::itest;

namespace {

/// Listens on 127.0.0.1, accepts every connection, keeps it open and never reads or writes: a server that
/// never answers the session handshake. Counts the connections.
class SilentServer {
 public:
  SilentServer() : port_(zkr::testing::free_port()) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(fd_ >= 0);
    const int one = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(port_);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 16) == 0);
    thread_ = std::thread([this] { run(); });
  }
  ~SilentServer() {
    stop_ = true;
    thread_.join();
    for (int c : accepted_) ::close(c);
    ::close(fd_);
  }
  SilentServer(const SilentServer&) = delete;
  SilentServer& operator=(const SilentServer&) = delete;

  std::string connect_string() const { return "127.0.0.1:" + std::to_string(port_); }
  int connections() const { return count_.load(); }

 private:
  void run() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      accepted_.push_back(c);
      ++count_;
    }
  }

  std::uint16_t port_;
  int fd_ = -1;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<int> count_{0};
  std::vector<int> accepted_;  // the accepting thread's until it is joined
};

}  // namespace

TEST_CASE("handshake: an unanswered connection attempt is given up after handshake_timeout and tried again",
          "[framework][handshake]") {
  SilentServer silent;
  // A 30 s session: the C client alone would wait 20 s on the first attempt.
  auto c = test_builder(silent.connect_string()).session_timeout(30s).handshake_timeout(1s).build();
  c->start();
  // Attempts at about 0 s, 1.5 s and 3 s (1 s bound, then the C client's 0.5 s delay before reconnecting).
  CHECK(eventually([&] { return silent.connections() >= 3; }, 10s));
  CHECK_FALSE(c->is_connected());
  c->close();
}

TEST_CASE("handshake: handshake_timeout 0 leaves the attempt to the C client's own timeout",
          "[framework][handshake]") {
  SilentServer silent;
  auto c = test_builder(silent.connect_string()).session_timeout(30s).handshake_timeout(0ms).build();
  c->start();
  REQUIRE(eventually([&] { return silent.connections() >= 1; }, 5s));
  std::this_thread::sleep_for(4s);  // well under the C client's 20 s: the first attempt is still waiting
  CHECK(silent.connections() == 1);
  c->close();
}

TEST_CASE("handshake: a silent server in the connect string does not delay the connection to a real one",
          "[framework][handshake]") {
  SilentServer silent;
  auto& server = shared_server();
  // Whichever the C client tries first, the client is connected within about a second and a half.
  for (int i = 0; i < 3; ++i) {
    auto c =
        test_builder(silent.connect_string() + "," + server.connect_string()).session_timeout(30s).build();
    c->start();
    CHECK(c->block_until_connected(10s));
    const auto path = unique_path("handshake");
    c->create(path);
    CHECK(c->exists(path));
    c->remove(path);
  }
}
