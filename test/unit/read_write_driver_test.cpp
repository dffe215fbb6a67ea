// Unit tests for drivers/read_write_lock_driver: Curator's InterProcessReadWriteLock predicates,
// exhaustively.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <random>
#include <string>
#include <vector>
#include <zkr/drivers/read_write_lock_driver.hpp>

namespace {

/// `_c_<uuid>-<kind><%010d>`; the uuid varies with `owner` so that full-name order differs from sequence
/// order.
std::string rw_node(std::string_view kind, int owner, long long seq) {
  static const char* uuids[] = {
      "f0000000-0000-4000-8000-000000000000", "10000000-0000-4000-8000-000000000000",
      "c0000000-0000-4000-8000-000000000000", "30000000-0000-4000-8000-000000000000",
      "a0000000-0000-4000-8000-000000000000", "50000000-0000-4000-8000-000000000000",
      "e0000000-0000-4000-8000-000000000000", "70000000-0000-4000-8000-000000000000",
      "d0000000-0000-4000-8000-000000000000",
  };
  char seqbuf[32];
  std::snprintf(seqbuf, sizeof seqbuf, "%010lld", seq);
  return std::string("_c_") + uuids[owner % 9] + "-" + std::string(kind) + seqbuf;
}
std::string rd(int owner, long long seq) { return rw_node(zkr::read_lock_name, owner, seq); }
std::string wr(int owner, long long seq) { return rw_node(zkr::write_lock_name, owner, seq); }

std::vector<std::string> rw_sorted(std::vector<std::string> v) {
  zkr::read_lock_driver().sort_children(v, zkr::read_lock_name);
  return v;
}

}  // namespace

TEST_CASE("read-write lock names", "[rwdriver]") {
  CHECK(zkr::read_lock_name == "__READ__");
  CHECK(zkr::write_lock_name == "__WRIT__");
  CHECK(zkr::read_lock_name.size() == zkr::write_lock_name.size());  // "must be the same length"
}

TEST_CASE("read_write_sort_key strips through the last __READ__, then the last __WRIT__", "[rwdriver]") {
  using zkr::read_write_sort_key;
  CHECK(read_write_sort_key("__READ__0000000003") == "0000000003");
  CHECK(read_write_sort_key("__WRIT__0000000004") == "0000000004");
  CHECK(read_write_sort_key(rd(0, 3)) == "0000000003");
  CHECK(read_write_sort_key(wr(0, 4)) == "0000000004");
  CHECK(read_write_sort_key("x__WRIT__y__READ__0000000001") == "0000000001");
  CHECK(read_write_sort_key("x__READ__y__WRIT__0000000001") == "0000000001");
  CHECK(read_write_sort_key("__READ____READ__0000000002") == "0000000002");
  CHECK(read_write_sort_key("__READ__0000000002__WRIT__") == "");
  CHECK(read_write_sort_key("__WRIT__0000000002__READ__") == "");
  // Overlapping markers show the order of the two strips (READ first, then WRIT in what is left).
  CHECK(read_write_sort_key("x__READ__WRIT__5") == "WRIT__5");
  CHECK(read_write_sort_key("x__WRIT__READ__5") == "5");
  CHECK(read_write_sort_key("0") == "0");
  CHECK(read_write_sort_key("lock-0000000001") == "lock-0000000001");  // a mutex node is foreign here
  CHECK(read_write_sort_key("") == "");

  // Both drivers sort the same way and ignore the lock name they are given.
  for (const std::string& c : {rd(1, 9), wr(2, 8), std::string("0"), std::string("x__WRIT__y__READ__5")}) {
    CHECK(zkr::read_lock_driver().sort_key(c, "anything") == read_write_sort_key(c));
    CHECK(zkr::write_lock_driver().sort_key(c, zkr::read_lock_name) == read_write_sort_key(c));
    CHECK(zkr::write_lock_driver().sort_key(c, "") == read_write_sort_key(c));
  }
}

