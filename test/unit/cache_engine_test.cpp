// Unit tests (no server) of the cache engine (detail::TreeSync) over FakeCore, on both watch strategies: the
// first load and a resync with a fault injected at each of their steps (a lost reply, a session expiry, a
// disconnection, a concurrent change), and the rules the caches promise: events that replay to the cache's
// contents, no duplicate create, versions that never go back, a missing root waited for with one watch, no
// watch left for a node no longer cached, nothing created.
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/tree_sync.hpp>

#include "fake_core.hpp"

namespace {

using namespace std::chrono_literals;
using fake::FakeCore;
using fake::Op;
using zkr::ChildData;
using zkr::CreateMode;
using zkr::detail::SyncEvent;
using zkr::detail::TreeSync;
using zkr::detail::TreeSyncOptions;
using K = SyncEvent::Kind;

const std::string root = "/r";

/// Replays the engine's events into a map and checks each against it as it comes: no create of a node held,
/// no change or delete of a node not held, a change only to a newer version (mzxid) of the same node.
struct Replay {
  std::map<std::string, ChildData> nodes;
  std::vector<std::string> problems;
  int initialized = 0;
  int created = 0, changed = 0, deleted = 0;
  std::vector<SyncEvent> events;

  void operator()(const SyncEvent& ev) {
    events.push_back(ev);
    switch (ev.kind) {
      case K::created:
        ++created;
        if (!nodes.emplace(ev.data->path, *ev.data).second)
          problems.push_back("created twice: " + ev.data->path);
        break;
      case K::changed: {
        ++changed;
        auto it = nodes.find(ev.data->path);
        if (it == nodes.end()) {
          problems.push_back("changed, not held: " + ev.data->path);
          break;
        }
        if (ev.data->stat.mzxid <= it->second.stat.mzxid)
          problems.push_back("version went back: " + ev.data->path);
        if (ev.old_data->stat.mzxid != it->second.stat.mzxid)
          problems.push_back("wrong old data: " + ev.data->path);
        it->second = *ev.data;
        break;
      }
      case K::deleted:
        ++deleted;
        if (!nodes.erase(ev.old_data->path)) problems.push_back("deleted, not held: " + ev.old_data->path);
        break;
      case K::initialized:
        ++initialized;
        break;
      case K::connection:
        break;
    }
  }
};

struct Fixture {
  /// The engine's pause before reading again what failed (500 ms by default).
  static constexpr std::chrono::milliseconds retry_pause{20};
  std::shared_ptr<FakeCore> core = std::make_shared<FakeCore>();
  Replay replay;
  std::shared_ptr<TreeSync> sync;

  Fixture() = default;
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;
  ~Fixture() {
    if (sync) sync->close();
    core->shutdown();
  }

  void make(TreeSyncOptions o = {}) {
    if (o.root.empty()) o.root = root;
    o.retry_pause = retry_pause;  // short: the fault runs below wait for it at every step
    sync = std::make_shared<TreeSync>(core, std::move(o), [this](zkr::detail::SyncEvent ev) { replay(ev); });
  }
  void start(TreeSyncOptions o = {}) {
    make(std::move(o));
    sync->start();
  }

  void tree() {
    core->put(root, CreateMode::persistent, 0, "root");
    core->put(root + "/a", CreateMode::persistent, 0, "a");
    core->put(root + "/a/x", CreateMode::persistent, 0, "x");
    core->put(root + "/a/x/deep", CreateMode::persistent, 0, "deep");
    core->put(root + "/b", CreateMode::persistent, 0, "b");
    core->put(root + "/a-b", CreateMode::persistent, 0, "a-b");  // sorts between /r/a and /r/a/...
  }

  /// The server's subtree under `root`, as ChildData.
  std::map<std::string, ChildData> server() const {
    std::map<std::string, ChildData> out;
    std::vector<std::string> todo{root};
    while (!todo.empty()) {
      auto p = todo.back();
      todo.pop_back();
      auto st = core->stat(p);
      if (!st) continue;
      out.emplace(p, ChildData{p, *st, *core->data(p)});
      for (auto& c : core->children(p)) todo.push_back(zkr::make_path(p, c));
    }
    return out;
  }

