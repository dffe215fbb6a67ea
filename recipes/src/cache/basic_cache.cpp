// BasicCache: the members every cache class shares (see zkr/recipes/cache/basic_cache.hpp).

#include <zkr/recipes/cache/basic_cache.hpp>
#include <zkr/recipes/detail/cache_core.hpp>

namespace zkr {

BasicCache::BasicCache(std::shared_ptr<detail::CacheCore> impl) : impl_(std::move(impl)) {}

BasicCache::~BasicCache() {
  if (impl_) impl_->close();
}

void BasicCache::close() { impl_->close(); }

void BasicCache::await_initialized(error_code& ec) { (void)impl_->await_initialized(std::nullopt, ec); }
void BasicCache::await_initialized() {
  error_code ec;
  await_initialized(ec);
  throw_if(ec, "cache::await_initialized", path());
}
bool BasicCache::await_initialized(std::chrono::milliseconds timeout) {
  error_code ec;
  return impl_->await_initialized(timeout, ec);
}

std::uint64_t BasicCache::await_start(const std::shared_ptr<detail::CacheCore>& impl,
                                      detail::VoidCallback cb) {
  return impl->await_start(std::move(cb));
}
void BasicCache::forget_waiter(const std::shared_ptr<detail::CacheCore>& impl, std::uint64_t id) {
  impl->forget(id);
}

void BasicCache::reread_start(const std::shared_ptr<detail::CacheCore>& impl, Reread what,
                              const std::string& node, detail::VoidCallback cb) {
  impl->reread(what == Reread::node ? node : std::string(), what == Reread::cleared_tree, std::move(cb));
}

void BasicCache::reread(Reread what, const std::string& node, error_code& ec) {
  // Checked here too: a cache on a closed client must not wait for its I/O thread.
  if ((ec = impl_->not_running())) return;
  detail::run_blocking_void(
      *impl_->core(),
      [i = impl_, what, node](detail::VoidCallback done) { reread_start(i, what, node, std::move(done)); },
      ec);
}

void BasicCache::remove_listener(std::uint64_t id) { impl_->remove_listener(id); }
std::size_t BasicCache::size() const { return impl_->size(); }
const std::string& BasicCache::path() const noexcept { return impl_->path(); }
bool BasicCache::uses_persistent_watch() const { return impl_->sync().persistent(); }
std::size_t BasicCache::watch_count() const { return impl_->sync().watches(); }
std::shared_ptr<detail::Core> BasicCache::core() const { return impl_->core(); }

}  // namespace zkr
