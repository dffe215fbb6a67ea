// cache-init: a cache (--recipe curator: CuratorCache [default]; tree: TreeCache) of the tree of N [10000]
// leaves under P (cache_tree.hpp; made first when missing) is started and the measured part lasts until it is
// initialized. ops = nodes cached (checked: the root, the groups and the leaves), so ops/s is nodes loaded
// per second and the one latency sample the time to initialize. extra: init_ms, heap_bytes_per_node (malloc's
// bytes in use, after the initialization less before the start, per node), rss_bytes_per_node (VmRSS
// growth from before the start to after the initialization, per node), server_watches (mntr zk_watch_count
// growth) and server_watches_per_node, persistent_watch.

#include "../scenario.hpp"
#include "cache_tree.hpp"

namespace zkr_bench {

namespace {

Result run(Context& ctx) {
  const Options& a = ctx.options();
  const int leaves = or_default(a.nodes, 10000);
  auto& c = ctx.new_session();
  ensure_cache_tree(ctx, c, a.path, leaves);
  const double watches0 = ctx.mntr().value("zk_watch_count");
  const long rss0 = current_rss_bytes(), heap0 = heap_in_use_bytes();
  Result r;
  ctx.mark_start();
  auto cache = start_cache(ctx, c, a.path, [](const std::string&, const std::string&) {});
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(ctx.deadline() - Clock::now());
  if (!cache.get().await_initialized(left)) ctx.fatal("the cache was not initialized in time");
  ctx.mark_end(r);
  const long rss1 = current_rss_bytes(), heap1 = heap_in_use_bytes();
  const double watches1 = ctx.mntr().value("zk_watch_count");
  const auto nodes = static_cast<long>(cache.get().size());
  if (nodes != cache_tree_nodes(leaves))
    ctx.fatal("the cache holds " + std::to_string(nodes) + " nodes, the tree " +
              std::to_string(cache_tree_nodes(leaves)));
  r.ops = nodes;
  r.lat_ns = {static_cast<std::int64_t>(r.seconds * 1e9)};
  r.extra.emplace_back("sessions", 1);
  r.extra.emplace_back("recipe", a.recipe);
  r.extra.emplace_back("nodes", nodes);
  r.extra.emplace_back("init_ms", r.seconds * 1e3);
  r.extra.emplace_back("heap_bytes_per_node", double(heap1 - heap0) / double(nodes));
  if (rss0 >= 0 && rss1 >= 0) r.extra.emplace_back("rss_bytes_per_node", double(rss1 - rss0) / double(nodes));
  if (watches0 >= 0 && watches1 >= 0) {
    r.extra.emplace_back("server_watches", watches1 - watches0);
    r.extra.emplace_back("server_watches_per_node", (watches1 - watches0) / double(nodes));
  }
  r.extra.emplace_back("persistent_watch", cache.get().uses_persistent_watch());
  return r;
}

}  // namespace

Scenario cache_init_scenario() {
  return {
      "cache-init",
      "time for a cache (--recipe curator|tree) of N [10000] leaves under P to initialize; RSS and server "
      "watches per node",
      {"nodes", "recipe"},
      run};
}

}  // namespace zkr_bench
