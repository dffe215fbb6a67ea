// InterProcessMultiLock against a real ZooKeeper: Curator's TestInterProcessMultiMutex scenarios, the batched
// acquire (requests counted with the server's own counters) and the ordering rule that keeps it deadlock-free
// against Curator's one-at-a-time MultiLock. Elsewhere: release (multi_lock_release_test.cpp) and interop
// with Java Curator's InterProcessMultiLock (multi_lock_interop_test.cpp).

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "fixture.hpp"
#include "multi_lock_support.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

/// An InterProcessLock that records calls and can be told to fail.
struct FakeLock : InterProcessLock {
  std::vector<std::string>& log;
  std::string name;
  bool fail_acquire = false, throw_acquire = false, fail_release = false;
  bool held = false;
  FakeLock(std::vector<std::string>& l, std::string n) : log(l), name(std::move(n)) {}
  void acquire() override {
    error_code ec;
    acquire(ec);
    throw_if(ec, "acquire", name);
  }
  void acquire(error_code& ec) override {
    if (!timed_acquire(std::chrono::milliseconds(-1), ec) && !ec) ec = client_errc::not_acquired;
  }
  bool timed_acquire(std::chrono::milliseconds t) override {
    error_code ec;
    bool r = timed_acquire(t, ec);
    throw_if(ec, "acquire", name);
    return r;
  }
  bool timed_acquire(std::chrono::milliseconds, error_code& ec) override {
    log.push_back("acquire " + name);
    if (throw_acquire) throw std::runtime_error("boom");
    if (fail_acquire) {
      ec = zk_errc::connection_loss;
      return false;
    }
    held = true;
    return true;
  }
  void release() override {
    error_code ec;
    release(ec);
    throw_if(ec, "release", name);
  }
  void release(error_code& ec) override {
    log.push_back("release " + name);
    held = false;
    if (fail_release) ec = zk_errc::connection_loss;
  }
  bool is_acquired_in_this_process() const override { return held; }
};

/// Requests served by the server so far (reads and updates), from `mntr`.
struct Requests {
  long reads = 0, updates = 0;
  long total() const { return reads + updates; }
};
Requests requests(zkr::testing::TestingServer& s) {
  auto m = s.mntr();
  return {std::stol(m.at("zk_cnt_readlatency")), std::stol(m.at("zk_cnt_updatelatency"))};
}
Requests operator-(Requests a, Requests b) { return {a.reads - b.reads, a.updates - b.updates}; }

}  // namespace

TEST_CASE("multi: all or none, in list order, with one fencing token per lock", "[multi]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  const auto paths = paths_of("/multi/all", 3);
  InterProcessMutex other(*c2, paths[1]);
  other.acquire();
  InterProcessMultiLock multi(*c1, paths);
  CHECK_FALSE(multi.acquire(500ms));
  CHECK_FALSE(multi.is_acquired_in_this_process());
  // Rolled back: nothing of ours is left in any lock.
  CHECK(eventually([&] {
    return fx.children(paths[0]).empty() && fx.children(paths[1]).size() == 1 &&
           fx.children(paths[2]).empty();
  }));
  other.release();
  multi.acquire();
  CHECK(multi.is_acquired_in_this_process());
  CHECK(multi.is_owned_by_current_thread());
  const auto tokens = multi.fencing_tokens();
  const auto nodes = multi.lock_paths();
  REQUIRE(tokens.size() == 3);
  REQUIRE(nodes.size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(nodes[i].rfind(paths[i] + "/_c_", 0) == 0);
    CHECK(nodes[i].find("-lock-") != std::string::npos);
    const auto st = c1->exists(nodes[i]);
    REQUIRE(st);
    CHECK(st->czxid == tokens[i]);  // the token is the node's czxid
    CHECK(st->ephemeral_owner == c1->session_id());
  }
  CHECK_FALSE(other.acquire(300ms));
  multi.acquire();  // reentrant on this thread
  multi.release();
  CHECK(multi.is_acquired_in_this_process());
  multi.release();
  CHECK_FALSE(multi.is_acquired_in_this_process());
  CHECK(other.acquire(10s));
  other.release();
  CHECK(eventually([&] { return fx.children(paths[0]).empty() && fx.children(paths[2]).empty(); }));
  error_code ec;
  multi.release(ec);
  CHECK(ec == client_errc::not_owner);
}

