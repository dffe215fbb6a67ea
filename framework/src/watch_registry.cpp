// The watch registry (see watch_registry.hpp).

#include "watch_registry.hpp"

namespace zkr::detail {

namespace {

constexpr int kData = 0, kChildren = 1, kPersistent = 2, kRecursive = 3;

int slot(zk::WatchKind kind) noexcept {
  switch (kind) {
    case zk::WatchKind::children:
      return kChildren;
    case zk::WatchKind::persistent:
      return kPersistent;
    case zk::WatchKind::persistent_recursive:
      return kRecursive;
    case zk::WatchKind::data:
    case zk::WatchKind::any:
      break;
  }
  return kData;
}

bool is_persistent(zk::WatchKind kind) noexcept {
  return kind == zk::WatchKind::persistent || kind == zk::WatchKind::persistent_recursive;
}

}  // namespace

void WatchRegistry::count(const Watch& w, int delta) {
  auto& counts = per_path_[w.path];
  counts[slot(w.kind)] += delta;
  if (counts == std::array<int, 4>{}) per_path_.erase(w.path);
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

void WatchRegistry::mark_set(WatchId id) {
  if (auto it = watches_.find(id); it != watches_.end()) it->second.set = true;
}

std::optional<WatchRegistry::Watch> WatchRegistry::take_one(WatchId id) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return std::nullopt;
  Watch w = std::move(it->second);
  count(w, -1);
  watches_.erase(it);
  return w;
}

std::optional<std::pair<std::string, zk::WatchKind>> WatchRegistry::forget(WatchId id) {
  auto w = take_one(id);
  if (!w) return std::nullopt;
  return std::make_pair(std::move(w->path), w->kind);
}

bool WatchRegistry::watching(const std::string& path, zk::WatchKind kind) const {
  auto it = per_path_.find(path);
  if (it == per_path_.end()) return false;
  const auto& n = it->second;
  const bool persistent = n[kPersistent] > 0 || n[kRecursive] > 0;
  switch (kind) {
    case zk::WatchKind::data:
      return n[kData] > 0 || persistent;
    case zk::WatchKind::children:
      return n[kChildren] > 0 || persistent;
    case zk::WatchKind::any:
    case zk::WatchKind::persistent:
    case zk::WatchKind::persistent_recursive:
      break;
  }
  return n[kData] > 0 || n[kChildren] > 0 || persistent;
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

void WatchRegistry::fire(WatchId id, EventType type, const std::string& path) {
  auto it = watches_.find(id);
  if (it == watches_.end()) return;
  WatchedEvent ev;
  ev.type = type;
  if (is_persistent(it->second.kind)) {
    ev.path = path;
    // The callback may remove this watch (or others) while it runs: it runs from a copy of nothing it owns.
    auto& cb = it->second.cb;
    auto keep = std::exchange(cb, {});
    keep(ev);
    if (auto again = watches_.find(id); again != watches_.end() && !again->second.cb)
      again->second.cb = std::move(keep);
    return;
  }
  ev.path = it->second.path;
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
  ++generation_;
  return out;
}

std::vector<WatchRegistry::Watch> WatchRegistry::take_set() {
  ++generation_;
  std::vector<Watch> out;
  for (auto it = watches_.begin(); it != watches_.end();) {
    if (it->second.set) {
      count(it->second, -1);
      out.push_back(std::move(it->second));
      it = watches_.erase(it);
    } else {
      ++it;
    }
  }
  return out;
}

}  // namespace zkr::detail
