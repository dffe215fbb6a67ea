// InterProcessReadWriteLock against a real ZooKeeper: Curator's TestInterProcessReadWriteLock scenarios, the
// upgrade refusal zkrecipes adds, and interop with Java Curator's read-write lock on the same path.

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <future>
#include <random>
#include <thread>
#include <vector>

#include "curator_peer.hpp"
#include "fixture.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

std::size_t count_kind(const std::vector<std::string>& names, std::string_view kind) {
  return static_cast<std::size_t>(std::count_if(
      names.begin(), names.end(), [&](const std::string& n) { return n.find(kind) != std::string::npos; }));
}

std::string last_segment(const std::string& p) { return p.substr(p.rfind('/') + 1); }

}  // namespace

TEST_CASE("rw: many readers hold together", "[rw]") {
  ServerFixture fx;
  std::vector<std::unique_ptr<CuratorFramework>> cs;
  std::vector<std::unique_ptr<InterProcessReadWriteLock>> locks;
  for (int i = 0; i < 4; ++i) {
    cs.push_back(fx.client());
    locks.push_back(std::make_unique<InterProcessReadWriteLock>(*cs.back(), "/rw/readers"));
  }
  for (auto& l : locks) REQUIRE(l->read_lock().acquire(10s));
  CHECK(count_kind(fx.children("/rw/readers"), "__READ__") == 4);
  for (auto& l : locks) CHECK(l->read_lock().is_owned_by_current_thread());
  for (auto& l : locks) l->read_lock().release();
  CHECK(eventually([&] { return fx.children("/rw/readers").empty(); }));
}

TEST_CASE("rw: a writer excludes readers and writers", "[rw]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  InterProcessReadWriteLock a(*c1, "/rw/excl");
  InterProcessReadWriteLock b(*c2, "/rw/excl");
  a.write_lock().acquire();
  CHECK_FALSE(b.read_lock().acquire(300ms));
  CHECK_FALSE(b.write_lock().acquire(300ms));
  CHECK(fx.children("/rw/excl").size() == 1);  // the timed-out attempts left nothing
  a.write_lock().release();
  REQUIRE(b.read_lock().acquire(10s));
  CHECK_FALSE(a.write_lock().acquire(300ms));  // a reader excludes writers
  CHECK(a.read_lock().acquire(10s));           // but not readers
  a.read_lock().release();
  b.read_lock().release();
  CHECK(eventually([&] { return fx.children("/rw/excl").empty(); }));
}

TEST_CASE("rw: a queued writer is not starved by readers arriving after it", "[rw]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  auto c3 = fx.client();
  InterProcessReadWriteLock r1(*c1, "/rw/fair");
  InterProcessReadWriteLock w(*c2, "/rw/fair");
  InterProcessReadWriteLock r2(*c3, "/rw/fair");
  REQUIRE(r1.read_lock().acquire(10s));
  auto writer = w.write_lock().async_acquire(boost::asio::use_future);
  REQUIRE(eventually([&] { return count_kind(fx.children("/rw/fair"), "__WRIT__") == 1; }));
  // A reader arriving after the queued writer waits behind it, although only readers hold the lock.
  CHECK_FALSE(r2.read_lock().acquire(300ms));
  auto late_reader = r2.read_lock().async_acquire(boost::asio::use_future);
  REQUIRE(eventually([&] { return count_kind(fx.children("/rw/fair"), "__READ__") == 2; }));
  CHECK(writer.wait_for(100ms) == std::future_status::timeout);
  r1.read_lock().release();
  REQUIRE(writer.wait_for(10s) == std::future_status::ready);
  Lease wl = writer.get();
  REQUIRE(wl);
  CHECK(late_reader.wait_for(200ms) == std::future_status::timeout);
  wl.release();
  REQUIRE(late_reader.wait_for(10s) == std::future_status::ready);
  Lease rl = late_reader.get();
  CHECK(rl);
  rl.release();
}

