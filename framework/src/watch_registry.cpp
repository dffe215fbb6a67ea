// The watch registry: the one-shot watches the reads set, keyed by an id that travels with the request to the
// session, fired once by the session's watch events, failed all at once (session_lost) when the session goes,
// and removed on request (locally at once, on the server in the background).

#include "core_impl.hpp"

namespace zkr::detail {

WatchId CoreImpl::add_watch(WatchCallback watch, const std::string& path, zk::WatchKind kind) {
  if (!watch) return 0;
  const WatchId id = next_watch_id_++;
  watches_.emplace(id, WatchEntry{std::move(watch), path, kind});
  return id;
}

void CoreImpl::remove_watch(WatchId id) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return;
  auto full = fix(it->second.path);
  const auto kind = it->second.kind;
  watches_.erase(it);
  // The server-side registration goes in the background; the reply is not waited for.
  if (session_->is_open() && connected_) session_->submit(zk::RemoveWatches{std::move(full), kind, id}, {});
}

void CoreImpl::remove_all_watches(std::string path, VoidCallback cb) {
  if (auto ec = gate(path)) return post_result(std::move(cb), ec);
  for (auto it = watches_.begin(); it != watches_.end();)
    it = it->second.path == path ? watches_.erase(it) : std::next(it);
  if (!session_->is_open())
    return post_result(std::move(cb),
                       given_up_ ? given_up_ec_ : error_code(errc::closed));
  session_->submit(
      zk::RemoveWatches{fix(path), zk::WatchKind::any},
      [cb = std::move(cb)](zk::Reply r) mutable { cb(r.ec == zk_errc::no_watcher ? error_code{} : r.ec); });
}

void CoreImpl::on_watch_event(WatchId id, EventType type) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return;
  WatchedEvent ev;
  ev.path = it->second.path;
  ev.type = type;
  auto cb = std::move(it->second.cb);
  watches_.erase(it);
  cb(ev);
}

void CoreImpl::fail_all_watches() {
  auto watches = std::move(watches_);
  watches_.clear();
  for (auto& [id, w] : watches) {
    post([cb = std::move(w.cb), path = std::move(w.path)]() mutable {
      cb(WatchedEvent{EventType::session_lost, std::move(path)});
    });
  }
}

}  // namespace zkr::detail
