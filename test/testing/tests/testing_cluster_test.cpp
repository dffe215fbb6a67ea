// Tests of zkr::testing::TestingCluster: a real three-member ensemble on 127.0.0.1.

#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <zkr/testing/testing_cluster.hpp>

#include "support.hpp"

using namespace std::chrono_literals;
using zkr::testing::TestingCluster;
using zkr::testing::TestingError;
namespace t = zkr::testing::test;

namespace {
// Member i's `Mode:` ("leader", "follower", ...), or "" while it does not serve or answer.
std::string mode(const TestingCluster& cluster, std::size_t i) {
  try {
    return t::field(cluster.four_letter_word(i, "srvr"), "Mode: ");
  } catch (const TestingError& e) {
    UNSCOPED_INFO("srvr to member " << i << ": " << e.what());
    return {};
  }
}
}  // namespace

TEST_CASE("TestingCluster starts three members with one leader and two followers", "[cluster]") {
  TestingCluster cluster;
  REQUIRE(cluster.size() == 3);
  std::set<std::uint16_t> ports;
  std::set<std::string> modes;
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(cluster.is_running(i));
    CHECK(cluster.pid(i) > 0);
    ports.insert(cluster.member_port(i));
    modes.insert(mode(cluster, i));
    std::ifstream myid(cluster.member_data_dir(i) / "data" / "myid");
    int id = 0;
    myid >> id;
    CHECK(id == static_cast<int>(i + 1));
    CHECK(cluster.mntr(i).at("zk_server_state") == mode(cluster, i));
  }
  CHECK(ports.size() == 3);
  CHECK(modes == std::set<std::string>{"leader", "follower"});
  CHECK(cluster.connect_string() == cluster.member_connect_string(0) + "," +
                                        cluster.member_connect_string(1) + "," +
                                        cluster.member_connect_string(2));
  const auto leader = cluster.leader();
  REQUIRE(leader);
  CHECK(mode(cluster, *leader) == "leader");
  CHECK(cluster.wait_for_leader(1s) == *leader);
  CHECK_THROWS_AS(cluster.member_port(3), std::out_of_range);
}

TEST_CASE("TestingCluster: killing the leader elects a new one and keeps the data", "[cluster]") {
  TestingCluster cluster;
  const std::size_t old_leader = cluster.wait_for_leader(10s);
  const std::string created = t::zk_cli(cluster.connect_string(), "create /zkr-ha survives");
  INFO(created);
  REQUIRE(created.find("Created /zkr-ha") != std::string::npos);

  cluster.kill(old_leader);
  CHECK_FALSE(cluster.is_running(old_leader));
  CHECK(cluster.pid(old_leader) == -1);
  const std::size_t new_leader = cluster.wait_for_leader(30s);
  CHECK(new_leader != old_leader);

  const std::size_t survivor =
      (new_leader + 1) % 3 == old_leader ? (new_leader + 2) % 3 : (new_leader + 1) % 3;
  REQUIRE(t::eventually([&] { return mode(cluster, survivor) == "follower"; }, 30s));
  const std::string got = t::zk_cli(cluster.member_connect_string(survivor), "get /zkr-ha");
  INFO(got);
  CHECK(got.find("survives") != std::string::npos);

  cluster.start(old_leader);  // rejoins as a follower before start() returns
  CHECK(mode(cluster, old_leader) == "follower");
  CHECK(cluster.wait_for_leader(10s) == new_leader);  // tolerant of a member slow to answer `srvr`
}

TEST_CASE("TestingCluster: a follower stops, the quorum stays, the follower rejoins", "[cluster]") {
  TestingCluster cluster;
  const std::size_t leader = cluster.wait_for_leader(10s);
  const std::size_t follower = (leader + 1) % 3;
  cluster.stop(follower);
  CHECK_FALSE(cluster.is_running(follower));
  CHECK_THROWS_AS(cluster.four_letter_word(follower, "ruok", 500ms), TestingError);
  CHECK(mode(cluster, leader) == "leader");  // two of three still form a quorum

  cluster.restart(follower);
  CHECK(mode(cluster, follower) == "follower");

  // Losing the majority: the last member stops serving, and comes back when the ensemble is restarted.
  cluster.kill(follower);
  cluster.kill((leader + 2) % 3);
  CHECK(t::eventually([&] { return !cluster.leader().has_value(); }, 20s));
  CHECK_THROWS_AS(cluster.wait_for_leader(200ms), TestingError);

  cluster.stop_all();
  for (std::size_t i = 0; i < 3; ++i) CHECK_FALSE(cluster.is_running(i));
  cluster.start_all();
  for (std::size_t i = 0; i < 3; ++i) CHECK(cluster.is_running(i));
  CHECK_NOTHROW(cluster.wait_for_leader(10s));
}

TEST_CASE("TestingCluster of one member is a standalone server", "[cluster]") {
  TestingCluster cluster(1);
  CHECK(cluster.size() == 1);
  CHECK(mode(cluster, 0) == "standalone");
  CHECK(cluster.leader() == std::optional<std::size_t>{0});
  CHECK(cluster.connect_string() == cluster.member_connect_string(0));
}
