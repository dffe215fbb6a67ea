// The lock contract: one suite run over every lock type against a real ZooKeeper (Curator's
// TestInterProcessMutexBase, extended with the guarantees zkrecipes adds: fencing tokens, loss signal,
// cancellation leaving no node). A lock type joins by adding an adapter to lock_adapters.hpp.

#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <future>
#include <mutex>
#include <thread>
#include <vector>
#include <zkr/recipes/detail/lease_core.hpp>

#include "fixture.hpp"
#include "lock_adapters.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

int thread_count() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (auto* e = ::readdir(d))
      if (e->d_name[0] != '.') ++n;
    ::closedir(d);
  }
  return n;
}

}  // namespace

TEMPLATE_TEST_CASE("contract: mutual exclusion across sessions and threads, tokens increase", "[contract]",
                   MutexAdapter, StandardMutexAdapter, SemaphoreMutexAdapter) {
  ServerFixture fx;
  constexpr int clients = 4, threads_per_client = 2, rounds = 8;
  std::vector<std::unique_ptr<CuratorFramework>> cs;
  std::vector<CuratorFramework*> raw;
  for (int i = 0; i < clients; ++i) raw.push_back(cs.emplace_back(fx.client()).get());
  check_exclusion<TestType>(raw, "/locks/contract", threads_per_client, rounds);
  CHECK(eventually([&] { return TestType::nodes(fx, "/locks/contract") == 0; }));
}

TEMPLATE_TEST_CASE("contract: FIFO order of waiters", "[contract]", MutexAdapter, StandardMutexAdapter,
                   SemaphoreMutexAdapter) {
  ServerFixture fx;
  auto holder_client = fx.client();
  auto holder = TestType::make(*holder_client, "/locks/fifo");
  holder->acquire();
  constexpr int waiters = 5;
  std::vector<std::unique_ptr<CuratorFramework>> cs;
  std::vector<std::thread> ts;
  std::mutex mu;
  std::vector<int> order;
  for (int i = 0; i < waiters; ++i) {
    cs.push_back(fx.client());
    ts.emplace_back([&, i] {
      auto lock = TestType::make(*cs[i], "/locks/fifo");
      lock->acquire();
      {
        std::lock_guard lk(mu);
        order.push_back(i);
      }
      lock->release();
    });
    // Wait until waiter i is queued before starting the next one.
    REQUIRE(
        eventually([&] { return TestType::nodes(fx, "/locks/fifo") == TestType::expected_nodes(1, i + 1); }));
  }
  holder->release();
  for (auto& t : ts) t.join();
  std::vector<int> expected(waiters);
  for (int i = 0; i < waiters; ++i) expected[i] = i;
  CHECK(order == expected);
}

TEMPLATE_TEST_CASE("contract: timed acquire returns false and leaves no node", "[contract]", MutexAdapter,
                   StandardMutexAdapter, SemaphoreMutexAdapter) {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  auto a = TestType::make(*c1, "/locks/timed");
  auto b = TestType::make(*c2, "/locks/timed");
  a->acquire();
  CHECK_FALSE(b->acquire(300ms));
  CHECK_FALSE(b->acquire(0ms));
  CHECK_FALSE(b->is_acquired_in_this_process());
  CHECK(eventually([&] { return TestType::nodes(fx, "/locks/timed") == TestType::expected_nodes(1, 0); }));
  a->release();
  CHECK(b->acquire(5s));
  b->release();
}

TEMPLATE_TEST_CASE("contract: release without holding is rejected", "[contract]", MutexAdapter,
                   SemaphoreMutexAdapter) {
  ServerFixture fx;
  auto c = fx.client();
  auto lock = TestType::make(*c, "/locks/misuse");
  error_code ec;
  lock->release(ec);
  CHECK(ec);
  CHECK_THROWS_AS(lock->release(), zkr::Error);
  lock->acquire();
  lock->release();
  lock->release(ec);  // double release
  CHECK(ec);
}

TEST_CASE("contract: mutex release from a non-owner thread is rejected", "[contract][mutex]") {
  ServerFixture fx;
  auto c = fx.client();
  InterProcessMutex m(*c, "/locks/owner");
  m.acquire();
  error_code ec;
  std::thread([&] { m.release(ec); }).join();
  CHECK(ec == errc::not_owner);
  CHECK(m.is_owned_by_current_thread());
  m.release();
  CHECK_FALSE(m.is_acquired_in_this_process());
}

TEST_CASE("contract: semaphore mutex may be released by any thread and is not reentrant",
          "[contract][semaphore]") {
  ServerFixture fx;
  auto c = fx.client();
  InterProcessSemaphoreMutex m(*c, "/locks/any-thread");
  m.acquire();
  CHECK_FALSE(m.acquire(200ms));  // not reentrant: a second contender
  error_code ec;
  std::thread([&] { m.release(ec); }).join();
  CHECK_FALSE(ec);
  CHECK_FALSE(m.is_acquired_in_this_process());
}

