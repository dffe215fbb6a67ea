// Unit tests for framework/retry: Curator's retry formulas.

#include <atomic>
#include <catch2/catch.hpp>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <thread>
#include <type_traits>
#include <vector>
#include <zkr/framework/retry.hpp>

namespace {

using zkr::Millis;
using namespace std::chrono_literals;

/// Exposes the protected sleep_time so the overflow guard can be driven past what allow_retry would ask.
struct ExposedExponential : zkr::ExponentialBackoffRetry {
  using zkr::ExponentialBackoffRetry::ExponentialBackoffRetry;
  using zkr::ExponentialBackoffRetry::sleep_time;
};

/// A delegate that answers true for every error, to show what SessionFailedRetryPolicy overrides.
struct RetryEverything : zkr::RetryPolicy {
  std::optional<Millis> allow_retry(int, Millis) const override { return 7ms; }
  bool allow_retry(const zkr::error_code&) const override { return true; }
};

}  // namespace

TEST_CASE("ExponentialBackoffRetry: sleeps are base times max(1, a uniform draw below 2^(k+1))", "[retry]") {
  const zkr::ExponentialBackoffRetry policy(100ms, 29);
  REQUIRE(policy.max_retries() == 29);
  REQUIRE(policy.base_sleep() == 100ms);
  REQUIRE(policy.max_sleep() == zkr::ExponentialBackoffRetry::default_max_sleep);
  CHECK(zkr::ExponentialBackoffRetry::default_max_sleep == Millis(INT_MAX));
  // With base 1 ms the sleep is the random factor itself (2^29 - 1 < INT_MAX: never pinned).
  const zkr::ExponentialBackoffRetry unit(1ms, 29);

  for (int k = 0; k < 29; ++k) {
    INFO("retry_count " << k);
    const std::int64_t bound = std::int64_t{1} << (k + 1);  // exclusive upper bound of nextInt
    const int samples = k < 12 ? 4000 : 500;
    std::int64_t max_factor = 0;
    for (int s = 0; s < samples; ++s) {
      const auto sleep = unit.allow_retry(k, 0ms);
      REQUIRE(sleep.has_value());
      const std::int64_t factor = sleep->count();
      REQUIRE(factor >= 1);
      REQUIRE(factor < bound);
      max_factor = std::max(max_factor, factor);

      // Base 100 ms: a multiple of the base, or pinned to the default maximum (from retry 24 on,
      // 100 * (2^25 - 1) exceeds INT_MAX).
      const auto scaled = policy.allow_retry(k, 0ms);
      REQUIRE(scaled.has_value());
      REQUIRE(*scaled >= 100ms);
      REQUIRE(*scaled <= Millis(INT_MAX));
      if (*scaled != Millis(INT_MAX)) {
        REQUIRE(scaled->count() % 100 == 0);
        REQUIRE(scaled->count() / 100 < bound);
      } else {
        REQUIRE(100 * (bound - 1) > INT_MAX);
      }
    }
    if (k == 0) {
      CHECK(max_factor == 1);  // nextInt(2) is 0 or 1: retry 0 always sleeps exactly base
    } else {
      // P(all samples in the lower half) = 2^-samples: the range really doubles with each retry.
      CHECK(max_factor >= bound / 2);
    }
  }
}

TEST_CASE("ExponentialBackoffRetry: retry 1 sleeps base times 1, 1, 2 or 3", "[retry]") {
  const zkr::ExponentialBackoffRetry policy(10ms, 5);
  std::map<std::int64_t, int> histogram;
  const int samples = 8000;
  for (int s = 0; s < samples; ++s) ++histogram[policy.allow_retry(1, 0ms)->count()];
  REQUIRE(histogram.size() == 3);
  CHECK(histogram.count(10) == 1);
  CHECK(histogram.count(20) == 1);
  CHECK(histogram.count(30) == 1);
  // Expected shares 1/2, 1/4, 1/4; the margins are over 10 standard deviations.
  CHECK(histogram[10] > samples * 0.40);
  CHECK(histogram[10] < samples * 0.60);
  CHECK(histogram[20] > samples * 0.15);
  CHECK(histogram[30] > samples * 0.15);
}

