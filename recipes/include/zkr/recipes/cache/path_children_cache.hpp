#pragma once
/// \file
/// `PathChildrenCache`: Curator's (deprecated) cache of the children of a node.

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
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

  /// `path` is validated (`Error` with `client_errc::invalid_path`).
  PathChildrenCache(CuratorFramework& client, std::string path, bool cache_data = true);

  /// Errors: as `CuratorCache::start`, and for build_initial_cache `await_initialized`'s.
  void start(StartMode mode = StartMode::normal);
  void start(StartMode mode, error_code& ec);

  /// The children cached now, sorted by path (Curator's `getCurrentData()`).
  std::vector<ChildData> get_current_data() const;
  /// One child by its full path (Curator's `getCurrentData(fullPath)`).
  std::optional<ChildData> get_current_data(const std::string& full_path) const;

  /// Curator's `rebuild()`: reads the children and their data from the server now and returns once every
  /// read is answered. It runs the engine's resync, the code that runs after a reconnect: the cache ends as
  /// the server was when read, a change seen meanwhile by a watch is never lost, a child's version never goes
  /// back. Unlike Curator's (which posts nothing), what it finds different from the cache is reported as
  /// CHILD_ADDED / UPDATED / REMOVED, so that the listeners' view stays the cache's: a cache in step with the
  /// server gets no event. Bytes dropped by `clear_data_bytes` come back, silently (the same version).
  /// Errors: `client_errc::not_started`, `client_errc::closed`; `client_errc::would_deadlock` on the client's
  /// I/O thread (a listener on the default executor: use `async_rebuild` there); a read's error (a connection
  /// loss, once the retry policy gave up), after which the cache still repairs itself at the next connection.
  /// Thread-safety: any thread.
  void rebuild();
  void rebuild(error_code& ec);
  /// `rebuild`, asynchronously. Handler: `void(error_code)`, on the handler's executor, else the client's
  /// completion executor. Cancellation: terminal, partial, total: completes at once with
  /// `operation_aborted`; the reads still finish (they change the cache only towards the server's state).
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_rebuild(Token&& token = {}) {
    return async_reread("PathChildrenCache::rebuild", Reread::tree, {}, {}, std::forward<Token>(token));
  }

  /// Curator's `rebuildNode(fullPath)`: reads one child again: added, updated or removed (a child deleted
  /// meanwhile) as `rebuild` reports. Errors: as `rebuild`, and `client_errc::invalid_path` for a bad path,
  /// `client_errc::invalid_argument` for a path that is not a child of `path()` (Curator's
  /// IllegalArgumentException).
  void rebuild_node(const std::string& full_path);
  void rebuild_node(const std::string& full_path, error_code& ec);
  /// `rebuild_node`, asynchronously (as `async_rebuild`).
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_rebuild_node(std::string full_path, Token&& token = {}) {
    auto refuse = child_error(full_path);
    return async_reread("PathChildrenCache::rebuild_node", Reread::node, std::move(full_path), refuse,
                        std::forward<Token>(token));
  }

  /// Curator's `clear()`: empties the cache, without events. The parent's watch stays: its next change
  /// lists the children again and brings them back as CHILD_ADDED (as in Curator). Nothing when not started
  /// or closed. Waits for the client's I/O thread (runs at once when called there, as from a listener).
  void clear();
  /// Curator's `clearAndRefresh()`: `clear()`, then `rebuild()`: CHILD_ADDED for each child found. Unlike
  /// Curator's, returns once the children are read (the events may still be on their way to the listeners).
  /// Errors: as `rebuild`.
  void clear_and_refresh();
  void clear_and_refresh(error_code& ec);
  /// `clear_and_refresh`, asynchronously (as `async_rebuild`).
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_clear_and_refresh(Token&& token = {}) {
    return async_reread("PathChildrenCache::clear_and_refresh", Reread::cleared_tree, {}, {},
                        std::forward<Token>(token));
  }

  /// Curator's `clearDataBytes(fullPath)`: drops a cached child's bytes to save memory, keeping its Stat
  /// (`data` empty, `stat.data_length` as read). No event; the next read of the child (a change, a
  /// `rebuild`) brings bytes again. Nothing when the child is not cached, or the cache not started or closed.
  void clear_data_bytes(const std::string& full_path);
  /// Curator's `clearDataBytes(fullPath, ifVersion)`: only when the cached child's `stat.version` is
  /// `if_version` (any version when negative). True when the child is cached with that version (its bytes
  /// are then dropped, if any were), false otherwise (a stale version, a child not cached, not started,
  /// closed).
  bool clear_data_bytes(const std::string& full_path, std::int32_t if_version);

  /// `getListenable().addListener(listener[, executor])`: returns an id for `remove_listener`.
  std::uint64_t add_listener(PathChildrenCacheListener listener);
  std::uint64_t add_listener(PathChildrenCacheListener listener, boost::asio::any_io_executor executor);

  friend struct detail::access;

 private:
  PathChildrenCache(std::shared_ptr<detail::Core> core, std::string path, bool cache_data);
  /// Why `full_path` cannot be rebuilt: not a valid path, or not a child of `path()`.
  error_code child_error(const std::string& full_path) const;
  std::shared_ptr<std::atomic<StartMode>> mode_ = std::make_shared<std::atomic<StartMode>>(StartMode::normal);
};

}  // namespace zkr
