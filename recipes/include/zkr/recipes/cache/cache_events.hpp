#pragma once
/// \file
/// The listener shapes of Curator's deprecated caches, kept for ports: `PathChildrenCacheEvent` and its
/// listener, `TreeCacheEvent` and its listener, `NodeCacheListener`. Each cache class of zkrecipes delivers
/// its own shape; `CuratorCacheListener::builder()` adapts a `CuratorCache` to any of them.

#include <functional>
#include <optional>
#include <vector>
#include <zkr/recipes/cache/child_data.hpp>

namespace zkr {

/// Curator's `PathChildrenCacheEvent`.
struct PathChildrenCacheEvent {
  enum class Type {
    child_added,
    child_updated,
    child_removed,
    connection_suspended,
    connection_reconnected,
    connection_lost,
    initialized,  ///< PathChildrenCache::StartMode::post_initialized_event: the first load is complete
  };
  Type type = Type::child_added;
  /// The child (its new state; for child_removed, its last cached state); empty for the other types.
  std::optional<ChildData> data;
  /// initialized only: the children at that time (Curator's `getInitialData()`).
  std::vector<ChildData> initial_data;
};
/// Curator's `PathChildrenCacheListener.childEvent` (without the client argument: capture it if needed).
using PathChildrenCacheListener = std::function<void(const PathChildrenCacheEvent&)>;

/// Curator's `TreeCacheEvent`.
struct TreeCacheEvent {
  enum class Type {
    node_added,
    node_updated,
    node_removed,
    connection_suspended,
    connection_reconnected,
    connection_lost,
    initialized,
  };
  Type type = Type::node_added;
  std::optional<ChildData> data;      ///< the node (for node_removed its last cached state)
  std::optional<ChildData> old_data;  ///< node_updated only
};
/// Curator's `TreeCacheListener.childEvent` (without the client argument).
using TreeCacheListener = std::function<void(const TreeCacheEvent&)>;

/// Curator's `NodeCacheListener.nodeChanged`.
using NodeCacheListener = std::function<void()>;

}  // namespace zkr
