#pragma once
/// \file
/// `detail::TreeStore`: what the cache engine (`detail::TreeSync`) keeps of the cached tree, `path -> (Stat,
/// bytes, one-shot watches)`, shaped as the tree itself: each node is one allocation holding its Stat, its
/// name (not its path) and its bytes, and knows its children through a hash table of its own. Lookup by path
/// walks the path's names; a parent's children are found in O(children), a subtree in O(subtree). Path order
/// (`snapshot`) and name order (`children_of`) are made on demand. Not API; not thread-safe: TreeSync guards
/// it with its mutex.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include <zkr/framework/detail/core.hpp>
#include <zkr/recipes/cache/child_data.hpp>

namespace zkr::detail {

namespace tree_store {
struct Node;   // one cached node (tree_store.cpp)
struct Table;  // a node's children, by name (tree_store.cpp)
}  // namespace tree_store

/// The one-shot watches a cached node holds (0: none). A node gets room for them with its first watch, so a
/// cache on a persistent watch pays nothing for them.
struct NodeWatches {
  WatchId data = 0;
  WatchId children = 0;
};

class TreeStore {
 public:
  enum class WatchKind { data, children };

  /// A store for the tree below `root` (an absolute path; "/" for the whole tree).
  explicit TreeStore(std::string root);
  ~TreeStore();
  TreeStore(const TreeStore&) = delete;
  TreeStore& operator=(const TreeStore&) = delete;

  std::size_t size() const noexcept { return size_; }
  bool contains(std::string_view path) const;
  std::optional<ChildData> get(std::string_view path) const;
  std::optional<Stat> stat(std::string_view path) const;
  /// Every node, in path order (std::string's order of the paths).
  std::vector<ChildData> snapshot() const;
  /// The children of `path`, in name order; nullopt when `path` is not held.
  std::optional<std::vector<ChildData>> children_of(std::string_view path) const;
  /// The names of the children of `path`, in name order; nullopt when `path` is not held.
  std::optional<std::vector<std::string>> child_names(std::string_view path) const;

  /// Adds `path`: false when it is held already, or when it is not the root and its parent is not held.
  bool insert(std::string_view path, const Stat& stat, std::string_view bytes, NodeWatches watches = {});
  /// Sets the Stat of a held node (false when not held).
  bool set_stat(std::string_view path, const Stat& stat);
  /// Sets the bytes of a held node (false when not held).
  bool set_bytes(std::string_view path, std::string_view bytes);

  /// The watches of `path`; nullopt when not held.
  std::optional<NodeWatches> watches(std::string_view path) const;
  /// Sets one watch of a held node and returns the one it replaces; 0 and nothing set when not held.
  WatchId set_watch(std::string_view path, WatchKind kind, WatchId id);
  /// The watches held by all the nodes.
  std::size_t watch_count() const noexcept { return watch_count_; }
  /// Forgets every node's watches (a new session: the server dropped them), without returning them.
  void forget_watches();
  /// Every node's watches, forgotten (to remove them on close).
  std::vector<WatchId> take_watches();

  /// Removes `path` and everything below it. Returns them deepest first (reverse path order) and appends
  /// their watches to `watches`; nothing when `path` is not held.
  std::vector<ChildData> remove_subtree(std::string_view path, std::vector<WatchId>& watches);
  /// Removes every node.
  void clear() noexcept;

 private:
  using Node = tree_store::Node;
  /// Where the node at `path` is referred to: its parent (nullptr for the root) and the slot holding it (its
  /// parent's table slot, or `root_`); no slot when not held.
  struct Place {
    Node* parent = nullptr;
    Node** slot = nullptr;
  };
  Place locate(std::string_view path) const;
  Node* find(std::string_view path) const {
    auto* s = locate(path).slot;
    return s ? *s : nullptr;
  }
  /// `top`'s subtree in path order, `top` first, as (path, node) pairs.
  static std::vector<std::pair<std::string, Node*>> walk(std::string top_path, Node* top);

  std::string root_path_;
  Node* root_ = nullptr;
  std::size_t size_ = 0;
  std::size_t watch_count_ = 0;
};

}  // namespace zkr::detail
