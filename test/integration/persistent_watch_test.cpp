// Integration tests of ZooKeeper 3.6+'s requests through the framework: persistent and recursive watches
// (their events, their removal, kept across a server restart and across a session moved to another member),
// multiRead, getEphemerals, getAllChildrenNumber and whoAmI. Over the C client, whose protocol has none of
// them, each must fail with `unsupported_by_transport`, never fall back to something else.

#include <mutex>
#include <zkr/testing/testing_cluster.hpp>

#include "client_support.hpp"
#include "fault_support.hpp"

using namespace zkr;
using namespace zkr::itest;

namespace {

/// What a watcher heard, in order; safe to read from the test thread.
class Heard {
 public:
  Watcher watcher() {
    return [this](const WatchedEvent& e) {
      std::lock_guard lk(mu_);
      events_.push_back(e);
    };
  }
  std::vector<WatchedEvent> events() const {
    std::lock_guard lk(mu_);
    return events_;
  }
  bool has(EventType type, const std::string& path) const {
    std::lock_guard lk(mu_);
    return std::any_of(events_.begin(), events_.end(),
                       [&](const WatchedEvent& e) { return e.type == type && e.path == path; });
  }
  std::size_t count(EventType type) const {
    std::lock_guard lk(mu_);
    return static_cast<std::size_t>(
        std::count_if(events_.begin(), events_.end(), [&](const WatchedEvent& e) { return e.type == type; }));
  }

 private:
  mutable std::mutex mu_;
  std::vector<WatchedEvent> events_;
};

/// The events one session's watches hear arrive in the order the server sent them: once `marker` heard a
/// change made after `what`, every event `what` caused has been delivered too.
void flush_events(CuratorFramework& c, Heard& marker, const std::string& marker_path) {
  static int n = 0;
  c.set_data(marker_path, std::to_string(++n));
  REQUIRE(eventually([&] { return marker.has(EventType::node_data_changed, marker_path); }, 20s));
}

}  // namespace

TEST_CASE("3.6+ requests over the C client fail with unsupported_by_transport, never a fallback",
          "[framework][persistent_watch]") {
  if (on_native_transport()) return;  // the native transport speaks them (the cases below)
  auto c = connect_shared();
  CHECK_FALSE(c->supports_persistent_watches());
  error_code ec;
  Heard heard;
  CHECK_FALSE(c->add_watch("/", AddWatchMode::persistent_recursive, heard.watcher(), ec));
  CHECK(ec == client_errc::unsupported_by_transport);
  CHECK_THROWS_AS(c->add_watch("/", AddWatchMode::persistent, heard.watcher()), Error);
  (void)c->multi_read({ReadOp::get_data("/")}, ec);
  CHECK(ec == client_errc::unsupported_by_transport);
  (void)c->get_ephemerals("/", ec);
  CHECK(ec == client_errc::unsupported_by_transport);
  (void)c->get_all_children_number("/", ec);
  CHECK(ec == client_errc::unsupported_by_transport);
  auto f = c->async_who_am_i(asio::use_future);
  CHECK_THROWS_AS(f.get(), boost::system::system_error);
}

TEST_CASE("persistent watches: a recursive watch hears its tree, a persistent one its node, until removed",
          "[framework][persistent_watch]") {
  if (!on_native_transport()) return;  // the C client's refusal is the case above
  const auto ns = unique_path("pw").substr(1);
  auto c = started(test_builder(shared_server().connect_string()).namespace_name(ns));
  REQUIRE(c->supports_persistent_watches());
  Heard tree, node, marker;
  // A missing node may be watched: the watch waits for it.
  const auto tw = c->add_watch("/t", AddWatchMode::persistent_recursive, tree.watcher());
  REQUIRE(tw);
  c->create("/t", {.data = "0"});
  c->create("/m");
  auto mw = c->async_add_watch("/m", AddWatchMode::persistent, marker.watcher(), asio::use_future).get();
  REQUIRE(mw);
  const auto nw = c->add_watch("/t/a", AddWatchMode::persistent, node.watcher());
  c->create("/t/a");
  c->create("/t/a/b", {.data = "x"});
  c->set_data("/t/a/b", "y");
  c->set_data("/t/a/b", "z");  // a persistent watch is not used up by the first change
  c->remove("/t/a/b");
  flush_events(*c, marker, "/m");

  // The recursive watch: each event with its own path (the namespace taken off), no children events.
  CHECK(tree.has(EventType::node_created, "/t"));
  CHECK(tree.has(EventType::node_created, "/t/a"));
  CHECK(tree.has(EventType::node_created, "/t/a/b"));
  CHECK(tree.count(EventType::node_data_changed) == 2);
  CHECK(tree.has(EventType::node_deleted, "/t/a/b"));
  CHECK(tree.count(EventType::node_children_changed) == 0);
  // The persistent watch on /t/a: its own node's creation and its children's changes, not its descendants'
  // data.
  CHECK(node.has(EventType::node_created, "/t/a"));
  CHECK(node.count(EventType::node_children_changed) == 2);  // /t/a/b made and deleted
  CHECK(node.count(EventType::node_data_changed) == 0);

  // Removed: the watcher hears nothing more (the marker's event comes after anything the change caused).
  c->remove_watch(tw);
  c->remove_watch(nw);
  const auto before = tree.events().size();
  const auto node_before = node.events().size();
  c->create("/t/a/c");
  flush_events(*c, marker, "/m");
  CHECK(tree.events().size() == before);
  CHECK(node.events().size() == node_before);
  c->remove_watch(mw);
  c->remove("/t", {.deleting_children = true});
  c->remove("/m");
}

