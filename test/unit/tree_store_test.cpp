// Unit tests of the cache engine's storage (detail::TreeStore): lookup by path, children in name order,
// subtree removal deepest first with its watches, snapshots in path order (names with characters that sort
// before and after '/'), the root "/" and a root deeper down, and a randomized run against a std::map of
// paths, the storage it replaced.
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>
#include <vector>
#include <zkr/recipes/detail/tree_store.hpp>

namespace {

using zkr::ChildData;
using zkr::Stat;
using zkr::detail::NodeWatches;
using zkr::detail::TreeStore;
using zkr::detail::WatchId;
using Kind = TreeStore::WatchKind;

Stat stat_of(std::int64_t czxid) {
  Stat s;
  s.czxid = czxid;
  s.mzxid = czxid + 1;
  s.ctime = czxid * 10;
  s.mtime = czxid * 10 + 1;
  s.version = static_cast<std::int32_t>(czxid % 7);
  s.cversion = 2;
  s.aversion = 3;
  s.ephemeral_owner = czxid * 3;
  s.data_length = 4;
  s.num_children = 5;
  s.pzxid = czxid + 2;
  return s;
}

std::vector<std::string> paths(const std::vector<ChildData>& v) {
  std::vector<std::string> out;
  for (auto& c : v) out.push_back(c.path);
  return out;
}

}  // namespace

TEST_CASE("cache storage: finds a node by path with its Stat and bytes", "[cache][tree_store]") {
  TreeStore s("/r");
  CHECK_FALSE(s.insert("/r/a", stat_of(2), "x"));  // no parent yet
  REQUIRE(s.insert("/r", stat_of(1), "root"));
  REQUIRE(s.insert("/r/a", stat_of(2), "alpha"));
  REQUIRE(s.insert("/r/a/b", stat_of(3), std::string(1000, 'z')));
  CHECK_FALSE(s.insert("/r/a", stat_of(9), "again"));  // held
  CHECK_FALSE(s.insert("/x", stat_of(9), ""));         // outside the root
  CHECK_FALSE(s.insert("/r/", stat_of(9), ""));
  CHECK(s.size() == 3);

  const auto a = s.get("/r/a");
  REQUIRE(a);
  CHECK(*a == ChildData{"/r/a", stat_of(2), "alpha"});
  CHECK(s.get("/r")->data == "root");
  CHECK(s.get("/r/a/b")->data == std::string(1000, 'z'));
  CHECK(s.stat("/r/a/b")->pzxid == stat_of(3).pzxid);
  for (const char* missing : {"/", "/r/", "/r/a/", "/r//a", "/ra", "/r/b", "/r/a/b/c", "r/a", ""})
    CHECK_FALSE(s.contains(missing));

  REQUIRE(s.set_bytes("/r/a", "longer bytes than before"));
  CHECK(s.get("/r/a")->data == "longer bytes than before");
  REQUIRE(s.set_bytes("/r/a", ""));
  CHECK(s.get("/r/a")->data.empty());
  REQUIRE(s.set_stat("/r/a", stat_of(7)));
  CHECK(s.get("/r/a")->stat.mtime == stat_of(7).mtime);
  CHECK(s.get("/r/a/b")->data == std::string(1000, 'z'));  // the child still found after its parent moved
  CHECK_FALSE(s.set_bytes("/r/c", "x"));
  CHECK_FALSE(s.set_stat("/r/c", stat_of(1)));
}

TEST_CASE("cache storage: lists the children of a node in name order", "[cache][tree_store]") {
  TreeStore s("/");
  REQUIRE(s.insert("/", stat_of(1), ""));
  for (const char* n : {"b", "a-", "a", "a0", "A", "\xff", "a.b"})
    REQUIRE(s.insert(std::string("/") + n, stat_of(2), n));
  REQUIRE(s.insert("/a/x", stat_of(3), ""));
  const auto kids = s.children_of("/");
  REQUIRE(kids);
  CHECK(paths(*kids) == std::vector<std::string>{"/A", "/a", "/a-", "/a.b", "/a0", "/b", "/\xff"});
  CHECK(*s.child_names("/") == std::vector<std::string>{"A", "a", "a-", "a.b", "a0", "b", "\xff"});
  CHECK(paths(*s.children_of("/a")) == std::vector<std::string>{"/a/x"});
  CHECK(s.children_of("/a/x")->empty());
  CHECK_FALSE(s.children_of("/c"));
  CHECK_FALSE(s.child_names("/c"));
}