TEST_CASE("readers and writers interleave by sequence number", "[rwdriver]") {
  const std::vector<std::string> expected = {rd(0, 1), wr(1, 2), rd(2, 3), rd(3, 4),
                                             wr(4, 5), rd(5, 6), wr(6, 7)};
  auto by_name = expected;
  std::sort(by_name.begin(), by_name.end());
  REQUIRE(by_name != expected);
  std::mt19937 rng(7);
  auto shuffled = expected;
  for (int round = 0; round < 200; ++round) {
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    CHECK(rw_sorted(shuffled) == expected);
    auto w = shuffled;
    zkr::write_lock_driver().sort_children(w, zkr::write_lock_name);
    CHECK(w == expected);
  }
}

TEST_CASE("read-write predicates over every reader/writer interleaving", "[rwdriver]") {
  const auto& rdrv = zkr::read_lock_driver();
  const auto& wdrv = zkr::write_lock_driver();
  std::mt19937 rng(1234);
  for (std::size_t n = 1; n <= 8; ++n) {
    for (unsigned pattern = 0; pattern < (1u << n); ++pattern) {
      std::vector<std::string> expected;
      std::vector<bool> is_writer;
      for (std::size_t i = 0; i < n; ++i) {
        const bool w = (pattern >> i) & 1u;
        is_writer.push_back(w);
        expected.push_back(w ? wr(static_cast<int>(i), 10 + i) : rd(static_cast<int>(i), 10 + i));
      }
      auto input = expected;
      std::shuffle(input.begin(), input.end(), rng);
      const auto children = rw_sorted(input);
      REQUIRE(children == expected);

      std::size_t holding_writers = 0;
      std::size_t holding_readers = 0;
      for (std::size_t p = 0; p < n; ++p) {
        INFO("n=" << n << " pattern=" << pattern << " position=" << p);
        std::size_t first_writer = n;
        for (std::size_t i = 0; i < p; ++i) {
          if (is_writer[i]) {
            first_writer = i;
            break;
          }
        }
        if (is_writer[p]) {
          const auto r = wdrv.gets_the_lock(children, children[p], 1);
          REQUIRE(r);
          CHECK(r->gets_the_lock == (p == 0));  // any reader or writer ahead blocks a writer
          // The shortcut only behind a lone reader (a write predecessor may downgrade before it goes).
          CHECK(r->granted_when_watched_node_goes == (p == 1 && !is_writer[0]));
          if (p == 0) {
            CHECK(r->path_to_watch.empty());
            ++holding_writers;
          } else {
            CHECK(r->path_to_watch == children[p - 1]);  // the immediate predecessor, read or write
          }
        } else {
          const auto r = rdrv.read_gets_the_lock(children, children[p], false);
          REQUIRE(r);
          CHECK(r->gets_the_lock == (first_writer == n));  // only a writer ahead blocks a reader
          // The shortcut iff the watched first writer is the only writer ahead.
          CHECK(r->granted_when_watched_node_goes ==
                (first_writer != n && std::count(is_writer.begin(), is_writer.begin() + p, true) == 1));
          if (first_writer == n) {
            CHECK(r->path_to_watch.empty());
            ++holding_readers;
          } else {
            CHECK(r->path_to_watch == children[first_writer]);  // the FIRST writer, not the nearest
          }
          // The LockDriver override assumes the asking thread does not own the write lock.
          const auto o = rdrv.gets_the_lock(children, children[p], 12345);
          REQUIRE(o);
          CHECK(o->gets_the_lock == r->gets_the_lock);
          CHECK(o->path_to_watch == r->path_to_watch);
          // A thread that owns the write lock always gets the read lock at once.
          const auto own = rdrv.read_gets_the_lock(children, children[p], true);
          REQUIRE(own);
          CHECK(own->gets_the_lock);
          CHECK(own->path_to_watch.empty());
        }
      }
      // Exclusion: one writer alone, or readers only.
      CHECK(holding_writers <= 1);
      if (holding_writers == 1) CHECK(holding_readers == 0);
      CHECK(holding_writers + holding_readers >= 1);  // someone always makes progress
    }
  }
}

