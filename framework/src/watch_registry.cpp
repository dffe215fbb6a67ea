// The watch registry (see watch_registry.hpp).

#include "watch_registry.hpp"

namespace zkr::detail {

WatchId WatchRegistry::add(WatchCallback cb, std::string path, zk::WatchKind kind) {
  if (!cb) return 0;
  const WatchId id = next_id_++;
  watches_.emplace(id, Watch{std::move(cb), std::move(path), kind});
  return id;
}

std::optional<std::pair<std::string, zk::WatchKind>> WatchRegistry::forget(WatchId id) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return std::nullopt;
  auto out = std::make_pair(std::move(it->second.path), it->second.kind);
  watches_.erase(it);
  return out;
}

void WatchRegistry::forget_path(const std::string& path) {
  for (auto it = watches_.begin(); it != watches_.end();)
    it = it->second.path == path ? watches_.erase(it) : std::next(it);
}

void WatchRegistry::fire(WatchId id, EventType type) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return;
  WatchedEvent ev;
  ev.path = it->second.path;
  ev.type = type;
  auto cb = std::move(it->second.cb);
  watches_.erase(it);
  cb(ev);
}

std::vector<WatchRegistry::Watch> WatchRegistry::take_all() {
  std::vector<Watch> out;
  out.reserve(watches_.size());
  for (auto& [id, w] : watches_) out.push_back(std::move(w));
  watches_.clear();
  return out;
}

}  // namespace zkr::detail