TEST_CASE("ExponentialBackoffRetry: retry count limits and clamping to 29", "[retry]") {
  const zkr::ExponentialBackoffRetry three(1ms, 3);
  CHECK(three.max_retries() == 3);
  CHECK(three.allow_retry(0, 0ms).has_value());
  CHECK(three.allow_retry(2, 0ms).has_value());
  CHECK_FALSE(three.allow_retry(3, 0ms).has_value());
  CHECK_FALSE(three.allow_retry(INT_MAX, 0ms).has_value());

  const zkr::ExponentialBackoffRetry many(1ms, 100);
  CHECK(many.max_retries() == zkr::ExponentialBackoffRetry::max_retries_limit);
  CHECK(many.max_retries() == 29);
  CHECK(many.allow_retry(28, 0ms).has_value());
  CHECK_FALSE(many.allow_retry(29, 0ms).has_value());

  CHECK(zkr::ExponentialBackoffRetry(1ms, 29).max_retries() == 29);
  CHECK(zkr::ExponentialBackoffRetry(1ms, 30).max_retries() == 29);
  CHECK(zkr::ExponentialBackoffRetry(1ms, INT_MAX).max_retries() == 29);

  const zkr::ExponentialBackoffRetry zero(1ms, 0);
  CHECK_FALSE(zero.allow_retry(0, 0ms).has_value());
  const zkr::ExponentialBackoffRetry negative(1ms, -1);
  CHECK_FALSE(negative.allow_retry(0, 0ms).has_value());
}