TEST_CASE("readers queued behind writers all watch the first writer", "[rwdriver]") {
  const auto children = rw_sorted({rd(5, 5), wr(3, 3), rd(0, 1), wr(2, 2), rd(4, 4)});
  REQUIRE(children == std::vector<std::string>{rd(0, 1), wr(2, 2), wr(3, 3), rd(4, 4), rd(5, 5)});
  const auto& rdrv = zkr::read_lock_driver();
  const auto& wdrv = zkr::write_lock_driver();
  CHECK(rdrv.read_gets_the_lock(children, rd(0, 1), false)->gets_the_lock);
  CHECK(wdrv.gets_the_lock(children, wr(2, 2), 1)->path_to_watch == rd(0, 1));
  CHECK(wdrv.gets_the_lock(children, wr(3, 3), 1)->path_to_watch == wr(2, 2));
  CHECK(rdrv.read_gets_the_lock(children, rd(4, 4), false)->path_to_watch == wr(2, 2));
  CHECK(rdrv.read_gets_the_lock(children, rd(5, 5), false)->path_to_watch == wr(2, 2));
  // Writers behind the reader do not matter: the scan stops at our node.
  CHECK(rdrv.read_gets_the_lock(rw_sorted({rd(0, 1), wr(1, 2), wr(2, 3)}), rd(0, 1), false)->gets_the_lock);
}

TEST_CASE("write driver takes no watched-node shortcut behind a write node (downgrade, CURATOR-621)",
          "[rwdriver]") {
  const auto& std_drv = zkr::standard_lock_driver();
  const auto& wdrv = zkr::write_lock_driver();
  const auto& rdrv = zkr::read_lock_driver();
  const std::string a_write = wr(0, 5);
  const std::string c_write = wr(2, 6);

  // C queues behind A's write lock. The standard rule would let C skip the re-listing when A's node goes...
  const auto before = rw_sorted({c_write, a_write});
  REQUIRE(before == std::vector<std::string>{a_write, c_write});
  CHECK(std_drv.gets_the_lock(before, c_write, 1)->granted_when_watched_node_goes);
  const auto c1 = wdrv.gets_the_lock(before, c_write, 1);
  REQUIRE(c1);
  CHECK_FALSE(c1->gets_the_lock);
  CHECK(c1->path_to_watch == a_write);
  CHECK_FALSE(c1->granted_when_watched_node_goes);  // ...which the write driver refuses.

  // ...but A downgrades: a non-sequential read node with A's write sequence, then releases the write node.
  const std::string a_read = rd(1, 5);
  CHECK(zkr::read_write_sort_key(a_read) == zkr::read_write_sort_key(a_write));
  CHECK(rdrv.read_gets_the_lock(rw_sorted({a_write, a_read, c_write}), a_read, true)->gets_the_lock);
  // Either tie order of A's two nodes keeps C out.
  for (const auto& listing : {std::vector<std::string>{a_write, a_read, c_write},
                              std::vector<std::string>{a_read, a_write, c_write}}) {
    const auto children = rw_sorted(listing);
    CHECK(children == listing);  // stable: the server's order decides ties
    const auto c = wdrv.gets_the_lock(children, c_write, 1);
    REQUIRE(c);
    CHECK_FALSE(c->gets_the_lock);
    CHECK(c->path_to_watch == children[1]);
    CHECK_FALSE(c->granted_when_watched_node_goes);
  }
  // After A releases the write node, A's read node still blocks C; had C trusted the shortcut it would now
  // hold the write lock next to A's read lock.
  const auto after = rw_sorted({c_write, a_read});
  REQUIRE(after == std::vector<std::string>{a_read, c_write});
  const auto c2 = wdrv.gets_the_lock(after, c_write, 1);
  REQUIRE(c2);
  CHECK_FALSE(c2->gets_the_lock);
  CHECK(c2->path_to_watch == a_read);
  // Behind a lone *read* node the shortcut is safe again: only a write holder makes downgrade nodes, and A
  // no longer holds the write lock.
  CHECK(c2->granted_when_watched_node_goes);
  CHECK(rdrv.read_gets_the_lock(after, a_read, false)->gets_the_lock);  // A's read holds without the write

  // Another thread reading while A still holds the write lock blocks (testThatDowngradingRespectsThreads).
  const auto d_read = rd(3, 7);
  const auto with_reader = rw_sorted({a_write, a_read, c_write, d_read});
  const auto d = rdrv.read_gets_the_lock(with_reader, d_read, false);
  REQUIRE(d);
  CHECK_FALSE(d->gets_the_lock);
  CHECK(d->path_to_watch == a_write);
}

