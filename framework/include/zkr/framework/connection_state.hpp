#pragma once
/// \file
/// Connection states with Curator's names and meanings, and the error policies over them.

#include <string_view>

namespace zkr {

/// Curator's `ConnectionState`.
enum class ConnectionState {
  connected,    ///< first successful connection of the client (sent once)
  suspended,    ///< the connection was lost; the session may still be alive
  reconnected,  ///< connected again after SUSPENDED or LOST (same or new session)
  lost,         ///< the session is gone: expired, or the session timeout passed while SUSPENDED
  read_only,    ///< connected to a read-only server
};

/// Upper-case name, as Curator prints it ("CONNECTED", ...).
std::string_view to_string(ConnectionState s) noexcept;

/// Curator's `ConnectionState.isConnected()`: CONNECTED, RECONNECTED and READ_ONLY.
constexpr bool is_connected(ConnectionState s) noexcept {
  return s == ConnectionState::connected || s == ConnectionState::reconnected ||
         s == ConnectionState::read_only;
}

/// Curator's `ConnectionStateErrorPolicy`: which states a recipe treats as an error.
class ConnectionStateErrorPolicy {
 public:
  virtual ~ConnectionStateErrorPolicy() = default;
  virtual bool is_error_state(ConnectionState s) const noexcept = 0;
};

/// SUSPENDED and LOST are errors (Curator's default).
class StandardConnectionStateErrorPolicy final : public ConnectionStateErrorPolicy {
 public:
  bool is_error_state(ConnectionState s) const noexcept override {
    return s == ConnectionState::suspended || s == ConnectionState::lost;
  }
};

/// Only LOST is an error.
class SessionConnectionStateErrorPolicy final : public ConnectionStateErrorPolicy {
 public:
  bool is_error_state(ConnectionState s) const noexcept override { return s == ConnectionState::lost; }
};

}  // namespace zkr
