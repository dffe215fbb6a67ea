// Unit tests for drivers/lock_driver: Curator's StandardLockInternalsDriver, exhaustively.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>
#include <zkr/drivers/lock_driver.hpp>
#include <zkr/drivers/read_write_lock_driver.hpp>

namespace {

constexpr std::string_view lock_name = "lock-";

/// A protected mutex node as Curator names it: `_c_<uuid>-lock-%010d`. The uuid varies with `owner` so that
/// full-name order differs from sequence order.
std::string node(int owner, long long seq) {
  static const char* uuids[] = {
      "f0000000-0000-4000-8000-000000000000", "10000000-0000-4000-8000-000000000000",
      "c0000000-0000-4000-8000-000000000000", "30000000-0000-4000-8000-000000000000",
      "a0000000-0000-4000-8000-000000000000", "50000000-0000-4000-8000-000000000000",
      "e0000000-0000-4000-8000-000000000000", "70000000-0000-4000-8000-000000000000",
  };
  char seqbuf[32];
  std::snprintf(seqbuf, sizeof seqbuf, "%010lld", seq);  // ZooKeeper's "%010d"
  return std::string("_c_") + uuids[owner % 8] + "-lock-" + seqbuf;
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  zkr::standard_lock_driver().sort_children(v, lock_name);
  return v;
}

}  // namespace

TEST_CASE("standard sort_key: text after the last lock name", "[driver]") {
  const zkr::LockDriver& d = zkr::standard_lock_driver();
  CHECK(d.sort_key("lock-0000000003", lock_name) == "0000000003");
  CHECK(d.sort_key("_c_53345f98-9423-4e0c-a7b5-9f819e3ec2e1-lock-0000000003", lock_name) == "0000000003");
  CHECK(d.sort_key("0", lock_name) == "0");  // foreign node: the whole name (CURATOR-43)
  CHECK(d.sort_key("foreign", lock_name) == "foreign");
  CHECK(d.sort_key("", lock_name) == "");
  // The lock name twice: the last occurrence wins.
  CHECK(d.sort_key("lock-lock-0000000001", lock_name) == "0000000001");
  CHECK(d.sort_key("_c_x-lock-a-lock-0000000001", lock_name) == "0000000001");
  CHECK(d.sort_key("lock-0000000001lock-", lock_name) == "");
  // A lock name that also occurs in the digits: Curator strips through the last occurrence anyway.
  CHECK(d.sort_key("x10000000010", "1") == "0");
  CHECK(d.sort_key("_c_uuid-a0000000007", "a") == "0000000007");
  // Java's lastIndexOf("") is the length: an empty lock name gives an empty key.
  CHECK(d.sort_key("lock-0000000001", "") == "");
  // After the server's 32-bit wrap.
  CHECK(d.sort_key("lock--2147483648", lock_name) == "-2147483648");
}

TEST_CASE("sort_children orders by sequence, whatever the protection prefix", "[driver]") {
  std::vector<std::string> expected;
  for (int i = 0; i < 8; ++i) expected.push_back(node(i, i + 1));
  // Full-name order differs from sequence order (the uuids are not increasing).
  auto by_name = expected;
  std::sort(by_name.begin(), by_name.end());
  REQUIRE(by_name != expected);

  std::mt19937 rng(42);
  auto shuffled = expected;
  for (int round = 0; round < 200; ++round) {
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    CHECK(sorted(shuffled) == expected);
  }
}

TEST_CASE("sort_children is stable on equal keys", "[driver]") {
  const std::vector<std::string> ab = {"b-lock-0000000001", "a-lock-0000000001", "c-lock-0000000000"};
  CHECK(sorted(ab) ==
        std::vector<std::string>{"c-lock-0000000000", "b-lock-0000000001", "a-lock-0000000001"});
  const std::vector<std::string> ba = {"a-lock-0000000001", "b-lock-0000000001", "c-lock-0000000000"};
  CHECK(sorted(ba) ==
        std::vector<std::string>{"c-lock-0000000000", "a-lock-0000000001", "b-lock-0000000001"});
  // Large inputs too (std::sort is only accidentally stable below 16 elements): 200 children, 5 distinct
  // keys.
  std::vector<std::string> many;
  std::mt19937 rng(99);
  for (int i = 0; i < 200; ++i) {
    many.push_back("owner" + std::to_string(i) + "-lock-000000000" + std::to_string(rng() % 5));
  }
  auto stable = many;
  zkr::standard_lock_driver().sort_children(stable, lock_name);
  auto expected = many;
  std::stable_sort(expected.begin(), expected.end(), [](const std::string& a, const std::string& b) {
    return a.substr(a.size() - 10) < b.substr(b.size() - 10);
  });
  CHECK(stable == expected);
  // With an empty lock name every key is empty: the input order is kept.
  std::vector<std::string> v = {"z", "a", "m"};
  zkr::standard_lock_driver().sort_children(v, "");
  CHECK(v == std::vector<std::string>{"z", "a", "m"});
}