TEST_CASE("upgrading a read lock to the write lock never succeeds", "[rwdriver]") {
  // testThatUpgradingIsDisallowed: our write node sorts after our own read node.
  const auto children = rw_sorted({wr(0, 2), rd(0, 1)});
  CHECK(zkr::read_lock_driver().read_gets_the_lock(children, rd(0, 1), false)->gets_the_lock);
  const auto w = zkr::write_lock_driver().gets_the_lock(children, wr(0, 2), 1);
  REQUIRE(w);
  CHECK_FALSE(w->gets_the_lock);
  CHECK(w->path_to_watch == rd(0, 1));  // waits on itself: a deadlock without a timeout, as in Curator
}

TEST_CASE("read-write drivers: missing node", "[rwdriver]") {
  const auto children = rw_sorted({rd(0, 1), wr(1, 2)});
  const auto& rdrv = zkr::read_lock_driver();
  const auto& wdrv = zkr::write_lock_driver();
  CHECK_FALSE(rdrv.read_gets_the_lock(children, rd(2, 3), false).has_value());
  CHECK_FALSE(rdrv.read_gets_the_lock({}, rd(2, 3), false).has_value());
  CHECK_FALSE(rdrv.gets_the_lock(children, rd(2, 3), 1).has_value());
  CHECK_FALSE(wdrv.gets_the_lock(children, wr(2, 3), 1).has_value());
  CHECK_FALSE(wdrv.gets_the_lock({}, wr(2, 3), 1).has_value());
  // Owning the write lock short-circuits before the scan, even with our node absent (as Curator).
  CHECK(rdrv.read_gets_the_lock(children, rd(2, 3), true)->gets_the_lock);
  CHECK(rdrv.read_gets_the_lock({}, rd(2, 3), true)->gets_the_lock);
}

TEST_CASE("read driver matches our node with startsWith, and only among non-writers", "[rwdriver]") {
  const auto& rdrv = zkr::read_lock_driver();
  // Curator's `node.startsWith(ourName)`: a child that extends our name counts as ours.
  const std::vector<std::string> one = {rd(0, 1)};
  const std::string prefix_of_ours = rd(0, 1).substr(0, rd(0, 1).size() - 3);
  const auto r = rdrv.read_gets_the_lock(one, prefix_of_ours, false);
  REQUIRE(r);
  CHECK(r->gets_the_lock);
  // A writer whose name starts with ours is still a writer, not our node.
  const std::vector<std::string> only_writer = {wr(0, 1)};
  CHECK_FALSE(rdrv.read_gets_the_lock(only_writer, "_c_f0000000", false).has_value());
  // A longer name is not a prefix of a shorter child.
  CHECK_FALSE(rdrv.read_gets_the_lock(one, rd(0, 1) + "0", false).has_value());
  // The scan stops at the first match: a later child that also starts with our name is not considered.
  const std::vector<std::string> twice = {rd(0, 1), wr(1, 2), rd(0, 1) + "9"};
  const auto first = rdrv.read_gets_the_lock(twice, rd(0, 1), false);
  REQUIRE(first);
  CHECK(first->gets_the_lock);
}

