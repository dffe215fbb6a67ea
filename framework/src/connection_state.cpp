#include <zkr/framework/connection_state.hpp>

namespace zkr {

std::string_view to_string(ConnectionState s) noexcept {
  switch (s) {
    case ConnectionState::connected:
      return "CONNECTED";
    case ConnectionState::suspended:
      return "SUSPENDED";
    case ConnectionState::reconnected:
      return "RECONNECTED";
    case ConnectionState::lost:
      return "LOST";
    case ConnectionState::read_only:
      return "READ_ONLY";
  }
  return "UNKNOWN";
}

}  // namespace zkr