TEST_CASE("ExponentialBackoffRetry: elapsed time does not matter", "[retry]") {
  const zkr::ExponentialBackoffRetry policy(5ms, 2);
  CHECK(policy.allow_retry(0, Millis(1'000'000'000)) == Millis(5));
  CHECK_FALSE(policy.allow_retry(2, 0ms).has_value());
}

TEST_CASE("ExponentialBackoffRetry: max_sleep pins the sleep", "[retry]") {
  const zkr::ExponentialBackoffRetry policy(1000ms, 29, 5000ms);
  CHECK(policy.max_sleep() == 5000ms);
  bool pinned = false;
  for (int s = 0; s < 2000; ++s) {
    const auto sleep = policy.allow_retry(10, 0ms);
    REQUIRE(sleep.has_value());
    REQUIRE(*sleep <= 5000ms);
    REQUIRE(*sleep >= 1000ms);
    REQUIRE((sleep->count() % 1000 == 0 || *sleep == 5000ms));
    pinned = pinned || *sleep == 5000ms;
  }
  CHECK(pinned);
  // Retry 0 is below the cap: exactly base.
  CHECK(policy.allow_retry(0, 0ms) == 1000ms);

  // A cap below the base pins every sleep.
  const zkr::ExponentialBackoffRetry tiny(1000ms, 3, 10ms);
  for (int k = 0; k < 3; ++k) CHECK(tiny.allow_retry(k, 0ms) == 10ms);
}

TEST_CASE("ExponentialBackoffRetry: the shift and the product never overflow", "[retry]") {
  // The largest Java values: base INT_MAX ms at retry 28 would be ~2^59 ms; pinned to the default maximum.
  const zkr::ExponentialBackoffRetry big(Millis(INT_MAX), 29);
  for (int s = 0; s < 200; ++s) {
    const auto sleep = big.allow_retry(28, 0ms);
    REQUIRE(sleep.has_value());
    REQUIRE(*sleep == Millis(INT_MAX));  // factor >= 1, so base * factor >= INT_MAX = cap
  }

  // A base whose product overflows int64 saturates at the cap instead of wrapping.
  const ExposedExponential huge(Millis(std::int64_t{1} << 40), 29, Millis::max());
  for (int s = 0; s < 200; ++s) {
    const Millis sleep = huge.sleep_time(28, 0ms);
    REQUIRE(sleep >= Millis(std::int64_t{1} << 40));
    REQUIRE(sleep.count() > 0);
  }

  // sleep_time asked directly for retry counts beyond 29 (1 << 31 and more would overflow an int): the
  // exponent is clamped to 30.
  const ExposedExponential unit(1ms, 29, Millis::max());
  std::int64_t max_seen = 0;
  for (int s = 0; s < 200; ++s) {
    for (int k : {29, 30, 31, 62, 63, 64, 1000, INT_MAX}) {
      const Millis sleep = unit.sleep_time(k, 0ms);
      REQUIRE(sleep >= 1ms);
      REQUIRE(sleep.count() < (std::int64_t{1} << 30));
      max_seen = std::max(max_seen, sleep.count());
    }
  }
  CHECK(max_seen >= (std::int64_t{1} << 29));
  // Negative retry counts sleep exactly base.
  for (int k : {-1, -2, INT_MIN}) CHECK(unit.sleep_time(k, 0ms) == 1ms);
}

TEST_CASE("ExponentialBackoffRetry: negative base counts as zero", "[retry]") {
  const zkr::ExponentialBackoffRetry policy(Millis(-5), 3);
  for (int k = 0; k < 3; ++k) CHECK(policy.allow_retry(k, 0ms) == 0ms);
}

TEST_CASE("ExponentialBackoffRetry: one instance serves many threads", "[retry]") {
  const auto policy = std::make_shared<const zkr::ExponentialBackoffRetry>(3ms, 29);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int s = 0; s < 5000; ++s) {
        const int k = (s + t) % 29;
        const auto sleep = policy->allow_retry(k, 0ms);
        if (!sleep || sleep->count() % 3 != 0 || sleep->count() < 3 ||
            sleep->count() / 3 >= (std::int64_t{1} << (k + 1))) {
          ++bad;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(bad == 0);
}

TEST_CASE("BoundedExponentialBackoffRetry: argument order and bound", "[retry]") {
  const zkr::BoundedExponentialBackoffRetry policy(100ms, 1000ms, 50);
  CHECK(policy.base_sleep() == 100ms);
  CHECK(policy.max_sleep() == 1000ms);
  CHECK(policy.max_retries() == 29);  // clamped like the exponential policy
  bool pinned = false;
  for (int k = 0; k < 29; ++k) {
    for (int s = 0; s < 200; ++s) {
      const auto sleep = policy.allow_retry(k, 0ms);
      REQUIRE(sleep.has_value());
      REQUIRE(*sleep >= 100ms);
      REQUIRE(*sleep <= 1000ms);
      pinned = pinned || *sleep == 1000ms;
    }
  }
  CHECK(pinned);
  CHECK_FALSE(policy.allow_retry(29, 0ms).has_value());
}

TEST_CASE("RetryNTimes and RetryOneTime", "[retry]") {
  const zkr::RetryNTimes policy(3, 50ms);
  CHECK(policy.n() == 3);
  CHECK(policy.allow_retry(0, 0ms) == 50ms);
  CHECK(policy.allow_retry(1, 10'000ms) == 50ms);
  CHECK(policy.allow_retry(2, 0ms) == 50ms);
  CHECK_FALSE(policy.allow_retry(3, 0ms).has_value());
  CHECK_FALSE(policy.allow_retry(4, 0ms).has_value());

  const zkr::RetryNTimes none(0, 50ms);
  CHECK_FALSE(none.allow_retry(0, 0ms).has_value());

  const zkr::RetryOneTime once(25ms);
  CHECK(once.n() == 1);
  CHECK(once.allow_retry(0, 0ms) == 25ms);
  CHECK_FALSE(once.allow_retry(1, 0ms).has_value());
}

TEST_CASE("RetryUntilElapsed: allowed iff retry_count < INT_MAX and elapsed < max_elapsed", "[retry]") {
  const zkr::RetryUntilElapsed policy(1000ms, 100ms);
  CHECK(policy.n() == INT_MAX);
  CHECK(policy.allow_retry(0, 0ms) == 100ms);
  CHECK(policy.allow_retry(0, 999ms) == 100ms);
  CHECK_FALSE(policy.allow_retry(0, 1000ms).has_value());  // strict: elapsed == max refuses
  CHECK_FALSE(policy.allow_retry(0, 1001ms).has_value());
  CHECK(policy.allow_retry(1'000'000, 10ms) == 100ms);
  CHECK(policy.allow_retry(INT_MAX - 1, 10ms) == 100ms);
  CHECK_FALSE(policy.allow_retry(INT_MAX, 10ms).has_value());

  const zkr::RetryUntilElapsed zero(0ms, 100ms);
  CHECK_FALSE(zero.allow_retry(0, 0ms).has_value());
}

TEST_CASE("RetryForever: interval must be positive", "[retry]") {
  CHECK_THROWS_AS(zkr::RetryForever(0ms), std::invalid_argument);
  CHECK_THROWS_AS(zkr::RetryForever(Millis(-1)), std::invalid_argument);
  const zkr::RetryForever policy(1ms);
  CHECK(policy.allow_retry(0, 0ms) == 1ms);
  CHECK(policy.allow_retry(INT_MAX, Millis::max()) == 1ms);
  CHECK(policy.allow_retry(-1, 0ms) == 1ms);
}

TEST_CASE("RetryPolicy default error predicate is is_retryable", "[retry]") {
  const zkr::RetryNTimes policy(1, 1ms);
  CHECK(policy.allow_retry(make_error_code(zkr::zk_errc::connection_loss)));
  CHECK(policy.allow_retry(make_error_code(zkr::zk_errc::operation_timeout)));
  CHECK(policy.allow_retry(make_error_code(zkr::zk_errc::session_moved)));
  CHECK(policy.allow_retry(make_error_code(zkr::zk_errc::session_expired)));
  CHECK_FALSE(policy.allow_retry(make_error_code(zkr::zk_errc::no_node)));
  CHECK_FALSE(policy.allow_retry(make_error_code(zkr::zk_errc::node_exists)));
  CHECK_FALSE(policy.allow_retry(make_error_code(zkr::zk_errc::new_config_no_quorum)));  // removed in 5.0
  CHECK_FALSE(policy.allow_retry(make_error_code(zkr::client_errc::closed)));
  CHECK_FALSE(policy.allow_retry(zkr::error_code{}));
}

TEST_CASE("zkr::errc, the deprecated name, is client_errc", "[retry]") {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  STATIC_REQUIRE(std::is_same_v<zkr::errc, zkr::client_errc>);
  const zkr::error_code old_name = make_error_code(zkr::errc::timed_out);
#pragma GCC diagnostic pop
  CHECK(old_name == zkr::client_errc::timed_out);
  CHECK(old_name.category() == zkr::zkr_category());
}

TEST_CASE("is_session_lost and is_connection_loss classify the codes", "[retry]") {
  using zkr::zk_errc;
  for (auto e : {zk_errc::session_expired, zk_errc::auth_failed, zk_errc::invalid_state, zk_errc::closing})
    CHECK(zkr::is_session_lost(make_error_code(e)));
  CHECK(zkr::is_session_lost(make_error_code(zkr::client_errc::closed)));
  for (auto e : {zk_errc::connection_loss, zk_errc::operation_timeout, zk_errc::no_node, zk_errc::no_auth})
    CHECK_FALSE(zkr::is_session_lost(make_error_code(e)));
  CHECK_FALSE(zkr::is_session_lost(zkr::error_code{}));
  CHECK_FALSE(zkr::is_session_lost(zkr::error_code(-112, boost::system::generic_category())));
  CHECK(zkr::is_connection_loss(make_error_code(zk_errc::connection_loss)));
  CHECK_FALSE(zkr::is_connection_loss(make_error_code(zk_errc::session_expired)));
  CHECK_FALSE(zkr::is_retryable(make_error_code(zk_errc::auth_failed)));
}

TEST_CASE("SessionFailedRetryPolicy: never retries a session expiry", "[retry]") {
  CHECK_THROWS_AS(zkr::SessionFailedRetryPolicy(nullptr), std::invalid_argument);

  const zkr::SessionFailedRetryPolicy policy(std::make_shared<const zkr::RetryNTimes>(2, 10ms));
  CHECK_FALSE(policy.allow_retry(make_error_code(zkr::zk_errc::session_expired)));
  CHECK(policy.allow_retry(make_error_code(zkr::zk_errc::connection_loss)));
  CHECK(policy.allow_retry(make_error_code(zkr::zk_errc::operation_timeout)));
  CHECK(policy.allow_retry(make_error_code(zkr::zk_errc::session_moved)));
  CHECK_FALSE(policy.allow_retry(make_error_code(zkr::zk_errc::no_node)));
  // The count/elapsed answer is the delegate's.
  CHECK(policy.allow_retry(0, 0ms) == 10ms);
  CHECK(policy.allow_retry(1, 0ms) == 10ms);
  CHECK_FALSE(policy.allow_retry(2, 0ms).has_value());

  // Everything but a session expiry goes to the delegate, whatever it answers.
  const zkr::SessionFailedRetryPolicy permissive(std::make_shared<const RetryEverything>());
  CHECK_FALSE(permissive.allow_retry(make_error_code(zkr::zk_errc::session_expired)));
  CHECK(permissive.allow_retry(make_error_code(zkr::zk_errc::no_node)));
  CHECK(permissive.allow_retry(make_error_code(zkr::client_errc::closed)));
  CHECK(permissive.allow_retry(3, 5ms) == 7ms);
  // The same numeric value in another category is not a session expiry.
  CHECK(permissive.allow_retry(zkr::error_code(-112, boost::system::generic_category())));
}
