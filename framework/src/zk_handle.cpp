// C-client helpers that need no handle: create modes, the C-client mutex, the C client's log stream.

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string_view>
#include <vector>

#include "zk_glue.hpp"

namespace zkr::detail {

int to_c_mode(CreateMode m) noexcept {
  switch (m) {
    case CreateMode::persistent:
      return ZOO_PERSISTENT;
    case CreateMode::ephemeral:
      return ZOO_EPHEMERAL;
    case CreateMode::persistent_sequential:
      return ZOO_PERSISTENT_SEQUENTIAL;
    case CreateMode::ephemeral_sequential:
      return ZOO_EPHEMERAL_SEQUENTIAL;
    case CreateMode::container:
      return ZOO_CONTAINER;
    case CreateMode::persistent_with_ttl:
      return ZOO_PERSISTENT_WITH_TTL;
    case CreateMode::persistent_sequential_with_ttl:
      return ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL;
  }
  return ZOO_PERSISTENT;
}

std::mutex& c_client_mutex() noexcept {
  static std::mutex m;
  return m;
}

namespace {
// The stream's write: the C client writes one line per fprintf (then fflush), so each write is a line.
ssize_t write_c_log(void*, const char* buf, std::size_t size) {
  std::string line(buf, size);
  route_c_log(line.c_str());
  return static_cast<ssize_t>(size);
}
}  // namespace

void route_c_log_stream() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    cookie_io_functions_t io{};
    io.write = write_c_log;
    if (std::FILE* f = ::fopencookie(nullptr, "w", io)) {
      std::setvbuf(f, nullptr, _IOLBF, 0);
      zoo_set_log_stream(f);
    }
  });
}

}  // namespace zkr::detail