TEST_CASE("cache storage: snapshots in path order, names sorting around '/' included",
          "[cache][tree_store]") {
  const std::string root = GENERATE(as<std::string>{}, "/", "/chroot/app");
  const auto under = [&](const std::string& rel) { return root == "/" ? rel : root + rel; };
  TreeStore s(root);
  REQUIRE(s.insert(root, stat_of(1), ""));
  // '-' and '.' sort before '/', '0' and 'z' after: "/a-b" comes between "/a" and "/a/c".
  const std::vector<std::string> rel = {"/a",     "/a-b",   "/a.", "/a0",   "/az", "/a/c", "/a/c-",
                                        "/a/c/d", "/a-b/e", "/a-", "/a-/f", "/b",  "/b/ ", "/b/~"};
  for (auto& r : rel) REQUIRE(s.insert(under(r), stat_of(2), r));
  std::vector<std::string> want{root};
  for (auto& r : rel) want.push_back(under(r));
  std::sort(want.begin(), want.end());
  CHECK(paths(s.snapshot()) == want);
  for (auto& c : s.snapshot())
    CHECK(c.data == (c.path == root ? "" : c.path.substr(root == "/" ? 0 : root.size())));
}

TEST_CASE("cache storage: removes a subtree deepest first with its watches", "[cache][tree_store]") {
  TreeStore s("/r");
  REQUIRE(s.insert("/r", stat_of(1), "", {1, 2}));
  REQUIRE(s.insert("/r/a", stat_of(2), "", {3, 0}));
  REQUIRE(s.insert("/r/a-", stat_of(2), "", {4, 0}));
  REQUIRE(s.insert("/r/a/b", stat_of(3), "bb", {5, 6}));
  REQUIRE(s.insert("/r/a/b/c", stat_of(4), ""));
  REQUIRE(s.insert("/r/a/d", stat_of(5), ""));
  CHECK(s.watch_count() == 6);

  std::vector<WatchId> watches;
  const auto gone = s.remove_subtree("/r/a", watches);
  CHECK(paths(gone) == std::vector<std::string>{"/r/a/d", "/r/a/b/c", "/r/a/b", "/r/a"});
  CHECK(gone[2].data == "bb");
  CHECK(watches == std::vector<WatchId>{5, 6, 3});
  CHECK(s.size() == 2);
  CHECK(s.watch_count() == 3);
  CHECK_FALSE(s.contains("/r/a/b"));
  CHECK(s.contains("/r/a-"));
  CHECK(s.remove_subtree("/r/a", watches).empty());

  // The root too, and the store is empty (and takes a root again).
  watches.clear();
  CHECK(paths(s.remove_subtree("/r", watches)) == std::vector<std::string>{"/r/a-", "/r"});
  CHECK(watches == std::vector<WatchId>{4, 1, 2});
  CHECK(s.size() == 0);
  CHECK(s.watch_count() == 0);
  CHECK(s.snapshot().empty());
  CHECK(s.insert("/r", stat_of(1), ""));
}

TEST_CASE("cache storage: keeps one-shot watches per node, room for them made on the first",
          "[cache][tree_store]") {
  TreeStore s("/r");
  REQUIRE(s.insert("/r", stat_of(1), "data"));
  REQUIRE(s.insert("/r/a", stat_of(2), "child"));
  CHECK(s.watches("/r")->data == 0);
  CHECK_FALSE(s.watches("/r/b"));
  CHECK(s.set_watch("/r", Kind::children, 0) == 0);  // none asked: nothing changes
  CHECK(s.set_watch("/r", Kind::children, 11) == 0);
  CHECK(s.set_watch("/r", Kind::data, 12) == 0);
  CHECK(s.set_watch("/r", Kind::data, 13) == 12);
  CHECK(s.set_watch("/r/b", Kind::data, 14) == 0);  // not held
  CHECK(s.watch_count() == 2);
  CHECK(s.get("/r")->data == "data");  // the bytes moved with the node
  CHECK(s.get("/r/a")->data == "child");
  REQUIRE(s.set_bytes("/r", "new"));
  CHECK(s.watches("/r")->children == 11);
  CHECK(s.watches("/r")->data == 13);
  CHECK(s.set_watch("/r", Kind::data, 0) == 13);
  CHECK(s.watch_count() == 1);

  REQUIRE(s.set_watch("/r/a", Kind::data, 15) == 0);
  auto taken = s.take_watches();
  std::sort(taken.begin(), taken.end());
  CHECK(taken == std::vector<WatchId>{11, 15});
  CHECK(s.watch_count() == 0);
  CHECK(s.watches("/r")->children == 0);
  REQUIRE(s.set_watch("/r/a", Kind::children, 16) == 0);
  s.forget_watches();
  CHECK(s.watch_count() == 0);
  CHECK(s.take_watches().empty());
}

