#pragma once
// The small synchronisation pieces the scenarios share: a countdown with a timed wait, the first failure of
// any worker, and a moment recorded once.

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "measure.hpp"

namespace zkr_bench {

/// Counts down to zero; waiters wake at zero. A tiny std::latch with a timed wait.
class Countdown {
 public:
  explicit Countdown(long n) : n_(n) {}
  void count_down(long k = 1) {
    std::lock_guard lk(m_);
    n_ -= k;
    if (n_ <= 0) cv_.notify_all();
  }
  /// True when zero was reached before `d` passed.
  bool wait_for(Clock::duration d) {
    std::unique_lock lk(m_);
    return cv_.wait_for(lk, d, [&] { return n_ <= 0; });
  }
  long left() const {
    std::lock_guard lk(m_);
    return n_;
  }

 private:
  mutable std::mutex m_;
  std::condition_variable cv_;
  long n_;
};

/// The first failure of any worker or handler.
class Failure {
 public:
  void set(std::string what) {
    std::lock_guard lk(m_);
    if (!what_) what_ = std::move(what);
  }
  std::optional<std::string> get() const {
    std::lock_guard lk(m_);
    return what_;
  }

 private:
  mutable std::mutex m_;
  std::optional<std::string> what_;
};

/// A moment (steady clock, ns) recorded once: the first `set` wins. `wait_for` waits for it.
class Stamp {
 public:
  void set() {
    const auto t = now_ns();
    std::lock_guard lk(m_);
    if (!ns_) {
      ns_ = t;
      cv_.notify_all();
    }
  }
  std::optional<std::int64_t> wait_for(Clock::duration d) {
    std::unique_lock lk(m_);
    cv_.wait_for(lk, d, [&] { return ns_.has_value(); });
    return ns_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::optional<std::int64_t> ns_;
};

}  // namespace zkr_bench
