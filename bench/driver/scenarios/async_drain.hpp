#pragma once
// Shared by drain and zkr_async10k: W async waiters spread over some sessions, queued behind a lock held
// through `holder`; measured from the holder's release until every waiter acquired and released once.

#include "../context.hpp"

namespace zkr_bench {

struct DrainOutcome {
  Result r;
  double enqueue_seconds = 0;
  long release_errors = 0;
  long watches_before_release = -1;  // new server-side watches seen before the release (-1: no --mntr)
};

/// Latency = the time between consecutive acquisitions; fifo_ok = acquisition order equals sequence order.
/// `poll_every`: how often the enqueue is checked on.
DrainOutcome async_drain(Context& ctx, zkr::InterProcessMutex& holder,
                         const std::vector<zkr::CuratorFramework*>& waiter_sessions, long w,
                         Clock::duration poll_every);

}  // namespace zkr_bench
