// semaphore-mutex: one session, N [1000] InterProcessSemaphoreMutex acquire+release pairs.

#include <zkr/recipes/inter_process_semaphore_mutex.hpp>

#include "../scenario.hpp"
#include "lock_pairs.hpp"

namespace zkr_bench {

namespace {

Result run(Context& ctx) {
  const Options& a = ctx.options();
  auto& c = ctx.new_session();
  zkr::InterProcessSemaphoreMutex m(c, a.path);
  Result r = lock_pairs(ctx, m, or_default(a.ops, 1000), or_default(a.warmup, 100));
  r.extra.emplace_back("sessions", 1);
  return r;
}

}  // namespace

Scenario semaphore_mutex_scenario() {
  return {"semaphore-mutex",
          "one session, N [1000] InterProcessSemaphoreMutex acquire+release pairs",
          {"ops", "warmup"},
          run};
}

}  // namespace zkr_bench
