// Integration tests of the shared values and counters against a real server: SharedCount's compare-and-set,
// listeners and recovery after a session expiry; the distributed atomic numbers' operations; their byte
// layouts read back raw; data of the wrong size as a typed error; and concurrent increments from two clients
// (optimistic and promoted to the lock) that lose nothing; the distributed atomic value's bytes, and its
// try_set racing from two clients under the promoted lock.
#include <algorithm>
#include <atomic>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <future>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <zkr/recipes/cached_atomic_number.hpp>
#include <zkr/recipes/distributed_atomic_number.hpp>
#include <zkr/recipes/distributed_atomic_value.hpp>
#include <zkr/recipes/inter_process_semaphore_v2.hpp>
#include <zkr/recipes/shared_count.hpp>

#include "fixture.hpp"

namespace {

using namespace zkr;
using namespace zkr::test;

std::string bytes(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}

/// The counts a listener heard, in order.
struct Heard {
  std::mutex m;
  std::vector<std::int32_t> counts;
  bool saw(std::int32_t n) {
    std::lock_guard lk(m);
    return std::find(counts.begin(), counts.end(), n) != counts.end();
  }
};

}  // namespace

TEST_CASE_METHOD(ServerFixture, "shared count: seed, compare-and-set, listeners, layout, session expiry",
                 "[counters]") {
  auto c1 = client();
  auto c2 = client();
  SharedCount a(*c1, "/sc/parent/count", 7);
  SharedCount b(*c2, "/sc/parent/count", 99);
  CHECK(a.count() == 7);  // the seed, before any read
  a.start();
  b.start();
  CHECK(b.count() == 7);  // the first creator's seed wins
  CHECK(admin->get_data("/sc/parent/count").data == bytes({0, 0, 0, 7}));

  Heard heard;
  b.add_listener({[&](std::int32_t n) {
                    std::lock_guard lk(heard.m);
                    heard.counts.push_back(n);
                  },
                  {}});
  a.set_count(-2);
  CHECK(eventually([&] { return b.count() == -2 && heard.saw(-2); }));
  CHECK(admin->get_data("/sc/parent/count").data == bytes({0xff, 0xff, 0xff, 0xfe}));

  // Compare-and-set: a version someone else has moved past fails, the fresh one succeeds.
  const auto seen = a.versioned_count();
  CHECK(seen.value == -2);
  admin->set_data("/sc/parent/count", bytes({0, 0, 1, 0}));  // 256, written by someone else
  CHECK_FALSE(a.try_set_count(seen, 1000));
  CHECK(eventually([&] { return a.count() == 256; }));
  CHECK(a.try_set_count(a.versioned_count(), 1000));
  CHECK(eventually([&] { return b.count() == 1000 && heard.saw(1000); }));
  CHECK(admin->get_data("/sc/parent/count").data == bytes({0, 0, 3, 0xe8}));

  // The async twins.
  a.async_set_count(5, boost::asio::use_future).get();
  CHECK(a.async_try_set_count(a.versioned_count(), 6, boost::asio::use_future).get());
  CHECK_FALSE(a.async_try_set_count({0, 6}, 7, boost::asio::use_future).get());

  // Bytes of another size, written by someone else: a typed error, never a number.
  admin->set_data("/sc/parent/count", "abc");
  error_code ec;
  CHECK(eventually([&] {
    (void)b.count(ec);
    return ec == client_errc::corrupted_data;
  }));
  CHECK_THROWS_MATCHES(b.count(), Error, Catch::Predicate<Error>([](const Error& e) {
                         return e.code() == client_errc::corrupted_data;
                       }));
  b.set_count(11);
  CHECK(eventually([&] { return heard.saw(11) && b.count(ec) == 11 && !ec; }));

  // A session expiry: the value is read again once a new session is up, changes made meanwhile included.
  c1->inject_session_expiration();
  admin->set_data("/sc/parent/count", bytes({0, 0, 0, 12}));
  CHECK(eventually([&] { return a.count(ec) == 12 && !ec; }));
  a.set_count(13);
  CHECK(eventually([&] { return b.count(ec) == 13; }));

  a.close();
  CHECK_THROWS(a.set_count(1));
  CHECK(admin->get_data("/sc/parent/count").data == bytes({0, 0, 0, 13}));  // close leaves the node
}

