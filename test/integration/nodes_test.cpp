// Integration tests of the persistent nodes and group membership (issue 40) against a real server: a node
// re-created with its latest data after another client deletes it and after its session expires, with its
// protected sequential name; a close while the create is in flight leaves nothing (seen by a second client);
// a pre-existing node is adopted; the TTL node is touched and gone after close + TTL; group members join and
// leave. Every wait is bounded; nothing is timed.
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <regex>
#include <zkr/recipes/nodes/group_member.hpp>
#include <zkr/recipes/nodes/persistent_node.hpp>
#include <zkr/recipes/nodes/persistent_ttl_node.hpp>

#include "completion_styles.hpp"
#include "fixture.hpp"

using namespace zkr;
using namespace zkr::test;
using zkr::itest::thrown_by;

namespace {

/// One server for every case of this file (each uses its own paths).
zkr::testing::TestingServer& nodes_server() {
  static zkr::testing::TestingServer server;
  return server;
}

std::unique_ptr<CuratorFramework> nodes_client() { return make_client(nodes_server().connect_string()); }

/// The children of `path`; none when it does not exist (an empty container parent may be reaped any time).
std::vector<std::string> kids_of(CuratorFramework& c, const std::string& path) {
  error_code ec;
  auto k = c.get_children(path, {}, ec);
  return ec ? std::vector<std::string>{} : k;
}

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
  CHECK(kids_of(*admin, "/pn/expiry").size() == 1);  // one node, never a second one (CURATOR-483)
  CHECK(node.actual_path() == path);

  node.close();
  CHECK_FALSE(admin->exists(path));
  CHECK(kids_of(*admin, "/pn/expiry").empty());
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
  CHECK(kids_of(*admin, "/pn/quick").empty());

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

TEST_CASE("persistent TTL node: touched while open, gone a TTL after close", "[nodes][persistent_ttl_node]") {
  auto admin = nodes_client();
  auto c = nodes_client();
  CHECK(thrown_by([&] { PersistentTtlNode(*c, "/pn/ttl/bad", 0ms, ""); }) == client_errc::invalid_argument);
  CHECK(thrown_by([&] { PersistentTtlNode(*c, "/pn/ttl/bad", -5ms, ""); }) == client_errc::invalid_argument);
  CHECK(thrown_by([&] { PersistentTtlNode(*c, "/pn/ttl/bad", 5ms, "", "a/b", 2); }) ==
        client_errc::invalid_path);

  const auto ttl = 1500ms;
  PersistentTtlNode node(*c, "/pn/ttl/node", ttl, "data");
  node.start();
  REQUIRE(node.wait_for_initial_create(20s));
  CHECK(data_of(*admin, "/pn/ttl/node") == "data");
  REQUIRE(eventually([&] { return admin->exists(node.child_path()).has_value(); }));
  const auto first = admin->exists(node.child_path())->ctime;
  // Alive while touched: the child is touched again and again, well past its TTL from its creation (server
  // times both), and the container stays.
  REQUIRE(eventually([&] {
    auto s = admin->exists(node.child_path());
    return s && s->mtime > first + 2 * ttl.count();
  }));
  CHECK(admin->exists("/pn/ttl/node"));
  // A deleted child is made again at the next touch (Curator's testForcedDeleteOfTouchNode).
  admin->remove(node.child_path());
  REQUIRE(eventually([&] { return admin->exists(node.child_path()).has_value(); }));

  node.close();
  CHECK(admin->exists("/pn/ttl/node"));  // close deletes nothing: the server does, once the TTL has passed
  REQUIRE(eventually([&] { return !admin->exists("/pn/ttl/node"); }, 60s));
}

TEST_CASE("group member: two members join, see each other's data, one leaves when its session ends",
          "[nodes][group_member]") {
  auto admin = nodes_client();
  auto c1 = nodes_client();
  auto c2 = nodes_client();
  CHECK(thrown_by([&] { GroupMember(*c1, "/pn/group", "x/y"); }) == client_errc::invalid_path);
  CHECK(thrown_by([&] { GroupMember(*c1, "/pn/group", ""); }) == client_errc::invalid_path);
  CHECK(thrown_by([&] { GroupMember(*c1, "pn/group", "a"); }) == client_errc::invalid_path);

  GroupMember a(*c1, "/pn/group", "a", "A");
  GroupMember b(*c2, "/pn/group", "b", "B");
  a.start();
  b.start();
  using Members = std::map<std::string, std::string>;
  const Members both{{"a", "A"}, {"b", "B"}};
  REQUIRE(eventually([&] { return a.get_current_members() == both && b.get_current_members() == both; }));
  a.set_this_data("A2");
  REQUIRE(eventually([&] { return b.get_current_members().at("a") == "A2"; }));
  CHECK(data_of(*admin, "/pn/group/a") == "A2");

  // b's session expires: its node is made again in the new session, and a still sees it.
  c2->inject_session_expiration();
  REQUIRE(eventually([&] {
    auto s = admin->exists("/pn/group/b");
    return s && s->ephemeral_owner == c2->session_id();
  }));
  REQUIRE(eventually([&] { return a.get_current_members().size() == 2; }));

  // b's process ends (its client closes without leaving): its session ends, a sees it leave.
  c2->close();
  REQUIRE(eventually([&] { return a.get_current_members() == Members{{"a", "A2"}}; }));
  b.close();
  a.close();
  CHECK(a.get_current_members().empty());
  CHECK_FALSE(admin->exists("/pn/group/a"));  // (the container parent itself may be reaped by now)
  CHECK_FALSE(admin->exists("/pn/group/b"));
}