TEST_CASE("contract: a semaphore mutex's blocking hold has a loss signal", "[contract][semaphore]") {
  ServerFixture fx;
  auto c = fx.client({.session_timeout = 4s});
  InterProcessSemaphoreMutex m(*c, "/locks/sem-loss");
  CHECK(m.participant_nodes().empty());  // never used: no leases directory, no participants (no error)
  CHECK(m.lease() == nullptr);
  CHECK(m.lease_status() == LeaseStatus::released);
  m.acquire();
  REQUIRE(m.lease() != nullptr);
  CHECK(m.lease_status() == LeaseStatus::held);
  CHECK(m.lease()->fencing_token() == m.fencing_token());
  CHECK(m.lease()->session_id() == c->session_id());
  CHECK(m.participant_nodes() ==
        std::vector<std::string>{m.lease()->node_path()});  // full paths, as the mutex
  c->inject_session_expiration();
  CHECK(eventually([&] { return m.lease_status() == LeaseStatus::lost; }, 15s));
  m.release();  // the node went with the session: a quiet delete
  CHECK(m.lease() == nullptr);
  CHECK(m.lease_status() == LeaseStatus::released);
}

TEST_CASE("contract: mutex reentrancy is counted per thread", "[contract][mutex]") {
  ServerFixture fx;
  auto c = fx.client();
  InterProcessMutex m(*c, "/locks/reentrant");
  m.acquire();
  auto token = m.fencing_token();
  CHECK(m.acquire(1s));
  m.acquire();
  CHECK(m.fencing_token() == token);
  CHECK(fx.children("/locks/reentrant").size() == 1);  // re-entering does no I/O
  m.release();
  CHECK(m.is_owned_by_current_thread());
  m.release();
  CHECK(m.is_owned_by_current_thread());
  // Another thread of the same object is a separate contender.
  bool other = true;
  std::thread([&] { other = m.acquire(200ms); }).join();
  CHECK_FALSE(other);
  m.release();
  CHECK_FALSE(m.is_acquired_in_this_process());
  CHECK(eventually([&] { return fx.children("/locks/reentrant").empty(); }));
}

TEST_CASE("contract: std::scoped_lock and std::unique_lock work (Lockable/TimedLockable)",
          "[contract][mutex]") {
  ServerFixture fx;
  auto c = fx.client();
  InterProcessMutex a(*c, "/locks/std-a");
  InterProcessSemaphoreMutex b(*c, "/locks/std-b");
  {
    std::scoped_lock both(a, b);
    CHECK(a.is_owned_by_current_thread());
    CHECK(b.is_acquired_in_this_process());
  }
  CHECK_FALSE(a.is_acquired_in_this_process());
  CHECK_FALSE(b.is_acquired_in_this_process());
  std::unique_lock ul(a, std::defer_lock);
  CHECK(ul.try_lock_for(2s));
  CHECK(a.is_owned_by_current_thread());
}

TEMPLATE_TEST_CASE("contract: a killed session while holding loses the lock and the waiter gets it",
                   "[contract]", MutexAdapter, SemaphoreMutexAdapter) {
  ServerFixture fx;
  auto c1 = fx.client({.session_timeout = 4s});
  auto c2 = fx.client();
  auto a = TestType::make(*c1, "/locks/killed");
  auto b = TestType::make(*c2, "/locks/killed");
  a->acquire();
  auto first_token = TestType::token(*a);
  // A blocking hold belongs to its thread (the mutex): acquire, read the token and release there.
  auto fut = std::async(std::launch::async, [&]() -> std::int64_t {
    if (!b->acquire(30s)) return -1;
    auto token = TestType::token(*b);
    b->release();
    return token;
  });
  REQUIRE(eventually([&] { return TestType::nodes(fx, "/locks/killed") == TestType::expected_nodes(1, 1); }));
  c1->inject_session_expiration();
  CHECK(fut.get() > first_token);
  error_code ec;
  a->release(ec);  // the node is already gone with the session: no error beyond "not held" semantics
}

TEST_CASE("contract: the loss signal fires on session expiry", "[contract][loss]") {
  ServerFixture fx;
  auto c1 = fx.client({.session_timeout = 4s});
  InterProcessMutex m(*c1, "/locks/loss");
  auto lease = m.async_acquire(boost::asio::use_future).get();
  REQUIRE(lease.valid());
  CHECK(lease.status() == LeaseStatus::held);
  std::promise<LeaseStatus> lost;
  std::atomic<bool> set{false};
  lease.on_status_change([&](LeaseStatus s) {
    if (s == LeaseStatus::lost && !set.exchange(true)) lost.set_value(s);
  });
  auto wait_lost = lease.async_wait_lost(boost::asio::use_future);
  c1->inject_session_expiration();
  auto f = lost.get_future();
  REQUIRE(f.wait_for(30s) == std::future_status::ready);
  CHECK(f.get() == LeaseStatus::lost);
  REQUIRE(wait_lost.wait_for(10s) == std::future_status::ready);
  CHECK(wait_lost.get() == LeaseStatus::lost);
  CHECK(lease.status() == LeaseStatus::lost);
}

