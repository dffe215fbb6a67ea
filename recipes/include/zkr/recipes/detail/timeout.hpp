#pragma once
/// \file
/// The timeouts of the timed acquires: any `std::chrono::duration`, as the milliseconds the engine counts in.

#include <chrono>
#include <optional>

namespace zkr::detail {

/// The longest timeout kept as given (about a century); a longer one is cut to it, so that a deadline
/// computed from it (`steady_clock::now() + timeout`) cannot overflow.
inline constexpr std::chrono::milliseconds max_timeout = std::chrono::hours(24 * 365 * 100);

/// `d` rounded up to whole milliseconds (a wait is never shorter than asked), negative ones as zero (one try
/// without waiting), and at most `max_timeout`.
template <class Rep, class Period>
constexpr std::chrono::milliseconds to_timeout(std::chrono::duration<Rep, Period> d) {
  // Compared in a floating type first: converting a huge duration (`hours::max()`) to milliseconds overflows.
  const std::chrono::duration<double, std::milli> f(d);
  if (!(f > f.zero())) return std::chrono::milliseconds::zero();
  if (f >= std::chrono::duration<double, std::milli>(max_timeout)) return max_timeout;
  return std::chrono::ceil<std::chrono::milliseconds>(d);
}

/// The deadline of a timed acquire starting now.
inline std::chrono::steady_clock::time_point deadline_after(std::chrono::milliseconds timeout) {
  return std::chrono::steady_clock::now() + timeout;
}
/// No timeout, no deadline.
inline std::optional<std::chrono::steady_clock::time_point> deadline_after(
    std::optional<std::chrono::milliseconds> timeout) {
  if (!timeout) return std::nullopt;
  return deadline_after(*timeout);
}

}  // namespace zkr::detail
