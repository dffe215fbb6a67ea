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
  /// `path` is validated (`Error` with `client_errc::invalid_path`).
  NodeCache(CuratorFramework& client, std::string path);

  /// Starts following the node; `build_initial` (Curator's `start(true)`) first waits until it is read
  /// (no listener call for that first read). Errors: as `CuratorCache::start`, and `await_initialized`'s.
  void start(bool build_initial = false);
  void start(bool build_initial, error_code& ec);

  /// The node as cached, empty while it does not exist (Curator's `getCurrentData()`).
  std::optional<ChildData> get_current_data() const;

  /// Curator's `rebuild()`: reads the node from the server now and returns once read, through the engine's
  /// resync (the code that runs after a reconnect): a change seen meanwhile by the watch is never lost, the
  /// version never goes back. Unlike Curator's (which calls no listener), a difference found is reported as
  /// `node_changed()`, so that listeners stay in step with `get_current_data()`; none when the cache was in
  /// step. Errors: `client_errc::not_started`, `client_errc::closed`; `client_errc::would_deadlock` on the
  /// client's I/O thread (a listener on the default executor: use `async_rebuild`); a read's error (the cache
  /// still repairs itself at the next connection). Thread-safety: any thread.
  void rebuild();
  void rebuild(error_code& ec);
  /// `rebuild`, asynchronously. Handler: `void(error_code)`, on the handler's executor, else the client's
  /// completion executor. Cancellation: terminal, partial, total: completes at once with
  /// `operation_aborted`; the read still finishes.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_rebuild(Token&& token = {}) {
    return async_reread("NodeCache::rebuild", Reread::tree, {}, {}, std::forward<Token>(token));
  }

  /// `getListenable().addListener(listener[, executor])`: returns an id for `remove_listener`.
  std::uint64_t add_listener(NodeCacheListener listener);
  std::uint64_t add_listener(NodeCacheListener listener, boost::asio::any_io_executor executor);

  friend struct detail::access;

 private:
  NodeCache(std::shared_ptr<detail::Core> core, std::string path);
};

}  // namespace zkr