  /// Cache == replayed events == server (paths, versions and data).
  void check_converged() {
    core->settle();
    INFO(core->describe_log());
    CHECK(replay.problems.empty());
    for (auto& p : replay.problems) INFO(p);
    const auto want = server();
    const auto have = sync->snapshot();
    std::map<std::string, ChildData> cached;
    for (auto& c : have) cached.emplace(c.path, c);
    REQUIRE(cached.size() == want.size());
    for (auto& [p, c] : want) {
      INFO(p);
      REQUIRE(cached.count(p));
      CHECK(cached.at(p).stat.mzxid == c.stat.mzxid);
      CHECK(cached.at(p).stat.czxid == c.stat.czxid);
      CHECK(cached.at(p).data == c.data);
      REQUIRE(replay.nodes.count(p));
      CHECK(replay.nodes.at(p).stat.mzxid == c.stat.mzxid);
    }
    CHECK(replay.nodes.size() == want.size());
  }

  bool wait_settled() {
    return core->run_until([&] { return sync->initialized(); }, 5s);
  }

  /// `tree()` cached on the strategy asked for, first load done.
  void start_on_tree(bool persistent) {
    core->enable_persistent_watches(persistent);
    tree();
    start();
    REQUIRE(wait_settled());
  }

  /// Whether the cache and the replayed events hold the server's tree now (what `check_converged` checks).
  bool matches_server() const {
    const auto want = server();
    const auto have = sync->snapshot();
    if (have.size() != want.size() || replay.nodes.size() != want.size()) return false;
    for (const auto& c : have) {
      auto w = want.find(c.path);
      auto r = replay.nodes.find(c.path);
      if (w == want.end() || r == replay.nodes.end() || c.stat.mzxid != w->second.stat.mzxid ||
          c.stat.czxid != w->second.stat.czxid || c.data != w->second.data ||
          r->second.stat.mzxid != w->second.stat.mzxid)
        return false;
    }
    return true;
  }
};

/// How a fault lands at one step.
enum class Fault { lost_reply, session_expiry, disconnection, concurrent_change };

void inject(Fixture& f, Fault fault, Op op, int n) {
  auto& core = *f.core;
  switch (fault) {
    case Fault::lost_reply:
      core.fail_nth(op, n, zkr::zk_errc::connection_loss, root);
      break;
    case Fault::session_expiry:
      core.before_nth(
          op, n, [&core] { core.expire_session(); }, root);
      break;
    case Fault::disconnection:
      core.before_nth(
          op, n, [&core] { core.suspend(); }, root);
      break;
    case Fault::concurrent_change:
      core.before_nth(
          op, n,
          [&core] {
            if (core.has(root + "/b")) core.erase(root + "/b");
            core.put(root + "/c" + std::to_string(core.children(root).size()), CreateMode::persistent, 0,
                     "c");
            if (core.has(root + "/a")) core.set(root + "/a", "a2");
          },
          root);
      break;
  }
}

void settle_after_fault(Fixture& f) {
  // A disconnection stays until the test reconnects; the others heal by themselves.
  f.core->settle();
  if (!f.core->is_connected()) f.core->reconnect();
  REQUIRE(f.core->run_until([&] { return f.sync->initialized(); }, 5s));
  // A read again after a lost reply waits the engine's retry_pause: run until the cache has caught up (the
  // checks after say what differs if it never does), then a little longer for any late, wrong event.
  (void)f.core->run_until([&] { return f.matches_server(); }, 5s);
  f.core->run_for(Fixture::retry_pause);
}

}  // namespace

TEST_CASE_METHOD(Fixture, "cache engine: the first load reports each node once, then initialized",
                 "[cache-engine]") {
  tree();
  start();
  REQUIRE(wait_settled());
  check_converged();
  CHECK(replay.initialized == 1);
  CHECK(replay.created == 6);
  CHECK(replay.changed == 0);
  // The initialized event comes after every created event.
  CHECK(replay.events.back().kind == K::initialized);
  // One-shot strategy: a data and a children watch on every node.
  CHECK_FALSE(sync->persistent());
  CHECK(sync->watches() == 12);
  CHECK(core->watch_count() == 12);
  CHECK(core->count(Op::create) == 0);
}