TEST_CASE("contract: the loss signal fires when the lock node is deleted by someone else",
          "[contract][loss]") {
  ServerFixture fx;
  auto c1 = fx.client();
  InterProcessMutex m(*c1, "/locks/loss-node");
  auto lease = m.async_acquire(boost::asio::use_future).get();
  auto wait_lost = lease.async_wait_lost(boost::asio::use_future);
  std::this_thread::sleep_for(100ms);  // let the node watch be set; the wait is bounded below either way
  fx.admin->remove(lease.node_path());
  REQUIRE(wait_lost.wait_for(20s) == std::future_status::ready);
  CHECK(wait_lost.get() == LeaseStatus::lost);
}

TEST_CASE("contract: multi_while_held commits only while the grant holds, all or nothing",
          "[contract][fenced]") {
  ServerFixture fx;
  auto c1 = fx.client({.session_timeout = 4s});
  fx.admin->create("/fenced/data", {.creating_parents = true, .data = std::string("v0")});
  const auto data = [&] { return fx.admin->get_data("/fenced/data").data; };
  InterProcessMutex m(*c1, "/locks/fenced");
  m.acquire();
  REQUIRE(m.lease() != nullptr);
  const Lease& lease = *m.lease();

  // Held: the writes commit, and the results are those of `ops` alone, in order.
  auto r = lease.multi_while_held({Op::set_data("/fenced/data", "v1"), Op::create("/fenced/made", "x")});
  REQUIRE(r.size() == 2);
  CHECK_FALSE(r[0].ec);
  CHECK(r[0].stat.version == 1);
  CHECK(r[1].path == "/fenced/made");
  CHECK(data() == "v1");
  CHECK(lease.multi_while_held({}).empty());  // no ops: only the question "do I still hold it?"

  // A failing operation of ours: its error, nothing applied.
  error_code ec;
  r = lease.multi_while_held({Op::set_data("/fenced/data", "v2"), Op::create("/fenced/made")}, ec);
  CHECK(ec == zk_errc::node_exists);
  REQUIRE(r.size() == 2);
  CHECK(r[1].ec == zk_errc::node_exists);
  CHECK(data() == "v1");

  // The async twin.
  auto f = lease.async_multi_while_held({Op::set_data("/fenced/data", "v3")}, boost::asio::use_future);
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  CHECK(f.get().size() == 1);
  CHECK(data() == "v3");

  // The node deleted behind the holder's back: this client has not noticed (no watch on its node), yet the
  // server refuses the whole transaction.
  fx.admin->remove(lease.node_path());
  CHECK(lease.status() == LeaseStatus::held);
  r = lease.multi_while_held({Op::set_data("/fenced/data", "late"), Op::remove("/fenced/made")}, ec);
  CHECK(ec == errc::lock_lost);
  CHECK(r.size() == 2);
  CHECK(data() == "v3");
  CHECK(fx.admin->exists("/fenced/made"));
  CHECK_THROWS_AS(lease.multi_while_held({Op::set_data("/fenced/data", "late")}), zkr::Error);
  try {
    lease.multi_while_held({});
  } catch (const zkr::Error& e) {
    CHECK(e.code() == errc::lock_lost);
  }
  m.release(ec);  // the node is already gone: a quiet delete
  CHECK(m.lease() == nullptr);

  // After the session expired and the loss is known: refused at once, nothing sent.
  auto lost_lease = m.async_acquire(boost::asio::use_future).get();
  REQUIRE(lost_lease.valid());
  auto lost = lost_lease.async_wait_lost(boost::asio::use_future);
  c1->inject_session_expiration();
  REQUIRE(lost.wait_for(30s) == std::future_status::ready);
  lost_lease.multi_while_held({Op::set_data("/fenced/data", "expired")}, ec);
  CHECK(ec == errc::lock_lost);
  CHECK(data() == "v3");

  // Released or empty handles.
  auto fresh = m.async_acquire(boost::asio::use_future).get();
  REQUIRE(fresh.valid());
  fresh.release();
  fresh.multi_while_held({Op::set_data("/fenced/data", "after release")}, ec);
  CHECK(ec == errc::not_acquired);
  Lease empty;
  empty.multi_while_held({}, ec);
  CHECK(ec == errc::not_acquired);
  // The asynchronous twin never throws from the call: the handler gets not_acquired.
  auto refused = empty.async_multi_while_held({}, boost::asio::use_future);
  CHECK_THROWS_AS(refused.get(), boost::system::system_error);
  CHECK(data() == "v3");
}

