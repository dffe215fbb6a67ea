#pragma once
/// \file
/// The paths-form multi-lock's batched acquire, on its own: for `InterProcessMultiLock` and for the unit
/// tests that drive it over a fake core. Not for applications.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zkr/framework/detail/core.hpp>
#include <zkr/recipes/multi_lease.hpp>

namespace zkr::detail {

struct MultiShared;

/// The shared state of a paths-form multi-lock over `core` (one mutex engine per path). Paths are validated
/// as by `InterProcessMultiLock`'s constructor.
std::shared_ptr<MultiShared> make_multi_shared(std::shared_ptr<Core> core,
                                               const std::vector<std::string>& paths);
/// The batched acquire, on the client's I/O thread (see docs/multi-lock.md).
void multi_acquire(std::shared_ptr<MultiShared> s,
                   std::optional<std::chrono::steady_clock::time_point> deadline,
                   std::shared_ptr<StopSignal> cancel, unique_function<void(error_code, MultiLease)> done);

}  // namespace zkr::detail
