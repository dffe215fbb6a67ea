// Integration tests of the caches against a real server: each cache's contents equal the server's tree after
// a session expiry, a server restart, a reaped container parent, a root created late, fast changes and
// deleted-then-recreated nodes; replaying its events gives its contents; and one regression test per Curator
// cache bug named in issue 39, named after it.
#include <catch2/catch.hpp>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <vector>
#include <zkr/recipes/cache/curator_cache.hpp>
#include <zkr/recipes/cache/node_cache.hpp>
#include <zkr/recipes/cache/path_children_cache.hpp>
#include <zkr/recipes/cache/tree_cache.hpp>

#include "cache_support.hpp"
#include "fixture.hpp"

namespace {

using namespace zkr;
using namespace zkr::test;

/// The cache, its replayed events and the server agree (waited for: the cache follows the server).
bool converged(CuratorFramework& admin, const CuratorCache& cache, const Replay& replay,
               const std::string& root) {
  return eventually([&] {
    const auto want = server_tree(admin, root);
    return want && as_tree(cache.stream()) == *want && replayed_tree(replay) == *want;
  });
}

void make(CuratorFramework& c, const std::string& path, std::string data = {},
          CreateMode mode = CreateMode::persistent) {
  c.create(path, {.mode = mode, .creating_parents = true, .data = std::move(data)});
}

}  // namespace

TEST_CASE_METHOD(ServerFixture, "cache: a CuratorCache follows a tree and its events replay to its contents",
                 "[cache]") {
  make(*admin, "/t/a/x", "x");
  make(*admin, "/t/b", "b");
  auto c = client();
  Replay replay;
  auto cache = CuratorCache::build(*c, "/t");
  cache.add_listener(replay.listener());
  cache.start();
  REQUIRE(cache.await_initialized(20s));
  CHECK(converged(*admin, cache, replay, "/t"));
  admin->set_data("/t/a", "a2");
  admin->remove("/t/b");
  make(*admin, "/t/c/d/e", "deep");
  CHECK(converged(*admin, cache, replay, "/t"));
  CHECK(replay.issues().empty());
  CHECK(replay.initialized == 1);
  // One persistent recursive watch where the transport has them (native), one-shot watches per node else.
  CHECK(cache.uses_persistent_watch() == c->supports_persistent_watches());
}

TEST_CASE_METHOD(
    ServerFixture,
    "cache: a CuratorCache of a chrooted client's root lists its tree in path order, around '/' too",
    "[cache]") {
  // '-' and '.' sort before '/': "/a-" and "/a.b" come between "/a" and "/a/x".
  for (const char* p : {"/chr/a/x", "/chr/a-", "/chr/a.b/y", "/chr/b"}) make(*admin, p, p);
  auto c = make_client(server.connect_string() + "/chr");
  Replay replay;
  auto cache = CuratorCache::build(*c, "/");
  cache.add_listener(replay.listener());
  cache.start();
  REQUIRE(cache.await_initialized(20s));
  const auto paths = [&] {
    std::vector<std::string> out;
    for (const auto& d : cache.stream()) out.push_back(d.path);
    return out;
  };
  CHECK(paths() == std::vector<std::string>{"/", "/a", "/a-", "/a.b", "/a.b/y", "/a/x", "/b"});
  CHECK(cache.get("/a/x")->data == "/chr/a/x");
  admin->remove("/chr/a/x");
  make(*admin, "/chr/a-/z", "z");
  CHECK(eventually([&] {
    return paths() == std::vector<std::string>{"/", "/a", "/a-", "/a-/z", "/a.b", "/a.b/y", "/b"};
  }));
  std::vector<std::string> kids;
  for (const auto& d : cache.children_of("/")) kids.push_back(d.path);
  CHECK(kids == std::vector<std::string>{"/a", "/a-", "/a.b", "/b"});
  CHECK(replay.issues().empty());
}

TEST_CASE_METHOD(ServerFixture, "cache: after a session expiry only the difference is reported", "[cache]") {
  make(*admin, "/s/keep", "k");
  auto c = client();
  make(*c, "/s/mine", "m", CreateMode::ephemeral);
  Replay replay;
  auto cache = CuratorCache::build(*c, "/s");
  cache.add_listener(replay.listener());
  cache.start();
  REQUIRE(cache.await_initialized(20s));
  c->inject_session_expiration();
  admin->set_data("/s/keep", "k2");
  make(*admin, "/s/new", "n");
  CHECK(converged(*admin, cache, replay, "/s"));
  CHECK_FALSE(cache.get("/s/mine"));  // the expired session's ephemeral went, with a delete event
  CHECK(replay.issues().empty());     // no duplicate create for the nodes that survived
  CHECK(replay.initialized == 1);
}