TEST_CASE("contract: a multi-lock's multi_while_held checks every lock it holds",
          "[contract][fenced][multi]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  fx.admin->create("/fenced-multi/data", {.creating_parents = true, .data = std::string("v0")});
  const auto data = [&] { return fx.admin->get_data("/fenced-multi/data").data; };
  InterProcessMultiLock ml(*c1, {"/locks/fm/a", "/locks/fm/b", "/locks/fm/c"});
  auto lease = ml.async_acquire(boost::asio::use_future).get();
  REQUIRE(lease.valid());
  CHECK(lease.multi_while_held({Op::set_data("/fenced-multi/data", "v0.5")}).size() == 1);
  auto f = lease.async_multi_while_held({Op::set_data("/fenced-multi/data", "v1")}, boost::asio::use_future);
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  CHECK(f.get().size() == 1);
  CHECK(data() == "v1");
  fx.admin->remove(lease.node_paths()[1]);  // one of the three is lost
  error_code ec;
  lease.multi_while_held({Op::set_data("/fenced-multi/data", "late")}, ec);
  CHECK(ec == errc::lock_lost);
  CHECK(data() == "v1");
  lease.release(ec);

  // Grants of two clients cannot share one transaction.
  InterProcessMutex a(*c1, "/locks/fm/x");
  InterProcessMutex b(*c2, "/locks/fm/y");
  std::vector<Lease> two;
  two.push_back(a.async_acquire(boost::asio::use_future).get());
  two.push_back(b.async_acquire(boost::asio::use_future).get());
  MultiLease mixed(std::move(two));
  mixed.multi_while_held({Op::set_data("/fenced-multi/data", "mixed")}, ec);
  CHECK(ec == errc::invalid_argument);
  CHECK(data() == "v1");
  mixed.release();
  MultiLease none;
  none.multi_while_held({}, ec);
  CHECK(ec == errc::not_acquired);
}

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
  const bool gone_while_stalled = eventually(
      [&] {
        auto names = fx.children("/locks/release-caller");
        return std::find(names.begin(), names.end(), node) == names.end();
      },
      10s);
  stall.end();
  CHECK(gone_while_stalled);
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
  CHECK(second == errc::not_acquired);
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
    CHECK(eventually([&] { return fx.children("/locks/release-async").empty(); }, 10s));
    // The handler completes through the I/O thread, never inline.
    CHECK(released.wait_for(0s) == std::future_status::timeout);
  }
  REQUIRE(released.wait_for(20s) == std::future_status::ready);
  CHECK_NOTHROW(released.get());
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
  CHECK((ec == errc::connection_timeout || is_retryable(ec)));
  CHECK(eventually([&] { return suspended.load(); }, 10s));
  CHECK_FALSE(c1->is_connected());
  CHECK_FALSE(m.is_acquired_in_this_process());
  CHECK(c1->pending_guaranteed_deletes() == 1);
  fx.server.start();
  CHECK(eventually([&] { return c1->pending_guaranteed_deletes() == 0; }, 20s));
  CHECK(c1->session_id() == session);  // so the node went by our delete, not with the session
  CHECK(fx.children("/locks/release-down").empty());
}

TEST_CASE("contract: async_acquire tells when our node is queued, before the wait ends (CURATOR-592)",
          "[contract][async]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  InterProcessMutex holder(*c1, "/locks/queued");
  InterProcessMutex waiter(*c2, "/locks/queued");
  holder.acquire();
  std::promise<std::string> queued;
  int calls = 0;
  auto lease = waiter.async_acquire(
      [&](const std::string& node) {
        if (++calls == 1) queued.set_value(node);
      },
      boost::asio::use_future);
  auto q = queued.get_future();
  REQUIRE(q.wait_for(10s) == std::future_status::ready);
  const auto node = q.get();
  CHECK(node.rfind("/locks/queued/_c_", 0) == 0);
  CHECK(lease.wait_for(200ms) == std::future_status::timeout);  // told while still waiting
  const auto st = fx.admin->exists(node);
  REQUIRE(st);
  CHECK(st->ephemeral_owner == c2->session_id());
  holder.release();
  REQUIRE(lease.wait_for(10s) == std::future_status::ready);
  auto l = lease.get();
  CHECK(l.node_path() == node);  // the node we were told of is the one granted
  CHECK(calls == 1);
  l.release();
}

