// TreeSync: the storage (a TreeStore, tree_store.cpp) as the cache's readers see it (any thread, under the
// engine's mutex), and the one edit they may make without the I/O thread: dropping a node's bytes.

#include <zkr/recipes/detail/tree_sync.hpp>

namespace zkr::detail {

std::optional<ChildData> TreeSync::get(const std::string& path) const {
  std::lock_guard lk(mu_);
  return nodes_.get(path);
}

std::size_t TreeSync::size() const {
  std::lock_guard lk(mu_);
  return nodes_.size();
}

std::vector<ChildData> TreeSync::snapshot() const {
  std::lock_guard lk(mu_);
  return nodes_.snapshot();
}

std::optional<std::vector<ChildData>> TreeSync::children_of(const std::string& path) const {
  std::lock_guard lk(mu_);
  return nodes_.children_of(path);
}

bool TreeSync::clear_data_bytes(const std::string& path, std::int32_t if_version) {
  std::lock_guard lk(mu_);
  const auto stat = nodes_.stat(path);
  if (!stat || (if_version >= 0 && stat->version != if_version)) return false;
  return nodes_.set_bytes(path, {});  // the memory too
}

}  // namespace zkr::detail
