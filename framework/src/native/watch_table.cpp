// The native transport's record of the server's one-shot watches (see watch_table.hpp).

#include "watch_table.hpp"

#include <algorithm>

namespace zkr::detail::native {
namespace {

std::vector<WatchTable::Kind> kinds_of(zk::WatchKind k) {
  using K = WatchTable::Kind;
  switch (k) {
    case zk::WatchKind::data:
      return {K::data, K::exist};
    case zk::WatchKind::children:
      return {K::child};
    case zk::WatchKind::persistent:
      return {K::persistent};
    case zk::WatchKind::persistent_recursive:
      return {K::persistent_recursive};
    case zk::WatchKind::any:
      break;
  }
  return {K::data, K::exist, K::child, K::persistent, K::persistent_recursive};
}

// "/a/b" -> "/a" -> "/"; "/" has none.
bool to_parent(std::string& path) {
  if (path.size() <= 1) return false;
  const auto slash = path.rfind('/');
  path.resize(slash == 0 ? 1 : slash);
  return true;
}

}  // namespace

void WatchTable::add(Kind kind, const std::string& path, WatchId id) {
  auto& ids = table(kind)[path];
  if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
}

std::vector<WatchId> WatchTable::fire(EventType type, const std::string& path) {
  std::vector<Kind> kinds;
  switch (type) {
    case EventType::node_created:
    case EventType::node_data_changed:
      kinds = {Kind::data, Kind::exist};
      break;
    case EventType::node_deleted:
      kinds = {Kind::data, Kind::exist, Kind::child};
      break;
    case EventType::node_children_changed:
      kinds = {Kind::child};
      break;
    case EventType::session_lost:
      break;
  }
  std::vector<WatchId> fired;
  if (type == EventType::session_lost) return fired;
  for (Kind k : kinds) {
    auto& t = table(k);
    if (auto it = t.find(path); it != t.end()) {
      fired.insert(fired.end(), it->second.begin(), it->second.end());
      t.erase(it);
    }
  }
  // The persistent watches stay.
  auto keep = [&](Kind k, const std::string& p) {
    const auto& t = table(k);
    if (auto it = t.find(p); it != t.end()) fired.insert(fired.end(), it->second.begin(), it->second.end());
  };
  keep(Kind::persistent, path);
  if (type == EventType::node_children_changed) return fired;
  std::string p = path;
  do {
    keep(Kind::persistent_recursive, p);
  } while (to_parent(p));
  return fired;
}

bool WatchTable::empty() const noexcept {
  return std::all_of(std::begin(tables_), std::end(tables_), [](const Table& t) { return t.empty(); });
}

WatchTable::Removal WatchTable::remove(const std::string& path, zk::WatchKind kind, WatchId id) {
  Removal r;
  for (Kind k : kinds_of(kind)) {
    auto& t = table(k);
    auto it = t.find(path);
    if (it == t.end()) continue;
    auto& ids = it->second;
    const auto before = ids.size();
    if (id == 0)
      ids.clear();
    else
      ids.erase(std::remove(ids.begin(), ids.end(), id), ids.end());
    r.found = r.found || ids.size() != before;
    if (ids.empty())
      t.erase(it);
    else
      r.others_left = true;
  }
  return r;
}

void WatchTable::list(std::string_view chroot, SetWatches& out) const {
  std::vector<std::string>* lists[kKinds] = {&out.data, &out.exist, &out.child, &out.persistent,
                                             &out.persistent_recursive};
  for (int k = 0; k < kKinds; ++k)
    for (const auto& [path, ids] : tables_[k]) lists[k]->push_back(with_chroot(chroot, path));
}

void WatchTable::clear() noexcept {
  for (auto& t : tables_) t.clear();
}

}  // namespace zkr::detail::native