TEST_CASE("multi: missing lock directories are containers unless the client says otherwise", "[multi]") {
  ServerFixture fx;  // its server checks containers every 100 ms
  auto containers = fx.client();
  auto persistent = fx.client({.use_container_parents = false});
  const auto reaped = paths_of("/multi/dirs/containers", 2);
  const auto kept = paths_of("/multi/dirs/persistent", 2);
  {
    InterProcessMultiLock a(*containers, reaped);
    a.acquire();
    a.release();
    InterProcessMultiLock b(*persistent, kept);
    b.acquire();
    b.release();
  }
  CHECK(eventually([&] { return !fx.admin->exists(reaped[0]) && !fx.admin->exists(reaped[1]); }, 10s));
  std::this_thread::sleep_for(600ms);  // several container checks
  for (const auto& p : kept) {
    const auto st = fx.admin->exists(p);
    REQUIRE(st);
    CHECK(st->ephemeral_owner == 0);
  }
}

TEST_CASE("multi: a zero timeout takes free locks (the timeout only stops waits)", "[multi]") {
  ServerFixture fx;
  auto c = fx.client();
  InterProcessMultiLock multi(*c, paths_of("/multi/zero", 3));
  REQUIRE(multi.acquire(0ms));
  CHECK(multi.fencing_tokens().size() == 3);
  multi.release();
  auto f = multi.async_try_acquire_for(0ms, boost::asio::use_future);
  MultiLease l = f.get();
  CHECK(l.valid());
}

TEST_CASE("multi: waiting for a lock in the middle keeps no queue position in later locks", "[multi]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  const auto paths = paths_of("/multi/middle", 4);
  InterProcessMutex holder(*c2, paths[2]);
  holder.acquire();
  InterProcessMultiLock multi(*c1, paths);
  auto f = multi.async_acquire(boost::asio::use_future);
  // Held: l0, l1. Queued: l2 (behind the holder). Nothing in l3.
  REQUIRE(eventually([&] { return fx.children(paths[2]).size() == 2; }));
  CHECK(fx.children(paths[0]).size() == 1);
  CHECK(fx.children(paths[1]).size() == 1);
  CHECK(eventually([&] { return fx.children(paths[3]).empty(); }));
  CHECK(f.wait_for(200ms) == std::future_status::timeout);
  // Another client can take l3 meanwhile: nobody is queued there.
  auto c3 = fx.client();
  InterProcessMutex l3(*c3, paths[3]);
  CHECK(l3.acquire(2s));
  l3.release();
  holder.release();
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  MultiLease lease = f.get();
  REQUIRE(lease.valid());
  REQUIRE(lease.size() == 4);
  const auto tokens = lease.fencing_tokens();
  for (auto t : tokens) CHECK(t > 0);
  for (std::size_t i = 0; i < 4; ++i) CHECK(lease.node_paths()[i].rfind(paths[i] + "/", 0) == 0);
  lease.release();
  CHECK_FALSE(lease.valid());
  for (const auto& p : paths) CHECK(eventually([&] { return fx.children(p).empty(); }));
}

TEST_CASE("multi: cancellation deletes every node and gives back the locks taken", "[multi]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  const auto paths = paths_of("/multi/cancel", 3);
  InterProcessMutex holder(*c2, paths[1]);
  holder.acquire();
  InterProcessMultiLock multi(*c1, paths);
  boost::asio::cancellation_signal sig;
  auto f = multi.async_acquire(boost::asio::bind_cancellation_slot(sig.slot(), boost::asio::use_future));
  REQUIRE(eventually([&] { return fx.children(paths[1]).size() == 2; }));
  sig.emit(boost::asio::cancellation_type::terminal);
  try {
    f.get();
    FAIL("the acquire was not cancelled");
  } catch (const boost::system::system_error& e) {
    CHECK(e.code() == boost::asio::error::operation_aborted);
  }
  // Completed only after the cleanup: our nodes are already gone.
  CHECK(fx.children(paths[0]).empty());
  CHECK(fx.children(paths[1]).size() == 1);
  CHECK(fx.children(paths[2]).empty());
  // A timed async acquire gives up with no error and an empty MultiLease.
  auto t = multi.async_try_acquire_for(300ms, boost::asio::use_future);
  MultiLease none = t.get();
  CHECK_FALSE(none.valid());
  CHECK(fx.children(paths[0]).empty());
  holder.release();
}

