// cache-events: a cache (--recipe curator: CuratorCache [default]; tree: TreeCache) of the tree of N [1000]
// leaves under P (cache_tree.hpp; made first when missing), initialized before anything is measured; then a
// second session sets the data of one leaf after another (M [2000] measured changes after W [100] unmeasured,
// round-robin over the leaves), each once the cache's listener has seen the previous one. ops = changes;
// latency = from the set_data call to the listener's call with the new data. The mntr window gives the
// requests per change (the writer's one write, and what the cache reads).

#include <condition_variable>
#include <mutex>

#include "../scenario.hpp"
#include "cache_tree.hpp"

namespace zkr_bench {

namespace {

/// The change the writer waits for, and whether the listener has seen it.
struct Awaited {
  std::mutex mu;
  std::condition_variable cv;
  std::string path, data;
  bool seen = false;

  void update(const std::string& p, const std::string& d) {
    std::lock_guard g(mu);
    if (p == path && d == data) {
      seen = true;
      cv.notify_all();
    }
  }
};

/// Sets leaf `k`'s data to a value of its own and waits for the listener to see it; the latency in ns.
std::int64_t one_change(Context& ctx, zkr::CuratorFramework& writer, Awaited& w, int leaves, int k) {
  const std::string path = cache_leaf_path(ctx.options().path, k % leaves);
  std::string data = "change-" + std::to_string(k);
  data.resize(32, '.');
  {
    std::lock_guard g(w.mu);
    w.path = path;
    w.data = data;
    w.seen = false;
  }
  const auto t0 = now_ns();
  writer.set_data(path, data);
  std::unique_lock lock(w.mu);
  if (!w.cv.wait_until(lock, ctx.deadline(), [&] { return w.seen; }))
    ctx.fatal("the cache's listener never saw " + path + " change");
  return now_ns() - t0;
}

Result run(Context& ctx) {
  const Options& a = ctx.options();
  const int leaves = or_default(a.nodes, 1000);
  const int changes = or_default(a.ops, 2000);
  const int warm = or_default(a.warmup, 100);
  auto& reader = ctx.new_session();
  auto& writer = ctx.new_session();
  ensure_cache_tree(ctx, writer, a.path, leaves);
  Awaited w;
  auto cache =
      start_cache(ctx, reader, a.path, [&w](const std::string& p, const std::string& d) { w.update(p, d); });
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(ctx.deadline() - Clock::now());
  if (!cache.get().await_initialized(left)) ctx.fatal("the cache was not initialized in time");
  for (int k = 0; k < warm; ++k) one_change(ctx, writer, w, leaves, k);
  Result r;
  r.lat_ns.reserve(std::size_t(changes));
  ctx.mark_start();
  for (int k = warm; k < warm + changes; ++k) r.lat_ns.push_back(one_change(ctx, writer, w, leaves, k));
  ctx.mark_end(r);
  std::sort(r.lat_ns.begin(), r.lat_ns.end());
  r.ops = changes;
  r.extra.emplace_back("sessions", 2);
  r.extra.emplace_back("total_ops", changes + warm);
  r.extra.emplace_back("recipe", a.recipe);
  r.extra.emplace_back("leaves", leaves);
  r.extra.emplace_back("persistent_watch", cache.get().uses_persistent_watch());
  return r;
}

}  // namespace

Scenario cache_events_scenario() {
  return {"cache-events",
          "write-to-listener latency of a cache (--recipe curator|tree) of N [1000] leaves under P: M [2000] "
          "set_data calls by a second session, one at a time",
          {"nodes", "ops", "warmup", "recipe"},
          run};
}

}  // namespace zkr_bench
