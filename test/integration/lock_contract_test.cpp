// The lock contract: one suite run over every lock type against a real ZooKeeper (Curator's
// TestInterProcessMutexBase, extended with the guarantees zkrecipes adds: fencing tokens, loss signal,
// cancellation leaving no node). A lock type joins by adding an adapter to lock_adapters.hpp.
// Here: exclusion, FIFO order, timed and reentrant acquires, sessions killed and servers restarted, misuse,
// the nodes' names and data, and the semaphore's leases. The rest of the contract:
// lock_contract_loss_test.cpp (the loss signal, multi_while_held), lock_contract_release_test.cpp,
// lock_contract_async_test.cpp.

#include <atomic>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "lock_adapters.hpp"

using namespace zkr;
using namespace zkr::test;

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
  CHECK(ec == client_errc::not_owner);
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
  CHECK(ec == client_errc::closed);
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
  CHECK(ec == client_errc::not_acquired);
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