TEST_CASE("multi: a session expiry while waiting in a later lock never returns the earlier locks with it",
          "[multi][session]") {
  // c1 holds l0 and waits in l1 behind c2. c1's session expires: its node in l0 goes and c2 takes l0. When c2
  // gives l1 back, c1 gets l1 under the new session, but l0 is c2's: the acquire must wait for l0 again
  // instead of returning a MultiLease with the old session's lease on l0 (two holders of l0).
  ServerFixture fx;
  auto c1 = fx.client({.session_timeout = 4s});
  auto c2 = fx.client();
  const auto paths = paths_of("/multi/expiry", 2);
  InterProcessMutex l1(*c2, paths[1]);
  l1.acquire();
  InterProcessMultiLock multi(*c1, paths);
  auto f = multi.async_acquire(boost::asio::use_future);
  REQUIRE(eventually([&] { return fx.children(paths[1]).size() == 2; }));
  REQUIRE(fx.children(paths[0]).size() == 1);
  c1->inject_session_expiration();
  InterProcessMutex l0(*c2, paths[0]);
  REQUIRE(l0.acquire(30s));  // c1's node in l0 went with its session
  l1.release();
  // c1 now gets l1 (new session), gives it back and queues in l0 behind c2.
  CHECK(f.wait_for(5s) == std::future_status::timeout);
  l0.release();
  REQUIRE(f.wait_for(20s) == std::future_status::ready);
  MultiLease lease = f.get();
  REQUIRE(lease.valid());
  REQUIRE(lease.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(lease.leases()[i].status() == LeaseStatus::held);
    CHECK(fx.children(paths[i]) == std::vector<std::string>{node_name(lease.node_paths()[i])});
  }
  lease.release();
}

TEST_CASE("multi: locks of any kind, rolled back in reverse order on failure", "[multi]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  auto mutex = std::make_shared<InterProcessMutex>(*c1, "/multi/kinds/mutex");
  auto sem = std::make_shared<InterProcessSemaphoreMutex>(*c1, "/multi/kinds/sem");
  auto rw = std::make_shared<InterProcessReadWriteLock>(*c1, "/multi/kinds/rw");
  InterProcessMultiLock multi(
      std::vector<std::reference_wrapper<InterProcessLock>>{*mutex, *sem, rw->write_lock()});
  InterProcessReadWriteLock other(*c2, "/multi/kinds/rw");
  other.read_lock().acquire();
  CHECK_FALSE(multi.acquire(500ms));  // the write lock is behind a reader: mutex and sem are rolled back
  CHECK_FALSE(mutex->is_acquired_in_this_process());
  CHECK_FALSE(sem->is_acquired_in_this_process());
  CHECK_FALSE(multi.is_acquired_in_this_process());
  other.read_lock().release();
  REQUIRE(multi.acquire(10s));
  CHECK(multi.is_acquired_in_this_process());
  CHECK(mutex->is_acquired_in_this_process());
  CHECK(sem->is_acquired_in_this_process());
  CHECK(rw->write_lock().is_owned_by_current_thread());
  multi.release();
  CHECK_FALSE(mutex->is_acquired_in_this_process());
  CHECK_FALSE(sem->is_acquired_in_this_process());
  CHECK_FALSE(rw->write_lock().is_acquired_in_this_process());
}