TEST_CASE("read-write drivers: foreign children", "[rwdriver]") {
  const auto& rdrv = zkr::read_lock_driver();
  const auto& wdrv = zkr::write_lock_driver();
  const auto children = rw_sorted({wr(1, 2), rd(0, 1), "0"});
  REQUIRE(children == std::vector<std::string>{"0", rd(0, 1), wr(1, 2)});
  // Readers only look for writers: a foreign node does not block them.
  CHECK(rdrv.read_gets_the_lock(children, rd(0, 1), false)->gets_the_lock);
  // Writers are blocked by anything ahead, foreign nodes included (as in Curator).
  const auto w = wdrv.gets_the_lock(children, wr(1, 2), 1);
  CHECK_FALSE(w->gets_the_lock);
  CHECK(w->path_to_watch == rd(0, 1));
  const auto lone = rw_sorted({wr(1, 2), "0"});
  const auto w2 = wdrv.gets_the_lock(lone, wr(1, 2), 1);
  CHECK_FALSE(w2->gets_the_lock);
  CHECK(w2->path_to_watch == "0");
  CHECK_FALSE(w2->granted_when_watched_node_goes);
  // The engine knows foreign nodes from the drivers: both sides' nodes belong to the lock.
  for (const zkr::LockDriver* d :
       {static_cast<const zkr::LockDriver*>(&rdrv), static_cast<const zkr::LockDriver*>(&wdrv)}) {
    CHECK(d->is_lock_node(rd(0, 1), "__READ__"));
    CHECK(d->is_lock_node(wr(1, 2), "__READ__"));
    CHECK(d->is_lock_node(rd(0, 1), "__WRIT__"));
    CHECK_FALSE(d->is_lock_node("0", "__WRIT__"));
  }
  // A foreign name containing "__WRIT__" counts as a writer for readers.
  const auto odd = rw_sorted({rd(0, 1), "x__WRIT__"});
  REQUIRE(odd.front() == "x__WRIT__");  // key ""
  CHECK(rdrv.read_gets_the_lock(odd, rd(0, 1), false)->path_to_watch == "x__WRIT__");
}

TEST_CASE("read-write drivers: sequence wrap follows Curator's string order", "[rwdriver]") {
  // A writer created after the 32-bit wrap sorts ahead of an older reader (ZooKeeper limitation).
  const std::string old_reader = rd(0, 2147483647LL);
  const std::string new_writer = wr(1, -2147483648LL);
  const auto children = rw_sorted({old_reader, new_writer});
  REQUIRE(children == std::vector<std::string>{new_writer, old_reader});
  CHECK(zkr::write_lock_driver().gets_the_lock(children, new_writer, 1)->gets_the_lock);
  const auto r = zkr::read_lock_driver().read_gets_the_lock(children, old_reader, false);
  CHECK_FALSE(r->gets_the_lock);
  CHECK(r->path_to_watch == new_writer);
}

TEST_CASE("read-write drivers: shared instances and polymorphic use", "[rwdriver]") {
  CHECK(&zkr::read_lock_driver() == &zkr::read_lock_driver());
  CHECK(&zkr::write_lock_driver() == &zkr::write_lock_driver());
  const zkr::LockDriver& as_base_w = zkr::write_lock_driver();
  const zkr::LockDriver& as_base_r = zkr::read_lock_driver();
  std::vector<std::string> v = {wr(1, 2), rd(0, 1)};
  as_base_w.sort_children(v, "ignored");
  CHECK(v == std::vector<std::string>{rd(0, 1), wr(1, 2)});
  CHECK_FALSE(as_base_w.gets_the_lock(v, wr(1, 2), 1)->gets_the_lock);
  CHECK(as_base_r.gets_the_lock(v, rd(0, 1), 1)->gets_the_lock);
}
