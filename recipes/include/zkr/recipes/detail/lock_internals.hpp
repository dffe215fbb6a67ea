#pragma once
/// \file
/// `detail::LockInternals`: the acquire algorithm shared by every lock recipe (Curator's `LockInternals`),
/// driven by a pure `LockDriver`. Runs as a state machine on the client's I/O thread; recipes wrap it in
/// blocking and asynchronous twins. Internal: the recipes reach a mutex's engine through
/// `detail::access::engine`; a user plugs a policy in as a `LockDriver` (the mutex's constructor), never the
/// engine itself.
///
/// One acquire, by design:
///  1. create of `<base>/_c_<uuid>-<lock name>` (container parents) as the driver's `LockNodeSpec` says (by
///     default protected ephemeral-sequential), whose reply carries the czxid used as the fencing token;
///  2. list and sort the children; ask the driver. The listing is sent right behind the create, without
///     waiting for its reply: a session's requests are applied in order, so the listing already shows our
///     node (one round trip for both). A listing that does not show it (the create was retried inside the
///     core) is not trusted: we list again. Listings are shared: while one is in flight, every attempt of
///     this engine that needs one joins the next one not yet sent, so a burst of acquires costs a couple of
///     listings, each sorted once;
///  3. held: done (an uncontended acquire is one round trip). Otherwise watch only the node the driver
///     names, with get_data so a vanished node leaves no watch, and wait;
///  4. on the watch: when the driver said the watched node was the only one in our way, its deletion grants
///  the
///     lock with no further round trip (sequence numbers only grow); otherwise list again. A driver may also
///     name the node ahead of the watched one (`path_to_prewatch`, `PrewatchLockDriver`): its deletion leads
///     to that listing while the watched node still exists, so the watched node's deletion then grants at
///     once.
/// Our node missing from a listing means the session was lost (or, for a persistent node, someone deleted
/// it): a new node is made under the retry policy. A persistent node outlives the session: a waiter keeps its
/// place across a session's expiry, and a grant is not lost with the session (only with the node). Timeout,
/// cancellation and errors delete our node (guaranteed delete) before the operation completes. The timeout is
/// one budget across retries.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zkr/drivers/lock_driver.hpp>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/recipes/detail/timeout.hpp>
#include <zkr/recipes/lease.hpp>
#include <zkr/recipes/revoker.hpp>

namespace zkr::detail {

/// Cancellation of one recipe operation, on the I/O thread: the framework's stop signal, which the recipe
/// requests on cancellation and whose callback (`on_request`) interrupts the operation's state machine.
using CancelState = StopSignal;

/// One acquire's inputs.
struct AcquireOptions {
  /// Give up at this point (nullopt: wait forever). Expired deadline = one try without waiting.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// The node's data (nullopt: the client's default data).
  std::optional<std::string> node_data;
  /// Create the node with this sort key instead of a sequential name (the read lock's downgrade node uses the
  /// write node's sequence, Curator 5.5's CURATOR-621 fix). Empty: sequential.
  std::string fixed_sequence;
  /// With `fixed_sequence`: the node whose place it takes (the read lock's downgrade: the write grant's node
  /// name and session). The attempt is granted only while that node is in the listing and its own node is of
  /// that session; otherwise (the write grant was lost meanwhile) it deletes its node and fails with
  /// `client_errc::lock_lost`. Empty name: no such check.
  std::string fixed_sequence_node;
  std::int64_t fixed_sequence_session = 0;
  /// The policy of this attempt instead of the engine's driver (null: the engine's). The read lock uses it to
  /// carry "the caller holds the write lock", a fact of the calling thread that the I/O thread cannot see.
  /// Must sort children as the engine's driver does.
  std::shared_ptr<const LockDriver> driver;
  /// Curator's revocable lock: the node is created with empty data and, once granted, a data watch on it
  /// (re-armed on every change) runs `on_revocation_requested` on the client's completion executor whenever
  /// the node's data reads "__REVOKE__" (`Revoker::attempt_revoke`). The watch ends when the node goes.
  bool revocable = false;
  std::function<void()> on_revocation_requested;
  /// A node already queued by the caller (the multi-lock's batched enqueue): the attempt adopts it instead of
  /// creating one, owns it from then on (deletes it on timeout, cancellation or error) and makes a new node
  /// only if it vanishes (session lost). `path` is un-namespaced; `czxid` and `session` as in a create reply.
  struct ExistingNode {
    std::string path;
    std::int64_t czxid = 0;
    std::int64_t session = 0;
  };
  std::optional<ExistingNode> existing_node;
  /// Runs on the client's completion executor once our node exists, with its path (un-namespaced), before the
  /// attempt learns whether it holds the lock (CURATOR-592: "tell me when I am in line"). Runs again with the
  /// new path if the node has to be made again (its session was lost while waiting).
  std::function<void(const std::string& node_path)> on_queued;
  /// Runs on the client's completion executor when the attempt starts waiting: its watch on the node ahead
  /// is set (the server confirmed the node exists), so that node's deletion will wake it. Told again each
  /// time it waits anew (on another node, after a wake-up that did not grant it). Not told when granted at
  /// once.
  std::function<void(const std::string& node_path)> on_waiting;
};

/// The engine. Shared (held by `shared_ptr`) so an operation in flight outlives the recipe object that
/// started it.
class LockInternals : public std::enable_shared_from_this<LockInternals> {
 public:
  /// `base_path` is validated (`Error` with `client_errc::invalid_path`). The driver must outlive the engine.
  LockInternals(CuratorFramework& client, std::string base_path, std::string lock_name,
                std::size_t max_leases, std::shared_ptr<const LockDriver> driver);
  /// Over any `detail::Core` (unit tests drive the engine over a scripted fake core with injected faults).
  LockInternals(std::shared_ptr<detail::Core> core, std::string base_path, std::string lock_name,
                std::size_t max_leases, std::shared_ptr<const LockDriver> driver);

