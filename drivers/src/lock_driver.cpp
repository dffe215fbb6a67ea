/// \file
/// The standard lock driver (Curator's `StandardLockInternalsDriver`).

#include <zkr/drivers/lock_driver.hpp>

#include <algorithm>

namespace zkr {

std::string_view LockDriver::sort_key(std::string_view child, std::string_view lock_name) const {
  // Java's lastIndexOf("") is length(), so an empty lock name gives an empty key, as std::string_view::rfind.
  const auto i = child.rfind(lock_name);
  if (i == std::string_view::npos) return child;
  return child.substr(i + lock_name.size());
}

bool LockDriver::is_lock_node(std::string_view child, std::string_view lock_name) const {
  return child.find(lock_name) != std::string_view::npos;
}

void LockDriver::sort_children(std::vector<std::string>& children, std::string_view lock_name) const {
  std::stable_sort(children.begin(), children.end(), [&](const std::string& a, const std::string& b) {
    return sort_key(a, lock_name) < sort_key(b, lock_name);
  });
}

std::optional<PredicateResults> StandardLockDriver::gets_the_lock(const std::vector<std::string>& children,
                                                                  std::string_view our_node,
                                                                  std::size_t max_leases) const {
  const auto it = std::find(children.begin(), children.end(), our_node);
  if (it == children.end()) return std::nullopt;  // Curator's validateOurIndex: "Sequential path not found"
  const auto index = static_cast<std::size_t>(it - children.begin());

  PredicateResults r;
  if (index < max_leases) {
    r.gets_the_lock = true;
    return r;
  }
  // index >= max_leases, so index - max_leases is a valid position at or before ours. With max_leases == 0 it is
  // our own node (Curator would watch it too); its deletion never grants the lock.
  r.path_to_watch = children[index - max_leases];
  r.granted_when_watched_node_goes = max_leases > 0 && index == max_leases;
  return r;
}

const StandardLockDriver& standard_lock_driver() noexcept {
  static const StandardLockDriver instance;
  return instance;
}

}  // namespace zkr
