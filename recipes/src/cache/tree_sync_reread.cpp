// TreeSync: reading the cached tree again: after a reconnect or a new session (resync), when the cache's user
// asks (rebuild, rebuild_node, after clear), and after a read failed (retry). One body, `reread_all`, serves
// the resync and the rebuild, so that both report exactly the difference (see docs/caches.md).

#include <spdlog/logger.h>

#include <iterator>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/tree_sync.hpp>

namespace zkr::detail {

void TreeSync::resync(bool new_session) {
  if (new_session) {
    // The session's watches are gone (each got session_lost): every read sets its watch again.
    armed_ = false;
    root_exists_watch_ = 0;
    std::lock_guard lk(mu_);
    nodes_.forget_watches();
  }
  arm_strategy();
  dirty_.clear();
  reread_all({});
}

void TreeSync::reread_all(const Passes& passes) {
  read_data(opt_.root, passes);
  for (const auto& c : snapshot()) {
    if (c.path != opt_.root) read_data(c.path, passes);
    if (descends(c.path)) read_children(c.path, passes);
  }
}

// ---------------------------------------------------------------------------------------------------------
// On demand

std::shared_ptr<RereadPass> TreeSync::new_pass(VoidCallback done) {
  std::erase_if(passes_, [](const std::weak_ptr<RereadPass>& w) { return w.expired(); });
  auto pass = std::make_shared<RereadPass>(std::move(done));
  if (!running_)
    pass->fail(client_errc::closed);
  else
    passes_.push_back(pass);
  return pass;
}

void TreeSync::rebuild(VoidCallback done) {
  auto pass = new_pass(std::move(done));
  if (running_) reread_all({pass});
}

void TreeSync::rebuild_node(const std::string& path, VoidCallback done) {
  auto pass = new_pass(std::move(done));
  if (running_) read_data(path, {pass});
}

void TreeSync::clear() {
  std::vector<WatchId> drop;
  std::vector<ChildData> removed;
  {
    std::lock_guard lk(mu_);
    for (const auto& name : nodes_.child_names(opt_.root).value_or(std::vector<std::string>{})) {
      auto gone = nodes_.remove_subtree(make_path(opt_.root, name), drop);
      removed.insert(removed.end(), std::make_move_iterator(gone.begin()),
                     std::make_move_iterator(gone.end()));
    }
  }
  for (const auto& gone : removed) {
    dirty_.erase({gone.path, Read::data});
    dirty_.erase({gone.path, Read::children});
  }
  for (auto id : drop) core_->remove_watch(id);
}

// ---------------------------------------------------------------------------------------------------------
// Failures

void TreeSync::failed(const std::string& path, Read kind, error_code ec, const Passes& passes) {
  for (auto& p : passes) p->fail(ec);
  if (is_retryable(ec) || is_session_lost(ec) || ec == client_errc::connection_timeout) {
    // Read again: at the next connection (its resync reads everything), or after a pause if connected.
    dirty_.emplace(path, kind);
    retry_later();
    return;
  }
  core_->logger()->warn("cache {}: reading {} failed: {}", opt_.root, path, ec.message());
}

void TreeSync::retry_later() {
  if (retry_armed_ || !running_) return;
  if (!retry_timer_) retry_timer_.emplace(core_->io_executor());
  retry_armed_ = true;
  retry_timer_->expires_after(opt_.retry_pause);
  retry_timer_->async_wait([weak = weak_from_this()](error_code ec) {
    auto self = weak.lock();
    if (!self) return;
    self->retry_armed_ = false;
    if (ec || !self->running_) return;
    if (!self->core_->is_connected()) return self->retry_later();
    self->flush_dirty();
  });
}

void TreeSync::flush_dirty() {
  if (!armed_) arm_strategy();
  auto dirty = std::exchange(dirty_, {});
  issued();  // keeps `initialized` back until the re-reads are sent
  for (auto& [path, kind] : dirty) kind == Read::data ? read_data(path) : read_children(path);
  answered();
}

}  // namespace zkr::detail
