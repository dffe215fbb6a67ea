#pragma once
// The background deletes (a part of the client, see client.hpp): Curator's guaranteed delete, a delete kept
// after it failed for a connection reason and tried again until it succeeds or the client ends, and the sweep
// of what a protected create or a transaction whose outcome is unknown may have left (every child of a parent
// whose name starts with a protected id's prefix). Both pause between tries on one schedule
// (`BackgroundDeletes::pause`), wait for the connection first, and are counted while they last, which is what
// a closing client waits for (`wait_idle`). I/O thread only, but for `pending` and the waits.

#include <spdlog/logger.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>

#include "connection_waits.hpp"
#include "lifecycle.hpp"
#include "pauses.hpp"
#include "session.hpp"

namespace zkr::detail {

class BackgroundDeletes {
 public:
  /// What the deletes use: the session to send on, the client's life (they end with it), its connection
  /// (waited for up to `connection_timeout` before each try) and its pauses.
  struct Uses {
    Session& session;
    const Lifecycle& life;
    ConnectionWaits& connection;
    Pauses& pauses;
    spdlog::logger& log;
    std::chrono::milliseconds connection_timeout;
  };
  explicit BackgroundDeletes(Uses uses) : uses_(uses) {}

  /// The pause before try `attempt + 1` (0-based): 50 ms, doubling to 1 s from the fifth on.
  static std::chrono::milliseconds pause(int attempt) noexcept;

  /// Deletes `full_path` in the background (no-node counts as done) until it succeeds, fails for good (not a
  /// connection reason: logged), or the client ends (logged when it has ended already).
  void remove(std::string full_path);
  /// Lists `parent_full` and removes (as `remove`) every child whose name starts with `prefix`; the listing
  /// is tried again after a pause while it fails for a connection reason. A missing parent leaves nothing to
  /// do.
  void sweep(std::string parent_full, std::string prefix);

  /// Deletes and sweeps under way (any thread).
  std::size_t pending() const noexcept { return pending_.load(); }
  /// Waits until none is pending, `deadline` passes or `end_waits` is called; false unless none is pending.
  /// Any thread but the I/O thread.
  bool wait_idle(std::chrono::steady_clock::time_point deadline);
  /// Ends every `wait_idle`, now and later.
  void end_waits();

 private:
  void remove_try(std::string full_path, int attempt);
  void sweep_try(std::string parent_full, std::string prefix, int attempt);
  /// `again` after the pause before try `attempt + 1`; the end of this delete instead once the client ended.
  void again_later(int attempt, unique_function<void()> again);
  /// Runs `go` once connected; otherwise (no connection in time) `retry`.
  void when_connected(unique_function<void()> go, unique_function<void()> retry);
  void begin() noexcept { ++pending_; }
  void end();

  Uses uses_;
  std::atomic<std::size_t> pending_{0};
  std::mutex mu_;  // with cv_: the waits of `wait_idle`
  std::condition_variable cv_;
  bool waits_ended_ = false;
};

}  // namespace zkr::detail
