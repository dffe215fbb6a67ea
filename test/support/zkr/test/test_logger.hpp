#pragma once
// The logger of test clients: silent unless ZKR_TEST_LOG is set (then to stderr at that level, e.g. "debug").

#include <spdlog/logger.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <memory>

namespace zkr::test {

/// A logger for test clients: silent unless ZKR_TEST_LOG is set (then to stderr at that level, e.g. "debug").
inline std::shared_ptr<spdlog::logger> test_logger() {
  static const std::shared_ptr<spdlog::logger> log = [] {
    const char* lvl = std::getenv("ZKR_TEST_LOG");
    if (lvl && *lvl) {
      auto l = std::make_shared<spdlog::logger>("zkr-test",
                                                std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
      l->set_level(spdlog::level::from_str(lvl));
      return l;
    }
    auto l = std::make_shared<spdlog::logger>("zkr-test", std::make_shared<spdlog::sinks::null_sink_mt>());
    l->set_level(spdlog::level::off);
    return l;
  }();
  return log;
}

}  // namespace zkr::test