TEST_CASE_METHOD(ServerFixture, "cache: a server restart, with changes made meanwhile", "[cache]") {
  make(*admin, "/rs/a", "a");
  auto c = client();
  Replay replay;
  auto cache = CuratorCache::build(*c, "/rs");
  cache.add_listener(replay.listener());
  cache.start();
  REQUIRE(cache.await_initialized(20s));
  server.restart();
  REQUIRE(admin->block_until_connected(20s));
  admin->set_data("/rs/a", "a2");
  make(*admin, "/rs/b", "b");
  CHECK(converged(*admin, cache, replay, "/rs"));
  CHECK(replay.issues().empty());
}

TEST_CASE_METHOD(ServerFixture, "cache: deleted-then-recreated nodes and a root deleted and created again",
                 "[cache]") {
  make(*admin, "/dr/n", "one");
  auto c = client();
  Replay replay;
  auto cache = CuratorCache::build(*c, "/dr");
  cache.add_listener(replay.listener());
  cache.start();
  REQUIRE(cache.await_initialized(20s));
  for (int i = 0; i < 5; ++i) {
    admin->remove("/dr/n");
    make(*admin, "/dr/n", "v" + std::to_string(i));
  }
  CHECK(converged(*admin, cache, replay, "/dr"));
  admin->remove("/dr", {.deleting_children = true});
  CHECK(converged(*admin, cache, replay, "/dr"));
  make(*admin, "/dr/again", "x");
  CHECK(converged(*admin, cache, replay, "/dr"));
  CHECK(replay.issues().empty());
}

TEST_CASE_METHOD(ServerFixture, "CURATOR-388: a PathChildrenCache picks its reaped container parent up again",
                 "[cache]") {
  admin->create("/cont/c1", {.creating_parents = true, .parents_as_containers = true});
  auto c = client();
  PathChildrenCache cache(*c, "/cont");
  std::mutex m;
  std::vector<std::string> added;
  cache.add_listener([&](const PathChildrenCacheEvent& e) {
    std::lock_guard lk(m);
    if (e.type == PathChildrenCacheEvent::Type::child_added) added.push_back(e.data->path);
  });
  cache.start(PathChildrenCache::StartMode::build_initial_cache);
  CHECK(cache.get_current_data().size() == 1);
  admin->remove("/cont/c1");
  REQUIRE(eventually([&] { return !admin->exists("/cont"); }));  // the server reaped the container
  CHECK(cache.get_current_data().empty());
  admin->create("/cont/c2", {.creating_parents = true, .parents_as_containers = true});
  REQUIRE(eventually([&] {
    std::lock_guard lk(m);
    return !added.empty() && added.back() == "/cont/c2";
  }));
  CHECK(cache.get_current_data().size() == 1);
}

TEST_CASE_METHOD(ServerFixture, "cache: a missing root is waited for and picked up when created", "[cache]") {
  auto c = client();
  auto cache = TreeCache::new_builder(*c, "/later/root").build();
  std::mutex m;
  std::vector<TreeCacheEvent::Type> events;
  cache.add_listener([&](const TreeCacheEvent& e) {
    std::lock_guard lk(m);
    events.push_back(e.type);
  });
  cache.start();
  REQUIRE(cache.await_initialized(20s));
  CHECK(cache.size() == 0);
  make(*admin, "/later/root/x", "x");
  REQUIRE(eventually([&] { return cache.size() == 2; }));
  CHECK(cache.get_current_data("/later/root/x")->data == "x");
  CHECK_FALSE(c->exists("/later/other"));
}

TEST_CASE_METHOD(ServerFixture,
                 "CURATOR-240 and CURATOR-312: a cache on a missing path holds one watch, none after close",
                 "[cache]") {
  auto c = client();
  auto cache = TreeCache::new_builder(*c, "/missing/path").build();
  cache.start();
  REQUIRE(cache.await_initialized(20s));
  std::this_thread::sleep_for(300ms);  // a polling cache would pile up requests and watches here
  CHECK(cache.watch_count() == 1);
  auto total_watches = [&] {
    std::smatch mm;
    const auto out = server.four_letter_word("wchs");
    static const std::regex re("Total watches:(\\d+)");
    return std::regex_search(out, mm, re) ? std::stoi(mm[1]) : -1;
  };
  CHECK(total_watches() == 1);
  cache.close();
  // close() hands the watch removal to the client's I/O thread; it does not wait for it.
  CHECK(eventually([&] { return cache.watch_count() == 0; }));
  // The server keeps counting the removed exists watch of a missing node: the core's remove_watch (3.8 C
  // client) does not reach the server for it. Bounded at one, and not the cache's to fix; see the report.
  CHECK(total_watches() <= 1);
}

