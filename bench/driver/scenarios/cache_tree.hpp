#pragma once
// The tree the cache scenarios read, the same in every driver (CuratorBench's CacheScenarios,
// kazoo_bench.py): under P, groups P/g<i> (i from 0, five digits) of at most 100 leaves P/g<i>/n<j> (j from
// 0, three digits), each leaf with 32 bytes of data; N leaves in all. A cache of P holds 1 + groups + N
// nodes.

#include <functional>
#include <memory>
#include <string>
#include <zkr/recipes/cache/curator_cache.hpp>
#include <zkr/recipes/cache/tree_cache.hpp>

#include "../context.hpp"

namespace zkr_bench {

inline constexpr int leaves_per_group = 100;

/// The groups for `leaves` leaves.
int cache_groups(int leaves);
/// The nodes a cache of the whole tree holds: the root, the groups and the leaves.
long cache_tree_nodes(int leaves);
/// The path of leaf `i` (0 .. leaves-1) under `root`.
std::string cache_leaf_path(const std::string& root, int i);

/// Creates the tree of `leaves` leaves under `root` (nodes already there are kept), with at most a few
/// hundred creates in flight; fails the run on any other error.
void populate_cache_tree(Context& ctx, zkr::CuratorFramework& c, const std::string& root, int leaves);

/// Populates the tree unless `root` already has all its groups (the runner populates it once per case with
/// cache-populate; a driver run alone makes its own).
void ensure_cache_tree(Context& ctx, zkr::CuratorFramework& c, const std::string& root, int leaves);

/// The bytes malloc has handed out and not had back now (mallinfo2: the C++ side of the JVM's heap after a
/// GC).
long heap_in_use_bytes();

/// VmRSS (the resident set now) in bytes, from /proc/self/status; -1 when unreadable.
long current_rss_bytes();

/// A started cache of `root` of the kind --recipe names (curator: CuratorCache; tree: TreeCache) whose
/// listener calls `on_update(path, data)` for every node_changed / node_updated event.
struct BenchCache {
  std::unique_ptr<zkr::CuratorCache> curator;
  std::unique_ptr<zkr::TreeCache> tree;
  zkr::BasicCache& get() { return curator ? static_cast<zkr::BasicCache&>(*curator) : *tree; }
};
using UpdateFn = std::function<void(const std::string& path, const std::string& data)>;
BenchCache start_cache(Context& ctx, zkr::CuratorFramework& c, const std::string& root, UpdateFn on_update);

}  // namespace zkr_bench
