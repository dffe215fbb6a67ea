/// \file
/// Retry policies with Curator's formulas (`org.apache.curator.retry`).

#include <algorithm>
#include <climits>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <zkr/framework/retry.hpp>

namespace zkr {

namespace {

std::minstd_rand seeded_rng() {
  std::random_device rd;
  std::seed_seq seq{rd(), rd(), rd(), rd()};
  return std::minstd_rand(seq);
}

int clamp_max_retries(int max_retries) noexcept {
  return max_retries > ExponentialBackoffRetry::max_retries_limit ? ExponentialBackoffRetry::max_retries_limit
                                                                  : max_retries;
}

}  // namespace

std::optional<Millis> SleepingRetry::allow_retry(int retry_count, Millis elapsed) const {
  if (retry_count < n_) return sleep_time(retry_count, elapsed);
  return std::nullopt;
}

ExponentialBackoffRetry::ExponentialBackoffRetry(Millis base_sleep, int max_retries, Millis max_sleep)
    : SleepingRetry(clamp_max_retries(max_retries)),
      base_(base_sleep),
      max_sleep_(max_sleep),
      rng_(seeded_rng()) {}

Millis ExponentialBackoffRetry::sleep_time(int retry_count, Millis) const {
  // Curator: base * max(1, random.nextInt(1 << (retryCount + 1))), pinned to maxSleepMs. The exponent is
  // clamped to [1, 30] so the bound never overflows (SleepingRetry only asks for retry_count < 29 anyway).
  const int exponent = std::clamp(retry_count, 0, max_retries_limit) + 1;
  const std::int64_t bound = std::int64_t{1} << exponent;
  std::int64_t factor = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    factor = std::uniform_int_distribution<std::int64_t>(0, bound - 1)(rng_);
  }
  factor = std::max<std::int64_t>(1, factor);
  const std::int64_t base = std::max<std::int64_t>(0, base_.count());
  const std::int64_t cap = std::max<std::int64_t>(0, max_sleep_.count());
  // base * factor > cap, computed without overflow.
  if (base > cap / factor) return Millis(cap);
  return Millis(base * factor);
}

BoundedExponentialBackoffRetry::BoundedExponentialBackoffRetry(Millis base_sleep, Millis max_sleep,
                                                               int max_retries)
    : ExponentialBackoffRetry(base_sleep, max_retries, max_sleep) {}

RetryUntilElapsed::RetryUntilElapsed(Millis max_elapsed, Millis sleep_between)
    : SleepingRetry(INT_MAX), max_elapsed_(max_elapsed), sleep_(sleep_between) {}

std::optional<Millis> RetryUntilElapsed::allow_retry(int retry_count, Millis elapsed) const {
  if (elapsed >= max_elapsed_) return std::nullopt;
  return SleepingRetry::allow_retry(retry_count, elapsed);
}

RetryForever::RetryForever(Millis interval) : interval_(interval) {
  if (interval.count() <= 0) throw std::invalid_argument("RetryForever: the retry interval must be > 0");
}

SessionFailedRetryPolicy::SessionFailedRetryPolicy(RetryPolicyPtr delegate) : delegate_(std::move(delegate)) {
  if (!delegate_)
    throw std::invalid_argument("SessionFailedRetryPolicy: the delegate policy must not be null");
}

bool SessionFailedRetryPolicy::allow_retry(const error_code& ec) const {
  if (ec == make_error_code(zk_errc::session_expired)) return false;
  return delegate_->allow_retry(ec);
}

}  // namespace zkr