TEST_CASE_METHOD(ServerFixture, "CURATOR-319: a NodeCache never re-creates its deleted parent", "[cache]") {
  make(*admin, "/n319/b/c", "c");
  auto c = client();
  NodeCache cache(*c, "/n319/b/c");
  std::atomic<int> changes{0};
  cache.add_listener([&] { ++changes; });
  cache.start(true);
  CHECK(cache.get_current_data()->data == "c");
  admin->remove("/n319/b", {.deleting_children = true});
  REQUIRE(eventually([&] { return !cache.get_current_data(); }));
  CHECK(changes.load() == 1);
  std::this_thread::sleep_for(300ms);
  CHECK_FALSE(admin->exists("/n319/b"));  // stays gone
  make(*admin, "/n319/b/c", "back");
  REQUIRE(eventually([&] { return cache.get_current_data() && cache.get_current_data()->data == "back"; }));
}

TEST_CASE_METHOD(ServerFixture,
                 "apache-curator-1302: a TreeCache's iteration after a node lost its last child", "[cache]") {
  make(*admin, "/it/a/b", "b");
  auto c = client();
  auto cache = TreeCache::new_builder(*c, "/it").build();
  cache.start();
  REQUIRE(cache.await_initialized(20s));
  admin->remove("/it/a/b");
  REQUIRE(eventually([&] { return cache.size() == 2; }));
  auto all = cache.snapshot();
  REQUIRE(all.size() == 2);
  CHECK(all[0].path == "/it");
  CHECK(all[1].path == "/it/a");
  admin->remove("/it/a");
  REQUIRE(eventually([&] { return cache.size() == 1; }));
  CHECK(cache.snapshot().size() == 1);
  CHECK(cache.get_current_children("/it")->empty());
}

TEST_CASE_METHOD(ServerFixture, "CURATOR-191: versions delivered per child never go back or repeat",
                 "[cache]") {
  for (int i = 0; i < 4; ++i) make(*admin, "/v191/c" + std::to_string(i), "0");
  auto c = client();
  Replay replay;
  auto cache = CuratorCache::build(*c, "/v191");
  cache.add_listener(replay.listener());
  cache.start();
  REQUIRE(cache.await_initialized(20s));
  auto writer = client();
  for (int round = 1; round <= 25; ++round)
    for (int i = 0; i < 4; ++i)
      writer->async_set_data("/v191/c" + std::to_string(i), std::to_string(round), -1,
                             [](error_code, Stat) {});
  REQUIRE(eventually([&] { return cache.get("/v191/c3") && cache.get("/v191/c3")->stat.version == 25; }));
  CHECK(converged(*admin, cache, replay, "/v191"));
  std::lock_guard lk(replay.m);
  for (auto& [p, vs] : replay.versions)
    for (std::size_t i = 1; i < vs.size(); ++i) {
      INFO(p);
      CHECK(vs[i] > vs[i - 1]);
    }
  CHECK(replay.problems.empty());
}

TEST_CASE_METHOD(ServerFixture, "Netflix-curator-246: fast add, delete, add of children converges",
                 "[cache]") {
  make(*admin, "/f246");
  auto c = client();
  PathChildrenCache cache(*c, "/f246");
  cache.start(PathChildrenCache::StartMode::build_initial_cache);
  for (int i = 0; i < 20; ++i) {
    admin->async_create("/f246/x", {}, [](error_code, CreateResult) {});
    admin->async_remove("/f246/x", {}, [](error_code) {});
    admin->async_create("/f246/y" + std::to_string(i % 3), {}, [](error_code, CreateResult) {});
  }
  admin->async_create("/f246/x", {}, [](error_code, CreateResult) {});
  REQUIRE(eventually([&] {
    auto want = admin->get_children("/f246");
    return cache.get_current_data().size() == want.size() && cache.get_current_data("/f246/x").has_value();
  }));
}
