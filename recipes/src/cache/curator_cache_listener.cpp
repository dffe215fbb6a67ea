// CuratorCacheListener's builder and its adapters to the deprecated caches' shapes.

#include <atomic>
#include <memory>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/cache/curator_cache_listener.hpp>

namespace zkr {

using Type = CuratorCacheListener::Type;
using Opt = std::optional<ChildData>;

CuratorCacheListenerBuilder CuratorCacheListener::builder() { return {}; }

CuratorCacheListenerBuilder& CuratorCacheListenerBuilder::for_all(CuratorCacheListener listener) {
  parts_.push_back(std::move(listener));
  return *this;
}

CuratorCacheListenerBuilder& CuratorCacheListenerBuilder::for_creates(
    std::function<void(const ChildData&)> f) {
  parts_.push_back({[f = std::move(f)](Type t, const Opt&, const Opt& d) {
                      if (t == Type::node_created && d) f(*d);
                    },
                    {}});
  return *this;
}

CuratorCacheListenerBuilder& CuratorCacheListenerBuilder::for_changes(ChangeListener f) {
  parts_.push_back({[f = std::move(f)](Type t, const Opt& o, const Opt& d) {
                      if (t == Type::node_changed && o && d) f(*o, *d);
                    },
                    {}});
  return *this;
}

CuratorCacheListenerBuilder& CuratorCacheListenerBuilder::for_creates_and_changes(
    std::function<void(const Opt&, const ChildData&)> f) {
  parts_.push_back({[f = std::move(f)](Type t, const Opt& o, const Opt& d) {
                      if (t != Type::node_deleted && d) f(o, *d);
                    },
                    {}});
  return *this;
}

CuratorCacheListenerBuilder& CuratorCacheListenerBuilder::for_deletes(
    std::function<void(const ChildData&)> f) {
  parts_.push_back({[f = std::move(f)](Type t, const Opt& o, const Opt&) {
                      if (t == Type::node_deleted && o) f(*o);
                    },
                    {}});
  return *this;
}

CuratorCacheListenerBuilder& CuratorCacheListenerBuilder::for_initialized(std::function<void()> f) {
  parts_.push_back({{}, std::move(f)});
  return *this;
}

CuratorCacheListenerBuilder& CuratorCacheListenerBuilder::for_path_children_cache(
    std::string root, PathChildrenCacheListener f) {
  auto shared = std::make_shared<PathChildrenCacheListener>(std::move(f));
  parts_.push_back({[shared, root = std::move(root)](Type t, const Opt& o, const Opt& d) {
                      const auto& node = t == Type::node_deleted ? o : d;
                      if (!node || node->path == root) return;
                      PathChildrenCacheEvent ev;
                      ev.type = t == Type::node_created   ? PathChildrenCacheEvent::Type::child_added
                                : t == Type::node_changed ? PathChildrenCacheEvent::Type::child_updated
                                                          : PathChildrenCacheEvent::Type::child_removed;
                      ev.data = node;
                      (*shared)(ev);
                    },
                    [shared] {
                      PathChildrenCacheEvent ev;
                      ev.type = PathChildrenCacheEvent::Type::initialized;
                      (*shared)(ev);
                    }});
  return *this;
}

CuratorCacheListenerBuilder& CuratorCacheListenerBuilder::for_tree_cache(TreeCacheListener f) {
  auto shared = std::make_shared<TreeCacheListener>(std::move(f));
  parts_.push_back({[shared](Type t, const Opt& o, const Opt& d) {
                      TreeCacheEvent ev;
                      ev.type = t == Type::node_created   ? TreeCacheEvent::Type::node_added
                                : t == Type::node_changed ? TreeCacheEvent::Type::node_updated
                                                          : TreeCacheEvent::Type::node_removed;
                      ev.data = t == Type::node_deleted ? o : d;
                      if (t == Type::node_changed) ev.old_data = o;
                      (*shared)(ev);
                    },
                    [shared] {
                      TreeCacheEvent ev;
                      ev.type = TreeCacheEvent::Type::initialized;
                      (*shared)(ev);
                    }});
  return *this;
}

CuratorCacheListenerBuilder& CuratorCacheListenerBuilder::for_node_cache(NodeCacheListener f) {
  parts_.push_back({[f = std::move(f)](Type, const Opt&, const Opt&) { f(); }, {}});
  return *this;
}

CuratorCacheListenerBuilder& CuratorCacheListenerBuilder::after_initialized() {
  after_initialized_ = true;
  return *this;
}

CuratorCacheListener CuratorCacheListenerBuilder::build() {
  auto parts = std::make_shared<const std::vector<CuratorCacheListener>>(std::move(parts_));
  parts_.clear();
  // Calls of one listener come one at a time (a strand), so a plain flag would do; atomic for copies of it.
  auto ready = std::make_shared<std::atomic<bool>>(!after_initialized_);
  CuratorCacheListener out;
  out.event = [parts, ready](Type t, const Opt& o, const Opt& d) {
    if (!*ready) return;
    for (auto& p : *parts)
      if (p.event) p.event(t, o, d);
  };
  out.initialized = [parts, ready] {
    *ready = true;
    for (auto& p : *parts)
      if (p.initialized) p.initialized();
  };
  return out;
}

}  // namespace zkr
