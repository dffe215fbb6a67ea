#pragma once
/// \file
/// `CuratorCacheListener` and its builder (Curator 5's `CuratorCacheListener.builder()`), with the adapters
/// to the listener shapes of the deprecated caches.

#include <functional>
#include <optional>
#include <string>
#include <vector>
#include <zkr/recipes/cache/cache_events.hpp>
#include <zkr/recipes/cache/child_data.hpp>

namespace zkr {

class CuratorCacheListenerBuilder;

/// Curator's `CuratorCacheListener`: `event(type, old_data, data)` for each change of the cached tree
/// (`old_data` empty for node_created, `data` empty for node_deleted) and `initialized()` once the first load
/// is complete. Either may be empty. No connection states reach it (as in Curator).
struct CuratorCacheListener {
  enum class Type { node_created, node_changed, node_deleted };
  using EventFn = std::function<void(Type type, const std::optional<ChildData>& old_data,
                                     const std::optional<ChildData>& data)>;

  EventFn event;
  std::function<void()> initialized;

  /// Curator's `CuratorCacheListener.builder()`.
  static CuratorCacheListenerBuilder builder();
};

/// Curator's `CuratorCacheListenerBuilder`: one listener made of several parts, each called for its types.
class CuratorCacheListenerBuilder {
 public:
  using ChangeListener = std::function<void(const ChildData& old_node, const ChildData& node)>;

  /// Every event (`forAll`).
  CuratorCacheListenerBuilder& for_all(CuratorCacheListener listener);
  /// node_created, with the new node (`forCreates`).
  CuratorCacheListenerBuilder& for_creates(std::function<void(const ChildData&)> listener);
  /// node_changed, with the old and the new node (`forChanges`).
  CuratorCacheListenerBuilder& for_changes(ChangeListener listener);
  /// node_created and node_changed; `old_node` empty for a create (`forCreatesAndChanges`).
  CuratorCacheListenerBuilder& for_creates_and_changes(
      std::function<void(const std::optional<ChildData>& old_node, const ChildData& node)> listener);
  /// node_deleted, with the node as last cached (`forDeletes`).
  CuratorCacheListenerBuilder& for_deletes(std::function<void(const ChildData&)> listener);
  /// `initialized()` (`forInitialized`).
  CuratorCacheListenerBuilder& for_initialized(std::function<void()> listener);
  /// PathChildrenCache's shape (`forPathChildrenCache`): created/changed/deleted as CHILD_ADDED/UPDATED/
  /// REMOVED, `initialized()` as INITIALIZED; events of `root_path` itself are dropped, deeper ones passed on
  /// (as Curator's adapter does; cache with `single level` to get children only). No CONNECTION_* events.
  CuratorCacheListenerBuilder& for_path_children_cache(std::string root_path,
                                                       PathChildrenCacheListener listener);
  /// TreeCache's shape (`forTreeCache`): NODE_ADDED/UPDATED/REMOVED and INITIALIZED; no CONNECTION_* events.
  CuratorCacheListenerBuilder& for_tree_cache(TreeCacheListener listener);
  /// NodeCache's shape (`forNodeCache`): `node_changed()` for every event (meant for a single-node cache).
  CuratorCacheListenerBuilder& for_node_cache(NodeCacheListener listener);
  /// The built listener drops every event until its own `initialized()` has run (`afterInitialized`).
  CuratorCacheListenerBuilder& after_initialized();
  CuratorCacheListener build();

 private:
  std::vector<CuratorCacheListener> parts_;
  bool after_initialized_ = false;
};

}  // namespace zkr
