// InterProcessMultiLock's release against a real ZooKeeper: a blocking release deletes every node in one
// transaction sent from the calling thread (each node on its own when that fails), async_release sends it
// from the initiating thread, a release never started or launched later, a MultiLease dropped on another
// thread.

#include <boost/asio/deferred.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "multi_lock_support.hpp"

using namespace zkr;
using namespace zkr::test;

TEST_CASE("multi: a blocking release deletes every node in one transaction sent from the calling thread",
          "[multi][release]") {
  // As a mutex's release (lock_contract_release_test, [release]): the deletes that end a hold are on the next
  // holders' critical path, so a blocking release sends them itself instead of waking the client's I/O thread
  // first. Shown with that thread stalled: every node is gone before it runs again. One transaction: the lock
  // directories' pzxid (the zxid of the last change to their children) is the same zxid.
  HeldMulti h("/multi/release-caller", 3, /*persistent_dirs=*/true);  // their pzxid is read below
  auto& [fx, c1, paths, multi, lease] = h;
  REQUIRE(lease.valid());
  const auto nodes = lease.node_paths();
  std::mutex seen_mu;
  std::vector<LeaseStatus> seen;
  auto grants = lease.take();
  for (auto& l : grants)
    l.on_status_change([&](LeaseStatus s) {
      std::lock_guard lk(seen_mu);
      seen.push_back(s);
    });
  lease = MultiLease(std::move(grants));
  REQUIRE(drain_io(*c1));  // the nodes' watches reach the server before the deletes

  IoStall stall(*c1);
  auto released = release_in_thread(lease);
  auto all_gone = [&] {
    return std::none_of(nodes.begin(), nodes.end(), [&](auto& n) { return fx.admin->exists(n).has_value(); });
  };
  const bool gone_while_stalled = sends_from_caller() && eventually(all_gone, 10s);
  stall.end();
  CHECK((sends_from_caller() ? gone_while_stalled : eventually(all_gone, 10s)));
  REQUIRE(released.wait_for(20s) == std::future_status::ready);
  CHECK_FALSE(released.get());
  CHECK_FALSE(lease.valid());
  std::vector<std::int64_t> pzxids;
  for (const auto& p : paths) {
    const auto st = fx.admin->exists(p);
    REQUIRE(st);
    pzxids.push_back(st->pzxid);
  }
  CHECK(std::adjacent_find(pzxids.begin(), pzxids.end(), std::not_equal_to<>()) == pzxids.end());
  CHECK(eventually(
      [&] {
        std::lock_guard lk(seen_mu);
        return seen.size() == nodes.size();
      },
      10s));
  std::this_thread::sleep_for(200ms);  // a late `lost` would show here
  {
    std::lock_guard lk(seen_mu);
    CHECK(seen == std::vector<LeaseStatus>(nodes.size(), LeaseStatus::released));
  }
  CHECK(c1->pending_guaranteed_deletes() == 0);
  error_code again;
  lease.release(again);
  CHECK(again == client_errc::not_acquired);
}

TEST_CASE("multi: when the release's transaction fails, each node is deleted on its own",
          "[multi][release]") {
  // One node is already gone (deleted by someone else): the transaction of deletes fails whole, and the
  // release goes on with one quiet, guaranteed delete per node.
  HeldMulti h("/multi/release-fallback", 3);
  auto& [fx, c1, paths, multi, lease] = h;
  REQUIRE(lease.valid());
  const auto nodes = lease.node_paths();
  std::promise<LeaseStatus> middle;
  auto grants = lease.take();
  grants[1].on_status_change([&, once = false](LeaseStatus s) mutable {
    if (!std::exchange(once, true)) middle.set_value(s);
  });
  lease = MultiLease(std::move(grants));
  REQUIRE(drain_io(*c1));
  fx.admin->remove(nodes[1]);
  auto lost = middle.get_future();
  REQUIRE(lost.wait_for(10s) == std::future_status::ready);
  CHECK(lost.get() == LeaseStatus::lost);
  const auto before = fx.server.mntr();
  error_code ec;
  lease.release(ec);
  CHECK_FALSE(ec);
  CHECK(eventually([&] { return fx.children(paths[0]).empty() && fx.children(paths[2]).empty(); }, 10s));
  CHECK(c1->pending_guaranteed_deletes() == 0);
  // The failed transaction, then a delete for each of the three nodes (the missing one quietly).
  const auto updates =
      std::stol(fx.server.mntr().at("zk_cnt_updatelatency")) - std::stol(before.at("zk_cnt_updatelatency"));
  CHECK(updates >= 4);
}

TEST_CASE("multi: async_release sends the transaction of deletes from the initiating thread",
          "[multi][release]") {
  HeldMulti h("/multi/release-async", 3);
  REQUIRE(h.lease.valid());
  REQUIRE(drain_io(*h.c1));
  std::future<void> released;
  {
    IoStall stall(*h.c1);
    released = h.lease.async_release(boost::asio::use_future);
    if (sends_from_caller()) CHECK(eventually([&] { return h.all_free(); }, 10s));
  }
  REQUIRE(released.wait_for(20s) == std::future_status::ready);
  CHECK_NOTHROW(released.get());
  CHECK(h.all_free());
  CHECK(h.c1->pending_guaranteed_deletes() == 0);
}

TEST_CASE("multi: an async_release that never starts still gives the locks back", "[multi][release]") {
  HeldMulti h("/multi/release-lazy", 3);
  REQUIRE(h.lease.valid());
  { auto never_launched = h.lease.async_release(boost::asio::deferred); }
  CHECK_FALSE(h.lease.valid());
  auto c2 = h.fx.client();
  InterProcessMultiLock other(*c2, h.paths);
  REQUIRE(other.acquire(10s));
  other.release();
}

TEST_CASE("multi: a deferred async_release launched later releases then", "[multi][release]") {
  HeldMulti h("/multi/release-deferred", 3);
  REQUIRE(h.lease.valid());
  auto op = h.lease.async_release(boost::asio::deferred);
  auto c2 = h.fx.client();
  InterProcessMultiLock other(*c2, h.paths);
  CHECK_FALSE(other.acquire(200ms));  // not launched yet: still held
  auto released = std::move(op)(boost::asio::use_future);
  REQUIRE(released.wait_for(20s) == std::future_status::ready);
  CHECK_NOTHROW(released.get());
  REQUIRE(other.acquire(10s));
  other.release();
  CHECK(h.c1->pending_guaranteed_deletes() == 0);
}

TEST_CASE("multi: a MultiLease dropped on another thread deletes its nodes from that thread",
          "[multi][release]") {
  HeldMulti h("/multi/release-dtor", 4);
  REQUIRE(h.lease.valid());
  REQUIRE(drain_io(*h.c1));
  IoStall stall(*h.c1);
  { MultiLease dropped(std::move(h.lease)); }  // returns without waiting for the reply
  const bool gone_while_stalled = sends_from_caller() && eventually([&] { return h.all_free(); }, 10s);
  stall.end();
  CHECK((sends_from_caller() ? gone_while_stalled : eventually([&] { return h.all_free(); }, 10s)));
  CHECK(eventually([&] { return h.c1->pending_guaranteed_deletes() == 0; }, 10s));
  // The locks are free for another client.
  auto c2 = h.fx.client();
  InterProcessMultiLock other(*c2, h.paths);
  CHECK(other.acquire(10s));
  other.release();
}
