#pragma once
// The one named schedule for the recipes' retries that no retry policy paces (private to recipes/src).

#include <chrono>

namespace zkr::detail {

/// The pause before trying again after a failure the client's retry policy has already given up on: the
/// revocation watch's failed read (lock_internals.cpp), the leader latch's failed queueing and the leader
/// selector's failed acquire. Fixed: the policy's own schedule was spent on the failure itself.
inline constexpr std::chrono::milliseconds failure_retry_pause{1000};

}  // namespace zkr::detail
