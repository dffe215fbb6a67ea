#pragma once
/// \file
/// `CuratorCache`: Curator 5's cache of a node and (by default) its whole subtree.

#include <boost/asio/any_io_executor.hpp>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>
#include <zkr/recipes/cache/basic_cache.hpp>
#include <zkr/recipes/cache/child_data.hpp>
#include <zkr/recipes/cache/curator_cache_listener.hpp>

namespace zkr {

class CuratorCacheBuilder;

/// Curator 5's `CuratorCache`: keeps the node at `path` and every node below it (or the node alone,
/// `single_node_cache`) as `ChildData`, and tells listeners of each node created, changed and deleted, then
/// `initialized()` once the first load is complete. A missing root is waited for; nothing is ever created.
/// docs/caches.md has the guarantees (exact difference after a reconnect or a new session, versions never
/// going back) and what differs from Curator.
class CuratorCache : public BasicCache {
 public:
  /// Curator's `CuratorCache.Options` (COMPRESSED_DATA is not offered: zkrecipes has no compression).
  enum class Options {
    single_node_cache,      ///< cache the root node only
    do_not_clear_on_close,  ///< keep the contents after `close()`
  };

  /// Curator's `CuratorCache.build(client, path, options...)`. `path` is validated (`Error` with
  /// `client_errc::invalid_path`).
  static CuratorCache build(CuratorFramework& client, std::string path,
                            std::initializer_list<Options> options = {});
  /// Curator's `CuratorCache.builder(client, path)`.
  static CuratorCacheBuilder builder(CuratorFramework& client, std::string path);

  /// Starts following the tree (in the background: it never blocks). Errors: `client_errc::invalid_argument`
  /// when already started (Curator's IllegalStateException), `client_errc::closed` when closed.
  void start();
  void start(error_code& ec);

  /// The node at `path` (full path) if cached.
  std::optional<ChildData> get(const std::string& path) const;
  /// Every cached node, in path order (Curator's `stream()`; a copy, safe to keep).
  std::vector<ChildData> stream() const;
  /// The cached nodes whose parent is `parent_path` (Curator's `stream().filter(parentPathFilter(p))`).
  std::vector<ChildData> children_of(const std::string& parent_path) const;

  /// Curator's `listenable().addListener(listener[, executor])`: returns an id for `remove_listener`.
  std::uint64_t add_listener(CuratorCacheListener listener);
  std::uint64_t add_listener(CuratorCacheListener listener, boost::asio::any_io_executor executor);

  friend struct detail::access;

 private:
  friend class CuratorCacheBuilder;
  CuratorCache(std::shared_ptr<detail::Core> core, std::string path, std::vector<Options> options,
               bool data_not_cached);
};

/// Curator's `CuratorCacheBuilder`.
class CuratorCacheBuilder {
 public:
  CuratorCacheBuilder& with_options(std::initializer_list<CuratorCache::Options> options);
  /// Curator's `withStorage(CuratorCacheStorage.dataNotCached())`: the nodes' bytes are not kept (the
  /// events still carry them).
  CuratorCacheBuilder& with_data_not_cached();
  CuratorCache build();

 private:
  friend class CuratorCache;
  CuratorCacheBuilder(CuratorFramework& client, std::string path)
      : client_(&client), path_(std::move(path)) {}
  CuratorFramework* client_;
  std::string path_;
  std::vector<CuratorCache::Options> options_;
  bool data_not_cached_ = false;
};

}  // namespace zkr