TEST_CASE("cache storage: holds many children under one parent and lets them go", "[cache][tree_store]") {
  TreeStore s("/r");
  REQUIRE(s.insert("/r", stat_of(1), ""));
  std::vector<int> order(20000);
  for (int i = 0; i < 20000; ++i) order[static_cast<std::size_t>(i)] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  for (int i : order) REQUIRE(s.insert("/r/n" + std::to_string(i), stat_of(i + 2), std::to_string(i)));
  CHECK(s.size() == 20001);
  for (int i = 0; i < 20000; i += 997) CHECK(s.get("/r/n" + std::to_string(i))->data == std::to_string(i));
  std::vector<WatchId> watches;
  for (int i : order)
    if (i % 10) REQUIRE(s.remove_subtree("/r/n" + std::to_string(i), watches).size() == 1);
  CHECK(s.size() == 2001);
  const auto names = *s.child_names("/r");
  REQUIRE(names.size() == 2000);
  CHECK(std::is_sorted(names.begin(), names.end()));
  for (int i = 0; i < 20000; i += 10) CHECK(s.contains("/r/n" + std::to_string(i)));
  s.clear();
  CHECK(s.size() == 0);
  CHECK_FALSE(s.contains("/r"));
}

TEST_CASE("cache storage: agrees with a map of paths over random edits", "[cache][tree_store]") {
  const std::string root = GENERATE(as<std::string>{}, "/", "/r");
  std::mt19937 rng(GENERATE(1u, 2u, 3u));
  TreeStore s(root);
  std::map<std::string, std::string> model;  // path -> bytes
  const std::vector<std::string> names = {"a", "a-", "a.", "a0", "b", "b ", "~", "\xc3\xa9", "ab"};
  const auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  const auto random_held = [&] {
    auto it = model.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(pick(model.size())));
    return it->first;
  };
  for (int step = 0; step < 3000; ++step) {
    if (model.empty()) {
      REQUIRE(s.insert(root, stat_of(step), "root"));
      model[root] = "root";
      continue;
    }
    const auto op = pick(10);
    const auto at = random_held();
    if (op < 6) {
      const auto path = (at == "/" ? "" : at) + "/" + names[pick(names.size())];
      const auto bytes = std::string(pick(40), 'x');
      CHECK(s.insert(path, stat_of(step), bytes) == !model.count(path));
      model.emplace(path, bytes);
    } else if (op < 7) {
      std::vector<WatchId> w;
      const auto gone = s.remove_subtree(at, w);
      std::vector<std::string> want;
      for (auto it = model.lower_bound(at); it != model.end() && it->first.starts_with(at);) {
        if (it->first == at || at == "/" || it->first[at.size()] == '/') {
          want.push_back(it->first);
          it = model.erase(it);
        } else {
          ++it;
        }
      }
      std::reverse(want.begin(), want.end());
      CHECK(paths(gone) == want);
    } else if (op < 9) {
      const auto bytes = std::string(pick(40), 'y');
      REQUIRE(s.set_bytes(at, bytes));
      model[at] = bytes;
    } else {
      s.set_watch(at, Kind::data, static_cast<WatchId>(step + 1));
    }
    REQUIRE(s.size() == model.size());
  }
  const auto snap = s.snapshot();
  REQUIRE(snap.size() == model.size());
  auto it = model.begin();
  for (auto& c : snap) {
    CHECK(c.path == it->first);
    CHECK(c.data == it->second);
    ++it;
  }
}
