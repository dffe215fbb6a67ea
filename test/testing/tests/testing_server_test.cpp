// Tests of zkr::testing::TestingServer against real ZooKeeper servers.

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <zkr/testing/testing_server.hpp>

#include "support.hpp"

using namespace std::chrono_literals;
using zkr::testing::ServerOptions;
using zkr::testing::TestingError;
using zkr::testing::TestingServer;
namespace t = zkr::testing::test;
namespace fs = std::filesystem;
using t::read_file;

namespace {
std::string cmdline(int pid) {
  std::string s = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  for (char& c : s) c = c == '\0' ? ' ' : c;
  return s;
}

int node_count(const TestingServer& server) {
  return std::stoi(t::field(server.four_letter_word("srvr"), "Node count: "));
}
}  // namespace

TEST_CASE("TestingServer starts a standalone server on 127.0.0.1 and cleans up after itself", "[server]") {
  int pid = -1;
  fs::path dir;
  {
    TestingServer server;
    pid = server.pid();
    dir = server.data_dir();
    CHECK(server.is_running());
    CHECK(pid > 0);
    CHECK(server.port() > 0);
    CHECK(server.connect_string() == "127.0.0.1:" + std::to_string(server.port()));
    CHECK(server.four_letter_word("ruok") == "imok");
    CHECK(server.four_letter_word("srvr").find("Mode: standalone") != std::string::npos);

    const auto mntr = server.mntr();
    CHECK(mntr.at("zk_server_state") == "standalone");
    CHECK(mntr.at("zk_version").rfind("3.", 0) == 0);
    CHECK(std::stoi(mntr.at("zk_znode_count")) >= 2);

    const std::string cfg = read_file(dir / "zoo.cfg");
    CHECK(cfg.find("clientPortAddress=127.0.0.1\n") != std::string::npos);
    CHECK(cfg.find("extendedTypesEnabled=true\n") != std::string::npos);
    CHECK(cfg.find("forceSync=no\n") != std::string::npos);
    CHECK(cfg.find("minSessionTimeout=1000\n") != std::string::npos);
    CHECK(cfg.find("maxSessionTimeout=60000\n") != std::string::npos);
    CHECK(cfg.find("4lw.commands.whitelist=*\n") != std::string::npos);
    CHECK(cmdline(pid).find("-Dznode.container.checkIntervalMs=100 ") != std::string::npos);
    CHECK(cmdline(pid).find("-Dzookeeper.admin.enableServer=false ") != std::string::npos);
    CHECK(fs::exists(dir / "server.log"));
    CHECK(read_file(dir / "server.log").find("binding to port /127.0.0.1:" + std::to_string(server.port())) !=
          std::string::npos);
  }
  CHECK_FALSE(t::process_exists(pid));
  const char* keep = std::getenv("ZKR_TESTING_KEEP_DIRS");
  if (!keep || !*keep || std::string_view(keep) == "0") CHECK_FALSE(fs::exists(dir));
}

TEST_CASE("TestingServer stop/start and restart keep the port and the data", "[server]") {
  TestingServer server;
  const auto port = server.port();
  const int base = node_count(server);
  const std::string out = t::zk_cli(server.connect_string(), "create /zkr-persist hello");
  INFO(out);
  REQUIRE(out.find("Created /zkr-persist") != std::string::npos);
  REQUIRE(node_count(server) == base + 1);

  const int old_pid = server.pid();
  server.stop();
  CHECK_FALSE(server.is_running());
  CHECK(server.pid() == -1);
  CHECK_FALSE(t::process_exists(old_pid));
  CHECK_THROWS_AS(server.four_letter_word("ruok", 500ms), TestingError);
  server.stop();  // idempotent

  server.start();
  CHECK(server.is_running());
  CHECK(server.pid() != old_pid);
  CHECK(server.port() == port);
  CHECK(server.four_letter_word("ruok") == "imok");
  CHECK(node_count(server) == base + 1);

  server.restart();
  CHECK(server.port() == port);
  CHECK(node_count(server) == base + 1);
  const std::string got = t::zk_cli(server.connect_string(), "get /zkr-persist");
  INFO(got);
  CHECK(got.find("hello") != std::string::npos);
}

