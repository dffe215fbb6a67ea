// Mixed Java Curator (test/interop/java/CuratorPeer.java) and C++ contenders on the same lock paths, judged
// by the independent checker (checker.hpp): exclusion across languages, fencing tokens (czxids) increasing in
// grant order, FIFO across languages, and each side taking over when the other side's session expires.
// (Read-write and multi-lock interop live in read_write_lock_test.cpp and multi_lock_interop_test.cpp.)
// Skipped with a WARN when the Java peer cannot run.

#include <unistd.h>

#include <atomic>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <sstream>
#include <thread>

#include "checker.hpp"
#include "curator_peer.hpp"
#include "fixture.hpp"
#include "interop_support.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

/// Two C++ clients on `fx`'s server and one Java peer on `recipe`, 25 Java rounds and 20 C++ rounds each.
template <class Lock>
void mixed_contention_on(const std::string& recipe, const std::string& path) {
  ServerFixture fx;
  MixedContention m{.name = "mixed-" + recipe,
                    .connect = fx.server.connect_string(),
                    .recipe = recipe,
                    .path = path,
                    .java = {},
                    .cxx_client = [&](int) { return fx.client(); }};
  (void)mixed_contention<Lock>(m);
}

/// The mutex over `StandardLockDriver` (no pre-watch; the default has it), as a type `cxx_rounds` can
/// construct.
struct StandardMutex : InterProcessMutex {
  StandardMutex(CuratorFramework& c, const std::string& path)
      : InterProcessMutex(c, path, std::make_shared<StandardLockDriver>()) {}
};

}  // namespace

TEST_CASE("interop mixed: Java and C++ contenders on one InterProcessMutex exclude each other", "[interop]") {
  if (!curator_peer_or_skip()) return;
  mixed_contention_on<InterProcessMutex>("mutex", "/interop/mixed/mutex");
}

TEST_CASE("interop mixed: Java contenders and C++ ones on StandardLockDriver exclude each other",
          "[interop]") {
  if (!curator_peer_or_skip()) return;
  mixed_contention_on<StandardMutex>("mutex", "/interop/mixed/mutex-standard");
}

TEST_CASE("interop mixed: Java and C++ contenders on one InterProcessSemaphoreMutex exclude each other",
          "[interop]") {
  if (!curator_peer_or_skip()) return;
  mixed_contention_on<InterProcessSemaphoreMutex>("semaphore-mutex", "/interop/mixed/semaphore-mutex");
}

TEST_CASE("interop mixed: FIFO across languages (Java, C++, Java queued behind a holder)", "[interop]") {
  if (!curator_peer_or_skip()) return;
  ServerFixture fx;
  GrantChecker checker;
  const std::string path = "/interop/mixed/fifo";
  // With the pre-watch (the default driver), the C++ waiter (third in line) also watches the holder and lists
  // again once it goes, while Java's first waiter holds: its grant must still wait for that waiter's release.
  // StandardLockDriver: Curator's way (re-list after the wake-up).
  const bool prewatch = GENERATE(false, true);
  CAPTURE(prewatch);
  auto hc = fx.client();
  auto wc = fx.client();
  InterProcessMutex holder(*hc, path);
  InterProcessMutex waiter(
      *wc, path, prewatch ? std::shared_ptr<const LockDriver>() : std::make_shared<StandardLockDriver>());
  CuratorPeer java_a(fx.server.connect_string(), "mutex", {path});
  CuratorPeer java_b(fx.server.connect_string(), "mutex", {path});

  REQUIRE(holder.acquire(30s));
  auto hid = checker.begin(path, "cxx-holder", GrantChecker::Kind::exclusive, holder.fencing_token());
  java_a.send("acquire");
  REQUIRE(eventually([&] { return fx.children(path).size() == 2; }));
  auto w = waiter.async_acquire(boost::asio::use_future);
  REQUIRE(eventually([&] { return fx.children(path).size() == 3; }));
  java_b.send("acquire");
  REQUIRE(eventually([&] { return fx.children(path).size() == 4; }));

  std::vector<std::string> order;
  checker.end(hid);
  holder.release();

  auto a = java_a.answer(30s);
  REQUIRE(a.rfind("acquired ", 0) == 0);
  order.push_back("java-a");
  auto aid = checker.begin(path, "java-a", GrantChecker::Kind::exclusive, czxid_of(*fx.admin, a.substr(9)));
  CHECK(w.wait_for(300ms) == std::future_status::timeout);
  CHECK(java_b.answer(300ms).empty());
  checker.end(aid);
  REQUIRE(java_a.call("release") == "released");

  REQUIRE(w.wait_for(30s) == std::future_status::ready);
  Lease lease = w.get();
  order.push_back("cxx-waiter");
  auto wid = checker.begin(path, "cxx-waiter", GrantChecker::Kind::exclusive, lease.fencing_token());
  CHECK(java_b.answer(300ms).empty());
  checker.end(wid);
  lease.release();

  auto b = java_b.answer(30s);
  REQUIRE(b.rfind("acquired ", 0) == 0);
  order.push_back("java-b");
  auto bid = checker.begin(path, "java-b", GrantChecker::Kind::exclusive, czxid_of(*fx.admin, b.substr(9)));
  checker.end(bid);
  REQUIRE(java_b.call("release") == "released");

  CHECK(order == std::vector<std::string>{"java-a", "cxx-waiter", "java-b"});
  const auto v = checker.report("interop fifo:");
  CHECK(v.empty());
  CHECK(eventually([&] { return fx.children(path).empty(); }));
}

