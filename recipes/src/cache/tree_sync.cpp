// TreeSync: the cache engine (see zkr/recipes/detail/tree_sync.hpp and docs/caches.md): start and close, the
// reads and what their replies change, the watches. Reading everything again (resync, rebuild, retry) is in
// tree_sync_reread.cpp, the storage's readers in tree_sync_storage.cpp.

#include <spdlog/logger.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <string_view>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/tree_sync.hpp>

namespace zkr::detail {

TreeSync::TreeSync(std::shared_ptr<Core> core, TreeSyncOptions options, SyncSink sink)
    : core_(std::move(core)), opt_(std::move(options)), sink_(std::move(sink)), nodes_(opt_.root) {
  strategy_ = opt_.allow_persistent_watch && core_->supports_persistent_watches() ? make_persistent_strategy()
                                                                                  : make_one_shot_strategy();
}

TreeSync::~TreeSync() = default;

// ---------------------------------------------------------------------------------------------------------
// Shape of the tree

int TreeSync::depth(const std::string& path) const {
  if (path == opt_.root) return 0;
  const auto skip = opt_.root == "/" ? 1 : opt_.root.size() + 1;
  return 1 + static_cast<int>(std::count(path.begin() + static_cast<std::ptrdiff_t>(skip), path.end(), '/'));
}

bool TreeSync::descends(const std::string& path) const {
  return depth(path) < opt_.max_depth && (!opt_.traverse_children || opt_.traverse_children(path));
}

bool TreeSync::accepted(const std::string& path) const {
  if (path == opt_.root) return true;
  const auto parent = parent_path(path);
  {
    std::lock_guard lk(mu_);
    if (!nodes_.contains(parent)) return false;
  }
  return descends(parent) && (!opt_.accept_child || opt_.accept_child(path));
}

// ---------------------------------------------------------------------------------------------------------
// Start, close, connection states

void TreeSync::start() {
  if (running_) return;
  running_ = true;
  initialized_ = false;
  session_ = core_->session_id();
  state_listener_ = core_->add_state_listener([weak = weak_from_this()](ConnectionState s) {
    if (auto self = weak.lock()) self->on_state(s);
  });
  arm_strategy();
  read_data(opt_.root);
  // A storage kept from an earlier start (keep_on_close): re-read what it holds, to report the difference.
  for (const auto& c : snapshot()) {
    if (c.path == opt_.root) continue;
    read_data(c.path);
  }
}

void TreeSync::close() {
  if (!running_) return;
  running_ = false;
  core_->remove_state_listener(state_listener_);
  strategy_->disarm(*core_);
  auto drop = [this](WatchId& id) {
    if (id) core_->remove_watch(id);
    id = 0;
  };
  if (auto id = root_exists_watch_.exchange(0)) core_->remove_watch(id);
  for (auto& [p, f] : flights_) {
    drop(f.data_watch);
    drop(f.children_watch);
  }
  {
    std::lock_guard lk(mu_);
    for (auto id : nodes_.take_watches()) core_->remove_watch(id);
    if (!opt_.keep_on_close) nodes_.clear();
  }
  if (retry_timer_) retry_timer_->cancel();
  dirty_.clear();
  for (auto& w : std::exchange(passes_, {}))
    if (auto p = w.lock()) p->fail(client_errc::closed);
}

std::size_t TreeSync::watches() const noexcept {
  // Written on the I/O thread, read from any.
  std::size_t n = (root_exists_watch_.load() ? 1 : 0) + strategy_->watches();
  std::lock_guard lk(mu_);
  return n + nodes_.watch_count();
}

void TreeSync::on_state(ConnectionState s) {
  if (!running_) return;
  const bool connected =
      s == ConnectionState::connected || s == ConnectionState::reconnected || s == ConnectionState::read_only;
  if (s != ConnectionState::connected && s != ConnectionState::read_only) {
    SyncEvent ev;
    ev.kind = SyncEvent::Kind::connection;
    ev.state = s;
    emit(std::move(ev));
  }
  if (s == ConnectionState::lost) armed_ = false;
  if (!connected) return;
  const auto sid = core_->session_id();
  const bool new_session = sid != session_;
  session_ = sid;
  resync(new_session || !armed_);
}

void TreeSync::arm_strategy() {
  if (armed_) return;
  armed_ = true;
  issued();
  strategy_->arm(*this, [weak = weak_from_this()](error_code ec) {
    auto self = weak.lock();
    if (!self) return;
    if (ec == client_errc::unsupported_by_transport && self->strategy_->per_node() == false) {
      // The transport refused after all: one-shot watches, and every node read again to set them.
      self->core_->logger()->info("cache {}: persistent watches refused, one-shot watches instead",
                                  self->opt_.root);
      self->strategy_ = make_one_shot_strategy();
      if (self->running_) self->resync(true);
    } else if (ec) {
      self->armed_ = false;
      if (self->running_) {
        self->dirty_.emplace(self->opt_.root, Read::data);
        self->retry_later();
      }
    }
    self->answered();
  });
}

void TreeSync::answered() {
  if (outstanding_) --outstanding_;
  if (!initialized_ && running_ && outstanding_ == 0 && dirty_.empty()) {
    initialized_ = true;
    SyncEvent ev;
    ev.kind = SyncEvent::Kind::initialized;
    emit(std::move(ev));
  }
}

void TreeSync::emit(SyncEvent ev) {
  if (running_ && sink_) sink_(std::move(ev));
}

// ---------------------------------------------------------------------------------------------------------
// Reads

WatchCallback TreeSync::node_watch(const std::string& path, Read kind) {
  if (!strategy_->per_node()) return {};
  return [weak = weak_from_this(), path, kind](const WatchedEvent& ev) {
    if (auto self = weak.lock()) self->on_node_watch(path, kind, ev);
  };
}

void TreeSync::read_data(const std::string& path, Passes passes) {
  if (!running_) return;
  auto& f = flights_[path];
  if (f.data) {
    // The read in flight may have been sent before the change asked about: one more after it.
    f.data_again = true;
    f.data_passes.insert(f.data_passes.end(), passes.begin(), passes.end());
    return;
  }
  f.data = true;
  bool want = strategy_->per_node();
  {
    std::lock_guard lk(mu_);
    if (auto w = nodes_.watches(path); w && w->data) want = false;
  }
  issued();
  f.data_watch = core_->get_data(path, want ? node_watch(path, Read::data) : WatchCallback{},
                                 [weak = weak_from_this(), path, passes](error_code ec, NodeData nd) {
                                   if (auto self = weak.lock())
                                     self->on_data(path, ec, std::move(nd), std::move(passes));
                                 });
}

void TreeSync::read_children(const std::string& path, Passes passes) {
  if (!running_) return;
  bool want = strategy_->per_node();
  {
    std::lock_guard lk(mu_);
    const auto w = nodes_.watches(path);
    if (!w) return;
    if (w->children) want = false;
  }
  auto& f = flights_[path];
  if (f.children) {
    f.children_again = true;
    f.children_passes.insert(f.children_passes.end(), passes.begin(), passes.end());
    return;
  }
  f.children = true;
  issued();
  f.children_watch = core_->get_children(path, want ? node_watch(path, Read::children) : WatchCallback{},
                                         [weak = weak_from_this(), path, passes](error_code ec, Children c) {
                                           if (auto self = weak.lock())
                                             self->on_children(path, ec, std::move(c), std::move(passes));
                                         });
}

void TreeSync::on_data(const std::string& path, error_code ec, NodeData nd, Passes passes) {
  WatchId wid = 0;
  bool again = false;
  Passes waiting;
  if (auto it = flights_.find(path); it != flights_.end()) {
    auto& f = it->second;
    wid = std::exchange(f.data_watch, 0);
    again = std::exchange(f.data_again, false);
    waiting = std::exchange(f.data_passes, {});
    f.data = false;
    if (!f.children) flights_.erase(it);
  }
  if (!running_) {
    if (wid) core_->remove_watch(wid);
    for (auto& p : passes) p->fail(client_errc::closed);
    return answered();
  }
  if (!ec) {
    apply(path, wid, std::move(nd), passes);
  } else {
    if (wid) core_->remove_watch(wid);  // a data watch is set only on a node that exists: harmless
    if (ec == zk_errc::no_node) {
      remove_subtree(path);
      if (path == opt_.root) watch_root_exists();
    } else {
      failed(path, Read::data, ec, passes);
    }
  }
  if (again) read_data(path, std::move(waiting));
  answered();
}

void TreeSync::apply(const std::string& path, WatchId wid, NodeData nd, const Passes& passes) {
  if (!accepted(path)) {
    if (wid) core_->remove_watch(wid);
    return;
  }
  ChildData fresh{path, nd.stat, std::move(nd.data)};
  std::optional<ChildData> old;
  bool list = false, created = false;
  {
    std::unique_lock lk(mu_);
    auto held = nodes_.stat(path);
    if (held && fresh.stat.czxid != held->czxid) {
      if (fresh.stat.czxid < held->czxid) {  // a reply older than what we hold
        if (wid) core_->remove_watch(wid);
        return;
      }
      // Deleted and created again while we did not look: report both.
      lk.unlock();
      remove_subtree(path);
      lk.lock();
      held.reset();
    }
    if (!held) {
      if (!nodes_.insert(path, fresh.stat,
                         opt_.cache_data ? std::string_view(fresh.data) : std::string_view(), {wid, 0})) {
        if (wid) core_->remove_watch(wid);  // its parent went meanwhile
        return;
      }
      created = list = true;
    } else {
      if (wid) {
        const auto before = nodes_.set_watch(path, TreeStore::WatchKind::data, wid);
        if (before && before != wid) core_->remove_watch(before);
      }
      // Bytes dropped by clear_data_bytes come back with a read of the version they belong to.
      if (opt_.cache_data && fresh.stat.mzxid == held->mzxid) nodes_.set_bytes(path, fresh.data);
      if (fresh.stat.mzxid > held->mzxid) {
        old = nodes_.get(path);
        nodes_.set_stat(path, fresh.stat);
        if (opt_.cache_data) nodes_.set_bytes(path, fresh.data);
      } else if (fresh.stat.mzxid == held->mzxid && fresh.stat.pzxid > held->pzxid) {
        nodes_.set_stat(path, fresh.stat);  // only the children moved: no event, the Stat kept current
        list = !strategy_->per_node();
      } else {
        return;  // the same version or an older one: nothing to report
      }
    }
  }
  if (path == opt_.root && root_exists_watch_) core_->remove_watch(root_exists_watch_.exchange(0));
  SyncEvent ev;
  if (old) {
    ev.kind = SyncEvent::Kind::changed;
    ev.old_data = std::move(old);
    ev.data = std::move(fresh);
    emit(std::move(ev));
  } else if (created) {
    ev.kind = SyncEvent::Kind::created;
    ev.data = std::move(fresh);
    emit(std::move(ev));
  }
  if (list && descends(path)) read_children(path, passes);
  // Cached without a data watch: its read left while an earlier watch was held, which a clear() or a
  // removal took away meanwhile. Read once more to set one.
  if (created && strategy_->per_node() && !wid) read_data(path, passes);
}

void TreeSync::on_children(const std::string& path, error_code ec, Children c, Passes passes) {
  WatchId wid = 0;
  bool again = false;
  Passes waiting;
  if (auto it = flights_.find(path); it != flights_.end()) {
    auto& f = it->second;
    wid = std::exchange(f.children_watch, 0);
    again = std::exchange(f.children_again, false);
    waiting = std::exchange(f.children_passes, {});
    f.children = false;
    if (!f.data) flights_.erase(it);
  }
  if (!running_) {
    if (wid) core_->remove_watch(wid);
    for (auto& p : passes) p->fail(client_errc::closed);
    return answered();
  }
  std::vector<std::string> gone, fresh;
  bool cached = false;
  if (!ec) {
    std::lock_guard lk(mu_);
    if (const auto held = nodes_.stat(path)) {
      cached = true;
      if (wid) {
        const auto before = nodes_.set_watch(path, TreeStore::WatchKind::children, wid);
        if (before && before != wid) core_->remove_watch(before);
        wid = 0;
      }
      if (c.stat.czxid == held->czxid && c.stat.mzxid == held->mzxid && c.stat.pzxid > held->pzxid)
        nodes_.set_stat(path, c.stat);
      // Both in name order: a child held and not listed is gone, one listed and not held is new.
      const auto kept = nodes_.child_names(path).value_or(std::vector<std::string>{});
      std::sort(c.names.begin(), c.names.end());
      c.names.erase(std::unique(c.names.begin(), c.names.end()), c.names.end());
      std::vector<std::string> lost, found;
      std::set_difference(kept.begin(), kept.end(), c.names.begin(), c.names.end(), std::back_inserter(lost));
      std::set_difference(c.names.begin(), c.names.end(), kept.begin(), kept.end(),
                          std::back_inserter(found));
      for (auto& name : lost) gone.push_back(make_path(path, name));
      for (auto& name : found) fresh.push_back(make_path(path, name));
    }
  }
  if (wid) core_->remove_watch(wid);
  if (!ec) {
    if (cached) {
      for (auto& g : gone) remove_subtree(g);
      for (auto& f : fresh)
        if (!opt_.accept_child || opt_.accept_child(f)) read_data(f, passes);
    }
  } else if (ec == zk_errc::no_node) {
    remove_subtree(path);
    if (path == opt_.root) watch_root_exists();
  } else {
    failed(path, Read::children, ec, passes);
  }
  if (again) read_children(path, std::move(waiting));
  answered();
}

void TreeSync::on_node_watch(const std::string& path, Read kind, const WatchedEvent& ev) {
  if (!running_) return;
  // session_lost: the next session's resync reads everything again (and may already have set new watches).
  if (ev.type == EventType::session_lost) return;
  {
    std::lock_guard lk(mu_);
    if (!nodes_.contains(path)) return;
    // A one-shot watch fired.
    nodes_.set_watch(path, kind == Read::data ? TreeStore::WatchKind::data : TreeStore::WatchKind::children,
                     0);
  }
  switch (ev.type) {
    case EventType::session_lost:
      return;
    case EventType::node_deleted:
      remove_subtree(path);
      if (path == opt_.root) watch_root_exists();
      return;
    case EventType::node_children_changed:
      return read_children(path);
    case EventType::node_created:
    case EventType::node_data_changed:
      return read_data(path);
  }
}

void TreeSync::on_watch_event(const WatchedEvent& ev) {
  if (!running_) return;
  switch (ev.type) {
    case EventType::session_lost:
      armed_ = false;  // set again by the next session's resync
      return;
    case EventType::node_deleted:
      return remove_subtree(ev.path);
    case EventType::node_children_changed:
      return;  // a non-recursive persistent watch on the root: its children are not cached
    case EventType::node_created:
    case EventType::node_data_changed:
      // A node whose parent is not cached yet is found by that parent's listing.
      if (accepted(ev.path)) read_data(ev.path);
      return;
  }
}

void TreeSync::watch_root_exists() {
  if (!running_ || !strategy_->per_node() || root_exists_watch_ || root_exists_pending_) return;
  root_exists_pending_ = true;
  issued();
  root_exists_watch_ = core_->exists(
      opt_.root,
      [weak = weak_from_this()](const WatchedEvent& ev) {
        auto self = weak.lock();
        if (!self || !self->running_) return;
        self->root_exists_watch_ = 0;
        if (ev.type != EventType::session_lost) self->read_data(self->opt_.root);
      },
      [weak = weak_from_this()](error_code ec, Stat) {
        if (auto self = weak.lock()) self->on_root_exists(ec);
      });
}

void TreeSync::on_root_exists(error_code ec) {
  root_exists_pending_ = false;
  if (running_) {
    if (!ec) {
      // Created meanwhile: read it (that read sets the data watch; the exists watch is not needed).
      if (root_exists_watch_) core_->remove_watch(root_exists_watch_.exchange(0));
      read_data(opt_.root);
    } else if (ec != zk_errc::no_node) {
      if (root_exists_watch_) core_->remove_watch(root_exists_watch_.exchange(0));
      failed(opt_.root, Read::data, ec, {});
    }
  }
  answered();
}

void TreeSync::remove_subtree(const std::string& path) {
  std::vector<ChildData> removed;
  std::vector<WatchId> watches;
  {
    std::lock_guard lk(mu_);
    removed = nodes_.remove_subtree(path, watches);
  }
  for (auto id : watches) core_->remove_watch(id);
  for (auto& gone : removed) {
    dirty_.erase({gone.path, Read::data});
    dirty_.erase({gone.path, Read::children});
    SyncEvent ev;
    ev.kind = SyncEvent::Kind::deleted;
    ev.old_data = std::move(gone);
    emit(std::move(ev));
  }
}

}  // namespace zkr::detail
