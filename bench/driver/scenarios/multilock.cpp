// multilock: InterProcessMultiLock over K [4] mutex paths P/0 .. P/K-1; N [500] acquire+release pairs.

#include <algorithm>
#include <zkr/recipes/inter_process_multi_lock.hpp>

#include "../scenario.hpp"
#include "lock_pairs.hpp"

namespace zkr_bench {

namespace {

Result run(Context& ctx) {
  const Options& a = ctx.options();
  int k = std::max(1, or_default(a.clients, 4));
  auto& c = ctx.new_session();
  std::vector<std::string> paths;
  for (int i = 0; i < k; ++i) paths.push_back(a.path + "/" + std::to_string(i));
  zkr::InterProcessMultiLock m(c, paths);
  Result r = lock_pairs(ctx, m, or_default(a.ops, 500), or_default(a.warmup, 100));
  r.extra.emplace_back("sessions", 1);
  r.extra.emplace_back("locks", k);
  return r;
}

}  // namespace

Scenario multilock_scenario() {
  return {"multilock",
          "InterProcessMultiLock over K [4] mutex paths P/0 .. P/K-1; N [500] pairs",
          {"clients", "ops", "warmup"},
          run};
}

}  // namespace zkr_bench
