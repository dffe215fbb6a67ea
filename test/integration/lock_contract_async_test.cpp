// The lock contract against a real ZooKeeper, continued from lock_contract_test.cpp: asynchronous
// acquires. They tell when their node is queued (CURATOR-592) and waiting, cancellation deletes the node
// first, a timed acquire leaves none, and many waiters in one process drain in FIFO order without a thread
// each.

#include <dirent.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <future>
#include <mutex>
#include <vector>
#include <zkr/recipes/detail/lease_core.hpp>

#include "fixture.hpp"

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
