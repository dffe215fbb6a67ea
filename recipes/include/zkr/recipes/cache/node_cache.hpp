#pragma once
/// \file
/// `NodeCache`: Curator's (deprecated) cache of one node.

#include <boost/asio/any_io_executor.hpp>
#include <optional>
#include <string>
#include <zkr/recipes/cache/basic_cache.hpp>
#include <zkr/recipes/cache/cache_events.hpp>
#include <zkr/recipes/cache/child_data.hpp>

namespace zkr {

/// Curator's `NodeCache`: the data and Stat of one node, and a call to each listener whenever the node is
/// created, changed or deleted. Unlike Curator's (CURATOR-319) it never creates the node's parents: a missing
/// node, or a missing parent, is waited for.
class NodeCache : public BasicCache {
 public:
  /// `path` is validated (`Error` with `errc::invalid_path`).
  NodeCache(CuratorFramework& client, std::string path);

  /// Starts following the node; `build_initial` (Curator's `start(true)`) first waits until it is read
  /// (no listener call for that first read). Errors: as `CuratorCache::start`, and `await_initialized`'s.
  void start(bool build_initial = false);
  void start(bool build_initial, error_code& ec);

  /// The node as cached, empty while it does not exist (Curator's `getCurrentData()`).
  std::optional<ChildData> get_current_data() const;

  /// `getListenable().addListener(listener[, executor])`: returns an id for `remove_listener`.
  std::uint64_t add_listener(NodeCacheListener listener);
  std::uint64_t add_listener(NodeCacheListener listener, boost::asio::any_io_executor executor);

  friend struct detail::access;

 private:
  NodeCache(std::shared_ptr<detail::Core> core, std::string path);
};

}  // namespace zkr