TEST_CASE("multi: the locks form acquires asynchronously, lock by lock, across clients", "[multi][async]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  auto c3 = fx.client();
  auto mutex = std::make_shared<InterProcessMutex>(*c1, "/multi/async/mutex");
  auto sem = std::make_shared<InterProcessSemaphoreMutex>(*c2, "/multi/async/sem");  // another client
  auto rw = std::make_shared<InterProcessReadWriteLock>(*c1, "/multi/async/rw");
  auto inner = std::make_shared<InterProcessMultiLock>(*c1, paths_of("/multi/async/inner", 2));
  InterProcessMultiLock multi(std::vector<std::shared_ptr<InterProcessLock>>{
      mutex, sem, std::shared_ptr<InterProcessLock>(rw, &rw->write_lock()), inner});

  MultiLease lease = multi.async_acquire(boost::asio::use_future).get();
  REQUIRE(lease.valid());
  REQUIRE(lease.size() == 5);  // one grant per node: mutex, semaphore lease, write lock, the inner lock's two
  CHECK(node_name(lease.node_paths()[0]) == fx.children("/multi/async/mutex").at(0));
  CHECK(sem->participant_nodes().size() == 1);
  CHECK(lease.node_paths()[2].find("__WRIT__") != std::string::npos);
  CHECK(lease.node_paths()[3].rfind("/multi/async/inner/l0/", 0) == 0);
  CHECK(lease.node_paths()[4].rfind("/multi/async/inner/l1/", 0) == 0);
  auto tokens = lease.fencing_tokens();
  CHECK(std::all_of(tokens.begin(), tokens.end(), [](auto t) { return t > 0; }));
  // The grants belong to the MultiLease, not to a thread's blocking hold; they exclude everyone else.
  CHECK_FALSE(mutex->is_acquired_in_this_process());
  InterProcessMutex other_mutex(*c3, "/multi/async/mutex");
  InterProcessSemaphoreMutex other_sem(*c3, "/multi/async/sem");
  InterProcessMultiLock other_inner(*c3, paths_of("/multi/async/inner", 2));
  CHECK_FALSE(other_mutex.acquire(200ms));
  CHECK_FALSE(other_sem.acquire(200ms));
  CHECK_FALSE(other_inner.acquire(200ms));

  lease.async_release(boost::asio::use_future).get();
  CHECK(fx.children("/multi/async/mutex").empty());
  CHECK(sem->participant_nodes().empty());
  CHECK(fx.children("/multi/async/rw").empty());
  REQUIRE(other_mutex.acquire(10s));
  other_mutex.release();
}

TEST_CASE("multi: the locks form's async acquire gives back what it took on timeout and on cancellation",
          "[multi][async]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  auto mutex = std::make_shared<InterProcessMutex>(*c1, "/multi/async-undo/mutex");
  auto sem = std::make_shared<InterProcessSemaphoreMutex>(*c2, "/multi/async-undo/sem");
  auto rw = std::make_shared<InterProcessReadWriteLock>(*c1, "/multi/async-undo/rw");
  InterProcessMultiLock multi(
      std::vector<std::reference_wrapper<InterProcessLock>>{*mutex, *sem, rw->write_lock()});
  InterProcessReadWriteLock reader(*c2, "/multi/async-undo/rw");
  reader.read_lock().acquire();

  // Timeout: mutex and semaphore taken, the write lock waits behind the reader; all given back, no error.
  MultiLease none = multi.async_try_acquire_for(500ms, boost::asio::use_future).get();
  CHECK_FALSE(none.valid());
  CHECK(fx.children("/multi/async-undo/mutex").empty());
  CHECK(sem->participant_nodes().empty());
  CHECK(fx.children("/multi/async-undo/rw").size() == 1);  // the reader's node only

  // Cancellation while the write lock waits: its node is deleted and the first two are given back before the
  // operation completes.
  boost::asio::cancellation_signal sig;
  auto f = multi.async_acquire(boost::asio::bind_cancellation_slot(sig.slot(), boost::asio::use_future));
  REQUIRE(eventually([&] { return fx.children("/multi/async-undo/rw").size() == 2; }));
  CHECK(fx.children("/multi/async-undo/mutex").size() == 1);
  sig.emit(boost::asio::cancellation_type::terminal);
  try {
    f.get();
    FAIL("the acquire was not cancelled");
  } catch (const boost::system::system_error& e) {
    CHECK(e.code() == boost::asio::error::operation_aborted);
  }
  CHECK(fx.children("/multi/async-undo/mutex").empty());
  CHECK(sem->participant_nodes().empty());
  CHECK(fx.children("/multi/async-undo/rw").size() == 1);

  // Once the reader goes, the same multi-lock is granted asynchronously.
  reader.read_lock().release();
  MultiLease lease = multi.async_try_acquire_for(10s, boost::asio::use_future).get();
  REQUIRE(lease.valid());
  CHECK(lease.size() == 3);
}

namespace {
/// The locks form over two mutexes of c1, mutex 1 held by c2. `hand_over(f)`: once c1 holds mutex 0 and waits
/// for mutex 1, c1's session expires and c2 takes mutex 0 (c1's node went with the session), then gives mutex
/// 1 back; the acquire `f` must give mutex 1 back in turn and wait for mutex 0 again, and completes once c2
/// gives mutex 0 back.
struct LostWhileWaiting {
  ServerFixture fx;
  std::unique_ptr<CuratorFramework> c1 = fx.client({.session_timeout = 4s});
  std::unique_ptr<CuratorFramework> c2 = fx.client();
  std::vector<std::string> paths;
  std::shared_ptr<InterProcessMutex> m0, m1;
  InterProcessMultiLock multi;
  InterProcessMutex l1;

