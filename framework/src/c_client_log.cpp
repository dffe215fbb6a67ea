// The C client's log routed into the clients' loggers (see c_client_log.hpp).

#include "c_client_log.hpp"

#include <spdlog/logger.h>

#include <algorithm>
#include <iterator>
#include <mutex>
#include <string_view>
#include <vector>

namespace zkr::detail {

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

void route_c_log(const char* message) {
  if (!message) return;
  if (spdlog::logger* log = t_log_target) return log_c_line(*log, message);
  auto& f = log_fallbacks();
  const std::lock_guard lock(f.mu);
  if (!f.loggers.empty()) log_c_line(*f.loggers.back(), message);
}

}  // namespace zkr::detail
