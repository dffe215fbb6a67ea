#pragma once
// Plain-socket helpers: four-letter words and port checks on 127.0.0.1.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace zkr::testing::detail {

/// Sends `cmd` to 127.0.0.1:`port` and reads the answer until the server closes the connection.
/// \throws TestingError on connection failure or when `timeout` passes first.
std::string four_letter_word(std::uint16_t port, std::string_view cmd, std::chrono::milliseconds timeout);

/// Whether 127.0.0.1:`port` can be bound now. With `reuse_address` (as ZooKeeper binds), a port held only by
/// TIME_WAIT connections counts as free; without it such a port counts as taken.
bool port_is_free(std::uint16_t port, bool reuse_address);

}  // namespace zkr::testing::detail
