// Interop of the shared count, the distributed atomic long and value with Java Curator 5.4
// (test/interop/java/ CounterPeer.java) on the same paths: a count set on one side is seen on the other, and
// increments made at once from Java and from C++ (optimistic, and promoted to the lock) lose nothing and
// double nothing, and a value's bytes written on one side are read and compared byte for byte on the other.
// A semaphore on a count that Java changes is obeyed by C++ semaphores and by a Java one on the same path.
#include <algorithm>
#include <atomic>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <zkr/recipes/distributed_atomic_number.hpp>
#include <zkr/recipes/distributed_atomic_value.hpp>
#include <zkr/recipes/inter_process_semaphore_v2.hpp>
#include <zkr/recipes/shared_count.hpp>

#include "curator_peer.hpp"
#include "fixture.hpp"
#include "interop_support.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

CuratorPeer::Options counter_peer(std::vector<std::string> extra = {}) {
  CuratorPeer::Options o;
  o.main_class = "CounterPeer";
  o.extra = std::move(extra);
  return o;
}

/// Java increments `java_k` times while two C++ clients increment `cxx_k` times each; returns the final
/// value.
std::int64_t concurrent_increments(ServerFixture& fx, const std::string& path, CuratorPeer& java, int java_k,
                                   int cxx_k, RetryPolicyPtr retry, std::optional<PromotedToLock> lock) {
  auto c1 = fx.client();
  auto c2 = fx.client();
  java.send("incr " + std::to_string(java_k));
  std::atomic<int> failed{0};
  std::vector<std::thread> ts;
  for (auto* c : {c1.get(), c2.get()})
    ts.emplace_back([&, c] {
      DistributedAtomicLong n(*c, path, retry, lock);
      for (int i = 0; i < cxx_k; ++i) {
        error_code ec;
        if (!n.increment(ec).succeeded || ec) ++failed;
      }
    });
  for (auto& t : ts) t.join();
  CHECK(java.answer(120s) == "done " + std::to_string(java_k));
  CHECK(failed == 0);
  return DistributedAtomicLong(*fx.admin, path, retry).get().post_value;
}

/// The history of one semaphore on a shared count, judged as Curator's semaphore promises: a lease is
/// granted only while the leases held, its own included, are no more than the count in force (a lower count
/// revokes nothing: it only stops new grants). Each holder reports when it asked (the acquire call began),
/// when it was granted (right after the acquire returned) and when it gave the lease back (right before the
/// release), so a recorded hold lies inside the real one. A count is in force from when its write was sent
/// until every follower had seen the next count; a grant may have been decided on any count in force between
/// its ask and its grant.
class LeaseCountChecker {
 public:
  using Clock = std::chrono::steady_clock;

  /// `n` written by someone from `sent` on, seen by every follower at `seen`.
  void count_set(int n, Clock::time_point sent, Clock::time_point seen) {
    std::lock_guard lk(m_);
    counts_.push_back({n, sent, seen});
  }
  std::size_t begin(const std::string& holder, Clock::time_point asked) {
    std::lock_guard lk(m_);
    holds_.push_back({holder, asked, Clock::now(), Clock::time_point::max()});
    return holds_.size() - 1;
  }
  void end(std::size_t id) {
    std::lock_guard lk(m_);
    holds_[id].end = Clock::now();
  }
  /// The Java peer's `run` log: TRY <epochNanos> / START <epochNanos> <czxid> java / END <epochNanos> java.
  std::size_t add_java_log(const std::string& file) {
    std::ifstream in(file);
    std::string line, kind;
    std::int64_t t = 0;
    std::size_t n = 0;
    Hold h{"java", {}, {}, {}};
    while (std::getline(in, line)) {
      std::istringstream(line) >> kind >> t;
      if (kind == "TRY") h.asked = to_steady(t);
      if (kind == "START") h.start = to_steady(t);
      if (kind != "END") continue;
      h.end = to_steady(t);
      std::lock_guard lk(m_);
      holds_.push_back(h);
      ++n;
    }
    return n;
  }

