// Unit tests (no server) of the public cache classes over FakeCore: the listener shapes (CuratorCache's
// builder and its adapters, PathChildrenCache, TreeCache, NodeCache), start modes, await_initialized in
// both forms, close. The engine's own rules are in cache_engine_test.cpp.
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zkr/recipes/cache/curator_cache.hpp>
#include <zkr/recipes/cache/node_cache.hpp>
#include <zkr/recipes/cache/path_children_cache.hpp>
#include <zkr/recipes/cache/tree_cache.hpp>

#include "fake_core.hpp"

namespace {

using namespace std::chrono_literals;
using fake::FakeCore;
using zkr::ChildData;
using zkr::CreateMode;
using zkr::CuratorCache;
using zkr::CuratorCacheListener;
using zkr::detail::access;

struct Fixture {
  std::shared_ptr<FakeCore> core = std::make_shared<FakeCore>();
  Fixture() {
    core->put("/r", CreateMode::persistent, 0, "root");
    core->put("/r/a", CreateMode::persistent, 0, "a");
    core->put("/r/a/x", CreateMode::persistent, 0, "x");
  }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;
  ~Fixture() { core->shutdown(); }
};

}  // namespace

TEST_CASE_METHOD(Fixture, "CuratorCache: listener builder parts each get their own types",
                 "[cache-classes]") {
  auto cache =
      access::make<CuratorCache>(core, std::string("/r"), std::vector<CuratorCache::Options>{}, false);
  std::vector<std::string> creates, changes, both, deletes, all;
  int inits = 0;
  cache.add_listener(CuratorCacheListener::builder()
                         .for_creates([&](const ChildData& d) { creates.push_back(d.path); })
                         .for_changes([&](const ChildData& o, const ChildData& n) {
                           changes.push_back(n.path + ":" + o.data + ">" + n.data);
                         })
                         .for_creates_and_changes([&](const std::optional<ChildData>& o, const ChildData& n) {
                           both.push_back((o ? "c:" : "n:") + n.path);
                         })
                         .for_deletes([&](const ChildData& d) { deletes.push_back(d.path); })
                         .for_all({[&](CuratorCacheListener::Type, const std::optional<ChildData>&,
                                       const std::optional<ChildData>&) { all.push_back("e"); },
                                   {}})
                         .for_initialized([&] { ++inits; })
                         .build());
  cache.start();
  REQUIRE(core->run_until([&] { return inits == 1; }));
  CHECK(creates == std::vector<std::string>{"/r", "/r/a", "/r/a/x"});
  core->set("/r/a", "a2");
  core->erase("/r/a/x");
  REQUIRE(core->run_until([&] { return deletes.size() == 1; }));
  core->settle();
  CHECK(changes == std::vector<std::string>{"/r/a:a>a2"});
  CHECK(both.size() == 4);
  CHECK(both.back() == "c:/r/a");
  CHECK(deletes == std::vector<std::string>{"/r/a/x"});
  CHECK(all.size() == 5);
  CHECK(cache.size() == 2);
  CHECK(cache.get("/r/a")->data == "a2");
  CHECK(cache.stream().size() == 2);
  CHECK(cache.children_of("/r").size() == 1);
  CHECK_THROWS_AS(cache.start(), zkr::Error);  // started twice
  cache.close();
  core->settle();
  CHECK(cache.size() == 0);
  CHECK(core->watch_count() == 0);
}

TEST_CASE_METHOD(Fixture, "CuratorCache: afterInitialized drops the first load's events", "[cache-classes]") {
  auto cache =
      access::make<CuratorCache>(core, std::string("/r"), std::vector<CuratorCache::Options>{}, false);
  std::vector<std::string> seen;
  cache.add_listener(CuratorCacheListener::builder()
                         .for_creates([&](const ChildData& d) { seen.push_back(d.path); })
                         .after_initialized()
                         .build());
  cache.start();
  bool done = false;
  cache.async_await_initialized([&](zkr::error_code ec) { done = !ec; });
  REQUIRE(core->run_until([&] { return done; }));
  core->put("/r/b");
  REQUIRE(core->run_until([&] { return !seen.empty(); }));
  CHECK(seen == std::vector<std::string>{"/r/b"});
}

TEST_CASE_METHOD(Fixture, "CuratorCache: single node and do-not-clear-on-close", "[cache-classes]") {
  auto cache = access::make<CuratorCache>(
      core, std::string("/r"),
      std::vector<CuratorCache::Options>{CuratorCache::Options::single_node_cache,
                                         CuratorCache::Options::do_not_clear_on_close},
      true);
  cache.start();
  REQUIRE(core->run_until([&] { return cache.size() == 1; }));
  core->settle();
  CHECK(cache.get("/r")->data.empty());  // data not cached
  CHECK_FALSE(cache.get("/r/a"));
  cache.close();
  core->settle();
  CHECK(cache.size() == 1);
}