TEST_CASE("rw: an upgrade fails at once with would_deadlock", "[rw]") {
  ServerFixture fx;
  auto c = fx.client();
  InterProcessReadWriteLock lock(*c, "/rw/upgrade");
  lock.read_lock().acquire();
  const auto start = std::chrono::steady_clock::now();
  error_code ec;
  CHECK_FALSE(lock.write_lock().acquire(30s, ec));
  CHECK(ec == client_errc::would_deadlock);
  CHECK(std::chrono::steady_clock::now() - start < 10s);  // not the 30 s timeout
  lock.write_lock().acquire(ec);
  CHECK(ec == client_errc::would_deadlock);
  CHECK_THROWS_AS(lock.write_lock().acquire(), Error);
  CHECK(count_kind(fx.children("/rw/upgrade"), "__WRIT__") == 0);  // nothing was queued
  // Another thread is not upgrading: it simply waits for the reader.
  bool other = true;
  std::thread([&] { other = lock.write_lock().acquire(200ms); }).join();
  CHECK_FALSE(other);
  lock.read_lock().release();
  CHECK(lock.write_lock().acquire(10s));
  lock.write_lock().release();
}

TEST_CASE("rw: downgrade (write, then read, then release write)", "[rw]") {
  ServerFixture fx;
  auto c = fx.client();
  InterProcessReadWriteLock lock(*c, "/rw/down");
  lock.write_lock().acquire();
  const auto write_path = lock.write_lock().lock_path();
  REQUIRE(lock.read_lock().acquire(5s));
  const auto read_path = lock.read_lock().lock_path();
  // CURATOR-621: `_c_<uuid>-__READ__<write sequence>`, a non-sequential ephemeral node.
  const auto write_seq = write_path.substr(write_path.size() - 10);
  CHECK(last_segment(read_path).find("__READ__" + write_seq) != std::string::npos);
  CHECK(last_segment(read_path).rfind("_c_", 0) == 0);
  CHECK(read_path.size() == write_path.size());  // same shape: protection + 8-char name + 10 digits
  const auto st = c->exists(read_path);
  REQUIRE(st);
  CHECK(st->ephemeral_owner == c->session_id());
  lock.write_lock().release();
  CHECK(lock.read_lock().is_owned_by_current_thread());
  lock.read_lock().release();
  CHECK(eventually([&] { return fx.children("/rw/down").empty(); }));
}

TEST_CASE("rw: a contending writer stays out across a downgrade (CURATOR-621)", "[rw]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  InterProcessReadWriteLock lock1(*c1, "/rw/contend");
  InterProcessReadWriteLock lock2(*c2, "/rw/contend");
  lock1.write_lock().acquire();
  std::promise<void> got;
  std::thread t([&] {
    lock2.write_lock().acquire();
    got.set_value();
    lock2.write_lock().release();  // by its owner thread
  });
  auto got_future = got.get_future();
  REQUIRE(eventually([&] { return count_kind(fx.children("/rw/contend"), "__WRIT__") == 2; }));
  REQUIRE(lock1.read_lock().acquire(5s));
  lock1.write_lock().release();
  CHECK(got_future.wait_for(500ms) == std::future_status::timeout);  // Curator checks 20 ms
  lock1.read_lock().release();
  CHECK(got_future.wait_for(10s) == std::future_status::ready);
  t.join();
}

