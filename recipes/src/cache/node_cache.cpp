// NodeCache: the engine on one node (max depth 0), with NodeCache's listener shape.

#include <zkr/recipes/cache/node_cache.hpp>

#include "cache_options.hpp"

namespace zkr {

namespace {
std::shared_ptr<detail::CacheCore> make_core(std::shared_ptr<detail::Core> core, std::string path) {
  auto o = detail::cache_options(std::move(path), "NodeCache");
  o.max_depth = 0;
  return std::make_shared<detail::CacheCore>(std::move(core), std::move(o));
}
}  // namespace

NodeCache::NodeCache(std::shared_ptr<detail::Core> core, std::string path)
    : BasicCache(make_core(std::move(core), std::move(path))) {}
NodeCache::NodeCache(CuratorFramework& client, std::string path)
    : NodeCache(detail::access::core(client), std::move(path)) {}

void NodeCache::start(bool build_initial, error_code& ec) {
  ec = impl_->start(build_initial);
  if (!ec && build_initial) (void)impl_->await_initialized(std::nullopt, ec);
}
void NodeCache::start(bool build_initial) {
  error_code ec;
  start(build_initial, ec);
  throw_if(ec, "NodeCache::start", path());
}

void NodeCache::rebuild(error_code& ec) { reread(Reread::tree, {}, ec); }
void NodeCache::rebuild() {
  error_code ec;
  rebuild(ec);
  throw_if(ec, "NodeCache::rebuild", path());
}

std::optional<ChildData> NodeCache::get_current_data() const { return impl_->get(path()); }

std::uint64_t NodeCache::add_listener(NodeCacheListener listener) {
  return add_listener(std::move(listener), impl_->core()->completion_executor());
}
std::uint64_t NodeCache::add_listener(NodeCacheListener l, boost::asio::any_io_executor executor) {
  return impl_->add_listener(
      [l = std::move(l)](const detail::SyncEvent& ev) {
        using K = detail::SyncEvent::Kind;
        if (ev.kind == K::created || ev.kind == K::changed || ev.kind == K::deleted) l();
      },
      std::move(executor));
}

}  // namespace zkr
