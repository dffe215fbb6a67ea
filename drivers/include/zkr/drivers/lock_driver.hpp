#pragma once
/// \file
/// Lock drivers: the pure policy of a lock recipe (Curator's `LockInternalsDriver`). A driver sees the
/// children of the lock directory, our node's name and the lease count; it answers how children sort, whether
/// we hold the lock and which node to watch, and describes the node the engine creates (`lock_node`). No I/O:
/// drivers are tested exhaustively without a server.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zkr {

/// What a driver decides for one listing of the lock directory (Curator's `PredicateResults`). A plain value.
struct PredicateResults {
  /// True when our node holds the lock.
  bool gets_the_lock = false;
  /// The child (a node name, not a path) to watch when we do not hold it. Empty when holding, or when the
  /// driver wants an immediate re-check.
  std::string path_to_watch;
  /// True when the deletion of `path_to_watch` alone is enough to grant us the lock, so the engine may skip
  /// the re-listing after the wake-up (the watched node was the only one in our way; sequence numbers only
  /// grow, so nothing can be queued ahead of us later). Caveat: this assumes every later child sorts after
  /// ours. It does not hold for a foreign child created later with a smaller key (e.g. CURATOR-43's "0"), nor
  /// after the 32-bit sequence wrap; Curator always re-lists. The read-write drivers, whose lock admits
  /// non-sequential read nodes with a write node's key (downgrade), answer true only where such a node cannot
  /// matter (see `WriteLockDriver`, `ReadLockDriver`).
  bool granted_when_watched_node_goes = false;
  /// Optional (empty: none), only where `granted_when_watched_node_goes` is false: the child just ahead of
  /// `path_to_watch`, for the engine to watch too. Once it is gone, the watched node may be the only one left
  /// in our way, so the engine lists again *while the watched node still exists*; when that listing says so,
  /// the watched node's deletion grants the lock at once. The re-listing leaves the hand-off's critical path,
  /// for one more read and one more watch event per hand-off. Purely an optimization (`PrewatchLockDriver`).
  std::string path_to_prewatch;
};

/// How the lock engine creates a contender's node. The node is always sequential (or, for the read lock's
/// downgrade, takes a given sequence: see `AcquireOptions::fixed_sequence`, where the mode's non-sequential
/// form is used). The drivers layer names its own modes rather than the framework's `CreateMode`, which has
/// forms the engine cannot use (containers, TTL nodes, plain persistent or ephemeral nodes).
enum class LockNodeMode {
  /// The default: the node goes with the session that made it, so a crashed holder frees the lock.
  ephemeral_sequential,
  /// The node survives its session (Curator's `testPersistentLock`): the lock stays held, across session
  /// expiry, a client's close and its process's end, until the holder releases it or someone deletes the
  /// node. Nothing frees a lock whose holder is gone for good: its node must be deleted by hand.
  persistent_sequential,
};

/// The node the engine creates for one acquire (Curator's `LockInternalsDriver.createsTheLock`, as data): the
/// engine makes `<base path>/<lock name><sequence>` from it, with container parents, and does all the I/O. A
/// plain value.
struct LockNodeSpec {
  LockNodeMode mode = LockNodeMode::ephemeral_sequential;
  /// Curator's `withProtection()`: the name gets the `_c_<uuid>-` prefix, by which the framework finds a node
  /// whose create reply a connection loss swallowed (the engine then adopts it, or deletes it when the
  /// acquire is abandoned). Without it such a node cannot be found: the create is retried, and the node the
  /// lost try made is an orphan that waits in the queue with nobody behind it (until its session ends, for an
  /// ephemeral node; until someone deletes it, for a persistent one), as in Curator.
  bool protection = true;
  /// The node's data when the acquire gives none (`InterProcessMutex::set_node_data` and the like win, and a
  /// revocable lock's node is always empty, as in Curator); nullopt: the client's default data.
  std::optional<std::string> data;
  friend bool operator==(const LockNodeSpec&, const LockNodeSpec&) = default;
};

/// Raised (as an error code by the engine) when our node is missing from the listing: the session was lost.
struct NodeMissing {};

/// Pure lock policy. Implementations must be stateless or immutable: one driver serves many attempts and
/// threads at once.
class LockDriver {
 public:
  virtual ~LockDriver() = default;

  /// The key a child sorts by (Curator's `fixForSorting`): for the standard driver the text after the last
  /// occurrence of `lock_name`, or the whole name when it does not occur. An empty `lock_name` gives an empty
  /// key (Java's `lastIndexOf("")` is the length). The result views `child`'s storage. Never throws.
  virtual std::string_view sort_key(std::string_view child, std::string_view lock_name) const;