TEST_CASE("TestingServer kill is a crash the server recovers from", "[server]") {
  TestingServer server;
  REQUIRE(t::zk_cli(server.connect_string(), "create /zkr-crash x").find("Created") != std::string::npos);
  const int base = node_count(server);
  const int pid = server.pid();
  const auto start = std::chrono::steady_clock::now();
  server.kill();
  CHECK(t::seconds_since(start) < 2.0);
  CHECK_FALSE(server.is_running());
  CHECK_FALSE(t::process_exists(pid));
  server.kill();  // idempotent
  CHECK_THROWS_AS(server.pause(), TestingError);
  CHECK_THROWS_AS(server.resume(), TestingError);

  server.start();
  CHECK(node_count(server) == base);  // the transaction log survived the SIGKILL
  CHECK(read_file(server.data_dir() / "server.log").find("zkr::testing: starting ZooKeeper") !=
        std::string::npos);
}

TEST_CASE("TestingServer pause makes the server unresponsive until resume", "[server]") {
  TestingServer server;
  server.pause();
  CHECK(server.is_running());
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(server.four_letter_word("ruok", 300ms), TestingError);
  CHECK(t::seconds_since(start) < 2.0);
  server.resume();
  CHECK(t::eventually(
      [&] {
        try {
          return server.four_letter_word("ruok", 1s) == "imok";
        } catch (const TestingError&) {
          return false;
        }
      },
      10s));
  // A paused server still stops promptly.
  server.pause();
  const auto stop_start = std::chrono::steady_clock::now();
  server.stop();
  CHECK_FALSE(server.is_running());
  CHECK(t::seconds_since(stop_start) < 8.0);
}

TEST_CASE("TestingServer honours extendedTypesEnabled and the container check interval", "[server]") {
  TestingServer server;
  const int base = node_count(server);
  const std::string out = t::zk_cli(server.connect_string(),
                                    "create -t 300 /zkr-ttl x\ncreate -c /zkr-container\n"
                                    "create /zkr-container/child\ndelete /zkr-container/child");
  INFO(out);
  REQUIRE(out.find("Created /zkr-ttl") != std::string::npos);
  REQUIRE(out.find("Created /zkr-container/child") != std::string::npos);
  // Both the expired TTL node and the emptied container are reaped within a few check intervals.
  CHECK(t::eventually([&] { return node_count(server) == base; }, 10s));
}

TEST_CASE("TestingServer uses a given data directory and keeps it", "[server]") {
  const fs::path dir = fs::temp_directory_path() / ("zkr-given-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  {
    ServerOptions options;
    options.data_dir = dir / "nested";
    options.force_sync = true;
    options.tick_time = 200ms;
    TestingServer server(options);
    CHECK(server.data_dir() == dir / "nested");
    const std::string cfg = read_file(dir / "nested" / "zoo.cfg");
    CHECK(cfg.find("forceSync=yes\n") != std::string::npos);
    CHECK(cfg.find("tickTime=200\n") != std::string::npos);
    CHECK(cfg.find("minSessionTimeout=400\n") != std::string::npos);
  }
  CHECK(fs::exists(dir / "nested" / "data" / "version-2"));
  fs::remove_all(dir);
}

TEST_CASE("TestingServer on an explicit port, moved between owners", "[server]") {
  ServerOptions options;
  options.port = zkr::testing::free_port();
  TestingServer a(options);
  CHECK(a.port() == options.port);
  TestingServer b(std::move(a));
  CHECK(b.port() == options.port);
  CHECK(b.four_letter_word("ruok") == "imok");
}

TEST_CASE("free_port gives distinct bindable ports", "[ports]") {
  std::set<std::uint16_t> ports;
  for (int i = 0; i < 50; ++i) ports.insert(zkr::testing::free_port());
  CHECK(ports.size() == 50);
  CHECK(*ports.begin() >= 1024);
}

TEST_CASE("parse_mntr splits tab-separated lines", "[mntr]") {
  const auto m = zkr::testing::parse_mntr("zk_version\t3.8.0-1, built\nzk_znode_count\t5\r\ngarbage line\n");
  CHECK(m.size() == 2);
  CHECK(m.at("zk_version") == "3.8.0-1, built");
  CHECK(m.at("zk_znode_count") == "5");
}
