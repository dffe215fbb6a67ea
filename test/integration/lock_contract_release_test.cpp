// The lock contract against a real ZooKeeper, continued from lock_contract_test.cpp: release. Blocking
// and asynchronous releases send their delete from the calling thread, on the client's I/O thread too; a
// release never started still gives the grant back; a closed client; a release kept across a server restart.

#include <algorithm>
#include <atomic>
#include <boost/asio/deferred.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <future>
#include <mutex>
#include <thread>
#include <vector>
#include <zkr/recipes/detail/lease_core.hpp>

#include "client_support.hpp"
#include "fixture.hpp"

using namespace zkr;
using namespace zkr::test;
using zkr::itest::sends_from_caller;

TEST_CASE("contract: a blocking release sends its delete from the calling thread and ends released, not lost",
          "[contract][release]") {
  // The delete that ends a hold is on the next holder's critical path, so a blocking release sends it itself
  // instead of waking the client's I/O thread first. Shown here with that I/O thread stalled: the node is
  // gone before the I/O thread runs again. The lease watches its own node (a status listener), and that
  // deletion must not read as a loss.
  ServerFixture fx;
  auto c1 = fx.client();
  InterProcessMutex m(*c1, "/locks/release-caller");
  auto lease = m.async_acquire(boost::asio::use_future).get();
  REQUIRE(lease.valid());
  const auto node = lease.node_name();
  auto state = zkr::detail::access::state(lease);
  std::mutex seen_mu;
  std::vector<LeaseStatus> seen;
  lease.on_status_change([&](LeaseStatus s) {
    std::lock_guard lk(seen_mu);
    seen.push_back(s);
  });
  auto wait_lost = lease.async_wait_lost(boost::asio::use_future);
  // Both queued behind the watch's exists request, which therefore reaches the server before our delete.
  REQUIRE(drain_io(*c1));

  IoStall stall(*c1);
  auto released = release_in_thread(lease);
  auto node_gone = [&] {
    auto names = fx.children("/locks/release-caller");
    return std::find(names.begin(), names.end(), node) == names.end();
  };
  const bool gone_while_stalled = sends_from_caller() && eventually(node_gone, 10s);
  stall.end();
  CHECK((sends_from_caller() ? gone_while_stalled : eventually(node_gone, 10s)));
  REQUIRE(released.wait_for(20s) == std::future_status::ready);
  CHECK_FALSE(released.get());
  REQUIRE(wait_lost.wait_for(10s) == std::future_status::ready);
  CHECK(wait_lost.get() == LeaseStatus::released);
  CHECK(state->status == LeaseStatus::released);
  CHECK(eventually(
      [&] {
        std::lock_guard lk(seen_mu);
        return !seen.empty();
      },
      10s));
  std::this_thread::sleep_for(200ms);  // a late `lost` would show here
  std::lock_guard lk(seen_mu);
  CHECK(seen == std::vector<LeaseStatus>{LeaseStatus::released});
  CHECK(c1->pending_guaranteed_deletes() == 0);
}

TEST_CASE("contract: a release on the client's I/O thread starts the delete instead of failing",
          "[contract][release]") {
  // Listeners and completion handlers run on the client's I/O thread by default, where a blocking call cannot
  // wait. A release there must still give the lock back: refusing it would leave the node until the session
  // ends, with every other contender stuck behind it.
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();

  InterProcessSemaphoreMutex sm(*c1, "/locks/io-release/sm");
  sm.acquire();
  std::promise<error_code> sm_released;
  c1->async_exists("/", {}, [&](error_code, std::optional<Stat>) {
    error_code ec;
    sm.release(ec);
    sm_released.set_value(ec);
  });
  CHECK_FALSE(sm_released.get_future().get());
  CHECK_FALSE(sm.is_acquired_in_this_process());
  InterProcessSemaphoreMutex other(*c2, "/locks/io-release/sm");
  CHECK(other.acquire(10s));
  other.release();

  InterProcessMutex m(*c1, "/locks/io-release/m");
  std::promise<std::pair<error_code, error_code>> m_released;
  m.async_acquire([&](error_code, Lease lease) {
    error_code first;
    lease.release(first);
    error_code second;
    lease.release(second);  // the handle is empty now
    m_released.set_value({first, second});
  });
  const auto [first, second] = m_released.get_future().get();
  CHECK_FALSE(first);
  CHECK(second == client_errc::not_acquired);
  CHECK(eventually([&] { return fx.children("/locks/io-release/m").empty(); }));

  InterProcessMultiLock ml(*c1, {"/locks/io-release/a", "/locks/io-release/b"});
  std::promise<error_code> ml_released;
  ml.async_acquire([&](error_code, MultiLease lease) {
    error_code ec;
    lease.release(ec);
    ml_released.set_value(ec);
  });
  CHECK_FALSE(ml_released.get_future().get());
  CHECK(eventually([&] {
    return fx.children("/locks/io-release/a").empty() && fx.children("/locks/io-release/b").empty();
  }));
}

