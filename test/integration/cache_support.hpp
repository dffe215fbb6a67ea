#pragma once
// What the cache tests judge a cache by (cache_test.cpp, cache_fault_test.cpp): its events replayed into a
// map with the rules they must keep, and the server's own tree to compare with.

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>
#include <zkr/recipes/cache/curator_cache.hpp>

#include "fixture.hpp"

namespace zkr::test {

/// A CuratorCacheListener that replays the events into a map and records what breaks the rules: a created
/// event for a node already there, a changed event whose old data is not the replayed node or whose version
/// (mzxid) does not move forward, a deleted event for a node not there. `initialized` counts the calls.
struct Replay {
  mutable std::mutex m;
  std::map<std::string, ChildData> nodes;
  std::vector<std::string> problems;
  int initialized = 0;
  std::map<std::string, std::vector<std::int32_t>> versions;  // per path, the versions delivered

  CuratorCacheListener listener() {
    return {[this](CuratorCacheListener::Type t, const std::optional<ChildData>& o,
                   const std::optional<ChildData>& d) {
              std::lock_guard lk(m);
              using T = CuratorCacheListener::Type;
              if (t == T::node_created && !nodes.emplace(d->path, *d).second)
                problems.push_back("dup " + d->path);
              if (t == T::node_changed) {
                auto it = nodes.find(d->path);
                if (it == nodes.end() || it->second.stat.mzxid >= d->stat.mzxid ||
                    o->stat.mzxid != it->second.stat.mzxid)
                  problems.push_back("bad change " + d->path);
                else
                  it->second = *d;
              }
              if (t == T::node_deleted && !nodes.erase(o->path)) problems.push_back("bad delete " + o->path);
              if (d) versions[d->path].push_back(d->stat.version);
            },
            [this] {
              std::lock_guard lk(m);
              ++initialized;
            }};
  }
  std::map<std::string, ChildData> copy() const {
    std::lock_guard lk(m);
    return nodes;
  }
  std::vector<std::string> issues() const {
    std::lock_guard lk(m);
    return problems;
  }
  int initialized_calls() const {
    std::lock_guard lk(m);
    return initialized;
  }
};

/// A tree as the tests compare it: path -> (version, data).
using TreeView = std::map<std::string, std::pair<std::int32_t, std::string>>;

/// The server's subtree at `root`, read by `client`; nullopt when a read failed for another reason than a
/// node gone meanwhile (a fault: read again later).
inline std::optional<TreeView> server_tree(CuratorFramework& client, const std::string& root) {
  TreeView out;
  std::vector<std::string> todo{root};
  while (!todo.empty()) {
    auto p = todo.back();
    todo.pop_back();
    error_code ec;
    auto d = client.get_data(p, {}, ec);
    if (ec == zk_errc::no_node) continue;
    if (ec) return std::nullopt;
    out[p] = {d.stat.version, d.data};
    auto kids = client.get_children(p, {}, ec);
    if (ec == zk_errc::no_node) continue;
    if (ec) return std::nullopt;
    for (auto& k : kids) todo.push_back(make_path(p, k));
  }
  return out;
}

template <class Items>
TreeView as_tree(const Items& items) {
  TreeView out;
  for (auto& c : items) out[c.path] = {c.stat.version, c.data};
  return out;
}

inline TreeView replayed_tree(const Replay& replay) {
  TreeView out;
  for (auto& [p, c] : replay.copy()) out[p] = {c.stat.version, c.data};
  return out;
}

}  // namespace zkr::test