TEST_CASE_METHOD(Fixture, "CuratorCache: the adapters give the old shapes", "[cache-classes]") {
  auto cache =
      access::make<CuratorCache>(core, std::string("/r"), std::vector<CuratorCache::Options>{}, false);
  std::vector<zkr::PathChildrenCacheEvent::Type> pcc;
  std::vector<std::string> pcc_paths;
  std::vector<zkr::TreeCacheEvent::Type> tc;
  int node_changes = 0;
  cache.add_listener(CuratorCacheListener::builder()
                         .for_path_children_cache("/r",
                                                  [&](const zkr::PathChildrenCacheEvent& e) {
                                                    pcc.push_back(e.type);
                                                    if (e.data) pcc_paths.push_back(e.data->path);
                                                  })
                         .for_tree_cache([&](const zkr::TreeCacheEvent& e) { tc.push_back(e.type); })
                         .for_node_cache([&] { ++node_changes; })
                         .build());
  cache.start();
  REQUIRE(
      core->run_until([&] { return !tc.empty() && tc.back() == zkr::TreeCacheEvent::Type::initialized; }));
  // The root is dropped by the PathChildrenCache adapter; the grandchild passes, as in Curator.
  CHECK(pcc_paths == std::vector<std::string>{"/r/a", "/r/a/x"});
  CHECK(pcc.back() == zkr::PathChildrenCacheEvent::Type::initialized);
  CHECK(tc.size() == 4);
  CHECK(node_changes == 3);
}

TEST_CASE_METHOD(Fixture, "PathChildrenCache: start modes, children only, connection events",
                 "[cache-classes]") {
  const auto mode = GENERATE(zkr::PathChildrenCache::StartMode::normal,
                             zkr::PathChildrenCache::StartMode::post_initialized_event);
  auto cache = access::make<zkr::PathChildrenCache>(core, std::string("/r"), true);
  using T = zkr::PathChildrenCacheEvent::Type;
  std::vector<zkr::PathChildrenCacheEvent> events;
  cache.add_listener([&](const zkr::PathChildrenCacheEvent& e) { events.push_back(e); });
  cache.start(mode);
  REQUIRE(core->run_until([&] { return !events.empty(); }));
  core->settle();
  if (mode == zkr::PathChildrenCache::StartMode::post_initialized_event) {
    REQUIRE(events.size() == 2);
    CHECK(events[1].type == T::initialized);
    CHECK(events[1].initial_data.size() == 1);
  } else {
    REQUIRE(events.size() == 1);
  }
  CHECK(events[0].type == T::child_added);
  CHECK(events[0].data->path == "/r/a");
  CHECK(cache.get_current_data().size() == 1);
  CHECK_FALSE(cache.get_current_data("/r/a/x"));  // one level only
  events.clear();
  core->suspend();
  core->put("/r/b");
  core->reconnect();
  REQUIRE(core->run_until([&] { return events.size() >= 3; }));
  CHECK(events[0].type == T::connection_suspended);
  CHECK(events[1].type == T::connection_reconnected);
  CHECK(events[2].type == T::child_added);
}

TEST_CASE_METHOD(Fixture, "TreeCache: events, depth, children by name, snapshot after a last child went",
                 "[cache-classes]") {
  auto cache = access::make<zkr::TreeCache>(core, std::string("/r"), true, 1, zkr::TreeCacheSelector{});
  std::vector<zkr::TreeCacheEvent> events;
  cache.add_listener([&](const zkr::TreeCacheEvent& e) { events.push_back(e); });
  cache.start();
  REQUIRE(core->run_until(
      [&] { return !events.empty() && events.back().type == zkr::TreeCacheEvent::Type::initialized; }));
  CHECK(events.size() == 3);  // /r, /r/a, initialized
  CHECK(cache.get_current_children("/r")->count("a") == 1);
  CHECK_FALSE(cache.get_current_children("/nope"));
  core->set("/r/a", "a2");
  REQUIRE(core->run_until([&] { return events.back().type == zkr::TreeCacheEvent::Type::node_updated; }));
  CHECK(events.back().old_data->data == "a");
  CHECK(events.back().data->data == "a2");
}

TEST_CASE_METHOD(Fixture, "NodeCache: created, changed, deleted, no event for build_initial",
                 "[cache-classes]") {
  auto cache = access::make<zkr::NodeCache>(core, std::string("/r/a/x"));
  int changes = 0;
  cache.add_listener([&] { ++changes; });
  cache.start(false);
  REQUIRE(core->run_until([&] { return changes == 1; }));
  CHECK(cache.get_current_data()->data == "x");
  core->erase("/r/a/x");
  REQUIRE(core->run_until([&] { return changes == 2; }));
  CHECK_FALSE(cache.get_current_data());
  core->put("/r/a/x", CreateMode::persistent, 0, "x2");
  REQUIRE(core->run_until([&] { return changes == 3; }));
  CHECK(cache.get_current_data()->data == "x2");
}

