#pragma once
// What every scenario runs on: the options, the sessions it opens (each its own CuratorFramework), the
// measured part's clocks and mntr window, and the way out on a failure.

#include <spdlog/logger.h>

#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/recipes/inter_process_mutex.hpp>

#include "measure.hpp"
#include "mntr.hpp"
#include "options.hpp"
#include "result.hpp"

namespace spdlog {
class logger;
}

namespace zkr_bench {

class Context {
 public:
  explicit Context(Options options);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const Options& options() const { return options_; }

  /// A new session on --connect (--session-timeout-ms, or `session_timeout_ms`), started and connected, with
  /// the --handler-executor, --tls-* and --sasl-* settings; it lives until `close_sessions`.
  zkr::CuratorFramework& new_session();
  zkr::CuratorFramework& new_session(int session_timeout_ms);
  /// The configuration `new_session` starts a session with (for a scenario that owns its sessions).
  zkr::ClientConfig client_config(int session_timeout_ms);
  /// A plain mutex on --path, over the driver chosen with --lock-driver.
  std::unique_ptr<zkr::InterProcessMutex> mutex(zkr::CuratorFramework& c) const;
  /// One plain mutex on --path for each of `k` new sessions.
  std::vector<std::unique_ptr<zkr::InterProcessMutex>> mutexes_on_new_sessions(int k);
  /// Closes every session (pending operations complete with `closed`). Never throws.
  void close_sessions() noexcept;

  /// The scenario's own deadline: a few seconds before the --timeout-s watchdog fires.
  Clock::time_point deadline() const;

  /// The measured part: `mark_start` just before it, `mark_end` just after (seconds, CPU time, context
  /// switches and the mntr window into `r`). `start_ns()` is the start's clock.
  void mark_start();
  void mark_end(Result& r);
  std::int64_t start_ns() const { return t0_; }
  MntrWindow& mntr() { return mntr_; }

  /// A failure while workers or asynchronous handlers still use the scenario's frame: report, close the
  /// sessions and exit 1 without unwinding (no joinable thread is destroyed, no handler outlives what it
  /// references).
  [[noreturn]] void fatal(const std::string& what);

 private:
  Options options_;
  std::shared_ptr<spdlog::logger> logger_;
  std::mutex sessions_mu_;
  std::vector<std::unique_ptr<boost::asio::thread_pool>> pools_;  // --handler-executor; outlive the sessions
  std::vector<std::unique_ptr<zkr::CuratorFramework>> sessions_;
  MntrWindow mntr_;
  std::int64_t cpu0_ = 0, t0_ = 0, switches0_ = 0;
};

}  // namespace zkr_bench