  /// One line per grant made while the holders, its own lease included, were more than every count in force
  /// between its ask and its grant.
  std::vector<std::string> violations() const {
    std::lock_guard lk(m_);
    std::vector<std::string> out;
    for (const auto& g : holds_) {
      int held = 0;
      for (const auto& h : holds_)
        if (h.start <= g.start && g.start < h.end) ++held;
      const int allowed = allowed_between(g.asked, g.start);
      if (held > allowed)
        out.push_back(g.holder + " granted with " + std::to_string(held) +
                      " leases held (its own included) " + "where the count in force allowed " +
                      std::to_string(allowed));
    }
    return out;
  }
  /// Grants per holder name.
  std::size_t grants_of(const std::string& holder) const {
    std::lock_guard lk(m_);
    return std::size_t(
        std::count_if(holds_.begin(), holds_.end(), [&](auto& h) { return h.holder == holder; }));
  }
  std::size_t grants() const {
    std::lock_guard lk(m_);
    return holds_.size();
  }

 private:
  struct Count {
    int n;
    Clock::time_point sent, seen;
  };
  struct Hold {
    std::string holder;
    Clock::time_point asked, start, end;
  };
  /// The largest count that may have been in force at some time in [from, to]: written before `to`, and not
  /// yet replaced for every follower at `from`.
  int allowed_between(Clock::time_point from, Clock::time_point to) const {
    int allowed = 0;
    for (std::size_t i = 0; i < counts_.size(); ++i) {
      const bool replaced = i + 1 < counts_.size() && counts_[i + 1].seen <= from;
      if (counts_[i].sent <= to && !replaced) allowed = std::max(allowed, counts_[i].n);
    }
    return allowed;
  }
  Clock::time_point to_steady(std::int64_t epoch_nanos) const {
    const auto t =
        std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
            std::chrono::nanoseconds(epoch_nanos)));
    return steady_base_ + std::chrono::duration_cast<Clock::duration>(t - system_base_);
  }
  mutable std::mutex m_;
  std::vector<Count> counts_;
  std::vector<Hold> holds_;
  const Clock::time_point steady_base_ = Clock::now();
  const std::chrono::system_clock::time_point system_base_ = std::chrono::system_clock::now();
};

/// A C++ follower of the count: its own client, `SharedCount` and semaphore on it.
struct CountFollower {
  CountFollower(ServerFixture& fx, const std::string& count_path, const std::string& sem_path)
      : client(fx.client()), count(*client, count_path, 1) {
    count.start();
    sem = std::make_unique<InterProcessSemaphoreV2>(*client, sem_path, count);
  }
  std::unique_ptr<CuratorFramework> client;
  SharedCount count;
  std::unique_ptr<InterProcessSemaphoreV2> sem;
};

}  // namespace

TEST_CASE_METHOD(ServerFixture, "counters interop: Java Curator and C++ share a count and a counter",
                 "[counters][interop]") {
  if (!curator_peer_or_skip()) return;
  // A count: set on either side, seen on the other (4 bytes big-endian both ways).
  CuratorPeer java_count(server.connect_string(), "count", {"/ic/count"}, counter_peer());
  auto c = client();
  SharedCount count(*c, "/ic/count", 5);
  count.start();
  CHECK(count.count() == 0);  // Java's seed: it created the node first
  CHECK(java_count.call("set 41") == "ok");
  CHECK(eventually([&] { return count.count() == 41; }));
  count.set_count(-7);
  CHECK(java_count.call("wait -7") == "value -7");
  CHECK(count.try_set_count(count.versioned_count(), 1 << 20));
  CHECK(java_count.call("wait 1048576") == "value 1048576");

  // A counter, optimistic on both sides.
  constexpr int java_k = 60, cxx_k = 30;
  CuratorPeer java_long(server.connect_string(), "long", {"/ic/long"}, counter_peer());
  CHECK(concurrent_increments(*this, "/ic/long", java_long, java_k, cxx_k,
                              std::make_shared<RetryNTimes>(1000, Millis(1)),
                              std::nullopt) == java_k + 2 * cxx_k);
  CHECK(java_long.call("get") == "value " + std::to_string(java_k + 2 * cxx_k));

  // Promoted to one lock on both sides (the C++ writers promote at once).
  CuratorPeer java_promoted(server.connect_string(), "long", {"/ic/plong"},
                            counter_peer({"--lock", "/ic/lock"}));
  CHECK(concurrent_increments(
            *this, "/ic/plong", java_promoted, java_k, cxx_k, std::make_shared<RetryNTimes>(0, Millis(0)),
            PromotedToLock{"/ic/lock", 60s, std::make_shared<RetryNTimes>(1000, Millis(1))}) ==
        java_k + 2 * cxx_k);
  CHECK(java_promoted.call("get") == "value " + std::to_string(java_k + 2 * cxx_k));
}

