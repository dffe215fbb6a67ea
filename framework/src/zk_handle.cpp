// C-client helpers that need no running client: create modes, log routing, session expiry injection.

#include "zk_glue.hpp"


#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string_view>
#include <vector>

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

struct LogFallbacks {
  std::mutex mu;  // held while a line is logged to one of them, so that none is removed meanwhile
  std::vector<spdlog::logger*> loggers;
};
LogFallbacks& log_fallbacks() {
  static LogFallbacks f;
  return f;
}

void log_c_line(spdlog::logger& log, std::string_view m) {
  while (!m.empty() && (m.back() == '\n' || m.back() == '\r')) m.remove_suffix(1);
  // The C client's lines read "<time>:<pid>(<thread>):ZOO_<LEVEL>@<function>@<line>: <text>".
  auto level = spdlog::level::info;
  if (m.find(":ZOO_ERROR@") != std::string_view::npos)
    level = spdlog::level::err;
  else if (m.find(":ZOO_WARN@") != std::string_view::npos)
    level = spdlog::level::warn;
  else if (m.find(":ZOO_DEBUG@") != std::string_view::npos)
    level = spdlog::level::debug;
  if (log.should_log(level)) log.log(level, "zookeeper-c: {}", m);
}
}  // namespace

void set_thread_log_target(spdlog::logger* logger) noexcept { t_log_target = logger; }

void add_log_fallback(spdlog::logger* logger) {
  auto& f = log_fallbacks();
  const std::lock_guard lock(f.mu);
  f.loggers.push_back(logger);
}

void remove_log_fallback(spdlog::logger* logger) noexcept {
  auto& f = log_fallbacks();
  const std::lock_guard lock(f.mu);
  const auto it = std::find(f.loggers.rbegin(), f.loggers.rend(), logger);
  if (it != f.loggers.rend()) f.loggers.erase(std::next(it).base());
}

std::mutex& c_client_mutex() noexcept {
  static std::mutex m;
  return m;
}

void route_c_log(const char* message) {
  if (!message) return;
  if (spdlog::logger* log = t_log_target) return log_c_line(*log, message);
  auto& f = log_fallbacks();
  const std::lock_guard lock(f.mu);
  if (!f.loggers.empty()) log_c_line(*f.loggers.back(), message);
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