TEST_CASE_METHOD(Fixture, "cache engine: a fault at each step of the first load still converges",
                 "[cache-engine]") {
  const auto fault =
      GENERATE(Fault::lost_reply, Fault::session_expiry, Fault::disconnection, Fault::concurrent_change);
  const auto op = GENERATE(Op::get_data, Op::get_children);
  const int n = GENERATE(range(1, 7));
  const bool persistent = GENERATE(false, true);
  core->enable_persistent_watches(persistent);
  tree();
  inject(*this, fault, op, n);
  start();
  settle_after_fault(*this);
  INFO("fault " << static_cast<int>(fault) << " at " << fake::to_string(op) << " #" << n);
  CHECK(core->faults_consumed());  // the fault did land
  check_converged();
  CHECK(replay.initialized == 1);
  CHECK(sync->persistent() == persistent);
}

TEST_CASE_METHOD(Fixture, "cache engine: a resync after a new session reports exactly the difference",
                 "[cache-engine]") {
  const bool persistent = GENERATE(false, true);
  core->enable_persistent_watches(persistent);
  tree();
  core->put(root + "/eph", CreateMode::ephemeral, core->session_id(), "mine");
  core->put(root + "/gone", CreateMode::persistent, 0, "g");
  start();
  REQUIRE(wait_settled());
  const auto before = replay.created;
  const auto a_czxid = core->stat(root + "/a-b")->czxid;

  core->expire_session();  // the watches end: changes after this are found by the resync only
  core->erase(root + "/gone");
  core->set(root + "/b", "b2");
  core->put(root + "/new", CreateMode::persistent, 0, "n");
  core->erase(root + "/a-b");
  core->put(root + "/a-b", CreateMode::persistent, 0, "again");  // same version 0, a new node
  core->run_for(50ms);
  check_converged();
  CHECK(replay.initialized == 1);  // once per start
  // created: /r/new and the re-created /r/a-b; deleted: /r/eph (its session ended), /r/gone, the old /r/a-b;
  // changed: /r/b. Nothing for the nodes that survived unchanged.
  CHECK(replay.created - before == 2);
  CHECK(replay.deleted == 3);
  CHECK(replay.changed == 1);
  CHECK(sync->get(root + "/a-b")->stat.czxid != a_czxid);
  if (!persistent) {
    CHECK(core->watch_count() == sync->watches());
  } else {
    CHECK(core->persistent_watch_count() == 1);
    CHECK(core->watch_count() == 0);
  }
}

TEST_CASE_METHOD(Fixture, "cache engine: a fault at each step of a resync still converges",
                 "[cache-engine]") {
  const auto fault =
      GENERATE(Fault::lost_reply, Fault::session_expiry, Fault::disconnection, Fault::concurrent_change);
  const auto op = GENERATE(Op::get_data, Op::get_children);
  const int n = GENERATE(range(1, 6));
  const bool persistent = GENERATE(false, true);
  start_on_tree(persistent);
  core->suspend();
  core->set(root + "/a/x", "x2");
  core->erase(root + "/b");
  core->reconnect();
  inject(*this, fault, op, n);
  settle_after_fault(*this);
  INFO("fault " << static_cast<int>(fault) << " at " << fake::to_string(op) << " #" << n);
  CHECK(core->faults_consumed());  // the fault did land
  check_converged();
  CHECK(replay.initialized == 1);
}

TEST_CASE_METHOD(Fixture, "cache engine: a missing root is waited for with one watch, then picked up",
                 "[cache-engine]") {
  const bool persistent = GENERATE(false, true);
  core->enable_persistent_watches(persistent);
  start();
  REQUIRE(wait_settled());
  CHECK(sync->size() == 0);
  const auto requests = core->count_all();
  core->run_for(100ms);
  CHECK(core->count_all() == requests);  // no polling (CURATOR-240)
  CHECK(core->watch_count() + core->persistent_watch_count() == 1);

  core->put(root + "/child", CreateMode::persistent, 0, "c");  // the root comes with a child
  REQUIRE(core->run_until([&] { return sync->size() == 2; }));
  check_converged();
  core->erase(root + "/child");
  core->erase(root);
  REQUIRE(core->run_until([&] { return sync->size() == 0; }));
  core->settle();
  CHECK(replay.deleted == 2);
  CHECK(core->watch_count() + core->persistent_watch_count() == 1);  // the root's exists watch again
  core->put(root, CreateMode::container, 0, "back");
  REQUIRE(core->run_until([&] { return sync->size() == 1; }));
  check_converged();
  CHECK(core->count(Op::create) == 0);
  CHECK(core->count(Op::make_dirs) == 0);
}