TEST_CASE_METHOD(ServerFixture, "counters interop: Java Curator and C++ share a byte value",
                 "[counters][interop]") {
  if (!curator_peer_or_skip()) return;
  auto c = client();
  auto retry = std::make_shared<RetryNTimes>(10, Millis(1));
  DistributedAtomicValue value(*c, "/iv/value", retry);
  CuratorPeer java(server.connect_string(), "value", {"/iv/value"}, counter_peer());
  CHECK(java.call("get") == "value -");  // missing: Java's null, our empty
  CHECK(value.get().post_value.empty());

  // Java writes, C++ reads and compares byte for byte (a zero byte and a high bit included).
  CHECK(java.call("set 00ff4100") == "ok");
  CHECK(value.get().post_value == std::string("\x00\xff\x41\x00", 4));
  CHECK_FALSE(value.compare_and_set(std::string("\x00\xff\x41", 3), "x").succeeded);
  auto swapped = value.compare_and_set(std::string("\x00\xff\x41\x00", 4), "C++");
  CHECK(swapped.succeeded);
  CHECK(swapped.pre_value == std::string("\x00\xff\x41\x00", 4));

  // C++ writes, Java reads and compares.
  CHECK(java.call("get") == "value 432b2b");
  CHECK(java.call("cas 43 6a") == "cas false");
  CHECK(java.call("cas 432b2b 6a617661") == "cas true");
  CHECK(value.get().post_value == "java");
  CHECK(value.try_set("").succeeded);
  CHECK(java.call("get") == "value -");

  // A Java long read as a value: its 8 bytes, big-endian.
  CuratorPeer java_long(server.connect_string(), "long", {"/iv/long"}, counter_peer());
  CHECK(java_long.call("set 258") == "ok");
  CHECK(DistributedAtomicValue(*c, "/iv/long", retry).get().post_value ==
        std::string("\0\0\0\0\0\0\x01\x02", 8));
}

TEST_CASE_METHOD(ServerFixture, "counters interop: a semaphore whose size Java changes is obeyed by C++",
                 "[counters][interop][semaphore]") {
  if (!curator_peer_or_skip()) return;
  const std::string count_path = "/isc/count", sem_path = "/isc/semaphore";
  CuratorPeer java_count(server.connect_string(), "count", {count_path}, counter_peer());
  std::vector<std::unique_ptr<CountFollower>> cxx;
  for (int i = 0; i < 4; ++i) cxx.push_back(std::make_unique<CountFollower>(*this, count_path, sem_path));
  // Java sets the count; every C++ semaphore follows it (the lag: a watch event and a read).
  const auto java_sets = [&](int n) {
    REQUIRE(java_count.call("set " + std::to_string(n)) == "ok");
    REQUIRE(eventually([&] {
      return std::all_of(cxx.begin(), cxx.end(), [&](auto& f) { return f->sem->max_leases() == n; });
    }));
  };
  const auto held = [&] { return cxx[0]->sem->participant_nodes().size(); };

  // Count 2: two C++ clients hold, two wait.
  java_sets(2);
  Lease l0 = cxx[0]->sem->acquire(30s);
  Lease l1 = cxx[1]->sem->acquire(30s);
  REQUIRE(l0);
  REQUIRE(l1);
  auto f2 = cxx[2]->sem->async_acquire(boost::asio::use_future);
  auto f3 = cxx[3]->sem->async_acquire(boost::asio::use_future);
  // One waiter has made its lease node and waits for a slot, the other waits for the internal mutex.
  CHECK(eventually([&] { return held() == 3; }));
  CHECK(f2.wait_for(300ms) == std::future_status::timeout);
  CHECK(f3.wait_for(0ms) == std::future_status::timeout);

  // Java raises it to 4: both waiters get the new leases.
  java_sets(4);
  REQUIRE(f2.wait_for(30s) == std::future_status::ready);
  REQUIRE(f3.wait_for(30s) == std::future_status::ready);
  Lease l2 = f2.get(), l3 = f3.get();
  CHECK(held() == 4);

  // Java lowers it to 1: no lease is revoked, and no new one is granted until the holders are gone.
  java_sets(1);
  CHECK(held() == 4);
  for (auto* l : {&l0, &l1, &l2, &l3}) CHECK(l->status() == LeaseStatus::held);
  auto f4 = cxx[0]->sem->async_acquire(boost::asio::use_future);
  for (auto* l : {&l3, &l2, &l1}) {
    CHECK(f4.wait_for(300ms) == std::future_status::timeout);
    l->release();
  }
  CHECK(f4.wait_for(300ms) == std::future_status::timeout);  // one still held: the count is full
  l0.release();
  REQUIRE(f4.wait_for(30s) == std::future_status::ready);
  Lease l4 = f4.get();
  CHECK(held() == 1);
  l4.release();
}