TEST_CASE("rw: a write grant lost with its session does not downgrade: the read queues as any reader",
          "[rw][session]") {
  ServerFixture fx;
  auto c1 = fx.client({.session_timeout = 4s});
  auto c2 = fx.client();
  auto c3 = fx.client();
  InterProcessReadWriteLock a(*c1, "/rw/stale");
  InterProcessReadWriteLock r(*c2, "/rw/stale");
  InterProcessReadWriteLock w(*c3, "/rw/stale");
  a.write_lock().acquire();
  c1->inject_session_expiration();
  REQUIRE(eventually([&] { return a.write_lock().lease_status() == LeaseStatus::lost; }));
  REQUIRE(a.write_lock().is_owned_by_current_thread());  // the thread keeps its hold until it releases
  REQUIRE(c1->block_until_connected(20s));

  // A reader holds; a writer queues behind it and watches it alone (a writer whose only node ahead is a read
  // node is granted on that node's deletion without listing again).
  REQUIRE(r.read_lock().acquire(10s));
  auto wf = w.write_lock().async_acquire(boost::asio::use_future);
  REQUIRE(eventually([&] { return count_kind(fx.children("/rw/stale"), "__WRIT__") == 1; }));

  // The read of the thread that held the lost write grant: before the fix it was granted at once with a node
  // sorted where the old write node was, ahead of the queued writer, which was then granted beside it.
  error_code ec;
  CHECK_FALSE(a.read_lock().acquire(1s, ec));
  CHECK_FALSE(ec);
  CHECK(count_kind(fx.children("/rw/stale"), "__READ__") == 1);  // r's only: the timed-out read left nothing

  r.read_lock().release();
  REQUIRE(wf.wait_for(20s) == std::future_status::ready);
  auto held = wf.get();
  CHECK(held);
  CHECK_FALSE(a.read_lock().acquire(500ms));  // the writer holds now
  held.release();
  CHECK(a.read_lock().acquire(10s));  // queued as a reader, granted once the lock is free
  a.read_lock().release();
  a.write_lock().release(ec);  // the lost grant: its node is long gone
}

TEST_CASE("rw: a downgrade whose write node was deleted fails with lock_lost and leaves nothing", "[rw]") {
  ServerFixture fx;
  auto c = fx.client();
  auto c2 = fx.client();
  InterProcessReadWriteLock a(*c, "/rw/deleted");
  InterProcessReadWriteLock w(*c2, "/rw/deleted");
  a.write_lock().acquire();
  // An administrator deletes the write node. Nobody listens on the grant, so it still reads as held.
  fx.admin->remove(a.write_lock().lock_path());
  REQUIRE(a.write_lock().lease_status() == LeaseStatus::held);
  auto wf = w.write_lock().async_acquire(boost::asio::use_future);
  REQUIRE(wf.wait_for(20s) == std::future_status::ready);  // the lock is free: another writer holds it
  auto held = wf.get();
  error_code ec;
  CHECK_FALSE(a.read_lock().acquire(5s, ec));
  CHECK(ec == client_errc::lock_lost);
  CHECK(count_kind(fx.children("/rw/deleted"), "__READ__") == 0);
  held.release();
  a.write_lock().release(ec);
}

TEST_CASE("rw: another thread cannot read while this one holds the write lock", "[rw]") {
  ServerFixture fx;
  auto c = fx.client();
  InterProcessReadWriteLock lock(*c, "/rw/threads");
  lock.write_lock().acquire();
  bool got = true;
  std::thread([&] { got = lock.read_lock().acquire(500ms); }).join();
  CHECK_FALSE(got);
  // The async read lease belongs to no thread: it waits too.
  auto f = lock.read_lock().async_try_acquire_for(300ms, boost::asio::use_future);
  CHECK_FALSE(f.get());
  lock.write_lock().release();
}

