// libFuzzer target: the pure lock drivers (drivers/include/zkr/drivers/*.hpp) on arbitrary child names.
// The input is split at '\n' into distinct child names (at most 64); its first byte picks max_leases (1..4)
// and whether every name is given the mutex lock name ("..lock-<name>"). Invariants:
//   - sort_children is a permutation ordered by sort_key, independent of the input order when keys are
//   distinct;
//   - StandardLockDriver: every child gets an answer; exactly min(max_leases, n) hold; a waiter watches a
//   child
//     max_leases places ahead of it, which sorts before it; granted_when_watched_node_goes iff index ==
//     max_leases; a name that is not a child gets nullopt; the standard driver never names a node to
//     pre-watch;
//   - PrewatchLockDriver: the standard answers, plus, for a waiter more than max_leases places back, the
//   child
//     just ahead of the watched one as path_to_prewatch (and nothing to pre-watch otherwise);
//   - WriteLockDriver: only the first child holds; granted_when_watched_node_goes only for the second child
//     behind a first child that is a read node (contains "__READ__", not "__WRIT__");
//   - ReadLockDriver: a reader holds iff no child containing "__WRIT__" precedes its position, otherwise it
//     watches such a child, which precedes it; granted_when_watched_node_goes iff exactly one such child
//     precedes it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>
#include <zkr/drivers/lock_driver.hpp>
#include <zkr/drivers/read_write_lock_driver.hpp>

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

std::size_t index_of(const std::vector<std::string>& v, std::string_view s) {
  return static_cast<std::size_t>(std::find(v.begin(), v.end(), s) - v.begin());
}

void sorted_invariants(const zkr::LockDriver& d, std::string_view lock_name,
                       const std::vector<std::string>& input, const std::vector<std::string>& sorted) {
  check(std::is_permutation(input.begin(), input.end(), sorted.begin(), sorted.end()));
  for (std::size_t i = 1; i < sorted.size(); ++i)
    check(!(d.sort_key(sorted[i], lock_name) < d.sort_key(sorted[i - 1], lock_name)));
  std::set<std::string_view> keys;
  for (auto& s : sorted) keys.insert(d.sort_key(s, lock_name));
  if (keys.size() == sorted.size()) {
    auto reversed = std::vector<std::string>(input.rbegin(), input.rend());
    d.sort_children(reversed, lock_name);
    check(reversed == sorted);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::size_t max_leases = 1 + (data[0] & 3);
  const bool all_lock_names = (data[0] & 4) != 0;
  const std::string_view rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  std::vector<std::string> names;
  std::set<std::string> seen;
  std::size_t pos = 0;
  while (pos <= rest.size() && names.size() < 64) {
    auto nl = rest.find('\n', pos);
    if (nl == std::string_view::npos) nl = rest.size();
    std::string n(rest.substr(pos, nl - pos));
    if (all_lock_names) n = "_c_x-lock-" + n;
    if (seen.insert(n).second) names.push_back(n);
    pos = nl + 1;
  }
  const std::string_view lock_name = "lock-";

  // Standard driver.
  const auto& std_driver = zkr::standard_lock_driver();
  static const zkr::PrewatchLockDriver prewatch_driver;
  auto sorted = names;
  std_driver.sort_children(sorted, lock_name);
  sorted_invariants(std_driver, lock_name, names, sorted);
  std::size_t holders = 0;
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    const auto r = std_driver.gets_the_lock(sorted, sorted[i], max_leases);
    check(r.has_value());
    check(r->gets_the_lock == (i < max_leases));
    check(r->granted_when_watched_node_goes == (i == max_leases));
    if (r->gets_the_lock) {
      ++holders;
      check(r->path_to_watch.empty());
    } else {
      const auto w = index_of(sorted, r->path_to_watch);
      check(w + max_leases == i);
      check(!(std_driver.sort_key(sorted[i], lock_name) < std_driver.sort_key(sorted[w], lock_name)));
    }
    check(r->path_to_prewatch.empty());
    const auto p = prewatch_driver.gets_the_lock(sorted, sorted[i], max_leases);
    check(p.has_value() && p->gets_the_lock == r->gets_the_lock && p->path_to_watch == r->path_to_watch &&
          p->granted_when_watched_node_goes == r->granted_when_watched_node_goes);
    if (i > max_leases)
      check(index_of(sorted, p->path_to_prewatch) + max_leases + 1 == i);
    else
      check(p->path_to_prewatch.empty());
  }
  check(holders == std::min(max_leases, sorted.size()));
  if (!seen.count("absent\n")) check(!std_driver.gets_the_lock(sorted, "absent\n", max_leases));

  // Write driver.
  const auto& write = zkr::write_lock_driver();
  auto wsorted = names;
  write.sort_children(wsorted, lock_name);
  sorted_invariants(write, lock_name, names, wsorted);
  for (std::size_t i = 0; i < wsorted.size(); ++i) {
    const auto r = write.gets_the_lock(wsorted, wsorted[i], 1);
    check(r.has_value() && r->gets_the_lock == (i == 0));
    const bool behind_lone_reader = i == 1 && wsorted[0].find(zkr::read_lock_name) != std::string::npos &&
                                    wsorted[0].find(zkr::write_lock_name) == std::string::npos;
    check(r->granted_when_watched_node_goes == behind_lone_reader);
  }

  // Read driver (same order as the write driver).
  const auto& read = zkr::read_lock_driver();
  auto rsorted = names;
  read.sort_children(rsorted, lock_name);
  check(rsorted == wsorted);
  for (const auto& ours : rsorted) {
    const auto r = read.read_gets_the_lock(rsorted, ours, false);
    // Our position: the first child starting with our name; writers seen before it.
    std::size_t position = rsorted.size();
    bool writer_before = false;
    std::size_t writers_before = 0;
    for (std::size_t i = 0; i < rsorted.size(); ++i) {
      if (rsorted[i].find(zkr::write_lock_name) != std::string::npos) {
        writer_before = true;
        ++writers_before;
        continue;
      }
      if (std::string_view(rsorted[i]).starts_with(ours)) {
        position = i;
        break;
      }
    }
    if (position == rsorted.size()) {
      check(!r.has_value());
      continue;
    }
    check(r.has_value());
    check(r->granted_when_watched_node_goes == (writers_before == 1));
    check(r->gets_the_lock == !writer_before);
    if (!r->gets_the_lock) {
      check(r->path_to_watch.find(zkr::write_lock_name) != std::string::npos);
      check(index_of(rsorted, r->path_to_watch) < position);
    }
    check(read.read_gets_the_lock(rsorted, ours, true)->gets_the_lock);
  }
  return 0;
}
