/// \file
/// The read-write lock drivers (Curator's `InterProcessReadWriteLock` predicates and sorting driver).

#include <algorithm>
#include <zkr/drivers/read_write_lock_driver.hpp>

namespace zkr {

namespace {

/// `StandardLockInternalsDriver.standardFixForSorting`.
std::string_view strip_through_last(std::string_view s, std::string_view lock_name) noexcept {
  const auto i = s.rfind(lock_name);
  return i == std::string_view::npos ? s : s.substr(i + lock_name.size());
}

}  // namespace

std::string_view read_write_sort_key(std::string_view child) noexcept {
  return strip_through_last(strip_through_last(child, read_lock_name), write_lock_name);
}

std::string_view WriteLockDriver::sort_key(std::string_view child, std::string_view) const {
  return read_write_sort_key(child);
}

std::optional<PredicateResults> WriteLockDriver::gets_the_lock(const std::vector<std::string>& children,
                                                               std::string_view our_node,
                                                               std::size_t max_leases) const {
  auto r = StandardLockDriver::gets_the_lock(children, our_node, max_leases);
  // Only a *read* node as the one node ahead: a downgrade node can only be made by a write holder, and none
  // is ahead of us then. A write node ahead may downgrade (a read node with its key) before it goes.
  if (r && r->granted_when_watched_node_goes)
    r->granted_when_watched_node_goes = r->path_to_watch.find(write_lock_name) == std::string::npos &&
                                        r->path_to_watch.find(read_lock_name) != std::string::npos;
  return r;
}

bool WriteLockDriver::is_lock_node(std::string_view child, std::string_view) const {
  return child.find(read_lock_name) != std::string_view::npos ||
         child.find(write_lock_name) != std::string_view::npos;
}

std::string_view ReadLockDriver::sort_key(std::string_view child, std::string_view) const {
  return read_write_sort_key(child);
}

std::optional<PredicateResults> ReadLockDriver::read_gets_the_lock(const std::vector<std::string>& children,
                                                                   std::string_view our_node,
                                                                   bool this_thread_owns_write) const {
  PredicateResults r;
  if (this_thread_owns_write) {
    r.gets_the_lock = true;
    return r;
  }
  constexpr std::size_t none = static_cast<std::size_t>(-1);
  std::size_t first_write_index = none;
  std::size_t our_index = none;
  for (std::size_t index = 0; index < children.size(); ++index) {
    const std::string_view node = children[index];
    if (node.find(write_lock_name) != std::string_view::npos) {
      first_write_index = std::min(first_write_index, index);
    } else if (node.substr(0, our_node.size()) == our_node) {
      our_index = index;
      break;
    }
  }
  if (our_index == none) return std::nullopt;  // Curator's validateOurIndex
  if (our_index < first_write_index) {
    r.gets_the_lock = true;
    return r;
  }
  r.path_to_watch = children[first_write_index];
  // The first writer is the only writer ahead: its deletion leaves none (later writers sort after us; a
  // downgrade node is a read node, which does not block us).
  std::size_t writers_ahead = 0;
  for (std::size_t index = first_write_index; index < our_index; ++index)
    if (children[index].find(write_lock_name) != std::string::npos) ++writers_ahead;
  r.granted_when_watched_node_goes = writers_ahead == 1;
  return r;
}

bool ReadLockDriver::is_lock_node(std::string_view child, std::string_view) const {
  return child.find(read_lock_name) != std::string_view::npos ||
         child.find(write_lock_name) != std::string_view::npos;
}

std::optional<PredicateResults> ReadLockDriver::gets_the_lock(const std::vector<std::string>& children,
                                                              std::string_view our_node, std::size_t) const {
  return read_gets_the_lock(children, our_node, false);
}

const WriteLockDriver& write_lock_driver() noexcept {
  static const WriteLockDriver instance;
  return instance;
}

const ReadLockDriver& read_lock_driver() noexcept {
  static const ReadLockDriver instance;
  return instance;
}

}  // namespace zkr
