// The lock contract against a real ZooKeeper, continued from lock_contract_test.cpp: a lost lock. The
// loss signal on session expiry and on a node deleted by someone else, raced against a timer;
// multi_while_held commits only while every grant holds.

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <future>
#include <thread>
#include <vector>
#include <zkr/recipes/detail/lease_core.hpp>

#include "fixture.hpp"

using namespace zkr;
using namespace zkr::test;

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
  CHECK(ec == client_errc::lock_lost);
  CHECK(r.size() == 2);
  CHECK(data() == "v3");
  CHECK(fx.admin->exists("/fenced/made"));
  CHECK_THROWS_AS(lease.multi_while_held({Op::set_data("/fenced/data", "late")}), zkr::Error);
  try {
    lease.multi_while_held({});
  } catch (const zkr::Error& e) {
    CHECK(e.code() == client_errc::lock_lost);
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
  CHECK(ec == client_errc::lock_lost);
  CHECK(data() == "v3");

  // Released or empty handles.
  auto fresh = m.async_acquire(boost::asio::use_future).get();
  REQUIRE(fresh.valid());
  fresh.release();
  fresh.multi_while_held({Op::set_data("/fenced/data", "after release")}, ec);
  CHECK(ec == client_errc::not_acquired);
  Lease empty;
  empty.multi_while_held({}, ec);
  CHECK(ec == client_errc::not_acquired);
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
  CHECK(ec == client_errc::lock_lost);
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
  CHECK(ec == client_errc::invalid_argument);
  CHECK(data() == "v1");
  mixed.release();
  MultiLease none;
  none.multi_while_held({}, ec);
  CHECK(ec == client_errc::not_acquired);
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