TEST_CASE_METHOD(ServerFixture, "distributed atomic numbers: operations, layout, bad data, session expiry",
                 "[counters]") {
  auto c = client();
  auto retry = std::make_shared<RetryNTimes>(3, Millis(10));
  DistributedAtomicLong n(*c, "/dal/a/n", retry);

  auto v = n.get();  // missing: 0, and nothing is created
  CHECK((v.succeeded && v.pre_value == 0 && v.post_value == 0));
  CHECK_FALSE(admin->exists("/dal/a/n"));
  CHECK_FALSE(n.compare_and_set(0, 5).succeeded);  // Curator: a compare-and-set on a missing node fails
  CHECK(n.initialize(5));
  CHECK_FALSE(n.initialize(6));
  CHECK(admin->get_data("/dal/a/n").data == bytes({0, 0, 0, 0, 0, 0, 0, 5}));

  v = n.increment();
  CHECK((v.succeeded && v.pre_value == 5 && v.post_value == 6 && v.stats.optimistic_tries == 1));
  v = n.subtract(10);
  CHECK((v.succeeded && v.pre_value == 6 && v.post_value == -4));
  CHECK(admin->get_data("/dal/a/n").data == bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfc}));
  CHECK(n.compare_and_set(-4, 1LL << 40).succeeded);
  CHECK_FALSE(n.compare_and_set(-4, 3).succeeded);
  CHECK(admin->get_data("/dal/a/n").data == bytes({0, 0, 1, 0, 0, 0, 0, 0}));
  n.force_set(9);
  CHECK(n.get().post_value == 9);
  v = n.try_set(10);
  CHECK((v.succeeded && v.pre_value == 9 && v.post_value == 10));
  v = n.async_decrement(boost::asio::use_future).get();
  CHECK((v.succeeded && v.post_value == 9));
  CHECK(n.async_get(boost::asio::use_future).get().post_value == 9);

  // An Integer on a Long's node: 8 bytes are not 4.
  DistributedAtomicInteger wrong(*c, "/dal/a/n", retry);
  error_code ec;
  (void)wrong.get(ec);
  CHECK(ec == client_errc::corrupted_data);
  (void)wrong.increment(ec);
  CHECK(ec == client_errc::corrupted_data);
  CHECK(n.get().post_value == 9);  // untouched

  // An Integer of its own: created by the first write, 4 bytes; wraps as Java's int does.
  DistributedAtomicInteger i(*c, "/dal/b/i", retry);
  auto iv = i.add(std::numeric_limits<std::int32_t>::max());
  CHECK((iv.succeeded && iv.pre_value == 0));
  CHECK(admin->get_data("/dal/b/i").data == bytes({0x7f, 0xff, 0xff, 0xff}));
  iv = i.increment();
  CHECK(iv.post_value == std::numeric_limits<std::int32_t>::min());
  i.async_force_set(-1, boost::asio::use_future).get();
  CHECK(admin->get_data("/dal/b/i").data == bytes({0xff, 0xff, 0xff, 0xff}));
  CHECK_FALSE(i.async_initialize(3, boost::asio::use_future).get());

  // Empty data reads as 0; three bytes are an error.
  admin->create("/dal/c/e", {.creating_parents = true, .data = std::string()});
  DistributedAtomicLong e(*c, "/dal/c/e", retry);
  CHECK(e.get().post_value == 0);
  CHECK(e.increment().post_value == 1);
  admin->set_data("/dal/c/e", "abc");
  (void)e.increment(ec);
  CHECK(ec == client_errc::corrupted_data);
  CHECK_THROWS_MATCHES(e.get(), Error, Catch::Predicate<Error>([](const Error& x) {
                         return x.code() == client_errc::corrupted_data;
                       }));

  // The value is the server's: it survives the client's session.
  c->inject_session_expiration();
  CHECK(c->block_until_connected(20s));
  CHECK(n.get().post_value == 9);
  CHECK(n.increment().post_value == 10);
}

