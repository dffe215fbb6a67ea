// A lock whose driver describes persistent-sequential nodes (`LockDriver::lock_node`), against a real server:
// Curator's TestInterProcessMutex.testPersistentLock (the node survives the session's expiry, the hold
// survives with it, and the release deletes the node), and what follows from it beyond that test: the node
// survives its client's close, a new client sees it and waits behind it until someone deletes it.

#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <future>
#include <thread>
#include <zkr/zkrecipes.hpp>

#include "fixture.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

/// Curator's test driver, as data: the standard policy with persistent, protected nodes.
struct PersistentLockDriver : StandardLockDriver {
  LockNodeSpec lock_node(std::string_view) const override {
    return {.mode = LockNodeMode::persistent_sequential};
  }
};

std::shared_ptr<const LockDriver> persistent_driver() { return std::make_shared<PersistentLockDriver>(); }

}  // namespace

TEST_CASE("persistent lock: the node and the hold survive the session, and the release deletes the node",
          "[lock][persistent]") {
  ServerFixture fx;
  const std::string path = "/locks/persistent";
  auto c1 = fx.client({.session_timeout = 4s});
  InterProcessMutex m(*c1, path, persistent_driver());
  REQUIRE(m.acquire(10s));
  CHECK(m.is_acquired_in_this_process());
  const auto node = m.lock_path();
  REQUIRE_FALSE(node.empty());
  CHECK(protected_names::is_protected_node(node_name(node)));
  auto st = fx.admin->exists(node);
  REQUIRE(st);
  CHECK(st->ephemeral_owner == 0);
  CHECK(m.fencing_token() == st->czxid);

  // The session expires: the node stays, and the hold is still this object's.
  const auto s0 = c1->session_id();
  c1->inject_session_expiration();
  REQUIRE(eventually([&] { return c1->is_connected() && c1->session_id() != s0; }));
  CHECK(fx.admin->exists(node));
  CHECK(fx.admin->exists(path));
  CHECK(m.is_acquired_in_this_process());
  // Held again once the new session found the node (maybe_lost between the expiry and that read).
  CHECK(eventually([&] { return m.lease_status() == LeaseStatus::held; }));

  // Nobody else gets it meanwhile.
  auto c2 = fx.client();
  InterProcessMutex other(*c2, path, persistent_driver());
  CHECK_FALSE(other.acquire(300ms));
  CHECK(fx.children(path).size() == 1);  // the timed-out attempt deleted its persistent node

  m.release();
  CHECK_FALSE(fx.admin->exists(node));
  CHECK_FALSE(m.is_acquired_in_this_process());
  REQUIRE(other.acquire(10s));
  other.release();
  CHECK(fx.children(path).empty());
}

TEST_CASE("persistent lock: a closed client's node stays, and holds the lock until someone deletes it",
          "[lock][persistent]") {
  ServerFixture fx;
  const std::string path = "/locks/persistent-close";
  auto c1 = fx.client();
  std::string node;
  {
    InterProcessMutex m(*c1, path, persistent_driver());
    auto lease = m.async_acquire(boost::asio::use_future).get();
    REQUIRE(lease.valid());
    node = lease.node_path();
    CHECK(lease.status() == LeaseStatus::held);
    c1->close();
    // Through a closed client nobody can tell whether the node is still there.
    CHECK(lease.status() == LeaseStatus::maybe_lost);
    // Nor delete it: the release says so.
    auto f = lease.async_release(boost::asio::use_future);
    REQUIRE(f.wait_for(10s) == std::future_status::ready);
    try {
      f.get();
      FAIL("the release of a persistent node through a closed client succeeded");
    } catch (const boost::system::system_error& e) {
      CHECK(e.code() == client_errc::closed);
    }
  }
  // A new client sees the node, and queues behind it.
  auto c2 = fx.client();
  REQUIRE(c2->exists(node));
  CHECK(c2->get_children(path) == std::vector<std::string>{node_name(node)});
  InterProcessMutex m2(*c2, path, persistent_driver());
  CHECK(m2.participant_nodes() == std::vector<std::string>{node});
  CHECK_FALSE(m2.acquire(300ms));
  // The dead holder's node, deleted by hand, frees the lock.
  auto waiter = m2.async_acquire(boost::asio::use_future);
  std::this_thread::sleep_for(100ms);
  CHECK(waiter.wait_for(0s) == std::future_status::timeout);
  fx.admin->remove(node);
  REQUIRE(waiter.wait_for(20s) == std::future_status::ready);
  auto lease2 = waiter.get();
  REQUIRE(lease2.valid());
  CHECK(c2->exists(lease2.node_path())->ephemeral_owner == 0);
  lease2.release();
  CHECK(fx.children(path).empty());
}
