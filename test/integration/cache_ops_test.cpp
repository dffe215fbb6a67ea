// Integration tests of the caches' on-demand operations against a real server (one server for the file):
// PathChildrenCache's rebuild, rebuild_node, clear, clear_and_refresh and clear_data_bytes, NodeCache's
// rebuild, each checked against what an independent client reads; the blocking twin on a listener thread,
// the typed errors of a closed cache; close() waiting for a listener still running, and close() from within
// a listener.

#include <algorithm>
#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_future.hpp>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <zkr/recipes/cache/node_cache.hpp>
#include <zkr/recipes/cache/path_children_cache.hpp>

#include "client_support.hpp"

using namespace zkr;
using namespace zkr::itest;

namespace {

using T = PathChildrenCacheEvent::Type;

/// A PathChildrenCache's events, for any thread.
struct Recorded {
  std::mutex m;
  std::vector<PathChildrenCacheEvent> events;
  void operator()(const PathChildrenCacheEvent& e) {
    std::lock_guard lk(m);
    events.push_back(e);
  }
  std::size_t size() {
    std::lock_guard lk(m);
    return events.size();
  }
  int count(T type) {
    std::lock_guard lk(m);
    return static_cast<int>(
        std::count_if(events.begin(), events.end(), [&](auto& e) { return e.type == type; }));
  }
};

/// The children of `parent` as the server has them: path -> (version, data).
std::map<std::string, std::pair<std::int32_t, std::string>> server_children(CuratorFramework& c,
                                                                            const std::string& parent) {
  std::map<std::string, std::pair<std::int32_t, std::string>> out;
  for (auto& name : c.get_children(parent)) {
    const auto p = make_path(parent, name);
    auto d = c.get_data(p);
    out[p] = {d.stat.version, d.data};
  }
  return out;
}

std::map<std::string, std::pair<std::int32_t, std::string>> cached(const PathChildrenCache& cache) {
  std::map<std::string, std::pair<std::int32_t, std::string>> out;
  for (auto& c : cache.get_current_data()) out[c.path] = {c.stat.version, c.data};
  return out;
}

}  // namespace

