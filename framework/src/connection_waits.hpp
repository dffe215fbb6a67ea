#pragma once
// What the client's parts ask of its connection (the connection states, connection_states.hpp): is it
// connected now, and a wait for it. I/O thread only.

#include <chrono>
#include <cstdint>
#include <zkr/framework/detail/unique_function.hpp>

namespace zkr::detail {

class ConnectionWaits {
 public:
  /// Whether the client counts itself connected now.
  virtual bool connected() const noexcept = 0;
  /// Calls `k(true)` once connected, `k(false)` after `timeout` or when the client closes or gives up (posted
  /// at once when it is connected, closed or given up already); returns an id for `cancel_wait` (0: posted).
  virtual std::uint64_t when_connected(std::chrono::milliseconds timeout, unique_function<void(bool)> k) = 0;
  /// Ends the wait `id` early: its `k(false)` runs now.
  virtual void cancel_wait(std::uint64_t id) = 0;

 protected:
  ~ConnectionWaits() = default;
};

}  // namespace zkr::detail
