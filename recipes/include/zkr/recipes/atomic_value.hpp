#pragma once
/// \file
/// `AtomicValue` and `AtomicStats`: the result of an operation of a distributed atomic number (Curator's
/// `AtomicValue<T>` and `AtomicStats`), and `PromotedToLock`, the lock its writers fall back to.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <zkr/framework/retry.hpp>

namespace zkr {

/// How hard an operation of a distributed atomic number worked (Curator's `AtomicStats`).
struct AtomicStats {
  int optimistic_tries = 0;     ///< reads followed by a versioned write, without the lock
  int promoted_lock_tries = 0;  ///< the same, under the promoted lock
  std::chrono::milliseconds optimistic_time{0};
  std::chrono::milliseconds promoted_time{0};
};

/// The result of an operation of a distributed atomic number (Curator's `AtomicValue<T>`). When
/// `succeeded` is false (the retry policies gave up, the lock was not had in time, a compare-and-set found
/// another value), nothing was written and `post_value` is 0.
template <class T>
struct AtomicValue {
  bool succeeded = false;
  T pre_value{};   ///< the value read before the write (0 for a missing node or empty data)
  T post_value{};  ///< the value written
  AtomicStats stats;
};

/// Curator's `PromotedToLock`: when the optimistic tries of a write give up, the write takes the
/// `InterProcessMutex` at `lock_path` (waiting at most `max_wait`; nullopt: as long as it takes) and tries
/// again under it, with `retry_policy`. The lock orders promoted writers only: optimistic writers do not take
/// it, so the versioned write stays the real guard, as in Curator.
struct PromotedToLock {
  std::string lock_path;
  std::optional<std::chrono::milliseconds> max_wait;
  /// Curator's default: one try (`RetryNTimes(0, 0)`).
  RetryPolicyPtr retry_policy = std::make_shared<RetryNTimes>(0, Millis(0));
};

}  // namespace zkr
