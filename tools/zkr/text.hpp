#pragma once
// How zkr writes node names and data on stdout: the body of a JSON string (always valid UTF-8), and text safe
// for a terminal.

#include <cstddef>
#include <string>
#include <string_view>

namespace zkr::cli {

/// A JSON string body. Valid UTF-8 passes through; each byte that does not start a well-formed sequence
/// becomes U+FFFD (so the output is always valid UTF-8).
std::string json_escape(std::string_view s);

/// Node data for a terminal: printable ASCII kept, the rest as \xNN, cut at `max` characters (and "..."
/// then).
std::string printable(std::string_view s, std::size_t max = std::string::npos);

}  // namespace zkr::cli
