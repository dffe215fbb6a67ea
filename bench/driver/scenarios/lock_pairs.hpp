#pragma once
// N timed acquire+release pairs on one lock: uncontended, semaphore-mutex and multilock.

#include <zkr/recipes/inter_process_lock.hpp>

#include "../context.hpp"

namespace zkr_bench {

/// `warm` unmeasured pairs, then `n` measured ones (latency per pair); extra.total_ops = n + warm.
Result lock_pairs(Context& ctx, zkr::InterProcessLock& lock, int n, int warm);

}  // namespace zkr_bench
