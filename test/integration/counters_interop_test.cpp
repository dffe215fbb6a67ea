// Interop of the shared count, the distributed atomic long and value with Java Curator 5.4
// (test/interop/java/ CounterPeer.java) on the same paths: a count set on one side is seen on the other, and
// increments made at once from Java and from C++ (optimistic, and promoted to the lock) lose nothing and
// double nothing, and a value's bytes written on one side are read and compared byte for byte on the other.
#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>
#include <vector>
#include <zkr/recipes/distributed_atomic_number.hpp>
#include <zkr/recipes/distributed_atomic_value.hpp>
#include <zkr/recipes/shared_count.hpp>

#include "curator_peer.hpp"
#include "fixture.hpp"

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