TEST_CASE_METHOD(Fixture, "cache engine: no watch is left for a node no longer cached, none after close",
                 "[cache-engine]") {
  tree();
  start();
  REQUIRE(wait_settled());
  core->erase(root + "/a/x/deep");
  core->erase(root + "/a/x");
  REQUIRE(core->run_until([&] { return !sync->get(root + "/a/x"); }));
  core->settle();
  CHECK(core->watch_count(root + "/a/x") == 0);
  CHECK(core->watch_count(root + "/a/x/deep") == 0);
  CHECK(core->watch_count() == sync->watches());
  sync->close();
  core->settle();
  CHECK(core->watch_count() == 0);
  CHECK(core->persistent_watch_count() == 0);
  CHECK(sync->size() == 0);
}

TEST_CASE_METHOD(Fixture, "cache engine: fast successive changes end at the last version, never going back",
                 "[cache-engine]") {
  const bool persistent = GENERATE(false, true);
  start_on_tree(persistent);
  for (int i = 0; i < 50; ++i) {
    core->set(root + "/a", "v" + std::to_string(i));
    if (i % 7 == 0) core->settle();
  }
  core->erase(root + "/b");
  core->put(root + "/b", CreateMode::persistent, 0, "b-again");
  core->run_for(50ms);
  check_converged();
  CHECK(sync->get(root + "/a")->data == "v49");
  CHECK(sync->get(root + "/b")->data == "b-again");
}

TEST_CASE_METHOD(Fixture, "cache engine: max depth and the selector bound what is read and cached",
                 "[cache-engine]") {
  tree();
  TreeSyncOptions o;
  o.max_depth = 1;
  o.accept_child = [](const std::string& p) { return p != root + "/b"; };
  start(std::move(o));
  REQUIRE(wait_settled());
  CHECK(sync->size() == 3);  // /r, /r/a, /r/a-b
  CHECK(sync->get(root + "/a"));
  CHECK_FALSE(sync->get(root + "/b"));
  CHECK_FALSE(sync->get(root + "/a/x"));
  CHECK(core->count(Op::get_children, root + "/a") == 0);
  CHECK(core->watch_count(root + "/a") == 1);  // data only
}

TEST_CASE_METHOD(Fixture, "cache engine: without cached data the events still carry the bytes",
                 "[cache-engine]") {
  tree();
  TreeSyncOptions o;
  o.cache_data = false;
  start(std::move(o));
  REQUIRE(wait_settled());
  CHECK(sync->get(root + "/a")->data.empty());
  CHECK(sync->get(root + "/a")->stat.data_length == 1);
  core->set(root + "/a", "zz");
  REQUIRE(core->run_until([&] { return replay.changed == 1; }));
  CHECK(replay.events.back().data->data == "zz");
}

TEST_CASE_METHOD(Fixture, "cache engine: a persistent watch refused by the transport falls back to one-shot",
                 "[cache-engine]") {
  tree();
  // The core says it can, then refuses the request (the native transport against a 3.5 server).
  core->enable_persistent_watches(true);
  core->fail_next(Op::add_watch, zkr::client_errc::unsupported_by_transport);
  start();
  REQUIRE(wait_settled());
  core->settle();
  CHECK_FALSE(sync->persistent());
  check_converged();
  core->set(root + "/a/x", "x3");
  REQUIRE(core->run_until([&] { return replay.changed == 1; }));
  CHECK(sync->watches() == core->watch_count());
}

TEST_CASE_METHOD(Fixture, "cache engine: a rebuild racing with a change keeps the newer version",
                 "[cache-engine]") {
  const bool persistent = GENERATE(false, true);
  // The change lands just before the rebuild's read of the node, or just after it: its watch event then
  // overtakes that read's reply, which carries the older version.
  const bool before_the_read = GENERATE(false, true);
  start_on_tree(persistent);
  const auto node = root + "/a-b";
  auto change = [this, node] {
    core->set(node, "v2");
    core->set(node, "v3");
  };
  if (before_the_read)
    core->before_next(Op::get_data, change, node);
  else
    core->after_next(Op::get_data, change, node);
  std::optional<zkr::error_code> outcome;
  sync->rebuild([&](zkr::error_code ec) { outcome = ec; });
  REQUIRE(core->run_until([&] { return outcome.has_value(); }));
  CHECK_FALSE(*outcome);
  CHECK(core->faults_consumed());
  core->run_for(50ms);
  check_converged();  // Replay: no version went back, no node reported twice
  CHECK(sync->get(node)->data == "v3");
  CHECK(replay.created == 6);
  CHECK(replay.changed == 1);
  CHECK(replay.events.back().data->data == "v3");
}

