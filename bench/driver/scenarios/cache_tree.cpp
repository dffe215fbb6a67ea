// The cache scenarios' tree and cache (cache_tree.hpp).

#include "cache_tree.hpp"

#include <malloc.h>

#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <mutex>

namespace zkr_bench {

int cache_groups(int leaves) { return (leaves + leaves_per_group - 1) / leaves_per_group; }

long cache_tree_nodes(int leaves) { return 1L + cache_groups(leaves) + leaves; }

namespace {

std::string group_path(const std::string& root, int g) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "/g%05d", g);
  return root + buf;
}

/// Creates `paths` in order, at most `window` in flight; node_exists counts as done.
void create_all(Context& ctx, zkr::CuratorFramework& c, const std::vector<std::string>& paths,
                const std::string& data) {
  constexpr std::size_t window = 256;
  std::mutex mu;
  std::condition_variable cv;
  std::size_t in_flight = 0;
  zkr::error_code failure;
  std::string failed_path;
  zkr::CreateOptions o;
  o.data = data;
  for (const auto& p : paths) {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return in_flight < window || failure; });
    if (failure) break;
    ++in_flight;
    lock.unlock();
    c.async_create(p, o, [&, p](zkr::error_code ec, zkr::CreateResult) {
      std::lock_guard g(mu);
      if (ec && ec != zkr::zk_errc::node_exists && !failure) {
        failure = ec;
        failed_path = p;
      }
      --in_flight;
      cv.notify_all();
    });
  }
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return in_flight == 0; });
  if (failure) ctx.fatal("creating " + failed_path + ": " + failure.message());
}

}  // namespace

std::string cache_leaf_path(const std::string& root, int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "/n%03d", i % leaves_per_group);
  return group_path(root, i / leaves_per_group) + buf;
}

void populate_cache_tree(Context& ctx, zkr::CuratorFramework& c, const std::string& root, int leaves) {
  zkr::CreateOptions parents;
  parents.creating_parents = true;
  zkr::error_code ec;
  c.create(root, parents, ec);
  if (ec && ec != zkr::zk_errc::node_exists) ctx.fatal("creating " + root + ": " + ec.message());
  std::vector<std::string> groups, leaf_paths;
  for (int g = 0; g < cache_groups(leaves); ++g) groups.push_back(group_path(root, g));
  for (int i = 0; i < leaves; ++i) leaf_paths.push_back(cache_leaf_path(root, i));
  create_all(ctx, c, groups, "");
  create_all(ctx, c, leaf_paths, std::string(32, 'x'));
}

void ensure_cache_tree(Context& ctx, zkr::CuratorFramework& c, const std::string& root, int leaves) {
  auto st = c.exists(root);
  if (!st || st->num_children < cache_groups(leaves)) populate_cache_tree(ctx, c, root, leaves);
}

long heap_in_use_bytes() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<long>(m.uordblks + m.hblkhd);
}

long current_rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string key;
  long kb = -1;
  while (in >> key) {
    if (key == "VmRSS:") {
      in >> kb;
      return kb * 1024;
    }
    in.ignore(4096, '\n');
  }
  return -1;
}

BenchCache start_cache(Context& ctx, zkr::CuratorFramework& c, const std::string& root, UpdateFn on_update) {
  BenchCache out;
  if (ctx.options().recipe == "tree") {
    auto cache = std::make_unique<zkr::TreeCache>(c, root);
    cache->add_listener([f = std::move(on_update)](const zkr::TreeCacheEvent& e) {
      if (e.type == zkr::TreeCacheEvent::Type::node_updated && e.data) f(e.data->path, e.data->data);
    });
    out.tree = std::move(cache);
    out.tree->start();
  } else {
    auto cache = std::make_unique<zkr::CuratorCache>(zkr::CuratorCache::build(c, root));
    cache->add_listener(
        zkr::CuratorCacheListener::builder()
            .for_changes([f = std::move(on_update)](const zkr::ChildData&, const zkr::ChildData& n) {
              f(n.path, n.data);
            })
            .build());
    out.curator = std::move(cache);
    out.curator->start();
  }
  return out;
}

}  // namespace zkr_bench
