#pragma once
/// \file
/// `InterProcessReadWriteLock`: Curator's cross-process read-write lock, wire-compatible with Curator 5.x
/// (readers `<path>/_c_<uuid>-__READ__<seq>` and writers `<path>/_c_<uuid>-__WRIT__<seq>` queue in one
/// directory and sort together by sequence number), including the 5.5 downgrade node (CURATOR-621).

#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zkr/drivers/read_write_lock_driver.hpp>
#include <zkr/recipes/inter_process_mutex.hpp>

namespace zkr {

/// A pair of locks on one path: a shared read lock and an exclusive write lock, fair (one FIFO queue for
/// both: a writer waits for the readers ahead of it, and readers arriving after a queued writer wait behind
/// it, so writers are not starved).
///
/// Both locks are `InterProcessMutex`es with its whole API (blocking twins owned by the calling thread and
/// reentrant per thread and per kind, asynchronous twins returning a `Lease`, fencing tokens, loss signal,
/// revocation), and `InterProcessLock`s.
///
/// Rules (Curator's, plus one refusal):
/// - a writer holds only when first in the queue, and watches its immediate predecessor (reader or writer);
/// - a reader holds while no writer is ahead of it, and otherwise watches the *first* writer;
/// - downgrade: a thread holding the write lock may take the read lock at once (then release the write lock).
///   The read node is then `_c_<uuid>-__READ__<write sequence>`, an EPHEMERAL non-sequential node that sorts
///   with the write node, so a writer queued meanwhile stays behind it (Curator 5.5, CURATOR-621);
/// - another thread of the same process asking for the read lock while this thread holds the write lock waits
///   like any other reader (Curator's testThatDowngradingRespectsThreads);
/// - upgrade: a thread holding the read lock (and not the write lock) that asks for the write lock would wait
///   for itself forever (Curator deadlocks, or times out); here the blocking acquire fails at once with
///   `client_errc::would_deadlock`, the timed forms too (an error, not `false`).
/// The thread rules concern the blocking twins; asynchronous leases belong to no thread and take part in
/// none.
///
/// Thread-safety: all members are thread-safe. The read and write lock objects live as long as this object.
class InterProcessReadWriteLock {
 public:
  /// `path` is validated by Curator's rules (`Error` with `client_errc::invalid_path`). `lock_data` is the
  /// data of both kinds of nodes (nullopt: the client's default data, as Curator).
  InterProcessReadWriteLock(CuratorFramework& client, std::string path,
                            std::optional<std::string> lock_data = std::nullopt);
  ~InterProcessReadWriteLock();
  InterProcessReadWriteLock(const InterProcessReadWriteLock&) = delete;
  InterProcessReadWriteLock& operator=(const InterProcessReadWriteLock&) = delete;

  /// The shared side (Curator's `readLock()`). Its `participant_nodes` lists the reader nodes only (Curator:
  /// children containing "__READ__"). Both sides have one type, as in Curator, so that
  /// `InterProcessMutex& m = writer ? rw.write_lock() : rw.read_lock();` compiles.
  InterProcessMutex& read_lock() noexcept;
  const InterProcessMutex& read_lock() const noexcept;
  /// The exclusive side (Curator's `writeLock()`). Its `participant_nodes` lists the writer nodes only
  /// (Curator: children containing "__WRIT__").
  InterProcessMutex& write_lock() noexcept;
  const InterProcessMutex& write_lock() const noexcept;
  const std::string& path() const noexcept;

 private:
  // The two sides (recipes/src/inter_process_read_write_lock.cpp): mutexes with the kind of node they make
  // and list, the read side adding the downgrade, the write side refusing the upgrade.
  class ReadLock;
  class WriteLock;

  std::unique_ptr<WriteLock> write_;
  std::unique_ptr<ReadLock> read_;
};

}  // namespace zkr
