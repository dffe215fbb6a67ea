#pragma once
/// \file
/// The shared state behind a `Lease`. Not for applications: members other than the atomics are touched on the
/// client's I/O thread only (listeners under `mu`).

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#include <zkr/framework/detail/core.hpp>
#include <zkr/recipes/detail/callback_guard.hpp>
#include <zkr/recipes/lease.hpp>

namespace zkr::detail {

class LeaseCore : public std::enable_shared_from_this<LeaseCore> {
 public:
  /// `persistent`: the node outlives `session` (`LockNodeMode::persistent_sequential`), so the session's end
  /// is no loss: the grant is `maybe_lost` until a new connection finds the node (`held`) or not (`lost`).
  LeaseCore(std::shared_ptr<Core> core, std::string path, std::int64_t czxid, std::int64_t session,
            bool persistent = false);

  void start_monitoring();
  void stop_monitoring();
  void set_status(LeaseStatus s);
  /// Watches the node (I/O thread) once someone listens for the loss; a watch whose `exists` failed (the
  /// connection went meanwhile) is set again when the connection comes back with the same session.
  void watch_node();
  /// A persistent node's grant after a connection (I/O thread): `held` once an `exists` finds the node
  /// (`maybe_lost` on a read-only server), `lost` when it is gone; unchanged when the read fails.
  void confirm_node(bool read_only);
  void release(VoidCallback cb);
  /// `release` from a thread other than the I/O thread, sending the delete from that thread
  /// (`Core::remove_from_caller`). False, with `cb` untouched and nothing done, when it cannot: the caller
  /// then posts `release`.
  bool release_from_caller(VoidCallback& cb);
  /// Whether this grant still holds for a client now in session `current` (I/O thread): a node of an earlier
  /// session may be gone, or about to go, and someone else may hold its place (CURATOR-604), and a lost one
  /// is gone. An acquire of several grants (the multi-lock's paths form, a semaphore's `qty > 1`) gives back
  /// and takes again those that do not.
  bool still_grants(std::int64_t current) const noexcept {
    return session == current && status != LeaseStatus::lost;
  }

  const std::shared_ptr<Core> core;
  const std::string path;
  const std::int64_t czxid;
  /// For a persistent node: the session that created it.
  const std::int64_t session;
  const bool persistent;
  std::atomic<LeaseStatus> status{LeaseStatus::held};
  std::atomic<bool> released{false};
  std::uint64_t state_listener = 0;
  WatchId node_watch = 0;
  Epoch node_watches;                // tells the current watch's events from an earlier one's (I/O thread)
  bool watch_wanted = false;         // someone listens: keep a watch on the node (I/O thread)
  bool watch_failed_inline = false;  // the `exists` failed before it returned its id (I/O thread)
  std::mutex mu;
  std::vector<std::function<void(LeaseStatus)>> listeners;
  /// `async_wait_lost` waiters by id (I/O thread); a cancelled wait takes itself out.
  std::map<std::uint64_t, unique_function<void(error_code, LeaseStatus)>> lost_waiters;
  std::uint64_t next_lost_waiter = 0;
};

/// `LeaseCore::release_from_caller` for several leases of one client at once (in the order given), their
/// deletes in one request. Leases already released are skipped; false, with `cb` untouched and every lease as
/// it was, when none is left or nothing could be sent.
bool release_from_caller(const std::vector<std::shared_ptr<LeaseCore>>& leases, VoidCallback& cb);

}  // namespace zkr::detail
