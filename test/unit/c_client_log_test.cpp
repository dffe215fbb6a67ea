// Unit tests of the C client's log routing (framework/src/c_client_log.hpp): each line reaches the logger of
// the thread that wrote it, or the newest open client's from the C client's own threads, at the level the
// line carries.

#include "c_client_log.hpp"

#include <spdlog/sinks/ostream_sink.h>

#include <catch2/catch.hpp>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

namespace {

struct CapturingLogger {
  std::ostringstream out;
  std::shared_ptr<spdlog::logger> log;
  explicit CapturingLogger(spdlog::level::level_enum level) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
    sink->set_pattern("%l %v");
    log = std::make_shared<spdlog::logger>("c-log-test", sink);
    log->set_level(level);
  }
};

// Lines as the 3.8 C client formats them.
const char* const kError =
    "2026-11-26 16:58:45,077:23833(0x7f2ecde1b6c0):ZOO_ERROR@handle_socket_error_msg@2527: Socket refused\n";
const char* const kWarn =
    "2026-11-26 16:58:45,077:23833(0x7f2ecde1b6c0):ZOO_WARN@zookeeper_interest@2265: slow\n";
const char* const kInfo =
    "2026-11-26 16:58:45,077:23833(0x7f2ecde1b6c0):ZOO_INFO@check_events@2992: initiated\n";
const char* const kDebug =
    "2026-11-26 16:58:45,077:23833(0x7f2ecde1b6c0):ZOO_DEBUG@do_io@369: started IO thread\n";

}  // namespace

TEST_CASE("c-client log: each line keeps its level, without its line end", "[framework][log]") {
  CapturingLogger c(spdlog::level::trace);
  zkr::detail::set_thread_log_target(c.log.get());
  for (const char* line : {kError, kWarn, kInfo, kDebug}) zkr::detail::route_c_log(line);
  zkr::detail::set_thread_log_target(nullptr);
  const std::string s = c.out.str();
  CHECK(s.find("error zookeeper-c: ") != std::string::npos);
  CHECK(s.find("warning zookeeper-c: ") != std::string::npos);
  CHECK(s.find("info zookeeper-c: ") != std::string::npos);
  CHECK(s.find("debug zookeeper-c: ") != std::string::npos);
  CHECK(s.find("Socket refused\n") != std::string::npos);  // the sink's own line end, not a second one
  CHECK(s.find("\n\n") == std::string::npos);
}

TEST_CASE("c-client log: a logger at warn level gets the C client's warnings and errors only",
          "[framework][log]") {
  CapturingLogger c(spdlog::level::warn);
  zkr::detail::set_thread_log_target(c.log.get());
  for (const char* line : {kError, kWarn, kInfo, kDebug}) zkr::detail::route_c_log(line);
  zkr::detail::set_thread_log_target(nullptr);
  const std::string s = c.out.str();
  CHECK(s.find("Socket refused") != std::string::npos);
  CHECK(s.find("slow") != std::string::npos);
  CHECK(s.find("initiated") == std::string::npos);
  CHECK(s.find("started IO thread") == std::string::npos);
}

TEST_CASE("c-client log: a thread without a target logs to the newest fallback still registered",
          "[framework][log]") {
  CapturingLogger older(spdlog::level::trace), newer(spdlog::level::trace);
  auto from_other_thread = [] { std::thread([] { zkr::detail::route_c_log(kInfo); }).join(); };
  from_other_thread();  // no fallback: dropped
  zkr::detail::add_log_fallback(older.log.get());
  zkr::detail::add_log_fallback(newer.log.get());
  from_other_thread();
  CHECK(older.out.str().empty());
  CHECK(newer.out.str().find("initiated") != std::string::npos);
  zkr::detail::remove_log_fallback(newer.log.get());
  from_other_thread();
  CHECK(older.out.str().find("initiated") != std::string::npos);
  zkr::detail::remove_log_fallback(older.log.get());
  const auto before = older.out.str().size();
  from_other_thread();
  CHECK(older.out.str().size() == before);
}