TEST_CASE("foreign children sort by their full name (CURATOR-43)", "[driver]") {
  const std::vector<std::string> input = {node(0, 2), "zzz", node(1, 1), "0", "1"};
  // "0" < "0000000001" < "0000000002" < "1" < "zzz" in byte order.
  CHECK(sorted(input) == std::vector<std::string>{"0", node(1, 1), node(0, 2), "1", "zzz"});

  // The leftover "0" of a nested lock blocks the real first contender.
  const auto children = sorted({node(1, 1), "0"});
  const auto r = zkr::standard_lock_driver().gets_the_lock(children, node(1, 1), 1);
  REQUIRE(r);
  CHECK_FALSE(r->gets_the_lock);
  CHECK(r->path_to_watch == "0");
  CHECK(r->granted_when_watched_node_goes);
}

TEST_CASE("sequence wrap: Curator's string order puts the wrapped nodes first, newest first", "[driver]") {
  // After 2147483647 the parent's cversion wraps to -2147483648 ("%010d"). Curator compares strings, so the
  // wrapped nodes sort ahead of every older one, and among negative numbers string order is reverse numeric
  // order ("-2147483647" < "-2147483648"). The newest node then "holds" the lock next to the real holder.
  // This is a ZooKeeper limitation Curator shares; we document it rather than diverge on the wire.
  const std::string old_holder = node(0, 2147483647LL);
  const std::string first_wrapped = node(1, -2147483648LL);
  const std::string second_wrapped = node(2, -2147483647LL);
  const auto& d = zkr::standard_lock_driver();
  REQUIRE(d.sort_key(second_wrapped, lock_name) == "-2147483647");
  REQUIRE(d.sort_key(node(3, -5), lock_name) == "-000000005");
  const auto children = sorted({old_holder, first_wrapped, second_wrapped});
  CHECK(children == std::vector<std::string>{second_wrapped, first_wrapped, old_holder});

  CHECK(d.gets_the_lock(children, second_wrapped, 1)->gets_the_lock);  // the wrap breaks exclusion
  const auto first = d.gets_the_lock(children, first_wrapped, 1);
  REQUIRE(first);
  CHECK_FALSE(first->gets_the_lock);
  CHECK(first->path_to_watch == second_wrapped);  // FIFO inverted
  const auto old = d.gets_the_lock(children, old_holder, 1);
  REQUIRE(old);
  CHECK_FALSE(old->gets_the_lock);
  CHECK(old->path_to_watch == first_wrapped);
}