TEST_CASE("interop mixed: each side acquires once the other side's session expires", "[interop]") {
  if (!curator_peer_or_skip()) return;
  ServerFixture fx;
  GrantChecker checker;
  const std::string path = "/interop/mixed/expiry";
  auto cc = fx.client();
  CuratorPeer java(fx.server.connect_string(), "mutex", {path});

  // Java holds, C++ waits; the Java session expires: C++ gets the lock, Java reports LOST.
  {
    auto a = java.call("acquire");
    REQUIRE(a.rfind("acquired ", 0) == 0);
    auto jid = checker.begin(path, "java", GrantChecker::Kind::exclusive, czxid_of(*fx.admin, a.substr(9)));
    REQUIRE(checker.fenced_write(path, czxid_of(*fx.admin, a.substr(9))));
    InterProcessMutex m(*cc, path);
    auto f = m.async_acquire(boost::asio::use_future);
    CHECK(f.wait_for(300ms) == std::future_status::timeout);
    checker.fault("expire Java session");
    const auto t = GrantChecker::Clock::now();
    REQUIRE(java.call("expire") == "expired");
    checker.mark_lost(jid, t);
    REQUIRE(f.wait_for(30s) == std::future_status::ready);
    Lease lease = f.get();
    auto cid = checker.begin(path, "cxx", GrantChecker::Kind::exclusive, lease.fencing_token());
    CHECK(checker.fenced_write(path, lease.fencing_token()));
    CHECK_FALSE(java.wait_async("state LOST", 30s).empty());
    CHECK_FALSE(checker.fenced_write(path, checker.history()[jid].token));  // Java's late write is fenced
    checker.end(jid);
    // Curator's release after a lost session fails or is a no-op; either way the peer answers.
    CHECK_FALSE(java.call("release").empty());
    checker.end(cid);
    lease.release();
  }
  // C++ holds, Java waits; the C++ session expires: Java gets the lock, the C++ lease reports lost.
  {
    InterProcessMutex m(*cc, path);
    REQUIRE(m.acquire(30s));
    auto cid = checker.begin(path, "cxx", GrantChecker::Kind::exclusive, m.fencing_token());
    const auto token = m.fencing_token();
    REQUIRE(checker.fenced_write(path, token));
    java.send("acquire");
    CHECK(java.answer(300ms).empty());
    checker.fault("expire C++ session");
    const auto t = GrantChecker::Clock::now();
    cc->inject_session_expiration();
    checker.mark_lost(cid, t);
    auto a = java.answer(30s);
    REQUIRE(a.rfind("acquired ", 0) == 0);
    const auto jtoken = czxid_of(*fx.admin, a.substr(9));
    auto jid = checker.begin(path, "java", GrantChecker::Kind::exclusive, jtoken);
    CHECK(checker.fenced_write(path, jtoken));
    CHECK(eventually([&] { return m.lease_status() == LeaseStatus::lost; }, 15s));
    CHECK_FALSE(checker.fenced_write(path, token));  // the C++ late write is fenced
    checker.end(cid);
    error_code ec;
    m.release(ec);
    CHECK_FALSE(ec);
    checker.end(jid);
    REQUIRE(java.call("release") == "released");
  }
  const auto v = checker.report("interop expiry:");
  CHECK(v.empty());
  CHECK(checker.faults() == 2);
  CHECK(eventually([&] { return fx.children(path).empty(); }));
}