  /// Whether `child` is a node of this lock (the standard driver: its name contains `lock_name`). A child
  /// that is not (CURATOR-43's "0") may sort ahead of nodes created before it, so the engine takes no
  /// `granted_when_watched_node_goes` shortcut in a directory that holds one. Never throws.
  virtual bool is_lock_node(std::string_view child, std::string_view lock_name) const;

  /// Sorts children in place by `sort_key` (stable, byte order, like Java's String order for ASCII).
  /// UTF-8 byte order equals Java's UTF-16 order for every BMP character, and valid ZooKeeper names hold only
  /// BMP characters (`path_error`), so the order is Curator's. Ties keep their input order. Sequence suffixes
  /// are compared as text: after the server's 32-bit wrap "-2147483648" sorts before "2147483647" (a
  /// ZooKeeper limitation Curator shares). Throws only `std::bad_alloc`.
  void sort_children(std::vector<std::string>& children, std::string_view lock_name) const;

  /// Decides for the sorted `children`, our node's name (`our_node`, a name not a path) and `max_leases`.
  /// Returns nullopt when our node is not among the children (session lost: the engine retries with a new
  /// node under the retry policy). Every child counts as a contender, including foreign nodes without the
  /// lock name (as in Curator). Pure; throws only `std::bad_alloc`.
  virtual std::optional<PredicateResults> gets_the_lock(const std::vector<std::string>& children,
                                                        std::string_view our_node,
                                                        std::size_t max_leases) const = 0;

  /// The node the engine creates for an acquire of the lock named `lock_name` ("lock-", "__READ__", ...).
  /// The default (every driver of this library) is Curator's: a protected ephemeral-sequential node with the
  /// acquire's data. Override it for a persistent lock (`LockNodeMode::persistent_sequential`). Only the
  /// engine's own creates follow it: a semaphore's lease nodes and the multi-lock's batched enqueue keep
  /// their ephemeral nodes. What changes with a persistent node: the lease stays held across the session's
  /// end (it is `lost` only once the node is gone), its fencing token is still the node's czxid, and its
  /// release still deletes the node (a release after the client closed cannot, and fails with
  /// `client_errc::closed`). Pure, never throws but `std::bad_alloc`; called on the client's I/O thread.
  virtual LockNodeSpec lock_node(std::string_view lock_name) const;
};

/// Curator's `StandardLockInternalsDriver`: we hold the lock when our index is below `max_leases`; otherwise
/// we watch the child `max_leases` places ahead of us (the immediate predecessor for a mutex). Our index is
/// found by exact name match. `granted_when_watched_node_goes` is true iff our index equals `max_leases` (the
/// watched node is then the first child and its deletion brings us below `max_leases`). With `max_leases ==
/// 0` the lock is never held and the watched node is our own (as Curator would do), with
/// `granted_when_watched_node_goes` false. Stateless, thread-safe.
class StandardLockDriver : public LockDriver {
 public:
  /// See the class comment.
  std::optional<PredicateResults> gets_the_lock(const std::vector<std::string>& children,
                                                std::string_view our_node,
                                                std::size_t max_leases) const override;
};

/// `StandardLockDriver` that also names the node ahead of the watched one (`path_to_prewatch`) when we are
/// further back than just behind the holders: the mutexes' default (`prewatch_lock_driver()`). In a queue,
/// the re-listing after a wake-up would sit on the hand-off's critical path; with the pre-watch it happens
/// earlier, and a hand-off is the holder's delete, one watch event and the grant. The cost, only where two or
/// more nodes are ahead of a waiter: one more read and one more watch event per hand-off, and a node is
/// watched by up to two waiters (still no herd: a release notifies at most two). Other clients see nothing
/// different on the wire (which nodes a client watches is its own affair), so it mixes freely with Curator
/// and with the standard driver on one lock path. Pass `StandardLockDriver` for Curator's exact request
/// pattern. Stateless, thread-safe.
class PrewatchLockDriver : public StandardLockDriver {
 public:
  std::optional<PredicateResults> gets_the_lock(const std::vector<std::string>& children,
                                                std::string_view our_node,
                                                std::size_t max_leases) const override;
};

/// The shared instance of the standard driver (a function-local static: safe from any thread).
const StandardLockDriver& standard_lock_driver() noexcept;
/// The shared instance of the pre-watch driver (the mutexes' default: `InterProcessMutex`, the multi-lock's
/// mutexes and the semaphore's internal mutex).
const PrewatchLockDriver& prewatch_lock_driver() noexcept;

}  // namespace zkr
