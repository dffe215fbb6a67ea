// uncontended: one session, N [2000] InterProcessMutex acquire+release pairs; latency per pair.

#include "../scenario.hpp"
#include "lock_pairs.hpp"

namespace zkr_bench {

namespace {

Result run(Context& ctx) {
  const Options& a = ctx.options();
  auto& c = ctx.new_session();
  auto m = ctx.mutex(c);
  Result r = lock_pairs(ctx, *m, or_default(a.ops, 2000), or_default(a.warmup, 100));
  r.extra.emplace_back("sessions", 1);
  return r;
}

}  // namespace

Scenario uncontended_scenario() {
  return {"uncontended",
          "one session, N [2000] InterProcessMutex acquire+release pairs; latency per pair",
          {"ops", "warmup", "lock-driver"},
          run};
}

}  // namespace zkr_bench
