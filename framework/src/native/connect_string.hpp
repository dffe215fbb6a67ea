#pragma once
// The connect string as ZooKeeper's clients read it (ConnectStringParser): "host[:port],...[/chroot]". The
// chroot is everything from the first '/' ("/" alone: none); each host is "name", "name:port" or
// "[v6]:port", the port 2181 when absent.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
#include <zkr/framework/error.hpp>

namespace zkr::detail::native {

struct HostPort {
  std::string host;
  std::string port;
  friend bool operator==(const HostPort&, const HostPort&) = default;
};

struct ConnectString {
  std::vector<HostPort> hosts;
  std::string chroot;  // "" for none; else a path without a trailing '/'
};

/// `client_errc::invalid_connect_string` for an empty host list, an empty host or port, or a chroot that does
/// not start with '/' or ends with one.
ConnectString parse_connect_string(std::string_view s, error_code& ec);

}  // namespace zkr::detail::native
