// Parsing the connect string (see connect_string.hpp).

#include "connect_string.hpp"

#include <algorithm>

namespace zkr::detail::native {

ConnectString parse_connect_string(std::string_view s, error_code& ec) {
  ConnectString out;
  const auto slash = s.find('/');
  if (slash != std::string_view::npos) {
    auto chroot = s.substr(slash);
    if (chroot.size() > 1) {
      if (chroot.back() == '/' || chroot.find("//") != std::string_view::npos) {
        ec = client_errc::invalid_connect_string;
        return {};
      }
      out.chroot = std::string(chroot);
    }
    s = s.substr(0, slash);
  }
  while (!s.empty() || out.hosts.empty()) {
    const auto comma = s.find(',');
    auto item = s.substr(0, comma);
    s = comma == std::string_view::npos ? std::string_view{} : s.substr(comma + 1);
    HostPort hp{std::string(item), "2181"};
    if (item.starts_with('[')) {
      const auto close = item.find(']');
      if (close == std::string_view::npos) {
        ec = client_errc::invalid_connect_string;
        return {};
      }
      hp.host = std::string(item.substr(1, close - 1));
      auto rest = item.substr(close + 1);
      if (rest.starts_with(':') && rest.size() > 1) hp.port = std::string(rest.substr(1));
    } else if (const auto colon = item.rfind(':'); colon != std::string_view::npos) {
      hp.host = std::string(item.substr(0, colon));
      if (colon + 1 < item.size()) hp.port = std::string(item.substr(colon + 1));
    }
    const bool port_ok =
        std::all_of(hp.port.begin(), hp.port.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (hp.host.empty() || !port_ok) {
      ec = client_errc::invalid_connect_string;
      return {};
    }
    out.hosts.push_back(std::move(hp));
    if (comma == std::string_view::npos) break;
  }
  return out;
}

}  // namespace zkr::detail::native
