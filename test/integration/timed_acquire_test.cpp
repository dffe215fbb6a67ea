// The timed acquires against a real ZooKeeper: any std::chrono::duration (rounded up to whole milliseconds,
// a negative one is one try without waiting), the same set on every lock type, the semaphore's single-lease
// asynchronous twins, and an asynchronous timeout counted from when the operation starts.

#include <boost/asio/deferred.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <mutex>
#include <thread>

#include "fixture.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

/// The time `f()` took; only ever compared as a lower bound (a wait is never shorter than asked).
template <class F>
std::chrono::steady_clock::duration timed(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::steady_clock::now() - start;
}

}  // namespace

TEST_CASE("timed: every lock type takes any duration", "[timed]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  InterProcessMutex holder(*c1, "/timed/mutex");
  InterProcessMutex m(*c2, "/timed/mutex");
  holder.acquire();
  bool got = true;
  CHECK(timed([&] { got = m.acquire(std::chrono::seconds(1)); }) >= 1s);
  CHECK_FALSE(got);
  CHECK(timed([&] { got = m.try_lock_for(0.3s); }) >= 300ms);
  CHECK_FALSE(got);
  CHECK_FALSE(m.try_acquire_for(500us));
  CHECK_FALSE(m.try_acquire_for(-1s));  // one try
  error_code ec;
  CHECK_FALSE(m.try_acquire_for(1ms, ec));
  CHECK_FALSE(ec);
  CHECK_FALSE(m.try_lock_until(std::chrono::steady_clock::now() - 1h));
  holder.release();
  REQUIRE(m.try_acquire_for(-1s));  // free: the one try takes it
  m.release();
  REQUIRE(m.try_lock_for(1.5s));
  m.release();
  REQUIRE(m.acquire(std::chrono::seconds(1), ec));
  m.release();

  InterProcessSemaphoreMutex sm1(*c1, "/timed/sm");
  InterProcessSemaphoreMutex sm2(*c2, "/timed/sm");
  REQUIRE(sm1.try_acquire_for(2s, ec));
  CHECK_FALSE(ec);
  CHECK_FALSE(sm2.try_acquire_for(100ms, ec));
  CHECK_FALSE(ec);
  CHECK_FALSE(sm2.try_lock_until(std::chrono::system_clock::now() + 100ms));
  sm1.release();
  REQUIRE(sm2.try_lock_for(std::chrono::minutes(1)));
  sm2.release();

  InterProcessMultiLock ml1(*c1, {"/timed/a", "/timed/b"});
  InterProcessMultiLock ml2(*c2, {"/timed/a", "/timed/b"});
  REQUIRE(ml1.try_lock_until(std::chrono::steady_clock::now() + 10s));
  CHECK(timed([&] { got = ml2.try_lock_until(std::chrono::steady_clock::now() + 300ms); }) >= 300ms);
  CHECK_FALSE(got);
  CHECK_FALSE(ml2.try_acquire_for(200us, ec));
  CHECK_FALSE(ec);
  ml1.release();
  REQUIRE(ml2.acquire(std::chrono::seconds(10)));
  ml2.release();

  // The standard wrappers over the timed forms.
  InterProcessReadWriteLock rw(*c1, "/timed/rw");
  std::unique_lock<InterProcessMutex> lk(rw.write_lock(), 2s);
  CHECK(lk.owns_lock());
}

TEST_CASE("timed: Locker holds for its scope, and its timed form throws timed_out with the path", "[timed]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  InterProcessMutex a(*c1, "/timed/locker");
  InterProcessMutex b(*c2, "/timed/locker");
  {
    Locker<InterProcessMutex> held(a, 5s);
    CHECK(a.is_acquired_in_this_process());
    try {
      Locker<InterProcessMutex> late(b, 200ms);
      FAIL("the second Locker should not have acquired");
    } catch (const Error& e) {
      CHECK(e.code() == client_errc::timed_out);
      CHECK(e.operation() == "acquire");
      CHECK(e.path() == "/timed/locker");
    }
  }
  CHECK_FALSE(a.is_acquired_in_this_process());  // released at the end of the scope
  Locker<InterProcessMutex> now(b, 5s);
  CHECK(b.is_acquired_in_this_process());
}

TEST_CASE("timed: the semaphore's timed forms and single-lease async twins", "[timed][semaphore]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  InterProcessSemaphoreV2 s1(*c1, "/timed/sem", 2);
  InterProcessSemaphoreV2 s2(*c2, "/timed/sem", 2);
  Lease one = s1.async_acquire(boost::asio::use_future).get();
  REQUIRE(one.valid());
  Lease two = s1.acquire(std::chrono::seconds(5));
  REQUIRE(two.valid());
  // Exhausted: every timed form gives up empty.
  CHECK_FALSE(s2.async_try_acquire_for(200ms, boost::asio::use_future).get().valid());
  CHECK_FALSE(s2.acquire(500us).valid());
  error_code ec;
  CHECK(s2.acquire(1, 0.2s, ec).empty());
  CHECK_FALSE(ec);
  CHECK(s2.async_try_acquire_for(1, 100ms, boost::asio::use_future).get().empty());
  // A single-lease wait completes once a lease is returned.
  auto waiting = s2.async_try_acquire_for(std::chrono::seconds(20), boost::asio::use_future);
  one.release();
  Lease three = waiting.get();
  CHECK(three.valid());
  auto pending = s2.async_acquire(boost::asio::use_future);
  two.release();
  CHECK(pending.get().valid());
}

TEST_CASE("timed: an asynchronous timeout counts from when the operation starts", "[timed]") {
  // A deferred timed acquire launched later must still wait its whole timeout: a deadline computed when the
  // function was called would already have passed, and the acquire would give up at once.
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  InterProcessMutex holder(*c1, "/timed/late");
  InterProcessMutex m(*c2, "/timed/late");
  InterProcessSemaphoreV2 sem_holder(*c1, "/timed/late-sem", 1);
  InterProcessSemaphoreV2 sem(*c2, "/timed/late-sem", 1);
  InterProcessMultiLock ml_holder(*c1, {"/timed/late-a"});
  InterProcessMultiLock ml(*c2, {"/timed/late-a"});
  holder.acquire();
  Lease sem_lease = sem_holder.acquire();
  ml_holder.acquire();
  auto op = m.async_try_acquire_for(3s, boost::asio::deferred);
  auto sem_op = sem.async_try_acquire_for(3s, boost::asio::deferred);
  auto ml_op = ml.async_try_acquire_for(3s, boost::asio::deferred);
  std::this_thread::sleep_for(3500ms);  // longer than the timeout, before the operations start
  auto lease = std::move(op)(boost::asio::use_future);
  auto sem_got = std::move(sem_op)(boost::asio::use_future);
  auto ml_got = std::move(ml_op)(boost::asio::use_future);
  std::this_thread::sleep_for(300ms);  // queued behind the holders (ordering only: a late start still passes)
  holder.release();
  sem_lease.release();
  ml_holder.release();
  CHECK(lease.get().valid());
  CHECK(sem_got.get().valid());
  CHECK(ml_got.get().valid());
}