TEST_CASE_METHOD(Fixture, "PathChildrenCache: rebuild, clear and clear_data_bytes, and their typed errors",
                 "[cache-classes]") {
  using T = zkr::PathChildrenCacheEvent::Type;
  using zkr::client_errc;
  auto cache = access::make<zkr::PathChildrenCache>(core, std::string("/r"), true);
  zkr::error_code ec;
  cache.rebuild(ec);
  CHECK(ec == client_errc::not_started);
  cache.clear_and_refresh(ec);
  CHECK(ec == client_errc::not_started);
  CHECK_THROWS_AS(cache.rebuild(), zkr::Error);
  CHECK_FALSE(cache.clear_data_bytes("/r/a", -1));
  cache.clear();  // nothing to clear, no error
  cache.rebuild_node("/elsewhere/a", ec);
  CHECK(ec == client_errc::invalid_argument);
  cache.rebuild_node("/r/a/x", ec);  // a grandchild
  CHECK(ec == client_errc::invalid_argument);
  cache.rebuild_node("/r/", ec);
  CHECK(ec == client_errc::invalid_path);

  std::vector<zkr::PathChildrenCacheEvent> events;
  cache.add_listener([&](const zkr::PathChildrenCacheEvent& e) { events.push_back(e); });
  cache.start();
  REQUIRE(core->run_until([&] { return events.size() == 1; }));
  core->put("/r/b", CreateMode::persistent, 0, "b");
  REQUIRE(core->run_until([&] { return events.size() == 2; }));
  auto run = [this](auto start) {
    std::optional<zkr::error_code> outcome;
    start([&](zkr::error_code e) { outcome = e; });
    REQUIRE(core->run_until([&] { return outcome.has_value(); }));
    return *outcome;
  };
  CHECK_FALSE(run([&](auto h) { cache.async_rebuild(h); }));
  core->settle();
  CHECK(events.size() == 2);  // in step with the server: nothing to report

  CHECK_FALSE(cache.clear_data_bytes("/r/b", 3));  // a stale version
  CHECK(cache.clear_data_bytes("/r/b", 0));
  CHECK(cache.get_current_data("/r/b")->data.empty());
  CHECK(cache.get_current_data("/r/b")->stat.data_length == 1);
  CHECK_FALSE(cache.clear_data_bytes("/r", -1));  // the parent is not one of the children
  CHECK_FALSE(run([&](auto h) { cache.async_rebuild_node("/r/b", h); }));
  CHECK(cache.get_current_data("/r/b")->data == "b");
  CHECK(run([&](auto h) { cache.async_rebuild_node("/r/b/c", h); }) == client_errc::invalid_argument);

  // clear() waits for the I/O thread, which this test runs itself: called on it, as from a listener.
  boost::asio::post(core->io_executor(), [&] { cache.clear(); });
  core->settle();
  CHECK(cache.get_current_data().empty());
  CHECK(events.size() == 2);
  CHECK_FALSE(run([&](auto h) { cache.async_clear_and_refresh(h); }));
  core->settle();
  REQUIRE(events.size() == 4);
  CHECK(events[2].type == T::child_added);
  CHECK(events[3].type == T::child_added);
  CHECK(cache.get_current_data().size() == 2);

  cache.close();
  cache.rebuild(ec);
  CHECK(ec == client_errc::closed);
  CHECK(run([&](auto h) { cache.async_rebuild(h); }) == client_errc::closed);
  CHECK_FALSE(cache.clear_data_bytes("/r/a", -1));
}

TEST_CASE_METHOD(Fixture, "NodeCache: rebuild reads the node again, errors when not started or closed",
                 "[cache-classes]") {
  auto cache = access::make<zkr::NodeCache>(core, std::string("/r/a"));
  zkr::error_code ec;
  cache.rebuild(ec);
  CHECK(ec == zkr::client_errc::not_started);
  int changes = 0;
  cache.add_listener([&] { ++changes; });
  cache.start(false);
  REQUIRE(core->run_until([&] { return changes == 1; }));
  std::optional<zkr::error_code> outcome;
  cache.async_rebuild([&](zkr::error_code e) { outcome = e; });
  REQUIRE(core->run_until([&] { return outcome.has_value(); }));
  CHECK_FALSE(*outcome);
  core->settle();
  CHECK(changes == 1);
  cache.close();
  cache.rebuild(ec);
  CHECK(ec == zkr::client_errc::closed);
}
