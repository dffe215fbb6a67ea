// C-client helpers that need no running client: create modes, log routing, session expiry injection.

#include "zk_glue.hpp"


#include <cstring>
#include <mutex>
#include <string_view>

namespace zkr::detail {

int to_c_mode(CreateMode m) noexcept {
  switch (m) {
    case CreateMode::persistent: return ZOO_PERSISTENT;
    case CreateMode::ephemeral: return ZOO_EPHEMERAL;
    case CreateMode::persistent_sequential: return ZOO_PERSISTENT_SEQUENTIAL;
    case CreateMode::ephemeral_sequential: return ZOO_EPHEMERAL_SEQUENTIAL;
    case CreateMode::container: return ZOO_CONTAINER;
    case CreateMode::persistent_with_ttl: return ZOO_PERSISTENT_WITH_TTL;
    case CreateMode::persistent_sequential_with_ttl: return ZOO_PERSISTENT_SEQUENTIAL_WITH_TTL;
  }
  return ZOO_PERSISTENT;
}

namespace {
thread_local spdlog::logger* t_log_target = nullptr;
}

void set_thread_log_target(spdlog::logger* logger) noexcept { t_log_target = logger; }

std::mutex& c_client_mutex() noexcept {
  static std::mutex m;
  return m;
}

void route_c_log(const char* message) {
  spdlog::logger* log = t_log_target;
  if (!log || !message) return;
  std::string_view m(message);
  while (!m.empty() && (m.back() == '\n' || m.back() == '\r')) m.remove_suffix(1);
  auto level = spdlog::level::info;
  if (m.find(":ERROR@") != std::string_view::npos)
    level = spdlog::level::err;
  else if (m.find(":WARN@") != std::string_view::npos)
    level = spdlog::level::warn;
  else if (m.find(":DEBUG@") != std::string_view::npos)
    level = spdlog::level::debug;
  if (log->should_log(level)) log->log(level, "zookeeper-c: {}", m);
}

}  // namespace zkr::detail