  explicit LostWhileWaiting(const std::string& base)
      : paths(paths_of(base, 2)),
        m0(std::make_shared<InterProcessMutex>(*c1, paths[0])),
        m1(std::make_shared<InterProcessMutex>(*c1, paths[1])),
        multi(std::vector<std::shared_ptr<InterProcessLock>>{m0, m1}),
        l1(*c2, paths[1]) {
    l1.acquire();
  }
  template <class Future>
  void hand_over(Future& f) {
    REQUIRE(eventually([&] { return fx.children(paths[1]).size() == 2; }));
    REQUIRE(fx.children(paths[0]).size() == 1);
    c1->inject_session_expiration();
    InterProcessMutex l0(*c2, paths[0]);
    REQUIRE(l0.acquire(30s));
    l1.release();
    CHECK(f.wait_for(5s) == std::future_status::timeout);  // mutex 1 given back, waiting for mutex 0 again
    CHECK(fx.children(paths[1]).empty());
    l0.release();
    REQUIRE(f.wait_for(30s) == std::future_status::ready);
  }
};
}  // namespace

TEST_CASE("multi: the locks form's async acquire never returns a grant lost while a later lock was awaited",
          "[multi][async][session]") {
  // As the paths form's session test above, through the locks form. Curator's MultiLock would return the lost
  // grant of mutex 0 once mutex 1 is free.
  LostWhileWaiting t("/multi/async-expiry");
  auto f = t.multi.async_acquire(boost::asio::use_future);
  t.hand_over(f);
  MultiLease lease = f.get();
  REQUIRE(lease.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(lease.leases()[i].status() == LeaseStatus::held);
    CHECK(lease.leases()[i].session_id() == t.c1->session_id());
    CHECK(t.fx.children(t.paths[i]) == std::vector<std::string>{node_name(lease.node_paths()[i])});
  }
  lease.release();
}

TEST_CASE("multi: the blocking locks form never returns a lock lost while a later lock was awaited",
          "[multi][session]") {
  // The blocking twin: holds belong to the acquiring thread, so that thread reports them.
  LostWhileWaiting t("/multi/blocking-expiry");
  struct Seen {
    bool got = false;
    LeaseStatus s0 = LeaseStatus::released, s1 = LeaseStatus::released;
    std::int64_t session0 = 0, session1 = 0;
    bool node0_ours = false;
  };
  auto f = std::async(std::launch::async, [&] {
    Seen seen;
    seen.got = t.multi.acquire(60s);
    if (!seen.got) return seen;
    seen.s0 = t.m0->lease_status();
    seen.s1 = t.m1->lease_status();
    seen.session0 = t.m0->lease()->session_id();
    seen.session1 = t.m1->lease()->session_id();
    seen.node0_ours = t.fx.children(t.paths[0]) == std::vector<std::string>{node_name(t.m0->lock_path())};
    t.multi.release();
    return seen;
  });
  t.hand_over(f);
  const Seen seen = f.get();
  REQUIRE(seen.got);
  CHECK(seen.s0 == LeaseStatus::held);
  CHECK(seen.s1 == LeaseStatus::held);
  CHECK(seen.session0 == t.c1->session_id());
  CHECK(seen.session1 == t.c1->session_id());
  CHECK(seen.node0_ours);
}

