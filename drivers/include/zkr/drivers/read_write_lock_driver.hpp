#pragma once
/// \file
/// The drivers of the read-write lock (Curator's `InterProcessReadWriteLock`): readers and writers queue in
/// the same directory, `<path>/_c_<uuid>-__READ__NNNNNNNNNN` and `<path>/_c_<uuid>-__WRIT__NNNNNNNNNN`, and
/// sort together by sequence number. Pure policy, no I/O.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include <zkr/drivers/lock_driver.hpp>

namespace zkr {

/// Curator's `READ_LOCK_NAME`: the lock name of read nodes (same length as `write_lock_name`).
inline constexpr std::string_view read_lock_name = "__READ__";
/// Curator's `WRITE_LOCK_NAME`: the lock name of write nodes.
inline constexpr std::string_view write_lock_name = "__WRIT__";

/// Curator's `SortingLockInternalsDriver.fixForSorting`: strips through the last "__READ__", then (in what is
/// left) through the last "__WRIT__"; a name with neither sorts by its full name. The result views `child`'s
/// storage. Never throws.
std::string_view read_write_sort_key(std::string_view child) noexcept;

/// The write side: the standard predicate (Curator runs it with `max_leases` 1, which the engine passes) over
/// the combined, `read_write_sort_key`-sorted list, so any reader or writer ahead blocks it and the immediate
/// predecessor, read or write, is watched. `granted_when_watched_node_goes` only when that predecessor is the
/// one node ahead *and a read node*: a write holder's downgrade read node (`_c_<uuid>-__READ__<same
/// sequence>`, non-sequential, CURATOR-621) can appear with a key equal to its write node's, so the deletion
/// of a write predecessor is never proof of ownership (the engine re-lists); with only a reader ahead no
/// write holder exists that could make one (the read lock downgrades only a write grant whose node is in the
/// listing and of the current session). Stateless, thread-safe.
class WriteLockDriver : public StandardLockDriver {
 public:
  /// `read_write_sort_key(child)`; `lock_name` is ignored.
  std::string_view sort_key(std::string_view child, std::string_view lock_name) const override;
  /// Both sides' nodes ("__READ__" or "__WRIT__") belong to this lock.
  bool is_lock_node(std::string_view child, std::string_view lock_name) const override;
  /// `StandardLockDriver::gets_the_lock`, with `granted_when_watched_node_goes` kept only for a read
  /// predecessor. Nullopt when `our_node` is absent.
  std::optional<PredicateResults> gets_the_lock(const std::vector<std::string>& children,
                                                std::string_view our_node,
                                                std::size_t max_leases) const override;
};

/// The read side: Curator's read predicate. Readers share the lock and are blocked only by a writer ahead of
/// them; all readers queued behind writers watch the *first* writer (not the nearest one), as Curator does.
/// Stateless, thread-safe.
class ReadLockDriver : public LockDriver {
 public:
  /// `read_write_sort_key(child)`; `lock_name` is ignored.
  std::string_view sort_key(std::string_view child, std::string_view lock_name) const override;
  /// Both sides' nodes ("__READ__" or "__WRIT__") belong to this lock.
  bool is_lock_node(std::string_view child, std::string_view lock_name) const override;

  /// Curator's read predicate for the sorted `children` and our node's name:
  /// - `this_thread_owns_write` (the asking thread holds the write lock of the same lock): held, nothing to
  ///   watch, without looking at the children (even if our node is absent), as Curator;
  /// - otherwise scan in order: a child containing "__WRIT__" sets the first write index (the minimum); else
  /// a
  ///   child that *starts with* `our_node` is our position and ends the scan. No such child: nullopt (session
  ///   lost). Held iff our position is before the first writer; otherwise watch that first writer.
  /// `granted_when_watched_node_goes` iff the watched (first) writer is the only writer ahead of us: readers
  /// ahead do not block us, and nothing that could (a write node) can be queued ahead of us later.
  /// Pure; throws only `std::bad_alloc`.
  std::optional<PredicateResults> read_gets_the_lock(const std::vector<std::string>& children,
                                                     std::string_view our_node,
                                                     bool this_thread_owns_write) const;

  /// `read_gets_the_lock(children, our_node, false)`; `max_leases` is ignored (Curator passes
  /// `Integer.MAX_VALUE`). Engines that track write ownership call `read_gets_the_lock` directly.
  std::optional<PredicateResults> gets_the_lock(const std::vector<std::string>& children,
                                                std::string_view our_node,
                                                std::size_t max_leases) const override;
};

/// The shared instance of the write driver (a function-local static: safe from any thread).
const WriteLockDriver& write_lock_driver() noexcept;
/// The shared instance of the read driver (a function-local static: safe from any thread).
const ReadLockDriver& read_lock_driver() noexcept;

}  // namespace zkr
