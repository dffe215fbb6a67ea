#pragma once
// What the multi-lock's source files share (private to recipes/src). The multi-lock is split by concern:
//
//   inter_process_multi_lock.cpp  the class: constructors, the blocking twins, the paths form's per-thread
//                                 holds, release of both forms, the InterProcessLock hooks
//   multi_acquire.cpp             the paths form: its shared state and the batched acquire (MultiAcquire: one
//                                 transaction, pipelined listings, then the engine for a lock that is taken)
//   multi_lock_locks_form.cpp     the locks form's acquire, one lock after the other: blocking, and the
//                                 asynchronous sequencer (LocksRun)
//   multi_lease.cpp               MultiLease, and the deletes of several nodes in one transaction

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include <zkr/recipes/inter_process_multi_lock.hpp>

namespace zkr {

namespace detail {

/// The paths form's state, shared by the object and its asynchronous acquires (which may outlive it): one
/// mutex engine per path, in list order.
struct MultiShared {
  std::shared_ptr<Core> core;
  std::vector<std::shared_ptr<detail::LockInternals>> engines;
  std::mutex mu;  // guards node_data
  std::optional<std::string> node_data;
};

}  // namespace detail

/// What an asynchronous acquire needs of an `InterProcessMultiLock` (shared: it outlives the object).
struct InterProcessMultiLock::AsyncTarget {
  std::shared_ptr<detail::MultiShared> shared;                // paths form
  std::vector<InterProcessLock*> locks;                       // locks form
  std::vector<std::shared_ptr<InterProcessLock>> keep_alive;  // the locks given as shared_ptrs
};

}  // namespace zkr
