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
    case zk::WatchKind::any:
      break;
  }
  return {K::data, K::exist, K::child};
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
  for (Kind k : kinds) {
    auto& t = table(k);
    if (auto it = t.find(path); it != t.end()) {
      fired.insert(fired.end(), it->second.begin(), it->second.end());
      t.erase(it);
    }
  }
  return fired;
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
  std::vector<std::string>* lists[] = {&out.data, &out.exist, &out.child};
  for (int k = 0; k < 3; ++k)
    for (const auto& [path, ids] : tables_[k]) lists[k]->push_back(with_chroot(chroot, path));
}

void WatchTable::clear() noexcept {
  for (auto& t : tables_) t.clear();
}

}  // namespace zkr::detail::native
