// TreeSync: the storage, `path -> (Stat, bytes)`, as the cache's readers see it (any thread, under the
// engine's mutex), and the one edit they may make without the I/O thread: dropping a node's bytes.

#include <zkr/recipes/detail/tree_sync.hpp>

namespace zkr::detail {

std::optional<ChildData> TreeSync::get(const std::string& path) const {
  std::lock_guard lk(mu_);
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return std::nullopt;
  return it->second.child(it->first);
}

std::size_t TreeSync::size() const {
  std::lock_guard lk(mu_);
  return nodes_.size();
}

std::vector<ChildData> TreeSync::snapshot() const {
  std::lock_guard lk(mu_);
  std::vector<ChildData> out;
  out.reserve(nodes_.size());
  for (auto& [p, n] : nodes_) out.push_back(n.child(p));
  return out;
}

std::optional<std::vector<ChildData>> TreeSync::children_of(const std::string& path) const {
  std::lock_guard lk(mu_);
  if (!nodes_.count(path)) return std::nullopt;
  std::vector<ChildData> out;
  const std::string prefix = path == "/" ? "/" : path + "/";
  for (auto k = nodes_.lower_bound(prefix);
       k != nodes_.end() && k->first.compare(0, prefix.size(), prefix) == 0;) {
    if (k->first.size() == prefix.size()) {
      ++k;
      continue;
    }
    const auto slash = k->first.find('/', prefix.size());
    if (slash != std::string::npos) {
      k = nodes_.lower_bound(past_descendants(k->first.substr(0, slash)));
      continue;
    }
    out.push_back(k->second.child(k->first));
    ++k;
  }
  return out;
}

bool TreeSync::clear_data_bytes(const std::string& path, std::int32_t if_version) {
  std::lock_guard lk(mu_);
  auto it = nodes_.find(path);
  if (it == nodes_.end() || (if_version >= 0 && it->second.stat.version != if_version)) return false;
  std::string().swap(it->second.bytes);  // the memory too
  return true;
}

}  // namespace zkr::detail
