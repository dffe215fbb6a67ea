#pragma once
// The engine of `zkr lock`, `read-lock`, `write-lock`, `semaphore`, `multi-lock` and `lead`: connect (bounded
// by --connection-timeout), then acquire asynchronously (cancellable by a signal, bounded by --timeout), run
// COMMAND while holding, watch the grant while COMMAND runs, release (and, for `lead --requeue` after a
// loss, wait for the next grant), and turn all of that into one exit status.

#include <boost/asio/cancellation_signal.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>
#include <zkr/recipes/lease.hpp>

#include "common.hpp"
#include "status_line.hpp"

namespace zkr::cli {

/// Completion of an acquire: an error, no leases (timed out), or the grant (one lease per lock node held).
using AcquireHandler = std::function<void(error_code, std::vector<Lease>)>;

/// One lock recipe, as the runner sees it.
struct LockSpec {
  /// Starts the acquire. `timeout`: nullopt waits forever. Cancellation through `slot` must delete the nodes
  /// before completing with `operation_aborted`. The handler must run on the runner's io_context (it does
  /// when the client's executor is that io_context).
  std::function<void(std::optional<std::chrono::milliseconds> timeout, boost::asio::cancellation_slot slot,
                     AcquireHandler handler)>
      start;
  /// For the status line and the messages.
  StatusSpec status;
  /// Whether `--revocable` applies (mutexes and read-write locks, as in Curator).
  bool revocable_kind = true;
  /// What the messages call the grant: "the lock", or "leadership" for `zkr lead`.
  std::string held = "the lock";
};

/// Builds the recipe once the client exists. May throw `zkr::Error` (e.g. an invalid path).
using SpecFactory = std::function<LockSpec(CuratorFramework& client)>;

/// Runs `command` under the lock; returns the exit status (see `exit_status`).
int run_locked(const CommonOptions& common, const LockOptions& options, const SpecFactory& make_spec,
               const std::vector<std::string>& command);

}  // namespace zkr::cli
