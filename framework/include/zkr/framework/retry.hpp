#pragma once
/// \file
/// Retry policies with Curator's formulas. A policy never sleeps: it answers how long to wait before the next
/// try, and the caller waits on a timer (so asynchronous code never blocks a thread).

#include <chrono>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <zkr/framework/error.hpp>

namespace zkr {

/// Durations used by the retry policies (Curator counts milliseconds).
using Millis = std::chrono::milliseconds;

/// A retry policy: Curator's `RetryPolicy`. Implementations must be thread-safe (one policy serves every
/// operation of a client); every policy in this header is. Unlike Curator's, `allow_retry` never sleeps.
class RetryPolicy {
 public:
  virtual ~RetryPolicy() = default;
  /// Whether to try again after `retry_count` retries (0 for the first retry) with `elapsed` since the
  /// operation started; returns the time to wait first, or nullopt to give up.
  virtual std::optional<Millis> allow_retry(int retry_count, Millis elapsed) const = 0;
  /// Whether this error is worth retrying at all. Default: `is_retryable(ec)` (connection loss, operation
  /// timeout, session moved, session expired).
  virtual bool allow_retry(const error_code& ec) const { return is_retryable(ec); }
};

/// Shared, immutable handle to a policy.
using RetryPolicyPtr = std::shared_ptr<const RetryPolicy>;

/// Base of the policies that allow `n` retries with a computed sleep (Curator's `SleepingRetry`).
/// Thread-safe if `sleep_time` is.
class SleepingRetry : public RetryPolicy {
 public:
  /// Allows `n` retries (none when `n <= 0`).
  explicit SleepingRetry(int n) : n_(n) {}
  /// `sleep_time(retry_count, elapsed)` iff `retry_count < n()`, else nullopt. Never throws (unless
  /// `sleep_time` does).
  std::optional<Millis> allow_retry(int retry_count, Millis elapsed) const override;
  using RetryPolicy::allow_retry;
  /// The number of retries allowed.
  int n() const noexcept { return n_; }

 protected:
  /// The wait before retry number `retry_count` (0-based).
  virtual Millis sleep_time(int retry_count, Millis elapsed) const = 0;

 private:
  int n_;
};

/// `base * max(1, random in [0, 2^(retry_count+1)))`, capped at `max_sleep`; at most 29 retries (more is
/// clamped to 29 and logged as a warning by Curator; here clamped silently and visible through
/// `max_retries()`). The random factor is uniform, drawn from a per-instance generator seeded from
/// `std::random_device` and guarded by a mutex, so one instance is thread-safe. The exponent is clamped to
/// retry counts in [0, 29] (so `1 << (retry_count + 1)` never overflows) and the product saturates at
/// `max_sleep`; a negative base or maximum counts as 0. The constructor throws only what `std::random_device`
/// may throw.
class ExponentialBackoffRetry : public SleepingRetry {
 public:
  /// Curator's `MAX_RETRIES_LIMIT`.
  static constexpr int max_retries_limit = 29;
  /// Curator's `DEFAULT_MAX_SLEEP_MS` (`Integer.MAX_VALUE` ms).
  static constexpr Millis default_max_sleep{std::numeric_limits<int>::max()};
  /// `max_retries` above `max_retries_limit` is clamped to it.
  ExponentialBackoffRetry(Millis base_sleep, int max_retries, Millis max_sleep = default_max_sleep);
  /// The base sleep.
  Millis base_sleep() const noexcept { return base_; }
  /// The retries allowed, after clamping.
  int max_retries() const noexcept { return n(); }
  /// The cap on one sleep.
  Millis max_sleep() const noexcept { return max_sleep_; }

 protected:
  Millis sleep_time(int retry_count, Millis elapsed) const override;

 private:
  Millis base_;
  Millis max_sleep_;
  mutable std::mutex mutex_;
  mutable std::minstd_rand rng_;
};

/// Exponential backoff whose sleep never exceeds `max_sleep` (Curator's `BoundedExponentialBackoffRetry`;
/// note the argument order differs from `ExponentialBackoffRetry`, as in Curator). Thread-safe.
class BoundedExponentialBackoffRetry : public ExponentialBackoffRetry {
 public:
  /// As `ExponentialBackoffRetry(base_sleep, max_retries, max_sleep)`.
  BoundedExponentialBackoffRetry(Millis base_sleep, Millis max_sleep, int max_retries);
};

/// `n` retries with a fixed sleep. Immutable, thread-safe.
class RetryNTimes : public SleepingRetry {
 public:
  /// `n` retries, each after `sleep_between`.
  RetryNTimes(int n, Millis sleep_between) : SleepingRetry(n), sleep_(sleep_between) {}

 protected:
  Millis sleep_time(int, Millis) const override { return sleep_; }

 private:
  Millis sleep_;
};

/// One retry after a fixed sleep. Immutable, thread-safe.
class RetryOneTime : public RetryNTimes {
 public:
  /// One retry after `sleep_between`.
  explicit RetryOneTime(Millis sleep_between) : RetryNTimes(1, sleep_between) {}
};

/// Retries with a fixed sleep while less than `max_elapsed` has passed (measured before the sleep, as
/// Curator). Allowed iff `retry_count < INT_MAX` and `elapsed < max_elapsed`. Curator sleeps once even when
/// it then refuses; this policy does not sleep, so it simply refuses. Immutable, thread-safe.
class RetryUntilElapsed : public SleepingRetry {
 public:
  /// Retries every `sleep_between` while `elapsed < max_elapsed`.
  RetryUntilElapsed(Millis max_elapsed, Millis sleep_between);
  /// `sleep_between` iff `retry_count < INT_MAX` and `elapsed < max_elapsed`, else nullopt.
  std::optional<Millis> allow_retry(int retry_count, Millis elapsed) const override;
  using RetryPolicy::allow_retry;

 protected:
  Millis sleep_time(int, Millis) const override { return sleep_; }

 private:
  Millis max_elapsed_;
  Millis sleep_;
};

/// Always retries, every `interval` (which must be > 0: `std::invalid_argument` otherwise). Immutable,
/// thread-safe.
class RetryForever : public RetryPolicy {
 public:
  /// Throws `std::invalid_argument` when `interval <= 0` (Curator's `checkArgument`).
  explicit RetryForever(Millis interval);
  /// Always `interval`.
  std::optional<Millis> allow_retry(int, Millis) const override { return interval_; }
  using RetryPolicy::allow_retry;

 private:
  Millis interval_;
};

/// Delegates to another policy but never retries a session expiry
/// (`org.apache.curator.SessionFailedRetryPolicy`). Thread-safe when the delegate is.
class SessionFailedRetryPolicy : public RetryPolicy {
 public:
  /// Throws `std::invalid_argument` when `delegate` is null.
  explicit SessionFailedRetryPolicy(RetryPolicyPtr delegate);
  /// The delegate's answer.
  std::optional<Millis> allow_retry(int retry_count, Millis elapsed) const override {
    return delegate_->allow_retry(retry_count, elapsed);
  }
  /// False for `zk_errc::session_expired`; otherwise the delegate's answer.
  bool allow_retry(const error_code& ec) const override;

 private:
  RetryPolicyPtr delegate_;
};

}  // namespace zkr