TEST_CASE("contract: async_acquire tells when it is queued and waiting, its watch set on the node ahead",
          "[contract][async]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  InterProcessMutex holder(*c1, "/locks/waiting");
  InterProcessMutex waiter(*c2, "/locks/waiting");
  holder.acquire();
  std::promise<std::string> waiting;
  std::atomic<int> queued_calls{0};
  std::atomic<int> waiting_calls{0};
  auto lease = waiter.async_acquire(AcquireEvents{.on_queued = [&](const std::string&) { ++queued_calls; },
                                                  .on_waiting =
                                                      [&](const std::string& node) {
                                                        if (++waiting_calls == 1) waiting.set_value(node);
                                                      }},
                                    boost::asio::use_future);
  auto w = waiting.get_future();
  REQUIRE(w.wait_for(10s) == std::future_status::ready);
  const auto node = w.get();
  CHECK(queued_calls == 1);  // queued before waiting
  CHECK(lease.wait_for(200ms) == std::future_status::timeout);
  holder.release();  // the watch told of wakes the waiter
  REQUIRE(lease.wait_for(10s) == std::future_status::ready);
  auto l = lease.get();
  CHECK(l.node_path() == node);
  CHECK(waiting_calls == 1);
  l.release();

  // Granted at once: queued, never waiting.
  int waited = 0;
  auto at_once =
      waiter
          .async_acquire(AcquireEvents{.on_queued = {}, .on_waiting = [&](const std::string&) { ++waited; }},
                         boost::asio::use_future)
          .get();
  CHECK(at_once.valid());
  at_once.release();
  CHECK(waited == 0);
}

TEST_CASE("contract: a wait for the loss signal raced against a timer withdraws when the timer wins",
          "[contract][loss]") {
  // The common "is my lock still mine, or is it time to do the next piece of work" loop. The losing wait is
  // cancelled by the `||`: it must complete at once (the `||` waits for it) and leave no waiter behind.
  using namespace boost::asio::experimental::awaitable_operators;
  ServerFixture fx;
  auto c1 = fx.client();
  InterProcessMutex m(*c1, "/locks/loss-race");
  auto lease = m.async_acquire(boost::asio::use_future).get();
  REQUIRE(lease.valid());
  boost::asio::io_context ioc;
  int timer_won = 0;
  auto loop = [&]() -> boost::asio::awaitable<void> {
    for (int i = 0; i < 50; ++i) {
      boost::asio::steady_timer t(ioc, 2ms);
      auto r = co_await (lease.async_wait_lost(boost::asio::use_awaitable) ||
                         t.async_wait(boost::asio::use_awaitable));
      timer_won += r.index() == 1;
    }
  };
  auto done = boost::asio::co_spawn(ioc, loop(), boost::asio::use_future);
  std::thread runner([&] { ioc.run(); });
  const bool finished = done.wait_for(20s) == std::future_status::ready;
  if (!finished) ioc.stop();
  runner.join();
  REQUIRE(finished);
  done.get();
  CHECK(timer_won == 50);
  // No withdrawn waiter is left registered (read on the client's I/O thread, which owns the list).
  auto count = std::make_shared<std::promise<std::size_t>>();
  boost::asio::post(
      zkr::detail::access::core(*c1)->io_executor(),
      [count, s = zkr::detail::access::state(lease)] { count->set_value(s->lost_waiters.size()); });
  CHECK(count->get_future().get() == 0);
  // And a wait that is not cancelled still sees the loss.
  auto wait_lost = lease.async_wait_lost(boost::asio::use_future);
  std::this_thread::sleep_for(100ms);
  fx.admin->remove(lease.node_path());
  REQUIRE(wait_lost.wait_for(20s) == std::future_status::ready);
  CHECK(wait_lost.get() == LeaseStatus::lost);
}

TEMPLATE_TEST_CASE("contract: a killed session while waiting still acquires", "[contract]", MutexAdapter,
                   SemaphoreMutexAdapter) {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client({.session_timeout = 4s});
  auto a = TestType::make(*c1, "/locks/killed-waiter");
  auto b = TestType::make(*c2, "/locks/killed-waiter");
  a->acquire();
  auto fut = std::async(std::launch::async, [&] {
    bool ok = b->acquire(40s);
    if (ok) b->release();
    return ok;
  });
  REQUIRE(eventually(
      [&] { return TestType::nodes(fx, "/locks/killed-waiter") == TestType::expected_nodes(1, 1); }));
  c2->inject_session_expiration();
  // The waiter's node went with its session; it makes a new one under the retry policy.
  std::this_thread::sleep_for(500ms);
  a->release();
  REQUIRE(fut.get());
  CHECK(eventually([&] { return TestType::nodes(fx, "/locks/killed-waiter") == 0; }));
}

TEMPLATE_TEST_CASE("contract: server restart while waiting", "[contract]", MutexAdapter,
                   SemaphoreMutexAdapter) {
  ServerFixture fx;
  auto c1 = fx.client({.session_timeout = 20s});
  auto c2 = fx.client({.session_timeout = 20s});
  auto a = TestType::make(*c1, "/locks/restart");
  auto b = TestType::make(*c2, "/locks/restart");
  a->acquire();
  auto fut = std::async(std::launch::async, [&] {
    bool ok = b->acquire(60s);
    if (ok) b->release();
    return ok;
  });
  REQUIRE(
      eventually([&] { return TestType::nodes(fx, "/locks/restart") == TestType::expected_nodes(1, 1); }));
  fx.server.restart();
  REQUIRE(c1->block_until_connected(30s));
  a->release();
  REQUIRE(fut.get());
}