TEST_CASE("cache operations: rebuild, rebuild_node, clear, clear_and_refresh, clear_data_bytes, NodeCache",
          "[cache][cache-ops]") {
  auto admin = connect_shared();
  auto client = connect_shared();
  const auto root = unique_path("cache-ops");
  for (const auto* name : {"a", "b", "c"})
    admin->create(root + "/" + name, {.creating_parents = true, .data = std::string("data-") + name});
  PathChildrenCache cache(*client, root);
  Recorded rec;
  cache.add_listener(std::ref(rec));
  cache.start(PathChildrenCache::StartMode::build_initial_cache);  // no events for the first load
  REQUIRE(cached(cache) == server_children(*admin, root));

  SECTION("rebuild after clear restores the server's children") {
    cache.clear();
    CHECK(cache.get_current_data().empty());
    CHECK(rec.size() == 0);  // clear() posts nothing
    admin->set_data(root + "/b", "b2");
    admin->create(root + "/d", {.data = "d"});
    cache.rebuild();
    // Read when rebuild() returns, not eventually.
    CHECK(cached(cache) == server_children(*admin, root));
    // What the rebuild found different from the (cleared) cache is reported: each child as added.
    CHECK(eventually([&] { return rec.count(T::child_added) == 4; }));
    // In step with the server now: another rebuild reports nothing.
    cache.rebuild();
    CHECK(cached(cache) == server_children(*admin, root));
    CHECK(rec.count(T::child_added) == 4);
    CHECK(rec.count(T::child_updated) == 0);
  }

  SECTION("clear_and_refresh posts child_added for each child") {
    cache.clear_and_refresh();
    CHECK(cached(cache) == server_children(*admin, root));
    CHECK(eventually([&] { return rec.count(T::child_added) == 3; }));
    CHECK(rec.count(T::child_removed) == 0);
    // The async twin, the same way.
    cache.async_clear_and_refresh(boost::asio::use_future).get();
    CHECK(eventually([&] { return rec.count(T::child_added) == 6; }));
  }

  SECTION("rebuild_node of a deleted child removes it, of a new child adds it") {
    admin->remove(root + "/a");
    cache.rebuild_node(root + "/a");
    CHECK_FALSE(cache.get_current_data(root + "/a"));  // at return
    admin->create(root + "/e", {.data = "e"});
    cache.async_rebuild_node(root + "/e", boost::asio::use_future).get();
    CHECK(cache.get_current_data(root + "/e")->data == "e");
    CHECK(cached(cache) == server_children(*admin, root));
    CHECK(eventually([&] { return rec.count(T::child_removed) == 1 && rec.count(T::child_added) == 1; }));
    error_code ec;
    cache.rebuild_node(root + "/a/deeper", ec);
    CHECK(ec == client_errc::invalid_argument);
  }

  SECTION("clear_data_bytes keeps the Stat, refuses a stale version, rebuild brings the bytes back") {
    admin->set_data(root + "/c", "c2");  // version 1
    REQUIRE(eventually([&] { return cache.get_current_data(root + "/c")->stat.version == 1; }));
    CHECK_FALSE(cache.clear_data_bytes(root + "/c", 0));
    CHECK(cache.get_current_data(root + "/c")->data == "c2");
    CHECK(cache.clear_data_bytes(root + "/c", 1));
    CHECK(cache.get_current_data(root + "/c")->data.empty());
    CHECK(cache.get_current_data(root + "/c")->stat.data_length == 2);
    cache.clear_data_bytes(root + "/a");
    CHECK(cache.get_current_data(root + "/a")->data.empty());
    const auto before = rec.size();
    cache.async_rebuild(boost::asio::use_future).get();
    CHECK(cached(cache) == server_children(*admin, root));
    CHECK(rec.size() == before);  // the same versions: nothing to report
  }

  SECTION("the blocking twin refuses a listener's thread, the async twin works there") {
    std::promise<std::pair<error_code, error_code>> got;
    bool once = false;
    cache.add_listener([&](const PathChildrenCacheEvent& e) {
      if (e.type != T::child_updated || std::exchange(once, true)) return;
      error_code blocking;
      cache.rebuild(blocking);
      cache.async_rebuild([&got, blocking](error_code ec) { got.set_value({blocking, ec}); });
    });
    admin->set_data(root + "/a", "a2");
    auto f = got.get_future();
    REQUIRE(f.wait_for(20s) == std::future_status::ready);
    const auto [blocking, async] = f.get();
    CHECK(blocking == client_errc::would_deadlock);
    CHECK_FALSE(async);
  }

  SECTION("a closed cache gives typed errors") {
    cache.close();
    error_code ec;
    cache.rebuild(ec);
    CHECK(ec == client_errc::closed);
    cache.rebuild_node(root + "/a", ec);
    CHECK(ec == client_errc::closed);
    cache.clear_and_refresh(ec);
    CHECK(ec == client_errc::closed);
    CHECK_THROWS_AS(cache.rebuild(), Error);
    CHECK_FALSE(cache.clear_data_bytes(root + "/a", -1));
    cache.clear();
  }

  SECTION("close() waits for a listener running on its own executor") {
    boost::asio::thread_pool pool(1);
    std::promise<void> entered, release;
    auto released = release.get_future();
    std::atomic<bool> once{false}, close_returned{false}, seen_returned{true};
    cache.add_listener(
        [&](const PathChildrenCacheEvent&) {
          if (once.exchange(true)) return;
          entered.set_value();
          released.wait();
          seen_returned = close_returned.load();  // close() must not have returned while this runs
        },
        pool.get_executor());
    admin->set_data(root + "/a", "a2");
    REQUIRE(entered.get_future().wait_for(20s) == std::future_status::ready);
    std::thread closer([&] {
      cache.close();
      close_returned = true;
    });
    // A close() that does not wait returns now: give it the time to show it (not an assertion).
    (void)eventually([&] { return close_returned.load(); }, 1s);
    release.set_value();
    closer.join();
    pool.join();
    CHECK_FALSE(seen_returned);
    CHECK(close_returned);
  }

  SECTION("close() from within a listener returns, on the default executor and on another") {
    boost::asio::thread_pool pool(1);
    NodeCache other(*client, root + "/c");
    std::promise<void> closed_here, closed_there;
    std::atomic<bool> once_here{false}, once_there{false};
    // The default executor: the client's I/O thread.
    other.add_listener([&] {
      if (once_here.exchange(true)) return;
      other.close();
      closed_here.set_value();
    });
    cache.add_listener(
        [&](const PathChildrenCacheEvent&) {
          if (once_there.exchange(true)) return;
          cache.close();
          closed_there.set_value();
        },
        pool.get_executor());
    other.start(true);
    admin->set_data(root + "/c", "c2");
    CHECK(closed_here.get_future().wait_for(20s) == std::future_status::ready);
    CHECK(closed_there.get_future().wait_for(20s) == std::future_status::ready);
    pool.join();
  }

  SECTION("NodeCache::rebuild reflects a set at return") {
    NodeCache node(*client, root + "/b");
    node.start(true);
    CHECK(node.get_current_data()->data == "data-b");
    admin->set_data(root + "/b", "b-new");
    node.rebuild();
    CHECK(node.get_current_data()->data == "b-new");
    admin->remove(root + "/b");
    node.async_rebuild(boost::asio::use_future).get();
    CHECK_FALSE(node.get_current_data());
    node.close();
    error_code ec;
    node.rebuild(ec);
    CHECK(ec == client_errc::closed);
  }
}