TEST_CASE("contract: a lease nobody watches reads lost once its client is closed", "[contract][loss]") {
  ServerFixture fx;
  auto c = fx.client();
  InterProcessMutex m(*c, "/locks/closed-status");
  auto lease = m.async_acquire(boost::asio::use_future).get();
  CHECK(lease.status() == LeaseStatus::held);
  c->close();
  CHECK(lease.status() == LeaseStatus::lost);
}

TEST_CASE("contract: an async_release after the client closed completes at once", "[contract][release]") {
  ServerFixture fx;
  auto c = fx.client();
  InterProcessMutex m(*c, "/locks/closed-release");
  auto lease = m.async_acquire(boost::asio::use_future).get();
  c->close();
  auto f = lease.async_release(boost::asio::use_future);
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  CHECK_NOTHROW(f.get());  // the node went with the session
  CHECK(fx.children("/locks/closed-release").empty());
}

TEST_CASE("contract: async_release sends its delete from the initiating thread too", "[contract][release]") {
  ServerFixture fx;
  auto c1 = fx.client();
  InterProcessMutex m(*c1, "/locks/release-async");
  auto lease = m.async_acquire(boost::asio::use_future).get();
  REQUIRE(lease.valid());
  auto state = zkr::detail::access::state(lease);
  REQUIRE(drain_io(*c1));
  std::future<void> released;
  {
    IoStall stall(*c1);
    released = lease.async_release(boost::asio::use_future);
    CHECK_FALSE(lease.valid());
    if (sends_from_caller())
      CHECK(eventually([&] { return fx.children("/locks/release-async").empty(); }, 10s));
    // The handler completes through the I/O thread, never inline.
    CHECK(released.wait_for(0s) == std::future_status::timeout);
  }
  REQUIRE(released.wait_for(20s) == std::future_status::ready);
  CHECK_NOTHROW(released.get());
  CHECK(fx.children("/locks/release-async").empty());
  CHECK(state->status == LeaseStatus::released);
  CHECK(c1->pending_guaranteed_deletes() == 0);
}

TEST_CASE("contract: an async_release that never starts still gives the grant back", "[contract][release]") {
  // A lazy token (a deferred operation never launched, an awaitable never awaited) never runs the initiation.
  // The grant must not be lost with it: until the session ends, everyone queued behind would wait.
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  const std::string path = "/locks/release-lazy";
  InterProcessMutex m(*c1, path);
  InterProcessMutex other(*c2, path);
  {
    auto lease = m.async_acquire(boost::asio::use_future).get();
    REQUIRE(lease.valid());
    { auto never_launched = lease.async_release(boost::asio::deferred); }
    CHECK_FALSE(lease.valid());
  }
  REQUIRE(other.acquire(10s));
  other.release();
  // Through the mutex's forwarder.
  {
    auto never_launched =
        m.async_release(m.async_acquire(boost::asio::use_future).get(), boost::asio::deferred);
  }
  REQUIRE(other.acquire(10s));
  other.release();
  // An awaitable never awaited.
  {
    auto never_awaited =
        m.async_acquire(boost::asio::use_future).get().async_release(boost::asio::use_awaitable);
  }
  REQUIRE(other.acquire(10s));
  other.release();
  // A semaphore's lease.
  InterProcessSemaphoreV2 sem(*c1, path + "-sem", 1);
  InterProcessSemaphoreV2 other_sem(*c2, path + "-sem", 1);
  { auto never_launched = sem.acquire().async_release(boost::asio::deferred); }
  auto second = other_sem.acquire(10s);
  REQUIRE(second.valid());
  second.release();
  CHECK(c1->pending_guaranteed_deletes() == 0);
}

