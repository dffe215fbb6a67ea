// zkr_async10k (zkrecipes only): N [10000] async_acquire waiters on one lock from this one process, over K
// sessions (clamped to [4, 8]; the first also holds the lock while the others queue), then a FIFO drain.
// extra: enqueue time, drain rate, fifo_ok, peak RSS (VmHWM) and the largest thread count seen
// (/proc/self/task).

#include <algorithm>

#include "../scenario.hpp"
#include "async_drain.hpp"

namespace zkr_bench {

namespace {

using namespace std::chrono_literals;

Result run(Context& ctx) {
  const Options& a = ctx.options();
  const long n = std::max(1, or_default(a.ops, 10000));
  const int k = std::clamp(or_default(a.clients, 4), 4, 8);
  std::vector<zkr::CuratorFramework*> cs;
  for (int i = 0; i < k; ++i) cs.push_back(&ctx.new_session());
  // The holder shares the first session: no extra I/O thread.
  auto holder = ctx.mutex(*cs.front());
  auto d = async_drain(ctx, *holder, cs, n, 20ms);
  Result r = std::move(d.r);
  r.extra.emplace_back("sessions", k);
  r.extra.emplace_back("waiters", n);
  r.extra.emplace_back("total_ops", n + 1);
  r.extra.emplace_back("enqueue_seconds", d.enqueue_seconds);
  r.extra.emplace_back("enqueue_per_sec",
                       d.enqueue_seconds > 0 ? Json(double(n) / d.enqueue_seconds) : Json());
  r.extra.emplace_back("drain_per_sec", r.seconds > 0 ? Json(double(n) / r.seconds) : Json());
  r.extra.emplace_back("release_errors", d.release_errors);
  r.extra.emplace_back("watches_before_release", d.watches_before_release);
  return r;
}

}  // namespace

Scenario async10k_scenario() {
  return {"zkr_async10k",
          "(zkrecipes only) N [10000] async waiters on one lock over K [4..8] sessions, then a FIFO drain; "
          "peak RSS "
          "and threads",
          {"ops", "clients", "lock-driver"},
          run};
}

}  // namespace zkr_bench