TEST_CASE("contract: pre-watch: a waiter leaving mid-queue, then a server restart, never grants early",
          "[contract][prewatch]") {
  // Queue: a holds; b, c, d wait. c watches b and pre-watches a; d watches c and pre-watches b. b's session
  // expires (its node goes: c's watched node, d's pre-watched one), then the server restarts: neither may
  // take the lock while a holds it, and the order stays a, c, d.
  ServerFixture fx;
  const std::string path = "/locks/prewatch-queue";
  auto driver = std::make_shared<PrewatchLockDriver>();
  std::vector<std::unique_ptr<CuratorFramework>> cs;
  for (int i = 0; i < 4; ++i) cs.push_back(fx.client({.session_timeout = i == 1 ? 4s : 20s}));
  InterProcessMutex a(*cs[0], path, driver);
  a.acquire();
  std::atomic<bool> a_holds{true};
  std::atomic<int> early{0};
  std::mutex mu;
  std::vector<std::string> order;
  auto waiter = [&](int i, const std::string& name) {
    return std::async(std::launch::async, [&, i, name] {
      InterProcessMutex m(*cs[std::size_t(i)], path, driver);
      error_code ec;
      if (!m.acquire(60s, ec)) return false;
      if (a_holds) ++early;
      {
        std::lock_guard lk(mu);
        order.push_back(name);
      }
      std::this_thread::sleep_for(5ms);
      m.release();
      return true;
    });
  };
  auto b = waiter(1, "b");
  REQUIRE(eventually([&] { return fx.children(path).size() == 2; }));
  auto c = waiter(2, "c");
  REQUIRE(eventually([&] { return fx.children(path).size() == 3; }));
  auto d = waiter(3, "d");
  REQUIRE(eventually([&] { return fx.children(path).size() == 4; }));
  std::this_thread::sleep_for(200ms);  // every waiter has set its watches

  cs[1]->inject_session_expiration();  // b's node goes; b itself queues again, behind d
  std::this_thread::sleep_for(500ms);
  CHECK(early == 0);
  fx.server.restart();
  REQUIRE(cs[0]->block_until_connected(30s));
  std::this_thread::sleep_for(500ms);
  CHECK(early == 0);
  a_holds = false;
  a.release();
  CHECK(c.get());
  CHECK(d.get());
  CHECK(b.get());
  CHECK(early == 0);
  CHECK(order == std::vector<std::string>{"c", "d", "b"});
  CHECK(eventually([&] { return fx.children(path).empty(); }));
}

TEMPLATE_TEST_CASE("contract: a closed client gives a clear error", "[contract]", MutexAdapter,
                   SemaphoreMutexAdapter) {
  ServerFixture fx;
  auto c = fx.client();
  auto lock = TestType::make(*c, "/locks/closed");
  c->close();
  error_code ec;
  lock->acquire(ec);
  CHECK(ec == errc::closed);
  CHECK_THROWS_AS(lock->acquire(), zkr::Error);
}

TEST_CASE("contract: invalid lock paths are rejected at construction", "[contract]") {
  ServerFixture fx;
  const std::vector<std::string> bad_paths{
      "", "relative", "/trailing/", "/a//b", "/a/./b", "/a/../b", std::string("/nul\0x", 6)};
  for (const auto& bad : bad_paths) {
    CAPTURE(bad);
    CHECK_THROWS_AS(InterProcessMutex(*fx.admin, bad), zkr::Error);
    CHECK_THROWS_AS(InterProcessSemaphoreMutex(*fx.admin, bad), zkr::Error);
  }
}

TEST_CASE("contract: cancelling an asynchronous acquire mid-wait deletes its node first",
          "[contract][async]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  InterProcessMutex a(*c1, "/locks/cancel");
  InterProcessMutex b(*c2, "/locks/cancel");
  a.acquire();
  boost::asio::cancellation_signal sig;
  std::promise<std::pair<error_code, bool>> done;
  b.async_acquire(boost::asio::bind_cancellation_slot(sig.slot(), [&](error_code ec, Lease l) {
    // The node must already be gone when the handler runs.
    done.set_value({ec, l.valid()});
  }));
  REQUIRE(eventually([&] { return fx.children("/locks/cancel").size() == 2; }));
  // Emit from the handler's executor (the client's I/O thread is its default executor).
  boost::asio::post(zkr::detail::access::core(*c2)->completion_executor(),
                    [&] { sig.emit(boost::asio::cancellation_type::terminal); });
  auto f = done.get_future();
  REQUIRE(f.wait_for(20s) == std::future_status::ready);
  auto [ec, valid] = f.get();
  CHECK(ec == boost::asio::error::operation_aborted);
  CHECK_FALSE(valid);
  CHECK(fx.children("/locks/cancel").size() == 1);
  a.release();
}