TEST_CASE_METHOD(ServerFixture,
                 "distributed atomic long: concurrent increments from two clients lose nothing",
                 "[counters]") {
  constexpr int threads_per_client = 2, per_thread = 25;
  auto c1 = client();
  auto c2 = client();
  for (const bool promoted : {false, true}) {
    INFO("promoted: " << promoted);
    const std::string path = promoted ? "/dal/promoted" : "/dal/optimistic";
    // Optimistic: retries enough to win eventually. Promoted: one optimistic try, then the lock (with retries
    // under it: optimistic first tries of others may still win a race against a lock holder).
    auto retry = promoted ? std::make_shared<RetryNTimes>(0, Millis(0))
                          : std::make_shared<RetryNTimes>(1000, Millis(1));
    std::optional<PromotedToLock> lock;
    if (promoted) lock = PromotedToLock{"/dal/locks/l", 30s, std::make_shared<RetryNTimes>(1000, Millis(1))};
    std::atomic<int> succeeded{0}, failed{0}, promoted_tries{0};
    std::vector<std::thread> workers;
    for (int t = 0; t < 2 * threads_per_client; ++t)
      workers.emplace_back([&, t] {
        DistributedAtomicLong n(t % 2 ? *c1 : *c2, path, retry, lock);
        for (int k = 0; k < per_thread; ++k) {
          error_code ec;
          auto r = n.increment(ec);
          (r.succeeded && !ec ? succeeded : failed)++;
          promoted_tries += r.stats.promoted_lock_tries;
        }
      });
    for (auto& w : workers) w.join();
    DistributedAtomicLong n(*admin, path, retry);
    CHECK(failed == 0);
    CHECK(succeeded == 2 * threads_per_client * per_thread);
    CHECK(n.get().post_value == succeeded.load());
    if (promoted) CHECK(promoted_tries > 0);
    CHECK(eventually([&] { return children("/dal/locks/l").empty(); }));
  }
}

TEST_CASE_METHOD(ServerFixture,
                 "distributed atomic value: bytes of any size, compare-and-set byte for byte, twins",
                 "[counters]") {
  auto c = client();
  auto retry = std::make_shared<RetryNTimes>(3, Millis(10));
  DistributedAtomicValue v(*c, "/dav/a/v", retry);

  auto r = v.get();  // missing: empty, and nothing is created
  CHECK((r.succeeded && r.pre_value.empty() && r.post_value.empty()));
  CHECK_FALSE(admin->exists("/dav/a/v"));
  CHECK_FALSE(v.compare_and_set("", "x").succeeded);  // a missing node fails, as Curator's
  CHECK(v.initialize(bytes({0, 1, 2})));
  CHECK_FALSE(v.initialize("other"));
  CHECK(admin->get_data("/dav/a/v").data == bytes({0, 1, 2}));

  CHECK_FALSE(v.compare_and_set(bytes({0, 1}), "prefix").succeeded);  // a prefix is not the value
  r = v.compare_and_set(bytes({0, 1, 2}), "three");
  CHECK((r.succeeded && r.pre_value == bytes({0, 1, 2}) && r.post_value == "three"));
  r = v.try_set(std::string(1000, 'z'));
  CHECK((r.succeeded && r.pre_value == "three" && r.stats.optimistic_tries == 1));
  CHECK(admin->get_data("/dav/a/v").data == std::string(1000, 'z'));
  v.force_set("forced");
  CHECK(v.async_get(boost::asio::use_future).get().post_value == "forced");
  r = v.async_compare_and_set("forced", "async", boost::asio::use_future).get();
  CHECK(r.succeeded);
  v.async_force_set("", boost::asio::use_future).get();  // empty is a value, as written
  CHECK(admin->get_data("/dav/a/v").data.empty());
  CHECK(v.async_try_set("back", boost::asio::use_future).get().succeeded);
  CHECK_FALSE(v.async_initialize("x", boost::asio::use_future).get());

  // A long's node is 8 bytes to a value; a value of 3 bytes is corrupted_data to a long.
  DistributedAtomicLong n(*c, "/dav/a/v", retry);
  error_code ec;
  (void)n.get(ec);
  CHECK(ec == client_errc::corrupted_data);
  v.force_set(bytes({0, 0, 0, 0, 0, 0, 0, 7}));
  CHECK(n.increment().post_value == 8);
  CHECK(v.get().post_value == bytes({0, 0, 0, 0, 0, 0, 0, 8}));

  // Bad input: a typed error at construction.
  CHECK_THROWS_MATCHES(
      DistributedAtomicValue(*c, "no/slash", retry), Error,
      Catch::Predicate<Error>([](const Error& x) { return x.code() == client_errc::invalid_path; }));
  CHECK_THROWS_MATCHES(
      DistributedAtomicValue(*c, "/dav/x", nullptr), Error,
      Catch::Predicate<Error>([](const Error& x) { return x.code() == client_errc::invalid_argument; }));
}

