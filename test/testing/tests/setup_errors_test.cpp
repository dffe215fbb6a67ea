// Bad set-ups of zkr::testing must fail fast with a clear TestingError, never hang or leak a process.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <zkr/test/scoped_env.hpp>
#include <zkr/testing/java.hpp>
#include <zkr/testing/testing_cluster.hpp>
#include <zkr/testing/testing_server.hpp>

#include "support.hpp"

using namespace std::chrono_literals;
using Catch::Matchers::Contains;
using zkr::testing::ServerOptions;
using zkr::testing::TestingCluster;
using zkr::testing::TestingError;
using zkr::testing::TestingServer;
namespace t = zkr::testing::test;
namespace fs = std::filesystem;

namespace {

// Listens on 127.0.0.1:port for its lifetime.
class Squatter {
 public:
  explicit Squatter(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(::listen(fd_, 1) == 0);
  }
  ~Squatter() { ::close(fd_); }
  Squatter(const Squatter&) = delete;
  Squatter& operator=(const Squatter&) = delete;

 private:
  int fd_;
};

// A stand-in for `java` that runs `body` (a shell script).
class FakeJava {
 public:
  explicit FakeJava(const std::string& body)
      : path_(fs::temp_directory_path() /
              ("zkr-fake-java-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++))) {
    std::ofstream(path_) << "#!/bin/sh\n" << body << '\n';
    fs::permissions(path_, fs::perms::owner_all);
  }
  ~FakeJava() { fs::remove(path_); }
  FakeJava(const FakeJava&) = delete;
  FakeJava& operator=(const FakeJava&) = delete;
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

using zkr::test::ScopedEnv;

int pid_in(const std::string& message) {
  std::smatch m;
  return std::regex_search(message, m, std::regex(R"(\(pid (\d+)\))")) ? std::stoi(m[1]) : -1;
}

}  // namespace

TEST_CASE("A client port in use fails before anything is started", "[errors]") {
  ServerOptions options;
  options.port = zkr::testing::free_port();
  Squatter squatter(options.port);
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(TestingServer(options),
                    Contains("port " + std::to_string(options.port)) && Contains("is already in use"));
  CHECK(t::seconds_since(start) < 2.0);
}

TEST_CASE("A cluster client port in use fails quickly", "[errors]") {
  ServerOptions options;
  options.port = zkr::testing::free_port();
  Squatter squatter(static_cast<std::uint16_t>(options.port + 1));
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(TestingCluster(3, options), Contains("already in use"));
  CHECK(t::seconds_since(start) < 5.0);
}

TEST_CASE("A missing java is reported clearly", "[errors]") {
  ServerOptions options;
  options.java = "/nonexistent/bin/java";
  CHECK_THROWS_WITH(TestingServer(options), Contains("Java not found") && Contains("/nonexistent/bin/java") &&
                                                Contains("default-jre-headless"));
  CHECK_THROWS_WITH(TestingCluster(3, options), Contains("Java not found"));

  const fs::path empty = fs::temp_directory_path() / ("zkr-no-java-" + std::to_string(::getpid()));
  fs::create_directories(empty);
  {
    ScopedEnv home("JAVA_HOME", empty.string());
    ScopedEnv path("PATH", empty.string());
    CHECK_THROWS_WITH(zkr::testing::find_java(),
                      Contains("Java not found") && Contains("default-jre-headless"));
  }
  fs::remove_all(empty);
}

TEST_CASE("JAVA_HOME is preferred to PATH", "[errors]") {
  const fs::path home = fs::temp_directory_path() / ("zkr-java-home-" + std::to_string(::getpid()));
  fs::create_directories(home / "bin");
  std::ofstream(home / "bin" / "java") << "#!/bin/sh\nexit 0\n";
  fs::permissions(home / "bin" / "java", fs::perms::owner_all);
  {
    ScopedEnv env("JAVA_HOME", home.string());
    CHECK(zkr::testing::find_java() == home / "bin" / "java");
  }
  fs::remove_all(home);
}

TEST_CASE("Missing ZooKeeper jars are reported clearly", "[errors]") {
  const fs::path empty = fs::temp_directory_path() / ("zkr-no-jars-" + std::to_string(::getpid()));
  fs::create_directories(empty);
  {
    ScopedEnv env("ZKR_ZOOKEEPER_LIB_DIR", empty.string());
    CHECK_THROWS_WITH(TestingServer(), Contains("ZooKeeper server jars not found") &&
                                           Contains("install Debian's zookeeper package"));
  }
  fs::remove_all(empty);
}

TEST_CASE("A tiny start timeout fails promptly and kills the server", "[errors]") {
  ServerOptions options;
  options.start_timeout = 0ms;
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    TestingServer server(options);
    FAIL("the server started within 0 ms");
  } catch (const TestingError& e) {
    message = e.what();
  }
  INFO(message);
  CHECK(t::seconds_since(start) < 5.0);
  CHECK_THAT(message, Contains("did not answer 'ruok' within the start timeout of 0 ms"));
  const int pid = pid_in(message);
  CHECK(pid > 0);
  CHECK_FALSE(t::process_exists(pid));
}

TEST_CASE("A server that never answers is killed at the start timeout", "[errors]") {
  FakeJava java("exec sleep 600");
  ServerOptions options;
  options.java = java.path();
  options.start_timeout = 1s;
  const auto start = std::chrono::steady_clock::now();
  std::string message;
  try {
    TestingServer server(options);
  } catch (const TestingError& e) {
    message = e.what();
  }
  INFO(message);
  CHECK(t::seconds_since(start) < 4.0);
  CHECK_THAT(message, Contains("did not answer 'ruok'") && Contains("last lines of"));
  const int pid = pid_in(message);
  CHECK(pid > 0);
  CHECK_FALSE(t::process_exists(pid));
}

TEST_CASE("A server that exits during start-up is reported with its log", "[errors]") {
  SECTION("any failure") {
    FakeJava java("echo 'zkr-fake: something went wrong' >&2; exit 3");
    ServerOptions options;
    options.java = java.path();
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_WITH(TestingServer(options), Contains("exited with status 3 during start-up") &&
                                                  Contains("zkr-fake: something went wrong"));
    CHECK(t::seconds_since(start) < 4.0);
  }
  SECTION("a port taken after the check") {
    FakeJava java("echo 'java.net.BindException: Address already in use' >&2; exit 1");
    ServerOptions options;
    options.java = java.path();
    options.port = zkr::testing::free_port();
    CHECK_THROWS_WITH(TestingServer(options), Contains("exited with status 1 during start-up") &&
                                                  Contains("already in use") && Contains("BindException"));
  }
}

TEST_CASE("Four-letter words to nothing fail instead of hanging", "[errors]") {
  TestingServer server;
  const auto port = server.port();
  server.stop();
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(server.four_letter_word("ruok", 1s), Contains("127.0.0.1:" + std::to_string(port)));
  CHECK(t::seconds_since(start) < 2.0);
}