TEST_CASE("multi: async acquires of both forms complete with an error when their client closes",
          "[multi][async][closed]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  const auto paths = paths_of("/multi/async-closed", 2);
  InterProcessMutex blocker(*c2, paths[1]);
  blocker.acquire();
  auto m0 = std::make_shared<InterProcessMutex>(*c1, paths[0]);
  auto m1 = std::make_shared<InterProcessMutex>(*c1, paths[1]);
  InterProcessMultiLock by_locks(std::vector<std::shared_ptr<InterProcessLock>>{m0, m1});
  InterProcessMultiLock by_paths(*c1, paths);
  // The locks form holds mutex 0 and waits for mutex 1; the paths form waits for mutex 0 behind it. Then the
  // client goes away under both.
  auto f_locks = by_locks.async_acquire(boost::asio::use_future);
  REQUIRE(eventually([&] { return fx.children(paths[1]).size() == 2; }));
  auto f_paths = by_paths.async_acquire(boost::asio::use_future);
  REQUIRE(eventually([&] { return fx.children(paths[0]).size() == 2; }));
  c1->close();
  for (auto* f : {&f_locks, &f_paths}) {
    REQUIRE(f->wait_for(20s) == std::future_status::ready);
    CHECK_THROWS_AS(f->get(), boost::system::system_error);
  }
  CHECK(eventually([&] { return fx.children(paths[0]).empty() && fx.children(paths[1]).size() == 1; }));
  // Started on the closed client: an error at once, not a hang.
  auto late = by_locks.async_try_acquire_for(1s, boost::asio::use_future);
  REQUIRE(late.wait_for(10s) == std::future_status::ready);
  try {
    (void)late.get();
    FAIL("acquired on a closed client");
  } catch (const boost::system::system_error& e) {
    CHECK(e.code() == client_errc::closed);
  }
  blocker.release();
}

TEST_CASE("multi: the locks form's async acquire refuses a lock class without an asynchronous acquire",
          "[multi][async]") {
  ServerFixture fx;
  auto c1 = fx.client();
  std::vector<std::string> log;
  auto mutex = std::make_shared<InterProcessMutex>(*c1, "/multi/async-fake/mutex");
  auto fake = std::make_shared<FakeLock>(log, "fake");
  InterProcessMultiLock multi(std::vector<std::shared_ptr<InterProcessLock>>{mutex, fake});
  // Refused through the handler (posted), not thrown from the call.
  auto refused = multi.async_acquire(with_diagnostics(boost::asio::use_future));
  try {
    refused.get();
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.code() == client_errc::invalid_argument);
    CHECK(e.operation() == "acquire");
  }
  CHECK(log.empty());
  CHECK(fx.children("/multi/async-fake/mutex").empty());
  REQUIRE(multi.acquire(5s));  // the blocking form still works
  multi.release();
}

TEST_CASE(
    "multi: order of acquire and release, and failures (Curator's testSomeReleasesFail/LocksFailToLock)",
    "[multi]") {
  std::vector<std::string> log;
  auto a = std::make_shared<FakeLock>(log, "a");
  auto b = std::make_shared<FakeLock>(log, "b");
  auto c = std::make_shared<FakeLock>(log, "c");
  InterProcessMultiLock multi(std::vector<std::shared_ptr<InterProcessLock>>{a, b, c});
  multi.acquire();
  CHECK(multi.is_acquired_in_this_process());
  b->fail_release = true;
  error_code ec;
  multi.release(ec);
  CHECK(ec == zk_errc::connection_loss);  // reported...
  CHECK_FALSE(a->held);                   // ...but every lock was released
  CHECK(log == std::vector<std::string>{"acquire a", "acquire b", "acquire c", "release c", "release b",
                                        "release a"});
  CHECK_THROWS_AS(multi.release(), Error);

  log.clear();
  b->fail_release = false;
  b->fail_acquire = true;
  CHECK_FALSE(multi.acquire(1s, ec));
  CHECK(ec == zk_errc::connection_loss);
  CHECK_FALSE(a->held);
  CHECK(log == std::vector<std::string>{"acquire a", "acquire b", "release a"});

  log.clear();
  b->fail_acquire = false;
  b->throw_acquire = true;
  CHECK_THROWS_AS(multi.acquire(), std::runtime_error);
  CHECK_FALSE(a->held);
  CHECK(log == std::vector<std::string>{"acquire a", "acquire b", "release a"});
}

