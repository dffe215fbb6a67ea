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

}  // namespace zkr::cli
