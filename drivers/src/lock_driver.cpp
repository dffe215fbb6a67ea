/// \file
/// The standard lock driver (Curator's `StandardLockInternalsDriver`).

#include <algorithm>
#include <cstdint>
#include <utility>
#include <zkr/drivers/lock_driver.hpp>

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

LockNodeSpec LockDriver::lock_node(std::string_view) const { return {}; }

void LockDriver::sort_children(std::vector<std::string>& children, std::string_view lock_name) const {
  // Each key computed once (a reverse search through the name), not twice per comparison: a waiter sorts the
  // whole directory after every wake-up, on the critical path of the hand-off.
  // The first 16 bytes of a key, big-endian in two integers (zero-padded: names hold no NUL), decide most
  // comparisons without a memcmp call (a sequence key is 10 digits).
  struct Keyed {
    std::uint64_t hi = 0, lo = 0;
    std::string_view key;
    std::size_t index = 0;
  };
  const auto pack = [](std::string_view k, std::size_t from) {
    std::uint64_t v = 0;
    for (std::size_t i = from; i < from + 8; ++i)
      v = (v << 8) | (i < k.size() ? static_cast<unsigned char>(k[i]) : 0u);
    return v;
  };
  std::vector<Keyed> keyed;
  keyed.reserve(children.size());
  for (std::size_t i = 0; i < children.size(); ++i) {
    const auto k = sort_key(children[i], lock_name);
    keyed.push_back(Keyed{pack(k, 0), pack(k, 8), k, i});
  }
  std::stable_sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {  // ties: input order
    if (a.hi != b.hi) return a.hi < b.hi;
    if (a.lo != b.lo) return a.lo < b.lo;
    return a.key < b.key;  // equal first 16 bytes: the whole keys decide
  });
  std::vector<std::string> sorted;
  sorted.reserve(children.size());
  for (const auto& k : keyed) sorted.push_back(std::move(children[k.index]));  // keys are not used past here
  children = std::move(sorted);
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
  // index >= max_leases, so index - max_leases is a valid position at or before ours. With max_leases == 0 it
  // is our own node (Curator would watch it too); its deletion never grants the lock.
  r.path_to_watch = children[index - max_leases];
  r.granted_when_watched_node_goes = max_leases > 0 && index == max_leases;
  return r;
}

std::optional<PredicateResults> PrewatchLockDriver::gets_the_lock(const std::vector<std::string>& children,
                                                                  std::string_view our_node,
                                                                  std::size_t max_leases) const {
  auto r = StandardLockDriver::gets_the_lock(children, our_node, max_leases);
  if (!r || r->gets_the_lock || r->granted_when_watched_node_goes || max_leases == 0) return r;
  // Not granted, and more than the watched node ahead of the holders' places: index > max_leases.
  const auto index =
      static_cast<std::size_t>(std::find(children.begin(), children.end(), our_node) - children.begin());
  r->path_to_prewatch = children[index - max_leases - 1];
  return r;
}

const StandardLockDriver& standard_lock_driver() noexcept {
  static const StandardLockDriver instance;
  return instance;
}

const PrewatchLockDriver& prewatch_lock_driver() noexcept {
  static const PrewatchLockDriver instance;
  return instance;
}

}  // namespace zkr