  const std::string& base_path() const noexcept { return base_path_; }
  const std::string& lock_name() const noexcept { return lock_name_; }
  std::size_t max_leases() const noexcept { return max_leases_; }
  const std::shared_ptr<detail::Core>& core() const noexcept { return core_; }
  const LockDriver& driver() const noexcept { return *driver_; }

  /// Runs one acquire on the I/O thread. Completes (on the I/O thread) with a valid Lease, an empty Lease on
  /// timeout, or an error (operation_aborted when `cancel` fired). Must be called on the I/O thread.
  void attempt_lock(AcquireOptions options, std::shared_ptr<detail::CancelState> cancel,
                    detail::unique_function<void(error_code, Lease)> done);

  /// The sorted children as full paths (Curator's `getParticipantNodes`); a missing directory gives none.
  void participant_nodes(detail::unique_function<void(error_code, std::vector<std::string>)> done);

  /// Blocking helper for the recipes (never call on the I/O thread: `client_errc::would_deadlock`).
  [[nodiscard]] Lease acquire_blocking(AcquireOptions options, error_code& ec);

 private:
  struct Attempt;
  struct Listing;
  struct ListingBatch;
  /// Adds `a` to the next listing of the directory not yet sent (I/O thread). With no listing of this engine
  /// in flight, that listing is sent at once (right behind the create just issued); otherwise from a posted
  /// handler, so that every request issued before it in this turn (a burst of creates) precedes it.
  void join_listing(std::shared_ptr<Attempt> a);
  void send_listing(const std::shared_ptr<ListingBatch>& batch);

  std::shared_ptr<detail::Core> core_;
  std::shared_ptr<ListingBatch> open_batch_;  // I/O thread only
  int listings_in_flight_ = 0;                // I/O thread only
  std::string base_path_;
  std::string lock_name_;
  std::size_t max_leases_;
  std::shared_ptr<const LockDriver> driver_;
};

/// The driver of a mutex built without one (`InterProcessMutex`, the multi-lock's mutexes, the semaphore's
/// internal mutex): the shared `PrewatchLockDriver`. The engine itself, given none, uses the standard driver.
std::shared_ptr<const LockDriver> default_mutex_driver();

/// Makes a Lease for a granted node (I/O thread): registers the loss signal.
/// `persistent`: the node outlives its session (`LockNodeMode::persistent_sequential`; `session` made it).
Lease make_lease(const std::shared_ptr<Core>& core, std::string path, std::int64_t czxid,
                 std::int64_t session, bool persistent = false);

}  // namespace zkr::detail