TEST_CASE("standard gets_the_lock: every position, lease count and input order", "[driver]") {
  const zkr::LockDriver& d = zkr::standard_lock_driver();
  for (std::size_t n = 1; n <= 6; ++n) {
    std::vector<std::string> expected_order;
    for (std::size_t i = 0; i < n; ++i) expected_order.push_back(node(static_cast<int>(i), 100 + 7 * i));

    std::vector<std::size_t> perm(n);
    std::iota(perm.begin(), perm.end(), 0);
    do {
      std::vector<std::string> input;
      for (auto i : perm) input.push_back(expected_order[i]);
      const auto children = sorted(input);
      REQUIRE(children == expected_order);

      for (std::size_t max_leases = 1; max_leases <= 3; ++max_leases) {
        for (std::size_t p = 0; p < n; ++p) {
          INFO("n=" << n << " max_leases=" << max_leases << " position=" << p);
          const auto r = d.gets_the_lock(children, children[p], max_leases);
          REQUIRE(r.has_value());
          if (p < max_leases) {
            CHECK(r->gets_the_lock);
            CHECK(r->path_to_watch.empty());
            CHECK_FALSE(r->granted_when_watched_node_goes);
          } else {
            CHECK_FALSE(r->gets_the_lock);
            CHECK(r->path_to_watch == children[p - max_leases]);
            CHECK(r->path_to_watch != children[p]);
            CHECK(r->granted_when_watched_node_goes == (p == max_leases));
          }
        }
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST_CASE("standard gets_the_lock: the mutex watches its immediate predecessor", "[driver]") {
  const auto children = sorted({node(0, 1), node(1, 2), node(2, 3), node(3, 4)});
  const auto& d = zkr::standard_lock_driver();
  CHECK(d.gets_the_lock(children, node(0, 1), 1)->gets_the_lock);
  CHECK(d.gets_the_lock(children, node(1, 2), 1)->path_to_watch == node(0, 1));
  CHECK(d.gets_the_lock(children, node(1, 2), 1)->granted_when_watched_node_goes);
  CHECK(d.gets_the_lock(children, node(2, 3), 1)->path_to_watch == node(1, 2));
  CHECK_FALSE(d.gets_the_lock(children, node(2, 3), 1)->granted_when_watched_node_goes);
  CHECK(d.gets_the_lock(children, node(3, 4), 1)->path_to_watch == node(2, 3));
  // Semaphore v1 with 3 leases: the 4th watches the first.
  const auto r = d.gets_the_lock(children, node(3, 4), 3);
  CHECK_FALSE(r->gets_the_lock);
  CHECK(r->path_to_watch == node(0, 1));
  CHECK(r->granted_when_watched_node_goes);
}

TEST_CASE("standard gets_the_lock: our node missing gives nullopt", "[driver]") {
  const auto& d = zkr::standard_lock_driver();
  const auto children = sorted({node(0, 1), node(1, 2)});
  CHECK_FALSE(d.gets_the_lock({}, node(0, 1), 1).has_value());
  CHECK_FALSE(d.gets_the_lock(children, node(2, 3), 1).has_value());
  CHECK_FALSE(d.gets_the_lock(children, node(2, 3), 5).has_value());
  // Exact full-name match only: a prefix, a suffix or the unprotected name does not count.
  CHECK_FALSE(d.gets_the_lock(children, "lock-0000000001", 1).has_value());
  CHECK_FALSE(d.gets_the_lock(children, node(0, 1).substr(0, 20), 1).has_value());
  CHECK_FALSE(d.gets_the_lock(children, node(0, 1) + "0", 1).has_value());
  CHECK_FALSE(d.gets_the_lock(children, "", 1).has_value());
}

TEST_CASE("standard gets_the_lock: lease-count edges", "[driver]") {
  const auto& d = zkr::standard_lock_driver();
  const auto children = sorted({node(0, 1), node(1, 2), node(2, 3)});
  // More leases than contenders: everyone holds.
  for (const auto& c : children) {
    CHECK(d.gets_the_lock(children, c, 3)->gets_the_lock);
    CHECK(d.gets_the_lock(children, c, std::numeric_limits<std::size_t>::max())->gets_the_lock);
  }
  // Zero leases: nobody holds; Curator would watch our own node; its deletion never grants.
  for (const auto& c : children) {
    const auto r = d.gets_the_lock(children, c, 0);
    REQUIRE(r);
    CHECK_FALSE(r->gets_the_lock);
    CHECK(r->path_to_watch == c);
    CHECK_FALSE(r->granted_when_watched_node_goes);
  }
}

TEST_CASE("standard driver: shared instance and polymorphic use", "[driver]") {
  CHECK(&zkr::standard_lock_driver() == &zkr::standard_lock_driver());
  const zkr::StandardLockDriver local;
  const zkr::LockDriver& base = local;
  const auto children = sorted({node(0, 1), node(1, 2)});
  const auto a = base.gets_the_lock(children, node(1, 2), 1);
  const auto b = zkr::standard_lock_driver().gets_the_lock(children, node(1, 2), 1);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(a->gets_the_lock == b->gets_the_lock);
  CHECK(a->path_to_watch == b->path_to_watch);
  CHECK(a->granted_when_watched_node_goes == b->granted_when_watched_node_goes);
}

TEST_CASE("pre-watch driver: the standard answers, plus the node ahead of the watched one", "[driver]") {
  const zkr::PrewatchLockDriver prewatch;
  const auto& standard = zkr::standard_lock_driver();
  std::vector<std::string> children;
  for (int i = 0; i < 6; ++i) children.push_back(node(i, 10 + i));
  children = sorted(children);
  for (std::size_t max_leases = 0; max_leases <= 3; ++max_leases)
    for (std::size_t p = 0; p < children.size(); ++p) {
      INFO("max_leases=" << max_leases << " position=" << p);
      const auto r = prewatch.gets_the_lock(children, children[p], max_leases);
      const auto s = standard.gets_the_lock(children, children[p], max_leases);
      REQUIRE(r);
      REQUIRE(s);
      // The decision itself is the standard driver's.
      CHECK(r->gets_the_lock == s->gets_the_lock);
      CHECK(r->path_to_watch == s->path_to_watch);
      CHECK(r->granted_when_watched_node_goes == s->granted_when_watched_node_goes);
      CHECK(s->path_to_prewatch.empty());  // the standard driver never pre-watches
      if (max_leases > 0 && p > max_leases) {
        // Further back than just behind the holders: also the node just ahead of the watched one.
        CHECK(r->path_to_prewatch == children[p - max_leases - 1]);
        CHECK(r->path_to_prewatch != r->path_to_watch);
      } else {
        // Holding, next in line (the watched node's deletion grants already) or zero leases: nothing more.
        CHECK(r->path_to_prewatch.empty());
      }
    }
  CHECK_FALSE(prewatch.gets_the_lock(children, node(7, 99), 1).has_value());  // ours missing: as standard
}

TEST_CASE("sort_children orders exactly as a stable sort by sort_key (random names)", "[driver]") {
  // The sort packs the first 16 bytes of each key into integers; any key shape must still give the plain
  // byte order, ties in input order: short and long keys, equal 16-byte prefixes, bytes above 0x7f (UTF-8).
  std::mt19937 rng(20261122);
  const std::vector<std::string> pieces = {
      "0",        "00000000",     "0000000012",       "9", "lock-", "a",
      "\xc3\xa9", "\xe2\x82\xac", "0000000000000000", "z", "-",     "_c_"};
  const auto& d = zkr::standard_lock_driver();
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> names;
    const int n = 1 + int(rng() % 40);
    for (int i = 0; i < n; ++i) {
      std::string name = (rng() % 4 == 0) ? "" : "_c_x-lock-";
      const int parts = int(rng() % 5);
      for (int p = 0; p < parts; ++p) name += pieces[rng() % pieces.size()];
      if (rng() % 3 == 0 && !names.empty()) name = names[rng() % names.size()];  // duplicates: ties
      names.push_back(name);
    }
    // Tag duplicates so that a tie's input order can be checked.
    std::vector<std::pair<std::string, int>> reference;
    for (int i = 0; i < n; ++i) reference.emplace_back(names[std::size_t(i)], i);
    std::stable_sort(reference.begin(), reference.end(), [&](const auto& a, const auto& b) {
      return d.sort_key(a.first, lock_name) < d.sort_key(b.first, lock_name);
    });
    auto got = names;
    d.sort_children(got, lock_name);
    std::vector<std::string> want;
    for (auto& r : reference) want.push_back(r.first);
    CHECK(got == want);
  }
}

TEST_CASE("lock_node: every driver of the library describes Curator's protected ephemeral-sequential node",
          "[driver][spec]") {
  const zkr::LockNodeSpec curator{};
  CHECK(curator.mode == zkr::LockNodeMode::ephemeral_sequential);
  CHECK(curator.protection);
  CHECK_FALSE(curator.data);
  for (std::string_view name : {"lock-", "__READ__", "__WRIT__", "latch-", ""}) {
    INFO(name);
    CHECK(zkr::standard_lock_driver().lock_node(name) == curator);
    CHECK(zkr::prewatch_lock_driver().lock_node(name) == curator);
    CHECK(zkr::read_lock_driver().lock_node(name) == curator);
    CHECK(zkr::write_lock_driver().lock_node(name) == curator);
  }
}

namespace {
/// A persistent lock whose read nodes carry a marker (the spec may depend on the lock's name), as data.
struct PersistentDriver : zkr::StandardLockDriver {
  zkr::LockNodeSpec lock_node(std::string_view name) const override {
    zkr::LockNodeSpec s{.mode = zkr::LockNodeMode::persistent_sequential};
    if (name == "__READ__") s.data = "reader";
    return s;
  }
};
}  // namespace

TEST_CASE("lock_node: a driver overrides the node and keeps the standard policy", "[driver][spec]") {
  const PersistentDriver d;
  const zkr::LockDriver& base = d;
  auto s = base.lock_node("lock-");
  CHECK(s.mode == zkr::LockNodeMode::persistent_sequential);
  CHECK(s.protection);
  CHECK_FALSE(s.data);
  CHECK(base.lock_node("__READ__").data == std::optional<std::string>("reader"));
  CHECK_FALSE(base.lock_node("lock-") == base.lock_node("__READ__"));
  // The policy is the standard one.
  const std::vector<std::string> kids = {node(0, 1), node(1, 2)};
  auto r = base.gets_the_lock(kids, kids[1], 1);
  REQUIRE(r);
  CHECK_FALSE(r->gets_the_lock);
  CHECK(r->path_to_watch == kids[0]);
}