TEST_CASE("contract: asynchronous timed acquire completes with an empty lease and no node",
          "[contract][async]") {
  ServerFixture fx;
  auto c1 = fx.client();
  InterProcessMutex a(*c1, "/locks/async-timeout");
  InterProcessSemaphoreMutex s(*c1, "/locks/async-timeout-sem");
  a.acquire();
  s.acquire();
  auto lease = a.async_try_acquire_for(300ms, boost::asio::use_future).get();
  CHECK_FALSE(lease.valid());
  auto slease = s.async_try_acquire_for(300ms, boost::asio::use_future).get();
  CHECK_FALSE(slease.valid());
  CHECK(fx.children("/locks/async-timeout").size() == 1);
  CHECK(eventually([&] { return fx.children("/locks/async-timeout-sem/leases").size() == 1; }));
  CHECK(eventually([&] { return fx.children("/locks/async-timeout-sem/locks").empty(); }));
}

TEST_CASE("contract: many asynchronous waiters in one process drain in FIFO order without a thread each",
          "[contract][async]") {
  ServerFixture fx;
  constexpr int sessions = 4, waiters = 400;
  std::vector<std::unique_ptr<CuratorFramework>> cs;
  std::vector<std::unique_ptr<InterProcessMutex>> locks;
  for (int i = 0; i < sessions; ++i) {
    cs.push_back(fx.client());
    locks.push_back(std::make_unique<InterProcessMutex>(*cs.back(), "/locks/drain"));
  }
  auto holder_client = fx.client();
  InterProcessMutex holder(*holder_client, "/locks/drain");
  holder.acquire();
  const int threads_before = thread_count();
  std::mutex mu;
  std::vector<std::string> granted;  // node names in grant order
  std::atomic<int> errors{0};
  std::promise<void> all_done;
  std::atomic<int> remaining{waiters};
  for (int i = 0; i < waiters; ++i) {
    locks[i % sessions]->async_acquire([&](error_code ec, Lease l) {
      if (ec) ++errors;
      {
        std::lock_guard lk(mu);
        granted.push_back(l.node_name());
      }
      l.async_release([&](error_code) {
        if (--remaining == 0) all_done.set_value();
      });
    });
  }
  REQUIRE(eventually([&] { return fx.children("/locks/drain").size() == std::size_t(waiters + 1); }, 60s));
  CHECK(thread_count() <= threads_before + 2);  // no thread per waiter
  holder.release();
  REQUIRE(all_done.get_future().wait_for(120s) == std::future_status::ready);
  CHECK(errors == 0);
  REQUIRE(granted.size() == std::size_t(waiters));
  auto by_sequence = granted;
  std::sort(by_sequence.begin(), by_sequence.end(), [](const std::string& a, const std::string& b) {
    return sequential_suffix(a) < sequential_suffix(b);
  });
  CHECK(granted == by_sequence);
}

TEMPLATE_TEST_CASE("contract: idle lock directories are reaped (container parents)", "[contract]",
                   MutexAdapter, SemaphoreMutexAdapter) {
  ServerFixture fx;
  auto c = fx.client();
  {
    auto lock = TestType::make(*c, "/locks/container/inner");
    for (int i = 0; i < 3; ++i) {
      lock->acquire();
      lock->release();
    }
  }
  CHECK(eventually([&] { return !fx.admin->exists("/locks/container/inner"); }, 30s));
}

TEMPLATE_TEST_CASE("contract: works under a namespace", "[contract]", MutexAdapter, SemaphoreMutexAdapter) {
  ServerFixture fx;
  auto c = fx.client({.namespace_name = "test"});
  auto lock = TestType::make(*c, "/locks/ns");
  REQUIRE(lock->acquire(10s));
  CHECK_FALSE(TestType::nodes(fx, "/test/locks/ns") == 0);
  lock->release();
}

TEST_CASE("contract: nodes have Curator's names and default data", "[contract][wire]") {
  ServerFixture fx;
  auto c = fx.client();
  InterProcessMutex m(*c, "/locks/wire");
  m.acquire();
  auto name = node_name(m.lock_path());
  CHECK(protected_names::is_protected_node(name));
  CHECK(protected_names::normalize(name).substr(0, 5) == "lock-");
  CHECK(sequential_suffix(name).size() == 10);
  CHECK_FALSE(fx.admin->get_data(m.lock_path()).data.empty());  // the local address, as Curator
  m.release();
  m.set_node_data(std::string("custom"));
  m.acquire();
  CHECK(fx.admin->get_data(m.lock_path()).data == "custom");
  auto participants = m.participant_nodes();
  REQUIRE(participants.size() == 1);
  CHECK(participants[0] == m.lock_path());
  CHECK(m.async_participant_nodes(boost::asio::use_future).get() == participants);
  m.release();
  CHECK(m.async_participant_nodes(boost::asio::use_future).get().empty());

  InterProcessSemaphoreV2 sem(*c, "/sem/wire", 2);
  auto lease = sem.acquire();
  CHECK(lease.node_path().rfind("/sem/wire/leases/_c_", 0) == 0);
  CHECK(protected_names::normalize(lease.node_name()).substr(0, 6) == "lease-");
  CHECK(sem.participant_nodes().size() == 1);
  CHECK(sem.async_participant_nodes(boost::asio::use_future).get() ==
        std::vector<std::string>{lease.node_path()});
  // Full paths in queue order, as the mutex's (the protected prefixes' random GUIDs do not decide the order).
  auto second = sem.acquire();
  CHECK(sem.participant_nodes() == std::vector<std::string>{lease.node_path(), second.node_path()});
  second.release();
  InterProcessSemaphoreMutex sm(*c, "/sem/wire-mutex");
  sm.acquire();
  CHECK(sm.async_participant_nodes(boost::asio::use_future).get() == sm.participant_nodes());
  CHECK(sm.participant_nodes().size() == 1);
  sm.release();
}