TEST_CASE("multi: acquiring 8 free mutexes takes far fewer requests than 8 acquires", "[multi][requests]") {
  ServerFixture fx;
  auto c = fx.client();
  constexpr int n = 8;
  const auto seq_paths = paths_of("/multi/count/seq", n);
  const auto batch_paths = paths_of("/multi/count/batch", n);
  for (const auto& p : seq_paths) fx.admin->create(p, {.creating_parents = true});
  for (const auto& p : batch_paths) fx.admin->create(p, {.creating_parents = true});
  std::vector<std::unique_ptr<InterProcessMutex>> mutexes;
  for (const auto& p : seq_paths) mutexes.push_back(std::make_unique<InterProcessMutex>(*c, p));
  InterProcessMultiLock multi(*c, batch_paths);

  auto before = requests(fx.server);
  for (auto& m : mutexes) m->acquire();
  const auto sequential = requests(fx.server) - before;

  before = requests(fx.server);
  multi.acquire();
  const auto batched = requests(fx.server) - before;

  before = requests(fx.server);
  multi.release();
  const auto batched_release = requests(fx.server) - before;
  for (auto& m : mutexes) m->release();

  INFO("sequential: " << sequential.updates << " updates + " << sequential.reads
                      << " reads; batched: " << batched.updates << " updates + " << batched.reads
                      << " reads; batched release: " << batched_release.updates << " updates");
  // One acquire is a create and a listing: 8 acquires need at least 8 updates and 16 requests.
  CHECK(sequential.updates >= n);
  CHECK(sequential.total() >= 2 * n);
  // Batched: one transaction and n pipelined listings (plus at most a stray ping).
  CHECK(batched.updates <= 1);
  CHECK(batched.total() <= n + 2);
  CHECK(batched_release.updates <= 1);

  // Fresh paths (no directories yet): the failed transaction, one pipelined round of exists (the n
  // directories and their 3 ancestors), the missing directories created (a pipelined round per depth), the
  // transaction again, the listings (sent behind each transaction, so twice): 2 + (n + 1) updates and
  // (n + 3) + 2n reads. One-at-a-time acquires would each fail a create, probe, create the directory and
  // create again: over 3n updates and 3n reads.
  InterProcessMultiLock fresh(*c, paths_of("/multi/count/fresh", n));
  before = requests(fx.server);
  fresh.acquire();
  const auto fresh_cost = requests(fx.server) - before;
  INFO("fresh: " << fresh_cost.updates << " updates + " << fresh_cost.reads << " reads");
  CHECK(fresh_cost.updates <= n + 3);
  CHECK(fresh_cost.total() <= 4 * n + 6);
  for (const auto& p : paths_of("/multi/count/fresh", n)) {
    const auto st = fx.admin->exists(p);
    REQUIRE(st);
    CHECK(st->ephemeral_owner == 0);
    CHECK(fx.children(p).size() == 1);
  }
  fresh.release();
}

TEST_CASE("multi: batched and one-at-a-time multi-locks on the same list never deadlock", "[multi]") {
  ServerFixture fx;
  const auto paths = paths_of("/multi/mix", 4);
  constexpr int rounds = 15;
  std::atomic<int> holders{0}, violations{0}, done{0};
  std::vector<std::unique_ptr<CuratorFramework>> cs;
  for (int i = 0; i < 4; ++i) cs.push_back(fx.client());
  auto body = [&](InterProcessMultiLock& m) {
    for (int r = 0; r < rounds; ++r) {
      if (!m.acquire(60s)) {
        ++violations;
        continue;
      }
      if (++holders != 1) ++violations;
      std::this_thread::sleep_for(1ms);
      --holders;
      m.release();
    }
    ++done;
  };
  std::vector<std::thread> ts;
  // Two batched multi-locks (paths form)...
  for (int i = 0; i < 2; ++i)
    ts.emplace_back([&, i] {
      InterProcessMultiLock m(*cs[i], paths);
      body(m);
    });
  // ...and two that take one mutex at a time, as Curator's InterProcessMultiLock does.
  for (int i = 2; i < 4; ++i)
    ts.emplace_back([&, i] {
      std::vector<std::shared_ptr<InterProcessLock>> locks;
      for (const auto& p : paths) locks.push_back(std::make_shared<InterProcessMutex>(*cs[i], p));
      InterProcessMultiLock m(std::move(locks));
      body(m);
    });
  for (auto& t : ts) t.join();
  CHECK(done == 4);
  CHECK(violations == 0);
}

TEST_CASE("multi: duplicate or no paths are refused", "[multi]") {
  ServerFixture fx;
  auto c = fx.client();
  CHECK_THROWS_AS(InterProcessMultiLock(*c, {"/a", "/b", "/a"}), Error);
  CHECK_THROWS_AS(InterProcessMultiLock(*c, std::vector<std::string>{}), Error);
  CHECK_THROWS_AS(InterProcessMultiLock(*c, {"/a", "bad"}), Error);
}