TEST_CASE("rw: participant nodes by kind", "[rw]") {
  ServerFixture fx;
  auto c = fx.client();
  constexpr int readers = 6, writers = 3;
  std::vector<std::unique_ptr<InterProcessReadWriteLock>> rs, ws;
  for (int i = 0; i < readers; ++i) {
    rs.push_back(std::make_unique<InterProcessReadWriteLock>(*c, "/rw/participants"));
    REQUIRE(rs.back()->read_lock().acquire(10s));
  }
  std::vector<std::future<Lease>> queued;
  for (int i = 0; i < writers; ++i) {
    ws.push_back(std::make_unique<InterProcessReadWriteLock>(*c, "/rw/participants"));
    queued.push_back(ws.back()->write_lock().async_acquire(boost::asio::use_future));
  }
  REQUIRE(eventually([&] { return fx.children("/rw/participants").size() == readers + writers; }));
  const auto r = rs.front()->read_lock().participant_nodes();
  const auto w = rs.front()->write_lock().participant_nodes();
  CHECK(r.size() == readers);
  CHECK(w.size() == writers);
  for (const auto& p : r) CHECK(p.find("/rw/participants/_c_") == 0);
  for (const auto& p : r) CHECK(p.find("__READ__") != std::string::npos);
  for (const auto& p : w) CHECK(p.find("__WRIT__") != std::string::npos);
  // The asynchronous twins list the same, filtered the same way.
  CHECK(rs.front()->read_lock().async_participant_nodes(boost::asio::use_future).get() == r);
  CHECK(rs.front()->write_lock().async_participant_nodes(boost::asio::use_future).get() == w);
  CHECK(std::is_sorted(w.begin(), w.end(), [](const std::string& a, const std::string& b) {
    return a.substr(a.size() - 10) < b.substr(b.size() - 10);
  }));
  for (auto& l : rs) l->read_lock().release();
  for (auto& f : queued) {
    REQUIRE(f.wait_for(10s) == std::future_status::ready);
    f.get().release();
  }
}

TEST_CASE("rw: node data is the lock data", "[rw]") {
  ServerFixture fx;
  auto c = fx.client();
  const std::string data("\x01\x02\x03\x04", 4);
  std::string copy = data;
  InterProcessReadWriteLock lock(*c, "/rw/data", copy);
  copy[0] = 'x';  // copied, as Curator's defensive copy
  lock.write_lock().acquire();
  auto children = fx.children("/rw/data");
  REQUIRE(children.size() == 1);
  CHECK(fx.admin->get_data("/rw/data/" + children[0]).data == data);
  lock.write_lock().release();
  lock.read_lock().acquire();
  children = fx.children("/rw/data");
  REQUIRE(children.size() == 1);
  CHECK(fx.admin->get_data("/rw/data/" + children[0]).data == data);
  lock.read_lock().release();
}

TEST_CASE("rw: reentrancy is per thread and per kind, and the locks are InterProcessLocks", "[rw]") {
  ServerFixture fx;
  auto c = fx.client();
  InterProcessReadWriteLock lock(*c, "/rw/reentrant");
  InterProcessLock& w = lock.write_lock();
  w.acquire();
  w.acquire();
  lock.read_lock().acquire();
  lock.read_lock().acquire();
  CHECK(fx.children("/rw/reentrant").size() == 2);
  w.release();
  CHECK(lock.write_lock().is_owned_by_current_thread());
  w.release();
  CHECK_FALSE(lock.write_lock().is_owned_by_current_thread());
  lock.read_lock().release();
  CHECK(lock.read_lock().is_owned_by_current_thread());
  lock.read_lock().release();
  CHECK_FALSE(lock.read_lock().is_acquired_in_this_process());
}

TEST_CASE("rw: readers share, writers exclude, under contention (Curator's testBasic)", "[rw]") {
  ServerFixture fx;
  constexpr int clients = 4, iterations = 25;
  std::atomic<int> readers{0}, writers{0}, reads{0}, writes{0}, violations{0}, max_readers{0};
  std::vector<std::thread> ts;
  std::vector<std::unique_ptr<CuratorFramework>> cs;
  for (int i = 0; i < clients; ++i) cs.push_back(fx.client());
  for (int i = 0; i < clients; ++i)
    ts.emplace_back([&, i] {
      InterProcessReadWriteLock lock(*cs[i], "/rw/basic");
      std::mt19937 rng(static_cast<unsigned>(i) * 7919u);
      for (int k = 0; k < iterations; ++k) {
        const bool write = rng() % 5 == 0;
        InterProcessMutex& m = write ? static_cast<InterProcessMutex&>(lock.write_lock())
                                     : static_cast<InterProcessMutex&>(lock.read_lock());
        if (!m.acquire(20s)) {
          ++violations;
          continue;
        }
        if (write) {
          if (++writers != 1 || readers != 0) ++violations;
          ++writes;
        } else {
          int now = ++readers;
          if (writers != 0) ++violations;
          int prev = max_readers.load();
          while (now > prev && !max_readers.compare_exchange_weak(prev, now)) {
          }
          ++reads;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1 + rng() % 9));
        (write ? writers : readers)--;
        m.release();
      }
    });
  for (auto& t : ts) t.join();
  CHECK(violations == 0);
  CHECK(reads > 0);
  CHECK(writes > 0);
  WARN("max concurrent readers: " << max_readers.load());
}