TEST_CASE_METHOD(ServerFixture,
                 "counters interop: Java and C++ semaphores on one count that Java changes stay within it",
                 "[counters][interop][semaphore]") {
  if (!curator_peer_or_skip()) return;
  const std::string count_path = "/isc/mixed-count", sem_path = "/isc/mixed-semaphore";
  CuratorPeer java_count(server.connect_string(), "count", {count_path}, counter_peer());
  REQUIRE(java_count.call("set 2") == "ok");
  CuratorPeer java_sem(server.connect_string(), "count", {count_path},
                       counter_peer({"--semaphore", sem_path}));
  std::vector<std::unique_ptr<CountFollower>> cxx;
  for (int i = 0; i < 3; ++i) cxx.push_back(std::make_unique<CountFollower>(*this, count_path, sem_path));
  LeaseCountChecker checker;
  // A count is replaced once every follower, Java's semaphore peer included, has seen the next one. The Java
  // peer says when its SharedCount has it; its semaphore's listener runs right after, on the same thread:
  // 100 ms more covers that.
  const auto java_sets = [&](int n) {
    const auto sent = LeaseCountChecker::Clock::now();
    REQUIRE(java_count.call("set " + std::to_string(n)) == "ok");
    REQUIRE(eventually([&] {
      return std::all_of(cxx.begin(), cxx.end(), [&](auto& f) { return f->sem->max_leases() == n; });
    }));
    REQUIRE(java_sem.call("wait " + std::to_string(n)) == "value " + std::to_string(n));
    std::this_thread::sleep_for(100ms);
    checker.count_set(n, sent, LeaseCountChecker::Clock::now());
  };
  java_sets(2);

  const std::string log = temp_log("zkr-interop-semaphore-count", "java");
  REQUIRE(java_sem.call("run 20000 " + log) == "running");
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  std::vector<std::thread> ts;
  for (std::size_t i = 0; i < cxx.size(); ++i)
    ts.emplace_back([&, i] {
      const std::string name = "cxx-" + std::to_string(i);
      while (!stop) {
        const auto asked = LeaseCountChecker::Clock::now();
        error_code ec;
        Lease l = cxx[i]->sem->acquire(200ms, ec);
        if (ec) ++failures;
        if (!l) continue;
        const auto id = checker.begin(name, asked);
        std::this_thread::sleep_for(20ms);
        checker.end(id);
        l.release();
      }
    });
  // Up, down below the holders, up, down: each count for two seconds of contention.
  for (int n : {4, 1, 3, 1, 2}) {
    std::this_thread::sleep_for(2s);
    java_sets(n);
  }
  std::this_thread::sleep_for(2s);
  stop = true;
  for (auto& t : ts) t.join();
  const auto stopped = java_sem.call("stop", 60s);
  REQUIRE(stopped.rfind("stopped ", 0) == 0);
  const auto java_grants = checker.add_java_log(log);
  CHECK(std::to_string(java_grants) == stopped.substr(8));
  std::filesystem::remove(log);

  const auto v = checker.violations();
  for (const auto& line : v) UNSCOPED_INFO(line);
  CHECK(v.empty());
  WARN("semaphore on a count: " << checker.grants() << " grants (" << java_grants << " Java), " << v.size()
                                << " violations");
  CHECK(java_grants > 0);
  for (std::size_t i = 0; i < cxx.size(); ++i) CHECK(checker.grants_of("cxx-" + std::to_string(i)) > 0);
  CHECK(failures == 0);
  CHECK(eventually([&] { return cxx[0]->sem->participant_nodes().empty(); }));
}
