#pragma once
// The per-thread reentrant holds of the blocking locks that keep them (InterProcessMutex and the paths-form
// InterProcessMultiLock, private to recipes/src): a map from thread to a hold `{lease, count}`, guarded by
// the lock object's mutex. A thread that holds the lock takes it again with no I/O; its last release takes
// the hold out and gives the lease back.

#include <mutex>
#include <optional>
#include <thread>
#include <zkr/framework/error.hpp>

namespace zkr::detail {

/// One more level of the calling thread's hold, when it has one (no I/O). False: the thread holds nothing.
template <class Holds>
bool reenter_hold(std::mutex& mu, Holds& holds) {
  std::lock_guard lk(mu);
  auto it = holds.find(std::this_thread::get_id());
  if (it == holds.end()) return false;
  ++it->second.count;
  return true;
}

/// One level less of the calling thread's hold: `client_errc::not_owner` when it holds nothing. The last
/// level takes the hold out, forgotten even if releasing its lease then fails (Curator: CURATOR-678; the
/// guaranteed deletes go on), runs `on_last` under `mu` and returns the lease, for the caller to release
/// outside `mu`. Nullopt otherwise.
template <class Holds, class OnLast>
auto leave_hold(std::mutex& mu, Holds& holds, error_code& ec, OnLast&& on_last)
    -> std::optional<decltype(Holds::mapped_type::lease)> {
  std::lock_guard lk(mu);
  auto it = holds.find(std::this_thread::get_id());
  if (it == holds.end()) {
    ec = client_errc::not_owner;
    return std::nullopt;
  }
  if (--it->second.count > 0) return std::nullopt;
  std::optional<decltype(Holds::mapped_type::lease)> lease(std::move(it->second.lease));
  holds.erase(it);
  on_last();
  return lease;
}

}  // namespace zkr::detail