TEST_CASE("rw: a cancelled async read leaves no node", "[rw]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  InterProcessReadWriteLock a(*c1, "/rw/cancel");
  InterProcessReadWriteLock b(*c2, "/rw/cancel");
  a.write_lock().acquire();
  boost::asio::cancellation_signal sig;
  auto f =
      b.read_lock().async_acquire(boost::asio::bind_cancellation_slot(sig.slot(), boost::asio::use_future));
  REQUIRE(eventually([&] { return fx.children("/rw/cancel").size() == 2; }));
  sig.emit(boost::asio::cancellation_type::terminal);
  CHECK_THROWS(f.get());
  CHECK(eventually([&] { return fx.children("/rw/cancel").size() == 1; }));
  a.write_lock().release();
}

// Interop with Java Curator 5.4
// ------------------------------------------------------------------------------

TEST_CASE("rw interop: exclusion holds between Java Curator and zkrecipes", "[rw][interop]") {
  if (!curator_peer_or_skip()) return;
  ServerFixture fx;
  auto c = fx.client();
  InterProcessReadWriteLock lock(*c, "/rw/interop");
  {
    CuratorPeer java_writer(fx.server.connect_string(), "write", {"/rw/interop"});
    auto a = java_writer.call("acquire");
    REQUIRE(a.rfind("acquired /rw/interop/_c_", 0) == 0);
    CHECK(a.find("__WRIT__") != std::string::npos);
    CHECK_FALSE(lock.read_lock().acquire(500ms));
    CHECK_FALSE(lock.write_lock().acquire(500ms));
    // A C++ reader queued behind the Java writer gets in once the writer leaves.
    auto reader = lock.read_lock().async_acquire(boost::asio::use_future);
    REQUIRE(eventually([&] { return fx.children("/rw/interop").size() == 2; }));
    CHECK(java_writer.call("release") == "released");
    REQUIRE(reader.wait_for(10s) == std::future_status::ready);
    Lease rl = reader.get();
    REQUIRE(rl);
    // The Java writer now waits for the C++ reader.
    CHECK(java_writer.call("acquire 500") == "timeout");
    rl.release();
    CHECK(java_writer.call("acquire 10000").rfind("acquired", 0) == 0);
    CHECK(java_writer.call("release") == "released");
  }
  {
    // Readers of both languages share the lock; a C++ writer waits for the Java reader.
    CuratorPeer java_reader(fx.server.connect_string(), "read", {"/rw/interop"});
    REQUIRE(java_reader.call("acquire").rfind("acquired", 0) == 0);
    REQUIRE(lock.read_lock().acquire(5s));
    lock.read_lock().release();
    CHECK_FALSE(lock.write_lock().acquire(500ms));
    CHECK(java_reader.call("release") == "released");
    REQUIRE(lock.write_lock().acquire(10s));
    // zkrecipes' downgrade node keeps a queued Java writer out.
    CuratorPeer java_writer(fx.server.connect_string(), "write", {"/rw/interop"});
    java_writer.send("acquire");
    REQUIRE(eventually([&] { return count_kind(fx.children("/rw/interop"), "__WRIT__") == 2; }));
    REQUIRE(lock.read_lock().acquire(5s));
    lock.write_lock().release();
    CHECK(java_writer.answer(700ms).empty());  // still waiting
    lock.read_lock().release();
    CHECK(java_writer.answer(10s).rfind("acquired", 0) == 0);
    CHECK(java_writer.call("release") == "released");
  }
}
