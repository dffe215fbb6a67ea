// The watch registry (see watch_registry.hpp).

#include "watch_registry.hpp"

namespace zkr::detail {

void WatchRegistry::count(const Watch& w, int delta) {
  const int slot = w.kind == zk::WatchKind::children ? 1 : 0;
  auto& counts = per_path_[w.path];
  counts[slot] += delta;
  if (counts[0] == 0 && counts[1] == 0) per_path_.erase(w.path);
}

void WatchRegistry::erase(std::unordered_map<WatchId, Watch>::iterator it) {
  count(it->second, -1);
  watches_.erase(it);
}

WatchId WatchRegistry::add(WatchCallback cb, std::string path, zk::WatchKind kind) {
  if (!cb) return 0;
  const WatchId id = next_id_++;
  auto [it, added] = watches_.emplace(id, Watch{std::move(cb), std::move(path), kind});
  count(it->second, +1);
  return id;
}

std::optional<std::pair<std::string, zk::WatchKind>> WatchRegistry::forget(WatchId id) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return std::nullopt;
  auto out = std::make_pair(it->second.path, it->second.kind);
  erase(it);
  return out;
}

bool WatchRegistry::watching(const std::string& path, zk::WatchKind kind) const {
  auto it = per_path_.find(path);
  if (it == per_path_.end()) return false;
  switch (kind) {
    case zk::WatchKind::data:
      return it->second[0] > 0;
    case zk::WatchKind::children:
      return it->second[1] > 0;
    case zk::WatchKind::any:
      break;
  }
  return it->second[0] > 0 || it->second[1] > 0;
}

void WatchRegistry::forget_path(const std::string& path) {
  for (auto it = watches_.begin(); it != watches_.end();) {
    if (it->second.path == path) {
      erase(it++);
    } else {
      ++it;
    }
  }
}

void WatchRegistry::fire(WatchId id, EventType type) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return;
  WatchedEvent ev;
  ev.path = it->second.path;
  ev.type = type;
  auto cb = std::move(it->second.cb);
  erase(it);
  cb(ev);
}

std::vector<WatchRegistry::Watch> WatchRegistry::take_all() {
  std::vector<Watch> out;
  out.reserve(watches_.size());
  for (auto& [id, w] : watches_) out.push_back(std::move(w));
  watches_.clear();
  per_path_.clear();
  return out;
}

}  // namespace zkr::detail
