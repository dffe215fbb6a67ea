#pragma once
/// \file
/// `TreeCache`: Curator's (deprecated) cache of a whole subtree, with a depth limit and a selector.

#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>
#include <zkr/recipes/cache/basic_cache.hpp>
#include <zkr/recipes/cache/cache_events.hpp>
#include <zkr/recipes/cache/child_data.hpp>

namespace zkr {

/// Curator's `TreeCacheSelector`: which nodes' children are listed, and which children are cached. Empty
/// functions accept everything (Curator's `DefaultTreeCacheSelector`).
struct TreeCacheSelector {
  std::function<bool(const std::string& full_path)> traverse_children;
  std::function<bool(const std::string& full_path)> accept_child;
};

class TreeCacheBuilder;

/// Curator's `TreeCache`: the node at `path` and its subtree to `max_depth` levels, NODE_ADDED/UPDATED/
/// REMOVED events, the connection states and INITIALIZED once the first load is complete. Never creates a
/// node (no `setCreateParentNodes`); a missing root is waited for.
class TreeCache : public BasicCache {
 public:
  /// `path` is validated (`Error` with `client_errc::invalid_path`).
  TreeCache(CuratorFramework& client, std::string path);
  /// Curator's `TreeCache.newBuilder(client, path)`.
  static TreeCacheBuilder new_builder(CuratorFramework& client, std::string path);

  /// Errors: as `CuratorCache::start`.
  void start();
  void start(error_code& ec);

  /// The node at `full_path` if cached (Curator's `getCurrentData`).
  std::optional<ChildData> get_current_data(const std::string& full_path) const;
  /// Its cached children by name, or empty when `full_path` is not cached (Curator's `getCurrentChildren`).
  std::optional<std::map<std::string, ChildData>> get_current_children(const std::string& full_path) const;
  /// Every cached node in path order (Curator's `iterator()`; a copy: it never throws, apache/curator#1302).
  std::vector<ChildData> snapshot() const;

  /// `getListenable().addListener(listener[, executor])`: returns an id for `remove_listener`.
  std::uint64_t add_listener(TreeCacheListener listener);
  std::uint64_t add_listener(TreeCacheListener listener, boost::asio::any_io_executor executor);

  friend struct detail::access;

 private:
  friend class TreeCacheBuilder;
  TreeCache(std::shared_ptr<detail::Core> core, std::string path, bool cache_data, int max_depth,
            TreeCacheSelector selector);
};

/// Curator's `TreeCache.Builder`.
class TreeCacheBuilder {
 public:
  TreeCacheBuilder& set_cache_data(bool cache_data);
  /// 0 = the root only; default: no limit.
  TreeCacheBuilder& set_max_depth(int max_depth);
  TreeCacheBuilder& set_selector(TreeCacheSelector selector);
  TreeCache build();

 private:
  friend class TreeCache;
  TreeCacheBuilder(CuratorFramework& client, std::string path) : client_(&client), path_(std::move(path)) {}
  CuratorFramework* client_;
  std::string path_;
  bool cache_data_ = true;
  int max_depth_ = std::numeric_limits<int>::max();
  TreeCacheSelector selector_;
};

}  // namespace zkr