TEST_CASE("contract: a deferred async_release launched later releases then", "[contract][release]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  const std::string path = "/locks/release-deferred";
  InterProcessMutex m(*c1, path);
  InterProcessMutex other(*c2, path);
  auto lease = m.async_acquire(boost::asio::use_future).get();
  REQUIRE(lease.valid());
  auto op = m.async_release(std::move(lease), boost::asio::deferred);
  // Not launched yet: the operation owns the grant, which still holds.
  CHECK_FALSE(other.acquire(200ms));
  auto released = std::move(op)(boost::asio::use_future);
  REQUIRE(released.wait_for(20s) == std::future_status::ready);
  CHECK_NOTHROW(released.get());
  REQUIRE(other.acquire(10s));
  other.release();
  CHECK(c1->pending_guaranteed_deletes() == 0);
}

TEST_CASE("contract: a blocking release as the server goes down is kept and done after the restart",
          "[contract][release]") {
  // The client's I/O thread is stalled while the server stops, so the client still counts itself connected
  // and the release sends its delete from the calling thread, into a dead connection. That send fails, and
  // the C client then closes the connection without any session event: the client must notice by itself (else
  // it would count itself connected and retry against the dead connection until the session timed out). The
  // delete fails with the connection and continues as a guaranteed delete: kept, and done once the server is
  // back. (Had the client seen the disconnection first, the release would have gone the usual way, to the
  // same end.)
  ServerFixture fx;
  auto c1 = fx.client({.session_timeout = 30s, .connection_timeout = 1s});
  InterProcessMutex m(*c1, "/locks/release-down");
  // A mutex is released by the thread that acquired it: one thread does both, driven from here.
  std::promise<bool> held;
  std::promise<void> go;
  std::promise<error_code> released;
  std::thread owner([&] {
    held.set_value(m.acquire(10s));
    go.get_future().wait();
    error_code ec;
    m.release(ec);
    released.set_value(ec);
  });
  bool went = false;
  struct Join {  // also when a REQUIRE below throws
    std::thread& t;
    std::promise<void>& go;
    bool& went;
    ~Join() {
      if (!went) go.set_value();
      t.join();
    }
  } join{owner, go, went};
  REQUIRE(held.get_future().get());
  const auto session = c1->session_id();
  std::atomic<bool> suspended{false};
  c1->add_connection_state_listener([&](ConnectionState s) {
    if (s == ConnectionState::suspended) suspended = true;
  });
  IoStall stall(*c1);
  fx.server.stop();
  CHECK(c1->is_connected());
  auto result = released.get_future();
  go.set_value();
  went = true;
  std::this_thread::sleep_for(300ms);  // the release reaches its send (ordering only: either way passes)
  stall.end();
  REQUIRE(result.wait_for(30s) == std::future_status::ready);
  const auto ec = result.get();
  CHECK((ec == client_errc::connection_timeout || is_retryable(ec)));
  CHECK(eventually([&] { return suspended.load(); }, 10s));
  CHECK_FALSE(c1->is_connected());
  CHECK_FALSE(m.is_acquired_in_this_process());
  CHECK(c1->pending_guaranteed_deletes() == 1);
  fx.server.start();
  CHECK(eventually([&] { return c1->pending_guaranteed_deletes() == 0; }, 20s));
  CHECK(c1->session_id() == session);  // so the node went by our delete, not with the session
  CHECK(fx.children("/locks/release-down").empty());
}