TEST_CASE_METHOD(ServerFixture,
                 "distributed atomic value: try_set from two clients, promoted, every write is seen",
                 "[counters]") {
  // Each writer sets its own bytes; every try_set succeeds (promoted to the lock when the optimistic try
  // loses), and every pre_value is a value someone wrote (or the empty start): nothing torn, nothing
  // invented.
  constexpr int per_thread = 15;
  auto c1 = client();
  auto c2 = client();
  std::optional<PromotedToLock> lock =
      PromotedToLock{"/dav/locks/l", 30s, std::make_shared<RetryNTimes>(1000, Millis(1))};
  std::mutex m;
  std::set<std::string> written{""}, seen;
  std::atomic<int> failed{0};
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&, t] {
      DistributedAtomicValue v(t % 2 ? *c1 : *c2, "/dav/race", std::make_shared<RetryNTimes>(0, Millis(0)),
                               lock);
      for (int k = 0; k < per_thread; ++k) {
        const std::string mine = "writer " + std::to_string(t) + " #" + std::to_string(k);
        {
          std::lock_guard lk(m);
          written.insert(mine);
        }
        error_code ec;
        auto r = v.try_set(mine, ec);
        if (ec || !r.succeeded || r.post_value != mine) ++failed;
        std::lock_guard lk(m);
        seen.insert(r.pre_value);
      }
    });
  for (auto& w : workers) w.join();
  CHECK(failed == 0);
  for (const auto& s : seen) CHECK(written.count(s) == 1);
  CHECK(written.count(DistributedAtomicValue(*admin, "/dav/race", std::make_shared<RetryNTimes>(0, Millis(0)))
                          .get()
                          .post_value) == 1);
  CHECK(eventually([&] { return children("/dav/locks/l").empty(); }));
}

TEST_CASE_METHOD(ServerFixture, "cached atomic long: threads of two clients draw unique ids in blocks",
                 "[counters]") {
  constexpr int factor = 7, per_thread = 30;
  auto c1 = client();
  auto c2 = client();
  auto retry = std::make_shared<RetryNTimes>(1000, Millis(1));
  // One CachedAtomicLong per client, shared by its two threads (blocking and async twins mixed).
  CachedAtomicLong a(DistributedAtomicLong(*c1, "/ids/n", retry), factor);
  CachedAtomicLong b(DistributedAtomicLong(*c2, "/ids/n", retry), factor);
  std::mutex m;
  std::multiset<std::int64_t> drawn;
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&, t] {
      auto& ids = t % 2 ? a : b;
      for (int k = 0; k < per_thread; ++k) {
        auto r = t < 2 ? ids.next() : ids.async_next(boost::asio::use_future).get();
        REQUIRE(r.succeeded);
        std::lock_guard lk(m);
        drawn.insert(r.pre_value);
      }
    });
  for (auto& w : workers) w.join();
  REQUIRE(drawn.size() == 4 * per_thread);
  CHECK(std::set<std::int64_t>(drawn.begin(), drawn.end()).size() == drawn.size());  // no id twice
  // Every id came out of a block the number gave: each client took whole blocks of 7.
  const auto taken = DistributedAtomicLong(*admin, "/ids/n", retry).get().post_value;
  CHECK(taken % factor == 0);
  CHECK(*drawn.rbegin() < taken);
  CHECK(taken <= 4 * per_thread + 2 * factor);
}

TEST_CASE_METHOD(ServerFixture, "semaphore on a shared count: the number of leases follows the count",
                 "[counters]") {
  auto c1 = client();
  auto c2 = client();
  SharedCount count(*c1, "/semc/count", 1);
  count.start();
  InterProcessSemaphoreV2 sem(*c1, "/semc/sem", count);
  CHECK(sem.max_leases() == 1);
  auto first = sem.acquire();
  REQUIRE(first);
  // A second acquire waits: its lease node is queued behind the one lease allowed.
  auto second = sem.async_acquire(boost::asio::use_future);
  REQUIRE(eventually([&] { return sem.participant_nodes().size() == 2; }));
  CHECK(second.wait_for(0s) != std::future_status::ready);
  // Another client raises the count: the waiter is granted without any lease being returned.
  SharedCount other(*c2, "/semc/count", 0);
  other.start();
  other.set_count(2);
  REQUIRE(second.wait_for(30s) == std::future_status::ready);
  auto lease = second.get();
  CHECK(lease);
  CHECK(sem.max_leases() == 2);
  CHECK(first);
  // Lowered: no lease is revoked; a new acquire waits until the holders are below the count.
  other.set_count(1);
  CHECK(eventually([&] { return sem.max_leases() == 1; }));
  CHECK_FALSE(sem.acquire(std::chrono::milliseconds(200)));
  sem.return_lease(std::move(lease));
  sem.return_lease(std::move(first));
  CHECK(sem.acquire(30s));
}
