#pragma once
/// \file
/// `PathChildrenCache`: Curator's (deprecated) cache of the children of a node.

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zkr/recipes/cache/basic_cache.hpp>
#include <zkr/recipes/cache/cache_events.hpp>
#include <zkr/recipes/cache/child_data.hpp>

namespace zkr {

/// Curator's `PathChildrenCache`: the direct children of `path` with their data (unless `cache_data` is
/// false), CHILD_ADDED/UPDATED/REMOVED events and the connection states. Unlike Curator's it never creates
/// `path` (CURATOR-120): a missing or reaped parent is waited for and its children picked up when it comes
/// back (CURATOR-388).
class PathChildrenCache : public BasicCache {
 public:
  /// Curator's `PathChildrenCache.StartMode`.
  enum class StartMode {
    normal,                  ///< CHILD_ADDED for the children found at start
    build_initial_cache,     ///< `start` waits for the first load; no events for it
    post_initialized_event,  ///< CHILD_ADDED for the first load, then INITIALIZED with the children
  };

  /// `path` is validated (`Error` with `errc::invalid_path`).
  PathChildrenCache(CuratorFramework& client, std::string path, bool cache_data = true);

  /// Errors: as `CuratorCache::start`, and for build_initial_cache `await_initialized`'s.
  void start(StartMode mode = StartMode::normal);
  void start(StartMode mode, error_code& ec);

  /// The children cached now, sorted by path (Curator's `getCurrentData()`).
  std::vector<ChildData> get_current_data() const;
  /// One child by its full path (Curator's `getCurrentData(fullPath)`).
  std::optional<ChildData> get_current_data(const std::string& full_path) const;

  /// `getListenable().addListener(listener[, executor])`: returns an id for `remove_listener`.
  std::uint64_t add_listener(PathChildrenCacheListener listener);
  std::uint64_t add_listener(PathChildrenCacheListener listener, boost::asio::any_io_executor executor);

  friend struct detail::access;

 private:
  PathChildrenCache(std::shared_ptr<detail::Core> core, std::string path, bool cache_data);
  std::shared_ptr<std::atomic<StartMode>> mode_ = std::make_shared<std::atomic<StartMode>>(StartMode::normal);
};

}  // namespace zkr
