#pragma once
// The recipes behind the lock commands, as `LockSpec`s for the runner.

#include <string>
#include <vector>

#include "run_locked.hpp"

namespace zkr::cli {

/// `zkr lock`: InterProcessMutex(path).
SpecFactory mutex_spec(std::string path, LockOptions options);
/// `zkr read-lock` / `zkr write-lock`: InterProcessReadWriteLock(path).read_lock() / .write_lock().
SpecFactory read_write_spec(std::string path, bool write, LockOptions options);
/// `zkr semaphore --leases N`: one lease of InterProcessSemaphoreV2(path, N).
SpecFactory semaphore_spec(std::string path, int max_leases, LockOptions options);
/// `zkr multi-lock`: InterProcessMultiLock over one InterProcessMutex per path.
SpecFactory multi_lock_spec(std::vector<std::string> paths, LockOptions options);

/// The two leader elections of Curator that `zkr lead` joins.
enum class Election { latch, selector };
/// `zkr lead`: one term of leadership of PATH. A latch term is a `LeaderLatch` node (`latch-`, the first
/// leads); a selector term is `LeaderSelector`'s, an InterProcessMutex hold. `options.data` is the
/// participant id.
SpecFactory leader_spec(std::string path, Election election, LockOptions options);

}  // namespace zkr::cli
