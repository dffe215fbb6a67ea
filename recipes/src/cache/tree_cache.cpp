// TreeCache and its builder: the engine with a depth limit and a selector, TreeCache's listener shape.

#include <zkr/recipes/cache/tree_cache.hpp>

#include "cache_options.hpp"

namespace zkr {

namespace {
std::shared_ptr<detail::CacheCore> make_core(std::shared_ptr<detail::Core> core, std::string path, bool data,
                                             int max_depth, TreeCacheSelector selector) {
  auto o = detail::cache_options(std::move(path), "TreeCache");
  o.cache_data = data;
  o.max_depth = max_depth < 0 ? 0 : max_depth;
  o.traverse_children = std::move(selector.traverse_children);
  o.accept_child = std::move(selector.accept_child);
  return std::make_shared<detail::CacheCore>(std::move(core), std::move(o));
}
}  // namespace

TreeCache::TreeCache(std::shared_ptr<detail::Core> core, std::string path, bool cache_data, int max_depth,
                     TreeCacheSelector selector)
    : BasicCache(make_core(std::move(core), std::move(path), cache_data, max_depth, std::move(selector))) {}
TreeCache::TreeCache(CuratorFramework& client, std::string path)
    : TreeCache(detail::access::core(client), std::move(path), true, std::numeric_limits<int>::max(), {}) {}

TreeCacheBuilder TreeCache::new_builder(CuratorFramework& client, std::string path) {
  return TreeCacheBuilder(client, std::move(path));
}

void TreeCache::start(error_code& ec) { ec = impl_->start(); }
void TreeCache::start() {
  error_code ec;
  start(ec);
  throw_if(ec, "TreeCache::start", path());
}

std::optional<ChildData> TreeCache::get_current_data(const std::string& full_path) const {
  return impl_->get(full_path);
}
std::optional<std::map<std::string, ChildData>> TreeCache::get_current_children(
    const std::string& full_path) const {
  auto c = impl_->children_of(full_path);
  if (!c) return std::nullopt;
  std::map<std::string, ChildData> out;
  for (auto& d : *c) out.emplace(node_name(d.path), std::move(d));
  return out;
}
std::vector<ChildData> TreeCache::snapshot() const { return impl_->snapshot(); }

std::uint64_t TreeCache::add_listener(TreeCacheListener listener) {
  return add_listener(std::move(listener), impl_->core()->completion_executor());
}
std::uint64_t TreeCache::add_listener(TreeCacheListener l, boost::asio::any_io_executor executor) {
  return impl_->add_listener(
      [l = std::move(l)](const detail::SyncEvent& ev) {
        using K = detail::SyncEvent::Kind;
        using T = TreeCacheEvent::Type;
        TreeCacheEvent out;
        switch (ev.kind) {
          case K::connection:
            if (ev.state == ConnectionState::suspended)
              out.type = T::connection_suspended;
            else if (ev.state == ConnectionState::reconnected)
              out.type = T::connection_reconnected;
            else if (ev.state == ConnectionState::lost)
              out.type = T::connection_lost;
            else
              return;
            break;
          case K::initialized:
            out.type = T::initialized;
            break;
          case K::created:
            out.type = T::node_added;
            out.data = ev.data;
            break;
          case K::changed:
            out.type = T::node_updated;
            out.data = ev.data;
            out.old_data = ev.old_data;
            break;
          case K::deleted:
            out.type = T::node_removed;
            out.data = ev.old_data;
            break;
        }
        l(out);
      },
      std::move(executor));
}

TreeCacheBuilder& TreeCacheBuilder::set_cache_data(bool cache_data) {
  cache_data_ = cache_data;
  return *this;
}
TreeCacheBuilder& TreeCacheBuilder::set_max_depth(int max_depth) {
  max_depth_ = max_depth;
  return *this;
}
TreeCacheBuilder& TreeCacheBuilder::set_selector(TreeCacheSelector selector) {
  selector_ = std::move(selector);
  return *this;
}
TreeCache TreeCacheBuilder::build() {
  return TreeCache(detail::access::core(*client_), path_, cache_data_, max_depth_, selector_);
}

}  // namespace zkr