TEST_CASE_METHOD(Fixture, "cache engine: a rebuild after clear reads everything again, a fault at each step",
                 "[cache-engine]") {
  const auto op = GENERATE(Op::get_data, Op::get_children);
  const int n = GENERATE(range(1, 6));
  const bool persistent = GENERATE(false, true);
  start_on_tree(persistent);
  sync->clear();
  core->settle();
  CHECK(sync->size() == 1);  // the root stays: its watches bring the children back
  if (!persistent) CHECK(core->watch_count() == 2);
  // clear() posts nothing: a listener that knows it called clear() holds what the cache holds.
  std::erase_if(replay.nodes, [](const auto& kv) { return kv.first != root; });
  const auto created = replay.created;
  core->fail_nth(op, n, zkr::zk_errc::connection_loss, root);
  std::optional<zkr::error_code> outcome;
  sync->rebuild([&](zkr::error_code ec) { outcome = ec; });
  REQUIRE(core->run_until([&] { return outcome.has_value(); }));
  INFO(fake::to_string(op) << " #" << n);
  CHECK(core->faults_consumed());
  CHECK(*outcome == zkr::zk_errc::connection_loss);  // the rebuild says its read failed...
  settle_after_fault(*this);
  check_converged();  // ...and the engine read it again anyway
  CHECK(replay.created - created == 5);
  CHECK(replay.deleted == 0);
  CHECK(replay.changed == 0);
  if (!persistent) CHECK(core->watch_count() == sync->watches());
}

TEST_CASE_METHOD(Fixture, "cache engine: clear_data_bytes with a stale version is refused, rebuild restores",
                 "[cache-engine]") {
  tree();
  start();
  REQUIRE(wait_settled());
  const auto node = root + "/b";
  core->set(node, "b2");  // version 1
  REQUIRE(core->run_until([&] { return sync->get(node)->data == "b2"; }));
  CHECK_FALSE(sync->clear_data_bytes(node, 0));  // stale
  CHECK(sync->get(node)->data == "b2");
  CHECK_FALSE(sync->clear_data_bytes(root + "/not-cached", -1));
  CHECK(sync->clear_data_bytes(node, 1));
  CHECK(sync->get(node)->data.empty());
  CHECK(sync->get(node)->stat.version == 1);
  CHECK(sync->get(node)->stat.data_length == 2);
  CHECK(sync->clear_data_bytes(root + "/a", -1));  // any version
  const auto events = replay.events.size();
  std::optional<zkr::error_code> outcome;
  sync->rebuild([&](zkr::error_code ec) { outcome = ec; });
  REQUIRE(core->run_until([&] { return outcome.has_value(); }));
  CHECK_FALSE(*outcome);
  CHECK(sync->get(node)->data == "b2");  // the same version: back, silently
  CHECK(sync->get(root + "/a")->data == "a");
  CHECK(replay.events.size() == events);
  check_converged();
}

TEST_CASE_METHOD(Fixture, "cache engine: rebuild_node adds, drops or leaves one node, then a closed rebuild",
                 "[cache-engine]") {
  tree();
  start();
  REQUIRE(wait_settled());
  auto rebuild_node = [this](const std::string& p) {
    std::optional<zkr::error_code> outcome;
    sync->rebuild_node(p, [&](zkr::error_code ec) { outcome = ec; });
    REQUIRE(core->run_until([&] { return outcome.has_value(); }));
    return *outcome;
  };
  const auto requests = core->count_all();
  CHECK_FALSE(rebuild_node(root + "/b"));  // unchanged: no event, one read
  CHECK(core->count_all() == requests + 1);
  CHECK(replay.events.back().kind == K::initialized);
  core->erase(root + "/a/x/deep");
  CHECK_FALSE(rebuild_node(root + "/a/x/deep"));
  CHECK_FALSE(sync->get(root + "/a/x/deep"));
  sync->close();
  CHECK(rebuild_node(root + "/b") == zkr::client_errc::closed);
}
