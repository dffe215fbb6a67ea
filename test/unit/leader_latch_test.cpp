// Unit tests (no server) of LeaderLatch over FakeCore: the faults that must land at one exact step, which a
// real server cannot be made to produce on cue. The session expires while the server still shows the dead
// session's node (CURATOR-696's split brain in Curator 5.4), the session expires between the grant and the
// claim, the leader's node is deleted, and the latch closes while its create is in flight (CURATOR-18).
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/leader_latch.hpp>

#include "fake_core.hpp"

namespace {

using namespace std::chrono_literals;
using fake::FakeCore;
using fake::Op;
using zkr::LeaderLatch;
using zkr::LeaseStatus;

const std::string dir = "/election";

struct Fixture {
  std::shared_ptr<FakeCore> core = std::make_shared<FakeCore>();
  Fixture() = default;
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;
  ~Fixture() { core->shutdown(); }

  /// The owner of the node `path` (0 when it does not exist).
  std::int64_t owner(const std::string& path) const {
    auto s = core->stat(path);
    return s ? s->ephemeral_owner : 0;
  }
};

}  // namespace

TEST_CASE_METHOD(Fixture,
                 "latch: a session expiry that leaves the old node visible never leads on it (CURATOR-696)",
                 "[leader][latch-unit]") {
  auto latch = zkr::detail::access::make_unique<LeaderLatch>(core, dir, "a");
  latch->start();
  REQUIRE(core->run_until([&] { return latch->has_leadership(); }));
  const auto old_node = latch->our_path();
  const auto old_token = latch->fencing_token();
  const auto old_session = core->session_id();

  // Every time the flag is up from now on, the node it stands on must be ours in the current session.
  bool led_on_foreign_node = false;
  latch->add_listener({[&] {
                         const auto p = latch->last_path_is_leader();
                         if (owner(p) != core->session_id()) led_on_foreign_node = true;
                       },
                       {}});
  core->expire_session(/*drop_ephemerals=*/false);  // the server has not removed the node yet
  REQUIRE(core->run_until([&] { return latch->has_leadership() && latch->our_path() != old_node; }));
  CHECK(core->session_id() != old_session);
  CHECK_FALSE(led_on_foreign_node);
  CHECK(latch->last_path_is_leader() == latch->our_path());
  CHECK(owner(latch->our_path()) == core->session_id());
  CHECK(latch->fencing_token() > old_token);
  CHECK_FALSE(core->has(old_node));  // the stale node was deleted, as Curator 5.7's reset does
  latch->close();
  core->settle();
}

TEST_CASE_METHOD(Fixture, "latch: a session expiry between the grant and the claim queues a new node",
                 "[leader][latch-unit]") {
  auto latch = zkr::detail::access::make_unique<LeaderLatch>(core, dir, "a");
  int gains = 0;
  latch->add_listener({[&] { ++gains; }, {}});
  // The claim's read of our node is the first get_data of the latch's node (the standard driver watches none
  // when first): expire the session just before it is applied, the old node still visible.
  core->before_next(
      Op::get_data, [&] { core->expire_session(false); }, dir);
  latch->start();
  REQUIRE(core->run_until([&] { return latch->has_leadership(); }));
  core->settle();
  CHECK(owner(latch->our_path()) == core->session_id());
  CHECK(owner(latch->last_path_is_leader()) == core->session_id());
  CHECK(gains == 1);  // never granted on the first node
  CHECK(core->children(dir).size() == 1);
  latch->close();
  core->settle();
}

TEST_CASE_METHOD(Fixture,
                 "latch: the leader's node deleted by someone else: not leader, a new node, leader again",
                 "[leader][latch-unit]") {
  auto latch = zkr::detail::access::make_unique<LeaderLatch>(core, dir, "a");
  int gains = 0, losses = 0;
  latch->add_listener({[&] { ++gains; }, [&] { ++losses; }});
  latch->start();
  REQUIRE(core->run_until([&] { return latch->has_leadership(); }));
  const auto first = latch->our_path();
  REQUIRE(core->erase(first));
  REQUIRE(core->run_until([&] { return latch->our_path() != first && latch->has_leadership(); }));
  core->settle();
  CHECK(gains == 2);
  CHECK(losses == 1);
  CHECK(core->children(dir).size() == 1);
  latch->close();
  core->settle();
  CHECK(core->children(dir).empty());
}

TEST_CASE_METHOD(Fixture, "latch: close while the create is in flight leaves no node (CURATOR-18)",
                 "[leader][latch-unit]") {
  // Alone (the attempt would be granted) and behind another participant's node (it would wait for ever).
  for (int round = 0; round < 4; ++round) {
    const bool applied_first = round % 2 == 1;
    std::string other;
    if (round >= 2)
      other =
          core->put(dir + "/_c_other-latch-", zkr::CreateMode::ephemeral_sequential, FakeCore::other_session);
    auto latch = zkr::detail::access::make_unique<LeaderLatch>(core, dir, "a");
    // The close lands in the step that applies the create (before or after it is applied), its reply still
    // to come.
    if (applied_first)
      core->after_next(
          Op::create, [&] { latch->close(); }, dir);
    else
      core->before_next(
          Op::create, [&] { latch->close(); }, dir);
    latch->start();
    core->settle();
    CHECK(core->faults_consumed());
    CHECK_FALSE(latch->has_leadership());
    const auto expected =
        other.empty() ? std::vector<std::string>{} : std::vector<std::string>{zkr::node_name(other)};
    CHECK(core->children(dir) == expected);
    CHECK(latch->our_path().empty());
    if (!other.empty()) core->erase(other);
    core->settle();
  }
}

TEST_CASE_METHOD(Fixture, "latch: SUSPENDED clears the flag and keeps the node, RECONNECTED sets it again",
                 "[leader][latch-unit]") {
  auto latch = zkr::detail::access::make_unique<LeaderLatch>(core, dir, "a");
  std::vector<bool> events;
  latch->add_listener({[&] { events.push_back(true); }, [&] { events.push_back(false); }});
  latch->start();
  REQUIRE(core->run_until([&] { return latch->has_leadership(); }));
  const auto node = latch->our_path();
  core->suspend();
  REQUIRE(core->run_until([&] { return !latch->has_leadership(); }));
  CHECK(latch->lease_status() == LeaseStatus::maybe_lost);
  core->reconnect();
  REQUIRE(core->run_until([&] { return latch->has_leadership(); }));
  core->settle();
  CHECK(latch->our_path() == node);
  CHECK(core->children(dir) == std::vector<std::string>{zkr::node_name(node)});
  CHECK(events == std::vector<bool>{true, false, true});
  latch->close();
  core->settle();
}

TEST_CASE_METHOD(Fixture, "latch: a removed or silenced listener gets no call still pending",
                 "[leader][latch-unit]") {
  for (bool by_close : {false, true}) {
    auto latch =
        zkr::detail::access::make_unique<LeaderLatch>(core, dir + (by_close ? "/close" : "/remove"), "a");
    int first = 0, second = 0;
    std::uint64_t second_id = 0;
    // Both calls of the gain are posted together; the first one runs first and drops the second.
    latch->add_listener({[&] {
                           ++first;
                           if (by_close)
                             latch->close();  // SILENT
                           else
                             latch->remove_listener(second_id);
                         },
                         {}});
    second_id = latch->add_listener({[&] { ++second; }, [&] { ++second; }});
    latch->start();
    REQUIRE(core->run_until([&] { return first == 1; }));
    core->settle();
    CHECK(second == 0);
    if (!by_close) latch->close();
    core->settle();
  }
}
