// CuratorCache and its builder (see zkr/recipes/cache/curator_cache.hpp).

#include <algorithm>
#include <zkr/recipes/cache/curator_cache.hpp>

#include "cache_options.hpp"

namespace zkr {

namespace {

std::shared_ptr<detail::CacheCore> make_core(std::shared_ptr<detail::Core> core, std::string path,
                                             const std::vector<CuratorCache::Options>& options,
                                             bool data_not_cached) {
  auto o = detail::cache_options(std::move(path), "CuratorCache");
  auto has = [&](CuratorCache::Options x) {
    return std::find(options.begin(), options.end(), x) != options.end();
  };
  if (has(CuratorCache::Options::single_node_cache)) o.max_depth = 0;
  o.keep_on_close = has(CuratorCache::Options::do_not_clear_on_close);
  o.cache_data = !data_not_cached;
  return std::make_shared<detail::CacheCore>(std::move(core), std::move(o));
}

CuratorCacheListener::Type to_type(detail::SyncEvent::Kind k) {
  switch (k) {
    case detail::SyncEvent::Kind::created:
      return CuratorCacheListener::Type::node_created;
    case detail::SyncEvent::Kind::changed:
      return CuratorCacheListener::Type::node_changed;
    default:
      return CuratorCacheListener::Type::node_deleted;
  }
}

}  // namespace

CuratorCache::CuratorCache(std::shared_ptr<detail::Core> core, std::string path, std::vector<Options> options,
                           bool data_not_cached)
    : BasicCache(make_core(std::move(core), std::move(path), options, data_not_cached)) {}

CuratorCache CuratorCache::build(CuratorFramework& client, std::string path,
                                 std::initializer_list<Options> options) {
  return CuratorCache(detail::access::core(client), std::move(path), std::vector<Options>(options), false);
}

CuratorCacheBuilder CuratorCache::builder(CuratorFramework& client, std::string path) {
  return CuratorCacheBuilder(client, std::move(path));
}

void CuratorCache::start(error_code& ec) { ec = impl_->start(); }
void CuratorCache::start() {
  error_code ec;
  start(ec);
  throw_if(ec, "CuratorCache::start", path());
}

std::optional<ChildData> CuratorCache::get(const std::string& p) const { return impl_->get(p); }
std::vector<ChildData> CuratorCache::stream() const { return impl_->snapshot(); }
std::vector<ChildData> CuratorCache::children_of(const std::string& parent) const {
  auto c = impl_->children_of(parent);
  return c ? std::move(*c) : std::vector<ChildData>{};
}

std::uint64_t CuratorCache::add_listener(CuratorCacheListener listener) {
  return add_listener(std::move(listener), impl_->core()->completion_executor());
}

std::uint64_t CuratorCache::add_listener(CuratorCacheListener l, boost::asio::any_io_executor executor) {
  return impl_->add_listener(
      [l = std::move(l)](const detail::SyncEvent& ev) {
        using K = detail::SyncEvent::Kind;
        if (ev.kind == K::connection) return;
        if (ev.kind == K::initialized) {
          if (l.initialized) l.initialized();
          return;
        }
        if (l.event) l.event(to_type(ev.kind), ev.old_data, ev.data);
      },
      std::move(executor));
}

CuratorCacheBuilder& CuratorCacheBuilder::with_options(std::initializer_list<CuratorCache::Options> options) {
  options_.insert(options_.end(), options.begin(), options.end());
  return *this;
}
CuratorCacheBuilder& CuratorCacheBuilder::with_data_not_cached() {
  data_not_cached_ = true;
  return *this;
}
CuratorCache CuratorCacheBuilder::build() {
  return CuratorCache(detail::access::core(*client_), path_, options_, data_not_cached_);
}

}  // namespace zkr
