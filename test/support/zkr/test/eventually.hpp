#pragma once
// Bounded waiting for the tests of every tier: poll a condition until it holds or a limit passes. Never a
// hang, never a timing assertion (the limit is a generous bound, not a measurement).

#include <chrono>
#include <thread>

namespace zkr::test {

/// Polls `pred` every 20 ms until it holds; false when `limit` passed first (`pred` is tried once more when
/// the limit is reached, so a condition that became true meanwhile still counts).
template <class Pred>
bool eventually(Pred&& pred, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (pred()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace zkr::test