TEST_CASE("contract: lease.data() reads the grant's node data, as Curator's Lease.getData()",
          "[contract][wire]") {
  ServerFixture fx;
  auto c = fx.client();
  InterProcessSemaphoreV2 sem(*c, "/sem/data", 2);
  sem.set_node_data(std::string("worker-7"));
  auto lease = sem.acquire();
  REQUIRE(lease.valid());
  CHECK(lease.data() == "worker-7");
  CHECK(lease.async_data(boost::asio::use_future).get() == "worker-7");

  // The mutex's grant, with the client's default data (the local address, as Curator).
  InterProcessMutex m(*c, "/locks/data");
  auto held = m.async_acquire(boost::asio::use_future).get();
  CHECK(held.data() == fx.admin->get_data(held.node_path()).data);
  CHECK_FALSE(held.data().empty());

  // The node deleted by someone else: the read says so instead of returning stale data.
  fx.admin->remove(held.node_path());
  error_code ec;
  CHECK(held.data(ec).empty());
  CHECK(ec == zk_errc::no_node);

  // A released or empty handle: not_acquired, nothing sent.
  lease.release();
  CHECK_THROWS_AS(lease.data(), zkr::Error);
  lease.data(ec);
  CHECK(ec == errc::not_acquired);
  Lease empty;
  auto refused = empty.async_data(zkr::with_diagnostics(boost::asio::use_future));
  CHECK_THROWS_AS(refused.get(), zkr::Error);
}

TEST_CASE("semaphore: N leases, all or none, timeouts return nothing", "[semaphore]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  InterProcessSemaphoreV2 s1(*c1, "/sem/n", 3);
  InterProcessSemaphoreV2 s2(*c2, "/sem/n", 3);
  auto two = s1.acquire(2);
  REQUIRE(two.size() == 2);
  CHECK(s2.acquire(2, 300ms).empty());  // only one left: all or none
  CHECK(eventually([&] { return fx.children("/sem/n/leases").size() == 2; }));
  auto one = s2.acquire(1s);
  CHECK(one.valid());
  CHECK_FALSE(s2.acquire(200ms).valid());
  s1.return_lease(std::move(two[0]));
  auto again = s2.acquire(5s);
  CHECK(again.valid());
  CHECK(s1.participant_nodes().size() == 3);
  CHECK_THROWS_AS(s1.acquire(0), zkr::Error);
}

TEST_CASE("semaphore: a session expiry during acquire of 2 never returns the lease it took before",
          "[semaphore][session]") {
  // c2 holds 2 of 3 leases. c1 asks for 2: the first is granted, the second waits. c1's session expires,
  // which deletes the first; the retried second finds a slot. c1 must not return the first (its slot is
  // anyone's): it waits for a second slot of the new session.
  ServerFixture fx;
  auto c1 = fx.client({.session_timeout = 4s});
  auto c2 = fx.client();
  InterProcessSemaphoreV2 s1(*c1, "/sem/expiry", 3);
  InterProcessSemaphoreV2 s2(*c2, "/sem/expiry", 3);
  auto theirs = s2.acquire(2);
  REQUIRE(theirs.size() == 2);
  auto f = s1.async_acquire(2, boost::asio::use_future);
  REQUIRE(eventually([&] { return fx.children("/sem/expiry/leases").size() == 4; }));
  c1->inject_session_expiration();
  CHECK(f.wait_for(5s) == std::future_status::timeout);  // 2 of c2 + 2 of the new session would be 4 > 3
  s2.return_lease(std::move(theirs[0]));
  REQUIRE(f.wait_for(20s) == std::future_status::ready);
  auto ours = f.get();
  REQUIRE(ours.size() == 2);
  for (const auto& l : ours) CHECK(l.status() == LeaseStatus::held);
  CHECK(fx.children("/sem/expiry/leases").size() == 3);
  s1.return_all(std::move(ours));
  s2.return_lease(std::move(theirs[1]));
}
