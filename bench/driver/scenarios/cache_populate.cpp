// cache-populate: creates the cache scenarios' tree of N [10000] leaves under P (cache_tree.hpp; nodes
// already there are kept). The runner runs it once per cache case, so that every library's runs read the same
// tree.

#include "../scenario.hpp"
#include "cache_tree.hpp"

namespace zkr_bench {

namespace {

Result run(Context& ctx) {
  const int leaves = or_default(ctx.options().nodes, 10000);
  auto& c = ctx.new_session();
  Result r;
  ctx.mark_start();
  populate_cache_tree(ctx, c, ctx.options().path, leaves);
  ctx.mark_end(r);
  r.ops = cache_tree_nodes(leaves) - 1;
  r.extra.emplace_back("sessions", 1);
  r.extra.emplace_back("leaves", leaves);
  return r;
}

}  // namespace

Scenario cache_populate_scenario() {
  return {"cache-populate",
          "creates the cache scenarios' tree: N [10000] leaves under P, 100 per group",
          {"nodes"},
          run};
}

}  // namespace zkr_bench
