// PathChildrenCache: the engine on a node and its children (max depth 1), root events dropped.

#include <zkr/recipes/cache/path_children_cache.hpp>

#include "cache_options.hpp"

namespace zkr {

namespace {
std::shared_ptr<detail::CacheCore> make_core(std::shared_ptr<detail::Core> core, std::string path,
                                             bool data) {
  auto o = detail::cache_options(std::move(path), "PathChildrenCache");
  o.max_depth = 1;
  o.cache_data = data;
  return std::make_shared<detail::CacheCore>(std::move(core), std::move(o));
}

std::optional<PathChildrenCacheEvent::Type> connection_type(ConnectionState s) {
  using T = PathChildrenCacheEvent::Type;
  switch (s) {
    case ConnectionState::suspended:
      return T::connection_suspended;
    case ConnectionState::reconnected:
      return T::connection_reconnected;
    case ConnectionState::lost:
      return T::connection_lost;
    default:
      return std::nullopt;
  }
}
}  // namespace

PathChildrenCache::PathChildrenCache(std::shared_ptr<detail::Core> core, std::string path, bool cache_data)
    : BasicCache(make_core(std::move(core), std::move(path), cache_data)) {}
PathChildrenCache::PathChildrenCache(CuratorFramework& client, std::string path, bool cache_data)
    : PathChildrenCache(detail::access::core(client), std::move(path), cache_data) {}

void PathChildrenCache::start(StartMode mode, error_code& ec) {
  *mode_ = mode;
  ec = impl_->start(mode == StartMode::build_initial_cache);
  if (!ec && mode == StartMode::build_initial_cache) (void)impl_->await_initialized(std::nullopt, ec);
}
void PathChildrenCache::start(StartMode mode) {
  error_code ec;
  start(mode, ec);
  throw_if(ec, "PathChildrenCache::start", path());
}

std::vector<ChildData> PathChildrenCache::get_current_data() const {
  auto c = impl_->children_of(path());
  return c ? std::move(*c) : std::vector<ChildData>{};
}
std::optional<ChildData> PathChildrenCache::get_current_data(const std::string& full_path) const {
  if (full_path == path()) return std::nullopt;
  return impl_->get(full_path);
}

error_code PathChildrenCache::child_error(const std::string& full_path) const {
  if (path_error(full_path)) return client_errc::invalid_path;
  if (full_path == "/" || parent_path(full_path) != path()) return client_errc::invalid_argument;
  return {};
}

void PathChildrenCache::rebuild(error_code& ec) { reread(Reread::tree, {}, ec); }
void PathChildrenCache::rebuild() {
  error_code ec;
  rebuild(ec);
  throw_if(ec, "PathChildrenCache::rebuild", path());
}

void PathChildrenCache::rebuild_node(const std::string& full_path, error_code& ec) {
  if ((ec = child_error(full_path))) return;
  reread(Reread::node, full_path, ec);
}
void PathChildrenCache::rebuild_node(const std::string& full_path) {
  error_code ec;
  rebuild_node(full_path, ec);
  throw_if(ec, "PathChildrenCache::rebuild_node", full_path);
}

void PathChildrenCache::clear() { impl_->clear(); }

void PathChildrenCache::clear_and_refresh(error_code& ec) { reread(Reread::cleared_tree, {}, ec); }
void PathChildrenCache::clear_and_refresh() {
  error_code ec;
  clear_and_refresh(ec);
  throw_if(ec, "PathChildrenCache::clear_and_refresh", path());
}

void PathChildrenCache::clear_data_bytes(const std::string& full_path) {
  (void)clear_data_bytes(full_path, -1);
}
bool PathChildrenCache::clear_data_bytes(const std::string& full_path, std::int32_t if_version) {
  return full_path != path() && impl_->clear_data_bytes(full_path, if_version);
}

std::uint64_t PathChildrenCache::add_listener(PathChildrenCacheListener listener) {
  return add_listener(std::move(listener), impl_->core()->completion_executor());
}
std::uint64_t PathChildrenCache::add_listener(PathChildrenCacheListener l,
                                              boost::asio::any_io_executor executor) {
  // The mode is read when an event is delivered: a listener added before `start` follows the start's mode.
  return impl_->add_listener(
      [l = std::move(l), this_mode = mode_,
       weak = std::weak_ptr<detail::CacheCore>(impl_)](const detail::SyncEvent& ev) {
        using K = detail::SyncEvent::Kind;
        using T = PathChildrenCacheEvent::Type;
        auto impl = weak.lock();
        if (!impl) return;
        PathChildrenCacheEvent out;
        switch (ev.kind) {
          case K::connection: {
            auto t = connection_type(ev.state);
            if (!t) return;
            out.type = *t;
            break;
          }
          case K::initialized: {
            if (this_mode->load() != StartMode::post_initialized_event) return;
            out.type = T::initialized;
            auto c = impl->children_of(impl->path());
            if (c) out.initial_data = std::move(*c);
            break;
          }
          default: {
            const auto& node = ev.kind == K::deleted ? ev.old_data : ev.data;
            if (!node || node->path == impl->path()) return;
            out.type = ev.kind == K::created   ? T::child_added
                       : ev.kind == K::changed ? T::child_updated
                                               : T::child_removed;
            out.data = node;
          }
        }
        l(out);
      },
      std::move(executor));
}

}  // namespace zkr