TEST_CASE(
    "persistent watches: kept across a server restart, ended with session_lost when the session is lost",
    "[framework][persistent_watch]") {
  if (!on_native_transport()) return;
  zkr::testing::TestingServer server;
  auto c = started(test_builder(server.connect_string()).session_timeout(20s));
  Heard tree;
  REQUIRE(c->add_watch("/r", AddWatchMode::persistent_recursive, tree.watcher()));
  c->create("/r");
  REQUIRE(eventually([&] { return tree.has(EventType::node_created, "/r"); }, 20s));
  const auto session = c->session_id();
  server.restart();
  REQUIRE(c->block_until_connected(30s));
  REQUIRE(c->session_id() == session);  // the same session, on a new connection: SetWatches2 set it again
  auto other = started(test_builder(server.connect_string()));
  other->create("/r/after-restart");
  CHECK(eventually([&] { return tree.has(EventType::node_created, "/r/after-restart"); }, 20s));

  c->inject_session_expiration();
  CHECK(eventually([&] { return tree.count(EventType::session_lost) == 1; }, 20s));
  other->create("/r/after-expiry");
  other->sync("/r");
  REQUIRE(c->block_until_connected(30s));
  c->sync("/r");
  CHECK_FALSE(tree.has(EventType::node_created, "/r/after-expiry"));
}

TEST_CASE("persistent watches: kept when the session moves to another member of the ensemble",
          "[framework][persistent_watch][ensemble]") {
  if (!on_native_transport()) return;
  zkr::testing::TestingCluster cluster(3);
  auto c = started(test_builder(cluster.connect_string()).session_timeout(20s));
  Heard tree;
  REQUIRE(c->add_watch("/moved", AddWatchMode::persistent_recursive, tree.watcher()));
  std::optional<std::size_t> serving;
  REQUIRE(eventually([&] { return (serving = zkr::test::serving_member(cluster, *c)).has_value(); }, 20s));
  const auto session = c->session_id();
  cluster.kill(*serving);
  REQUIRE(c->block_until_connected(30s));
  REQUIRE(c->session_id() == session);
  auto other = started(test_builder(cluster.connect_string()));
  other->create("/moved");
  other->create("/moved/child");
  CHECK(eventually([&] { return tree.has(EventType::node_created, "/moved/child"); }, 30s));
  CHECK(tree.has(EventType::node_created, "/moved"));
}

TEST_CASE("3.6+ reads: multi_read, get_ephemerals, get_all_children_number and who_am_i",
          "[framework][persistent_watch]") {
  if (!on_native_transport()) return;
  const auto ns = unique_path("reads").substr(1);
  auto c = started(test_builder(shared_server().connect_string())
                       .namespace_name(ns)
                       .authorization("digest", "reader:secret"));
  c->create("/d", {.data = "v"});
  c->create("/d/k1");
  c->create("/d/k1/g");
  c->create("/d/k2", {.mode = CreateMode::ephemeral});
  c->create("/e", {.mode = CreateMode::ephemeral});

  const auto reads =
      c->multi_read({ReadOp::get_data("/d"), ReadOp::get_children("/d"), ReadOp::get_data("/missing")});
  REQUIRE(reads.size() == 3);
  CHECK_FALSE(reads[0].ec);
  CHECK(reads[0].data == "v");
  CHECK(reads[0].stat.num_children == 2);
  CHECK_FALSE(reads[1].ec);
  auto kids = reads[1].children;
  std::sort(kids.begin(), kids.end());
  CHECK(kids == std::vector<std::string>{"k1", "k2"});
  CHECK(reads[2].ec == zk_errc::no_node);  // one read failed, the others did not
  CHECK(c->multi_read({}).empty());

  auto eph = c->get_ephemerals("/");
  std::sort(eph.begin(), eph.end());
  CHECK(eph == std::vector<std::string>{"/d/k2", "/e"});  // without the namespace
  CHECK(c->async_get_ephemerals("/d", asio::use_future).get() == std::vector<std::string>{"/d/k2"});

  CHECK(c->get_all_children_number("/d") == 3);  // every level
  error_code ec;
  (void)c->get_all_children_number("/missing", ec);
  CHECK(ec == zk_errc::no_node);

  const auto ids = c->who_am_i();
  CHECK(std::find(ids.begin(), ids.end(), ClientIdentity{"digest", "reader"}) != ids.end());
  CHECK(std::any_of(ids.begin(), ids.end(), [](const ClientIdentity& i) { return i.scheme == "ip"; }));

  CHECK_THROWS_AS(c->multi_read({ReadOp::get_data("no-slash")}), Error);
  c->remove("/d", {.deleting_children = true});
}
