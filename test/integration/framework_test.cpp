// Integration tests of CuratorFramework against a real ZooKeeper server: every operation through each of its
// twins (throwing, error_code, callback, use_future, use_awaitable), watches, containers and TTL nodes,
// namespaces, ACLs and authentication, and the refusal of bad input.

#include "framework_support.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>

#include <algorithm>
#include <ctime>
#include <set>

using namespace zkr;
using namespace zkr::itest;

namespace {

bool is_sequential_name(const std::string& path, const std::string& prefix) {
  return path.size() == prefix.size() + 10 && path.compare(0, prefix.size(), prefix) == 0 &&
         std::all_of(path.begin() + static_cast<std::ptrdiff_t>(prefix.size()), path.end(),
                     [](char ch) { return ch >= '0' && ch <= '9'; });
}

std::set<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }


}  // namespace

// ---------------------------------------------------------------------------------------------------------
// create

TEST_CASE("create: every mode through every twin", "[framework][create]") {
  auto c = connect_shared();
  const auto root = unique_path("create");
  c->create(root);
  // The server shows containers and TTL nodes as plain persistent ones (ephemeralOwner 0): they are told apart
  // by behaviour, after the loop.
  std::vector<std::string> containers, ttl_nodes, persistent;
  for (Twin t : all_twins) {
    INFO("twin: " << twin_name(t));
    const auto base = root + "/" + twin_name(t);

    auto r = op_create(*c, t, base, {.data = std::string("hello")});
    REQUIRE_FALSE(r.ec);
    CHECK(r.value.path == base);
    CHECK(r.value.stat.czxid > 0);
    CHECK(r.value.stat.ephemeral_owner == 0);
    CHECK(r.value.stat.data_length == 5);
    CHECK(c->get_data(base).data == "hello");

    CHECK(op_create(*c, t, base).ec == zk_errc::node_exists);
    CHECK(op_create(*c, t, base + "/missing/child").ec == zk_errc::no_node);

    r = op_create(*c, t, base + "/eph", {.mode = CreateMode::ephemeral});
    REQUIRE_FALSE(r.ec);
    CHECK(r.value.stat.ephemeral_owner == c->session_id());

    r = op_create(*c, t, base + "/ps-", {.mode = CreateMode::persistent_sequential});
    REQUIRE_FALSE(r.ec);
    CHECK(is_sequential_name(r.value.path, base + "/ps-"));
    CHECK(r.value.stat.ephemeral_owner == 0);

    r = op_create(*c, t, base + "/es-", {.mode = CreateMode::ephemeral_sequential});
    REQUIRE_FALSE(r.ec);
    CHECK(is_sequential_name(r.value.path, base + "/es-"));
    CHECK(r.value.stat.ephemeral_owner == c->session_id());

    r = op_create(*c, t, base + "/container", {.mode = CreateMode::container});
    REQUIRE_FALSE(r.ec);
    CHECK(r.value.path == base + "/container");
    c->create(base + "/container/child");
    containers.push_back(r.value.path);
    r = op_create(*c, t, base + "/p", {.mode = CreateMode::persistent});
    c->create(base + "/p/child");
    persistent.push_back(r.value.path);

    r = op_create(*c, t, base + "/ttl", {.mode = CreateMode::persistent_with_ttl, .ttl = 500ms});
    REQUIRE_FALSE(r.ec);
    CHECK(r.value.path == base + "/ttl");
    ttl_nodes.push_back(r.value.path);

    r = op_create(*c, t, base + "/ttls-", {.mode = CreateMode::persistent_sequential_with_ttl, .ttl = 500ms});
    REQUIRE_FALSE(r.ec);
    CHECK(is_sequential_name(r.value.path, base + "/ttls-"));
    ttl_nodes.push_back(r.value.path);

    // A sequential create may name the parent with a trailing '/': the node is then just the sequence.
    r = op_create(*c, t, base + "/", {.mode = CreateMode::persistent_sequential});
    REQUIRE_FALSE(r.ec);
    CHECK(is_sequential_name(r.value.path, base + "/"));

    // TTL modes need a positive TTL.
    CHECK(op_create(*c, t, base + "/ttl0", {.mode = CreateMode::persistent_with_ttl}).ec == errc::invalid_argument);

    // An explicit ACL is applied (the node is then readable by nobody).
    r = op_create(*c, t, base + "/acl", {.acl = AclList{{perms::write, Id{"world", "anyone"}}}});
    REQUIRE_FALSE(r.ec);
    CHECK(op_get_data(*c, Twin::error_code, base + "/acl").ec == zk_errc::no_auth);
  }
  // TTL nodes expire; containers go with their last child; persistent nodes stay.
  for (auto& p : containers) c->remove(p + "/child");
  for (auto& p : persistent) c->remove(p + "/child");
  auto all_gone = [&](const std::vector<std::string>& v) {
    return std::none_of(v.begin(), v.end(), [&](const std::string& p) { return c->exists(p).has_value(); });
  };
  CHECK(eventually([&] { return all_gone(ttl_nodes); }, 10s));
  CHECK(eventually([&] { return all_gone(containers); }, 10s));
  for (auto& p : persistent) CHECK(c->exists(p));
}

TEST_CASE("create: the server numbers a sequential node by its parent's creates, not by its cversion",
          "[framework][create]") {
  // What the unit tests' FakeCore models: a parent's cversion counts child creates and deletes, the sequence
  // suffix only creates (so the sequence is (cversion + num_children) / 2 before the create).
  auto c = connect_shared();
  const auto root = unique_path("sequence");
  c->create(root);
  const auto a = c->create(root + "/x-", {.mode = zkr::CreateMode::persistent_sequential}).path;
  const auto b = c->create(root + "/x-", {.mode = zkr::CreateMode::persistent_sequential}).path;
  CHECK(a == root + "/x-0000000000");
  CHECK(b == root + "/x-0000000001");
  c->remove(a);
  c->create(root + "/plain");  // a plain child counts too
  c->remove(root + "/plain");
  const auto dir = *c->exists(root);
  CHECK(dir.cversion == 5);
  CHECK(dir.num_children == 1);
  CHECK(c->create(root + "/x-", {.mode = zkr::CreateMode::persistent_sequential}).path == root + "/x-0000000003");
}

TEST_CASE("create: default data", "[framework][create]") {
  const auto root = unique_path("defdata");
  auto fixed = started(test_builder(shared_server().connect_string()).default_data("dflt"));
  fixed->create(root);
  fixed->create(root + "/a");
  CHECK(fixed->get_data(root + "/a").data == "dflt");
  fixed->create(root + "/b", {.data = std::string()});
  CHECK(fixed->get_data(root + "/b").data.empty());

  // Without default_data the node holds the local IP address, as in Curator.
  auto cfg = test_builder(shared_server().connect_string()).config();
  cfg.default_data.reset();
  CuratorFramework ip(cfg);
  ip.start();
  REQUIRE(ip.block_until_connected(10s));
  ip.create(root + "/c");
  const auto data = ip.get_data(root + "/c").data;
  // A dotted quad (no std::regex: GCC 12 warns inside it under the sanitizers).
  int dots = 0;
  bool digits_only = !data.empty();
  for (char ch : data) {
    if (ch == '.') ++dots;
    else if (ch < '0' || ch > '9') digits_only = false;
  }
  CHECK(digits_only);
  CHECK(dots == 3);
}

TEST_CASE("create: TTL nodes and containers are reaped by the server", "[framework][create][containers]") {
  auto c = connect_shared();
  const auto root = unique_path("reap");
  c->create(root);

  c->create(root + "/ttl", {.mode = CreateMode::persistent_with_ttl, .ttl = 300ms});
  CHECK(eventually([&] { return !c->exists(root + "/ttl"); }, 10s));

  // A container goes once its last child is gone (not while it never had one).
  c->create(root + "/cont", {.mode = CreateMode::container});
  c->create(root + "/cont/child");
  std::this_thread::sleep_for(300ms);  // a few container checks: it has a child, it stays
  CHECK(c->exists(root + "/cont"));
  c->remove(root + "/cont/child");
  CHECK(eventually([&] { return !c->exists(root + "/cont"); }, 10s));
}

TEST_CASE("create: creating_parents and parents_as_containers", "[framework][create][containers]") {
  auto c = connect_shared();
  const auto root = unique_path("parents");
  c->create(root);

  SECTION("without creating_parents a missing parent is an error") {
    CHECK(thrown_by([&] { c->create(root + "/a/b"); }) == zk_errc::no_node);
    CHECK_FALSE(c->exists(root + "/a"));
  }
  SECTION("creating_parents makes persistent parents") {
    for (Twin t : all_twins) {
      INFO("twin: " << twin_name(t));
      const auto leaf = root + "/" + twin_name(t) + "/x/y/leaf";
      auto r = op_create(*c, t, leaf, {.mode = CreateMode::ephemeral, .creating_parents = true,
                                        .data = std::string("d")});
      REQUIRE_FALSE(r.ec);
      CHECK(r.value.path == leaf);
      CHECK(r.value.stat.ephemeral_owner == c->session_id());
      for (auto p : {root + "/" + twin_name(t), root + "/" + twin_name(t) + "/x", root + "/" + twin_name(t) + "/x/y"}) {
        auto st = c->exists(p);
        REQUIRE(st);
        CHECK(st->ephemeral_owner == 0);
      }
    }
    // Parents that already exist are fine, and so is a sequential leaf.
    auto r = c->create(root + "/throwing/x/y/s-", {.mode = CreateMode::persistent_sequential, .creating_parents = true});
    CHECK(is_sequential_name(r.path, root + "/throwing/x/y/s-"));
  }
  SECTION("parents_as_containers makes container parents that the server reaps bottom-up") {
    const auto leaf = root + "/p/q/leaf";
    auto r = c->create(leaf, {.parents_as_containers = true});
    CHECK(r.path == leaf);
    CHECK(r.stat.ephemeral_owner == 0);
    CHECK(c->exists(root + "/p"));
    CHECK(c->exists(root + "/p/q"));
    c->remove(leaf);
    CHECK(eventually([&] { return !c->exists(root + "/p/q"); }, 10s));
    CHECK(eventually([&] { return !c->exists(root + "/p"); }, 10s));
    CHECK(c->exists(root));  // a persistent node: never reaped
  }
  SECTION("dont_use_container_parents turns container parents into persistent ones") {
    auto nc = started(test_builder(shared_server().connect_string()).dont_use_container_parents());
    nc->create(root + "/p/q/leaf", {.parents_as_containers = true});
    nc->remove(root + "/p/q/leaf");
    std::this_thread::sleep_for(600ms);  // several container checks (every 100 ms)
    CHECK(nc->exists(root + "/p/q"));
    CHECK(nc->exists(root + "/p"));
  }
  SECTION("creating_parents parents are not containers") {
    c->create(root + "/p/q/leaf", {.creating_parents = true});
    c->remove(root + "/p/q/leaf");
    std::this_thread::sleep_for(600ms);
    CHECK(c->exists(root + "/p/q"));
  }
}

// ---------------------------------------------------------------------------------------------------------
// delete

TEST_CASE("delete: versions, quietly, deleting_children, guaranteed, through every twin", "[framework][delete]") {
  auto c = connect_shared();
  const auto root = unique_path("delete");
  c->create(root);
  for (Twin t : all_twins) {
    INFO("twin: " << twin_name(t));
    const auto p = root + "/" + twin_name(t);
    c->create(p);
    c->set_data(p, "v1");  // version 1

    CHECK(op_remove(*c, t, p, {.version = 0}) == zk_errc::bad_version);
    CHECK(c->exists(p));
    CHECK(op_remove(*c, t, p, {.version = 1}) == error_code{});
    CHECK_FALSE(c->exists(p));

    CHECK(op_remove(*c, t, p) == zk_errc::no_node);
    CHECK(op_remove(*c, t, p, {.quietly = true}) == error_code{});
    CHECK(op_remove(*c, t, p, {.guaranteed = true}) == zk_errc::no_node);  // not retryable: not queued
    CHECK(c->pending_guaranteed_deletes() == 0);

    c->create(p + "/a/b/c", {.creating_parents = true});
    c->create(p + "/a/b2");
    c->create(p + "/z");
    CHECK(op_remove(*c, t, p) == zk_errc::not_empty);
    CHECK(op_remove(*c, t, p, {.deleting_children = true}) == error_code{});
    CHECK_FALSE(c->exists(p));
    CHECK(op_remove(*c, t, p, {.deleting_children = true}) == zk_errc::no_node);
    CHECK(op_remove(*c, t, p, {.deleting_children = true, .quietly = true}) == error_code{});

    c->create(p);
    CHECK(op_remove(*c, t, p, {.guaranteed = true}) == error_code{});
    CHECK_FALSE(c->exists(p));
    CHECK(c->pending_guaranteed_deletes() == 0);
  }
  // deleting_children with a version applies it to the node itself only.
  c->create(root + "/v/child", {.creating_parents = true});
  CHECK(thrown_by([&] { c->remove(root + "/v", {.version = 5, .deleting_children = true}); }) == zk_errc::bad_version);
  CHECK(c->exists(root + "/v"));
}

// ---------------------------------------------------------------------------------------------------------
// exists, get_data, get_children and their watches

TEST_CASE("exists: results and one-shot watches through every twin", "[framework][watch]") {
  auto c = connect_shared();
  auto other = connect_shared();
  const auto root = unique_path("exists");
  c->create(root);
  for (Twin t : all_twins) {
    INFO("twin: " << twin_name(t));
    const auto p = root + "/" + twin_name(t);

    EventRecorder created;
    auto r = op_exists(*c, t, p, created.watcher());
    REQUIRE_FALSE(r.ec);
    CHECK_FALSE(r.value.has_value());
    other->create(p, {.data = std::string("abc")});
    REQUIRE(created.wait_count(1, 5s));
    CHECK(created.items()[0] == Event{EventType::node_created, p});

    EventRecorder deleted;
    r = op_exists(*c, t, p, deleted.watcher());
    REQUIRE_FALSE(r.ec);
    REQUIRE(r.value.has_value());
    CHECK(r.value->data_length == 3);
    other->remove(p);
    REQUIRE(deleted.wait_count(1, 5s));
    CHECK(deleted.items()[0] == Event{EventType::node_deleted, p});

    // One-shot: later changes are not reported.
    other->create(p);
    other->remove(p);
    c->sync(p);
    std::this_thread::sleep_for(100ms);
    CHECK(created.size() == 1);
    CHECK(deleted.size() == 1);

    // Without a watcher.
    r = op_exists(*c, t, root);
    REQUIRE_FALSE(r.ec);
    CHECK(r.value.has_value());
  }
}

TEST_CASE("get_data and get_children: results and watches through every twin", "[framework][watch]") {
  auto c = connect_shared();
  auto other = connect_shared();
  const auto root = unique_path("getters");
  c->create(root);
  for (Twin t : all_twins) {
    INFO("twin: " << twin_name(t));
    const auto p = root + "/" + twin_name(t);
    c->create(p, {.data = std::string("one")});

    EventRecorder data_events;
    auto d = op_get_data(*c, t, p, data_events.watcher());
    REQUIRE_FALSE(d.ec);
    CHECK(d.value.data == "one");
    CHECK(d.value.stat.version == 0);
    other->set_data(p, "two");
    REQUIRE(data_events.wait_count(1, 5s));
    CHECK(data_events.items()[0] == Event{EventType::node_data_changed, p});
    CHECK(op_get_data(*c, t, p).value.data == "two");

    EventRecorder child_events;
    auto ch = op_get_children(*c, t, p, child_events.watcher());
    REQUIRE_FALSE(ch.ec);
    CHECK(ch.value.empty());
    other->create(p + "/k1");
    REQUIRE(child_events.wait_count(1, 5s));
    CHECK(child_events.items()[0] == Event{EventType::node_children_changed, p});
    other->create(p + "/k2");
    CHECK(as_set(op_get_children(*c, t, p).value) == std::set<std::string>{"k1", "k2"});

    // A data watch also reports the deletion of the node.
    EventRecorder gone;
    REQUIRE_FALSE(op_get_data(*c, t, p + "/k1", gone.watcher()).ec);
    other->remove(p + "/k1");
    REQUIRE(gone.wait_count(1, 5s));
    CHECK(gone.items()[0] == Event{EventType::node_deleted, p + "/k1"});

    // On a missing node both fail with no_node and leave no watch behind.
    EventRecorder never;
    CHECK(op_get_data(*c, t, p + "/missing", never.watcher()).ec == zk_errc::no_node);
    CHECK(op_get_children(*c, t, p + "/missing", never.watcher()).ec == zk_errc::no_node);
    other->create(p + "/missing");
    other->create(p + "/missing/x");
    c->sync(p);
    std::this_thread::sleep_for(100ms);
    CHECK(never.size() == 0);
  }
}

TEST_CASE("set_data: versions through every twin", "[framework][set_data]") {
  auto c = connect_shared();
  const auto root = unique_path("setdata");
  c->create(root);
  for (Twin t : all_twins) {
    INFO("twin: " << twin_name(t));
    const auto p = root + "/" + twin_name(t);
    c->create(p, {.data = std::string("0")});
    auto s = op_set_data(*c, t, p, "1");
    REQUIRE_FALSE(s.ec);
    CHECK(s.value.version == 1);
    CHECK(s.value.data_length == 1);
    s = op_set_data(*c, t, p, "two", 1);
    REQUIRE_FALSE(s.ec);
    CHECK(s.value.version == 2);
    CHECK(op_set_data(*c, t, p, "x", 1).ec == zk_errc::bad_version);
    CHECK(c->get_data(p).data == "two");
    CHECK(op_set_data(*c, t, p + "/missing", "x").ec == zk_errc::no_node);
    s = op_set_data(*c, t, p, "");
    REQUIRE_FALSE(s.ec);
    CHECK(c->get_data(p).data.empty());
  }
}

// ---------------------------------------------------------------------------------------------------------
// multi, sync, remove_watches

TEST_CASE("multi: all or nothing through every twin", "[framework][multi]") {
  auto c = connect_shared();
  const auto root = unique_path("multi");
  c->create(root);
  for (Twin t : all_twins) {
    INFO("twin: " << twin_name(t));
    const auto p = root + "/" + twin_name(t);

    auto ok = op_multi(*c, t,
                       {Op::create(p, "a"), Op::create(p + "/s-", "b", CreateMode::persistent_sequential),
                        Op::set_data(p, "c", 0), Op::check(p, 1), Op::create(p + "/gone"), Op::remove(p + "/gone")});
    REQUIRE_FALSE(ok.ec);
    REQUIRE(ok.value.size() == 6);
    for (auto& o : ok.value) CHECK_FALSE(o.ec);
    CHECK(ok.value[0].path == p);
    CHECK(is_sequential_name(ok.value[1].path, p + "/s-"));
    CHECK(ok.value[2].stat.version == 1);
    CHECK(c->get_data(p).data == "c");
    CHECK(c->get_data(ok.value[1].path).data == "b");
    CHECK_FALSE(c->exists(p + "/gone"));

    // A failing operation: the error is the failing operation's, nothing is applied.
    auto bad = op_multi(*c, t, {Op::create(p + "/new"), Op::set_data(p, "x", 0), Op::remove(p + "/missing")});
    CHECK(bad.ec == zk_errc::bad_version);
    if (t == Twin::error_code || t == Twin::callback) {
      REQUIRE(bad.value.size() == 3);
      CHECK_FALSE(bad.value[0].ec);  // would have succeeded
      CHECK(bad.value[0].path.empty());
      CHECK(bad.value[1].ec == zk_errc::bad_version);
      CHECK(bad.value[2].ec);  // not attempted (runtime inconsistency)
    }
    CHECK_FALSE(c->exists(p + "/new"));
    CHECK(c->get_data(p).data == "c");

    bad = op_multi(*c, t, {Op::create(p + "/new2"), Op::check(p + "/missing", 0)});
    CHECK(bad.ec == zk_errc::no_node);
    CHECK_FALSE(c->exists(p + "/new2"));

    // Container and TTL creates are refused inside a transaction (the C client 3.8 misreads their replies).
    CHECK(op_multi(*c, t, {Op::create(p + "/cont", "", CreateMode::container)}).ec == errc::invalid_argument);
    CHECK(op_multi(*c, t, {Op::create(p + "/ttl", "", CreateMode::persistent_with_ttl)}).ec == errc::invalid_argument);
    CHECK_FALSE(c->exists(p + "/cont"));

    // The empty transaction succeeds with no results.
    auto empty = op_multi(*c, t, {});
    CHECK_FALSE(empty.ec);
    CHECK(empty.value.empty());
  }
}

TEST_CASE("sync through every twin", "[framework][sync]") {
  auto c = connect_shared();
  auto other = connect_shared();
  const auto root = unique_path("sync");
  c->create(root);
  for (Twin t : all_twins) {
    INFO("twin: " << twin_name(t));
    other->create(root + "/" + twin_name(t));
    CHECK(op_sync(*c, t, root) == error_code{});
    CHECK(c->exists(root + "/" + twin_name(t)));
  }
}

TEST_CASE("remove_watches: removed watchers never run", "[framework][watch]") {
  auto c = connect_shared();
  auto other = connect_shared();
  const auto root = unique_path("rmwatch");
  c->create(root);
  for (Twin t : all_twins) {
    INFO("twin: " << twin_name(t));
    const auto p = root + "/" + twin_name(t);
    const auto q = p + "-missing";
    c->create(p);

    EventRecorder removed;
    REQUIRE(c->exists(p, removed.watcher()));
    REQUIRE(c->get_data(p, removed.watcher()).stat.version == 0);
    REQUIRE(c->get_children(p, removed.watcher()).empty());
    REQUIRE_FALSE(c->exists(q, removed.watcher()));  // an exists watch on a missing node

    CHECK(op_remove_watches(*c, t, p) == error_code{});
    CHECK(op_remove_watches(*c, t, q) == error_code{});

    // Control: a watch set now, on the same client, still fires.
    EventRecorder control;
    REQUIRE(c->exists(p + "/child", control.watcher()) == std::nullopt);
    other->set_data(p, "changed");
    other->create(p + "/child");
    other->create(q);
    REQUIRE(control.wait_count(1, 5s));
    other->remove(p + "/child");
    other->remove(p);
    other->remove(q);
    c->sync(root);
    std::this_thread::sleep_for(200ms);
    CHECK(removed.size() == 0);

    // Removing watches where there are none is not an error.
    CHECK(op_remove_watches(*c, t, p) == error_code{});
  }
  // Closing the client does not run removed watchers either (they were forgotten locally).
  EventRecorder removed;
  c->create(root + "/last");
  c->exists(root + "/last", removed.watcher());
  c->remove_watches(root + "/last");
  c->close();
  std::this_thread::sleep_for(100ms);
  CHECK(removed.size() == 0);
}

TEST_CASE("watches pending at close report session_lost", "[framework][watch]") {
  auto c = connect_shared();
  const auto root = unique_path("closewatch");
  c->create(root);
  EventRecorder events;
  c->exists(root, events.watcher());
  c->exists(root + "/missing", events.watcher());
  c->close();
  REQUIRE(events.wait_count(2, 5s));
  for (auto& e : events.items()) CHECK(e.type == EventType::session_lost);
}

// ---------------------------------------------------------------------------------------------------------
// namespaces

TEST_CASE("namespace: applied to every path, removed from every result", "[framework][namespace]") {
  const auto ns = unique_path("ns").substr(1);
  const auto nsp = "/" + ns;
  auto c = started(test_builder(shared_server().connect_string()).namespace_name(ns));
  auto plain = connect_shared();
  CHECK(c->namespace_name() == ns);

  auto r = c->create("/a", {.data = std::string("x")});
  CHECK(r.path == "/a");
  CHECK(plain->get_data(nsp + "/a").data == "x");
  CHECK_FALSE(plain->exists("/a"));
  CHECK(plain->exists(nsp));  // created lazily (a container: see the next test)

  r = c->create("/a/s-", {.mode = CreateMode::ephemeral_sequential});
  CHECK(is_sequential_name(r.path, "/a/s-"));
  CHECK(plain->exists(nsp + r.path));

  r = c->create("/deep/er/leaf", {.parents_as_containers = true});
  CHECK(r.path == "/deep/er/leaf");
  CHECK(plain->exists(nsp + "/deep/er"));

  r = c->create("/prot", {.protection = true});
  CHECK(r.path.rfind("/_c_", 0) == 0);
  CHECK(protected_names::normalize(node_name(r.path)) == "prot");
  CHECK(plain->exists(nsp + r.path));

  CHECK(c->exists("/a"));
  CHECK(as_set(c->get_children("/")) == as_set(plain->get_children(nsp)));
  CHECK(as_set(c->get_children("/")).count("a") == 1);
  c->set_data("/a", "y");
  CHECK(plain->get_data(nsp + "/a").data == "y");
  CHECK(c->get_data("/a").data == "y");
  c->sync("/a");

  auto m = c->multi({Op::create("/m"), Op::create("/m/s-", "", CreateMode::persistent_sequential), Op::check("/a", 1)});
  CHECK(m[0].path == "/m");
  CHECK(is_sequential_name(m[1].path, "/m/s-"));
  CHECK(plain->exists(nsp + "/m"));

  EventRecorder ev;
  CHECK_FALSE(c->exists("/w", ev.watcher()));
  plain->create(nsp + "/w");
  REQUIRE(ev.wait_count(1, 5s));
  CHECK(ev.items()[0] == Event{EventType::node_created, "/w"});
  EventRecorder children_ev, removed_ev;
  CHECK(c->get_children("/w", children_ev.watcher()).empty());
  CHECK_FALSE(c->exists("/w2", removed_ev.watcher()));
  c->remove_watches("/w2");
  plain->create(nsp + "/w/k");
  plain->create(nsp + "/w2");
  REQUIRE(children_ev.wait_count(1, 5s));
  CHECK(children_ev.items()[0] == Event{EventType::node_children_changed, "/w"});
  c->sync("/w2");
  std::this_thread::sleep_for(100ms);
  CHECK(removed_ev.size() == 0);

  c->remove("/m", {.deleting_children = true});
  CHECK_FALSE(plain->exists(nsp + "/m"));
  c->remove("/a", {.deleting_children = true});
  CHECK_FALSE(plain->exists(nsp + "/a"));

  // Async twins namespace too.
  auto f = c->async_create("/async", {}, asio::use_future).get();
  CHECK(f.path == "/async");
  CHECK(plain->exists(nsp + "/async"));
}

TEST_CASE("namespace: the namespace root is a container", "[framework][namespace][containers]") {
  const auto ns = unique_path("nsroot").substr(1);
  auto c = started(test_builder(shared_server().connect_string()).namespace_name(ns));
  auto plain = connect_shared();
  c->create("/x");
  CHECK(plain->exists("/" + ns));
  c->remove("/x");
  CHECK(eventually([&] { return !plain->exists("/" + ns); }, 10s));
  // With dont_use_container_parents it is a persistent node.
  const auto ns2 = unique_path("nsroot").substr(1);
  auto c2 = started(test_builder(shared_server().connect_string()).namespace_name(ns2).dont_use_container_parents());
  c2->create("/x");
  c2->remove("/x");
  std::this_thread::sleep_for(600ms);
  CHECK(plain->exists("/" + ns2));
}

TEST_CASE("namespace: an invalid namespace fails start", "[framework][namespace]") {
  for (const std::string& bad : std::vector<std::string>{"a/", "a//b", ".", "a/../b", std::string("a\0b", 3)}) {
    INFO("namespace: " << bad);
    auto c = test_builder(shared_server().connect_string()).namespace_name(bad).build();
    error_code ec;
    c->start(ec);
    CHECK(ec == errc::invalid_path);
  }
  // A nested namespace is valid.
  const auto ns = unique_path("nested").substr(1) + "/inner";
  auto c = started(test_builder(shared_server().connect_string()).namespace_name(ns));
  CHECK(c->create("/x").path == "/x");
  auto plain = connect_shared();
  CHECK(plain->exists("/" + ns + "/x"));
}

// ---------------------------------------------------------------------------------------------------------
// ACLs and authentication

TEST_CASE("ACL provider: sees full namespaced paths and its ACLs are enforced", "[framework][acl]") {
  const auto ns = unique_path("aclns").substr(1);
  const auto nsp = "/" + ns;
  auto seen = std::make_shared<Recorder<std::string>>();
  auto provider = [seen, nsp](std::string_view path) -> AclList {
    seen->push(std::string(path));
    if (path == nsp + "/parent") return {{perms::create | perms::read, Id{"world", "anyone"}}};
    return {};  // empty: the default (OPEN_ACL_UNSAFE)
  };
  auto c = started(test_builder(shared_server().connect_string()).namespace_name(ns).acl_provider(provider));
  auto plain = connect_shared();

  c->create("/parent/child", {.creating_parents = true});
  auto paths = seen->items();
  CHECK(std::count(paths.begin(), paths.end(), nsp) == 1);            // the namespace root
  CHECK(std::count(paths.begin(), paths.end(), nsp + "/parent") >= 1);  // the parent made by mkdirs
  CHECK(std::count(paths.begin(), paths.end(), nsp + "/parent/child") >= 1);

  // The parent is CREATE|READ for everyone: reading and creating work, writing and deleting children do not.
  CHECK(plain->get_data(nsp + "/parent").data.empty());
  CHECK(thrown_by([&] { plain->set_data(nsp + "/parent", "x"); }) == zk_errc::no_auth);
  CHECK(thrown_by([&] { c->set_data("/parent", "x"); }) == zk_errc::no_auth);
  plain->create(nsp + "/parent/other");
  CHECK(thrown_by([&] { c->remove("/parent/child"); }) == zk_errc::no_auth);
  CHECK(thrown_by([&] { c->remove("/parent/child", {.guaranteed = true}); }) == zk_errc::no_auth);
  CHECK(c->pending_guaranteed_deletes() == 0);  // no_auth is not retryable
  // Nodes the provider does not single out are open.
  c->set_data("/parent/child", "ok");

  // The provider sees the protected, namespaced path of a protected create.
  auto r = c->create("/parent/p", {.protection = true});
  auto last = seen->items().back();
  CHECK(last == nsp + r.path);
  CHECK(last.find("/_c_") != std::string::npos);

  // An explicit ACL overrides the provider; a READ-only world ACL refuses set_data.
  c->create("/ro", {.acl = read_acl_unsafe()});
  CHECK(thrown_by([&] { c->set_data("/ro", "x"); }) == zk_errc::no_auth);
  CHECK(thrown_by([&] { plain->set_data(nsp + "/ro", "x"); }) == zk_errc::no_auth);
  CHECK(c->get_data("/ro").stat.version == 0);
}

TEST_CASE("digest authentication", "[framework][acl][auth]") {
  const auto root = unique_path("digest");
  const auto cs = shared_server().connect_string();
  auto alice = started(test_builder(cs).authorization("digest", "alice:secret"));
  auto alice2 = started(test_builder(cs).authorization("digest", "alice:secret"));
  auto wrong = started(test_builder(cs).authorization("digest", "alice:wrong"));
  auto anon = connect_shared();

  alice->create(root);
  alice->create(root + "/private", {.acl = creator_all_acl(), .data = std::string("s")});
  CHECK(alice->get_data(root + "/private").data == "s");
  CHECK(alice2->get_data(root + "/private").data == "s");
  alice2->set_data(root + "/private", "t");
  CHECK(thrown_by([&] { anon->get_data(root + "/private"); }) == zk_errc::no_auth);
  CHECK(thrown_by([&] { wrong->get_data(root + "/private"); }) == zk_errc::no_auth);
  CHECK(thrown_by([&] { wrong->set_data(root + "/private", "x"); }) == zk_errc::no_auth);
  CHECK(anon->exists(root + "/private"));  // exists needs no permission

  // CREATOR_ALL_ACL needs an authenticated creator.
  CHECK(thrown_by([&] { anon->create(root + "/anon", {.acl = creator_all_acl()}); }) == zk_errc::invalid_acl);

}

namespace {
/// CPU time this process used (all its threads; the server is another process).
std::chrono::milliseconds process_cpu_time() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return std::chrono::milliseconds(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}
}  // namespace

TEST_CASE("authentication rejected by the server: operations fail with auth_failed, no busy loop",
          "[framework][auth][auth_failed]") {
  // "digets" is no scheme the server knows: it answers AUTHFAILED and closes the connection, and the C client
  // stays in its auth-failed state for good. RetryForever: a retried failure would never end.
  StateRecorder states;
  auto c = test_builder(shared_server().connect_string())
               .authorization("digets", "u:p")
               .retry_policy(std::make_shared<RetryForever>(Millis(50)))
               .build();
  c->add_connection_state_listener([&](ConnectionState s) { states.push(s); });
  c->start();
  auto pending = c->async_create(unique_path("auth-failed"), {}, asio::use_future);
  CHECK(from_future(std::move(pending), 10s).ec == zk_errc::auth_failed);
  CHECK_FALSE(c->is_connected());
  CHECK_FALSE(c->block_until_connected(1s));
  // New operations fail at once, through every twin.
  for (Twin t : all_twins) {
    INFO("twin: " << twin_name(t));
    const auto t0 = Clock::now();
    CHECK(op_get_data(*c, t, "/").ec == zk_errc::auth_failed);
    CHECK(ms_since(t0) < 2000);
  }
  CHECK(op_sync(*c, Twin::error_code, "/") == zk_errc::auth_failed);
  // Guaranteed deletes are not kept: they could never succeed.
  CHECK(op_remove(*c, Twin::error_code, "/x", {.guaranteed = true}) == zk_errc::auth_failed);
  CHECK(c->pending_guaranteed_deletes() == 0);
  // The I/O thread is idle: not spinning on the dead handle.
  const auto cpu0 = process_cpu_time();
  std::this_thread::sleep_for(1s);
  const auto cpu = process_cpu_time() - cpu0;
  INFO("CPU time over 1 s idle: " << cpu.count() << " ms");
  CHECK(cpu < 300ms);
  // If CONNECTED was reported before the server's answer, LOST follows: the session is given up.
  const auto items = states.items();
  if (!items.empty()) CHECK(items.back() == ConnectionState::lost);
  const auto t0 = Clock::now();
  c->close();
  CHECK(ms_since(t0) < 2000);
}

// ---------------------------------------------------------------------------------------------------------
// Bad input, client life cycle, connection failures

namespace {

const std::vector<std::string>& invalid_paths() {
  static const std::vector<std::string> paths = {
      "",          "a",           "a/b",          "/a/",        "/a//b",      "//",
      "/.",        "/a/.",        "/a/./b",       "/..",        "/a/../b",    std::string("/a\0b", 4),
      "/a\x01",    "/a\x1e" "b",  "/a\xc2\x80",   "/a\xf0\x9f\x98\x80",   "/a\xff",
  };
  return paths;
}

/// Every operation on `path` through twin `t`; returns each one's error.
std::vector<std::pair<std::string, error_code>> every_op(CuratorFramework& c, Twin t, const std::string& path,
                                                         const std::string& data = {}) {
  std::vector<std::pair<std::string, error_code>> out;
  out.emplace_back("create", op_create(c, t, path, {.data = data}).ec);
  out.emplace_back("create seq", op_create(c, t, path, {.mode = CreateMode::ephemeral_sequential, .data = data}).ec);
  out.emplace_back("delete", op_remove(c, t, path));
  out.emplace_back("delete children", op_remove(c, t, path, {.deleting_children = true}));
  out.emplace_back("exists", op_exists(c, t, path, [](const WatchedEvent&) {}).ec);
  out.emplace_back("get_data", op_get_data(c, t, path).ec);
  out.emplace_back("get_children", op_get_children(c, t, path).ec);
  out.emplace_back("set_data", op_set_data(c, t, path, data).ec);
  out.emplace_back("multi create", op_multi(c, t, {Op::create(path, data)}).ec);
  out.emplace_back("multi set", op_multi(c, t, {Op::set_data(path, data)}).ec);
  out.emplace_back("multi delete", op_multi(c, t, {Op::remove(path)}).ec);
  out.emplace_back("multi check", op_multi(c, t, {Op::check(path, 0)}).ec);
  out.emplace_back("sync", op_sync(c, t, path));
  out.emplace_back("remove_watches", op_remove_watches(c, t, path));
  return out;
}

}  // namespace

TEST_CASE("bad input: invalid paths are refused by every operation", "[framework][input]") {
  auto c = connect_shared();
  for (const auto& path : invalid_paths()) {
    for (Twin t : all_twins) {
      for (auto& [op, ec] : every_op(*c, t, path)) {
        INFO("path: '" << path << "' op: " << op << " twin: " << twin_name(t));
        if (op == "create seq") {
          // Curator validates path + "1" for a sequential create: "/a/" and "/." pass ("/.1" is a valid name).
          CHECK((ec == errc::invalid_path) == path_error(path, true).has_value());
          continue;
        }
        CHECK(ec == errc::invalid_path);
      }
    }
  }
  CHECK(op_multi(*c, Twin::error_code, {Op::create("/a/")}).ec == errc::invalid_path);
  // One bad operation spoils the whole transaction, before anything is sent.
  const auto root = unique_path("badmulti");
  CHECK(op_multi(*c, Twin::error_code, {Op::create(root), Op::create("/x//y")}).ec == errc::invalid_path);
  CHECK_FALSE(c->exists(root));
  // The root cannot be deleted.
  CHECK(thrown_by([&] { c->remove("/"); }) == errc::invalid_path);
}

TEST_CASE("bad input: data over the limit", "[framework][input]") {
  auto c = connect_shared();
  const auto root = unique_path("big");
  c->create(root);
  const std::string too_big(default_max_data_size + 1, 'x');
  for (Twin t : all_twins) {
    INFO("twin: " << twin_name(t));
    CHECK(op_create(*c, t, root + "/n", {.data = too_big}).ec == errc::data_too_large);
    CHECK(op_set_data(*c, t, root, too_big).ec == errc::data_too_large);
    CHECK(op_multi(*c, t, {Op::create(root + "/n", too_big)}).ec == errc::data_too_large);
    CHECK(op_multi(*c, t, {Op::set_data(root, too_big)}).ec == errc::data_too_large);
  }
  CHECK_FALSE(c->exists(root + "/n"));
  // The largest accepted size really is accepted by the server.
  const std::string largest(default_max_data_size, 'y');
  c->create(root + "/largest", {.data = largest});
  CHECK(c->get_data(root + "/largest").data.size() == largest.size());
  CHECK(c->set_data(root + "/largest", largest).data_length == static_cast<int>(largest.size()));

  // The limit is configurable, through the builder or the config.
  auto small = test_builder(shared_server().connect_string()).max_data_size(4).build();
  small->start();
  REQUIRE(small->block_until_connected(10s));
  CHECK(thrown_by([&] { small->create(root + "/s", {.data = std::string("12345")}); }) == errc::data_too_large);
  CHECK(thrown_by([&] { small->set_data(root, "12345"); }) == errc::data_too_large);
  small->create(root + "/s", {.data = std::string("1234")});
  auto cfg = test_builder(shared_server().connect_string()).config();
  cfg.max_data_size = 2;
  CuratorFramework smaller(cfg);
  smaller.start();
  REQUIRE(smaller.block_until_connected(10s));
  CHECK(thrown_by([&] { smaller.set_data(root, "123"); }) == errc::data_too_large);
}

TEST_CASE("life cycle: operations before start and after close", "[framework][lifecycle]") {
  SECTION("never started") {
    auto c = test_builder(shared_server().connect_string()).build();
    CHECK_FALSE(c->is_started());
    CHECK_FALSE(c->is_connected());
    CHECK(c->session_id() == 0);
    CHECK_FALSE(c->block_until_connected(100ms));
    for (Twin t : all_twins)
      for (auto& [op, ec] : every_op(*c, t, "/x")) {
        INFO("op: " << op << " twin: " << twin_name(t));
        CHECK(ec == errc::not_started);
      }
    CHECK(c->pending_guaranteed_deletes() == 0);
    CHECK(thrown_by([&] { c->inject_session_expiration(); }) == errc::not_started);
  }
  SECTION("closed") {
    auto c = connect_shared();
    const auto root = unique_path("closed");
    c->create(root, {.mode = CreateMode::ephemeral});
    c->close();
    c->close();  // idempotent
    CHECK_FALSE(c->is_started());
    CHECK_FALSE(c->is_connected());
    CHECK(c->session_id() == 0);
    CHECK_FALSE(c->block_until_connected(100ms));
    for (Twin t : all_twins)
      for (auto& [op, ec] : every_op(*c, t, "/x")) {
        INFO("op: " << op << " twin: " << twin_name(t));
        CHECK(ec == errc::closed);
      }
    error_code ec;
    c->start(ec);
    CHECK(ec == errc::closed);
    CHECK(thrown_by([&] { c->start(); }) == errc::closed);
    CHECK(thrown_by([&] { c->inject_session_expiration(); }) == errc::closed);
    // The session is gone with its ephemeral node.
    auto plain = connect_shared();
    CHECK_FALSE(plain->exists(root));
  }
  SECTION("closed before ever starting") {
    auto c = test_builder(shared_server().connect_string()).build();
    c->close();
    error_code ec;
    c->start(ec);
    CHECK(ec == errc::closed);
    CHECK(op_create(*c, Twin::error_code, "/x").ec == errc::closed);
  }
  SECTION("start twice is harmless") {
    auto c = connect_shared();
    c->start();
    CHECK(c->is_started());
    CHECK(c->exists("/"));
  }
  SECTION("a moved-from client's replacement works; the destructor closes") {
    auto c = connect_shared();
    const auto root = unique_path("moved");
    CuratorFramework moved(std::move(*c));
    moved.create(root, {.mode = CreateMode::ephemeral});
    { CuratorFramework gone(std::move(moved)); }
    auto plain = connect_shared();
    CHECK(eventually([&] { return !plain->exists(root); }, 5s));
  }
}

TEST_CASE("life cycle: an operation pending at close completes with closed", "[framework][lifecycle]") {
  const auto port = zkr::testing::free_port();
  auto c = test_builder("127.0.0.1:" + std::to_string(port)).connection_timeout(30s).build();
  c->start();
  auto fut = c->async_create("/x", {}, asio::use_future);
  auto fut2 = c->async_exists("/x", {}, asio::use_future);
  std::this_thread::sleep_for(200ms);
  const auto t0 = Clock::now();
  c->close();
  CHECK(from_future(std::move(fut), 5s).ec == errc::closed);
  CHECK(from_future(std::move(fut2), 5s).ec == errc::closed);
  CHECK(ms_since(t0) < 5000);
}

TEST_CASE("bad input: invalid connect strings fail start", "[framework][input]") {
  for (std::string cs : {"", "localhost", "127.0.0.1", "127.0.0.1:", ":2181", "127.0.0.1:abc", "127.0.0.1:2181,",
                         ",127.0.0.1:2181", "127.0.0.1:2181,,127.0.0.1:2182", "/chroot", "127.0.0.1:-1",
                         "127.0.0.1:99999", "127.0.0.1:0"}) {
    INFO("connect string: '" << cs << "'");
    auto c = test_builder(cs).build();
    error_code ec;
    c->start(ec);
    CHECK(ec == errc::invalid_connect_string);
    CHECK_FALSE(c->is_started());
    auto c2 = test_builder(cs).build();
    CHECK(thrown_by([&] { c2->start(); }) == errc::invalid_connect_string);
    CHECK(op_create(*c2, Twin::error_code, "/x").ec == errc::not_started);
  }
  // Several servers and a chroot suffix are valid.
  auto ok = test_builder(shared_server().connect_string() + "," + shared_server().connect_string()).build();
  ok->start();
  CHECK(ok->block_until_connected(10s));
}

TEST_CASE("an unreachable ensemble: operations fail within the connection timeout", "[framework][connection]") {
  const auto port = zkr::testing::free_port();  // nothing listens there
  auto c = test_builder("127.0.0.1:" + std::to_string(port)).connection_timeout(500ms).build();
  c->start();  // connecting happens in the background
  CHECK(c->is_started());
  CHECK_FALSE(c->block_until_connected(200ms));
  CHECK_FALSE(c->is_connected());
  for (Twin t : all_twins) {
    INFO("twin: " << twin_name(t));
    const auto t0 = Clock::now();
    auto r = op_create(*c, t, "/x");
    CHECK(r.ec == errc::connection_timeout);
    CHECK(ms_since(t0) < 500 + 2000);  // a bound for hang detection, not a speed test
  }
  const auto t1 = Clock::now();
  CHECK(op_multi(*c, Twin::error_code, {Op::check("/x", 0)}).ec == errc::connection_timeout);
  CHECK(op_sync(*c, Twin::error_code, "/x") == errc::connection_timeout);
  CHECK(ms_since(t1) < 2 * 500 + 2000);
  // A protected create that never got to send a try leaves nothing to look for (no background clean-up).
  CHECK(op_create(*c, Twin::error_code, "/x", {.protection = true}).ec == errc::connection_timeout);
  CHECK(c->pending_guaranteed_deletes() == 0);
  // A guaranteed delete that cannot connect is left to the background.
  CHECK(thrown_by([&] { c->remove("/x", {.guaranteed = true}); }) == errc::connection_timeout);
  CHECK(c->pending_guaranteed_deletes() == 1);
  const auto t0 = Clock::now();
  c->close();  // waits up to max_close_wait (1 s) for it, then gives up
  CHECK(ms_since(t0) >= 900);
  CHECK(ms_since(t0) < 1000 + 2000);
  CHECK(c->pending_guaranteed_deletes() == 0);
}

TEST_CASE("blocking calls on the client's I/O thread fail with would_deadlock", "[framework][threading]") {
  auto c = connect_shared();
  const auto root = unique_path("deadlock");
  c->create(root);

  // From a completion handler (by default on the client's I/O thread).
  auto from_handler = with_callback<int>([&](auto done) {
    c->async_exists(root, {}, [&c, root, done = std::move(done)](error_code ec, std::optional<Stat>) mutable {
      error_code inner;
      c->exists(root, {}, inner);
      const auto thrown = thrown_by([&] { c->get_data(root); });
      done(ec, (inner == errc::would_deadlock ? 1 : 0) + (thrown == errc::would_deadlock ? 2 : 0));
    });
  });
  CHECK_FALSE(from_handler.ec);
  CHECK(from_handler.value == 3);

  // From a watcher.
  auto from_watcher = std::make_shared<std::promise<error_code>>();
  c->exists(root + "/w", [&c, from_watcher](const WatchedEvent& e) {
    error_code inner;
    c->create(e.path + "-2", {}, inner);
    from_watcher->set_value(inner);
  });
  c->create(root + "/w");
  auto f = from_watcher->get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  CHECK(f.get() == errc::would_deadlock);

  // From a connection-state listener.
  auto from_listener = std::make_shared<std::promise<error_code>>();
  auto lc = test_builder(shared_server().connect_string()).build();
  lc->add_connection_state_listener([&lc, from_listener, root](ConnectionState s) {
    if (s != ConnectionState::connected) return;
    error_code inner;
    lc->sync(root, inner);
    from_listener->set_value(inner);
  });
  lc->start();
  auto lf = from_listener->get_future();
  REQUIRE(lf.wait_for(10s) == std::future_status::ready);
  CHECK(lf.get() == errc::would_deadlock);

  // close() from a handler does not deadlock (it closes at once, without waiting for anything).
  auto closer = started(test_builder(shared_server().connect_string()));
  auto closed_in_handler = with_callback<int>([&](auto done) {
    closer->async_sync(root, [&closer, done = std::move(done)](error_code ec) mutable {
      closer->close();
      done(ec, closer->is_started() ? 1 : 0);
    });
  });
  CHECK_FALSE(closed_in_handler.ec);
  CHECK(closed_in_handler.value == 0);
  CHECK(op_sync(*closer, Twin::error_code, root) == errc::closed);

  // With handlers on an executor of the application's own, blocking in a handler is allowed.
  asio::io_context app;
  auto guard = asio::make_work_guard(app);
  std::thread app_thread([&] { app.run(); });
  auto ac = started(test_builder(shared_server().connect_string()).executor(app.get_executor()));
  auto own = with_callback<int>([&](auto done) {
    ac->async_exists(root, {}, [&ac, &app_thread, root, done = std::move(done)](error_code ec, std::optional<Stat>) mutable {
      const bool on_app_thread = std::this_thread::get_id() == app_thread.get_id();
      error_code inner;
      ac->get_data(root, {}, inner);
      done(ec ? ec : inner, on_app_thread ? 1 : 0);
    });
  });
  CHECK_FALSE(own.ec);
  CHECK(own.value == 1);
  ac->close();
  guard.reset();
  app_thread.join();
}

// ---------------------------------------------------------------------------------------------------------
// cancellation of framework operations

TEST_CASE("cancellation: an async framework operation completes at once with operation_aborted",
          "[framework][cancel]") {
  zkr::testing::TestingServer server;  // paused below: not the shared one
  auto c = started(test_builder(server.connect_string()).session_timeout(30s));
  auto admin = started(test_builder(server.connect_string()));
  const std::string root = "/cancel";
  c->create(root);
  const auto cversion_before = c->exists(root)->cversion;

  server.pause();  // requests now wait in the server's socket buffer
  {
    asio::cancellation_signal sig;
    auto f = c->async_get_data(root, {}, asio::bind_cancellation_slot(sig.slot(), asio::use_future));
    CHECK(f.wait_for(200ms) == std::future_status::timeout);  // it really waits
    sig.emit(asio::cancellation_type::terminal);
    CHECK(from_future(std::move(f), 2s).ec == asio::error::operation_aborted);
  }
  {
    // A cancelled create that the server applies after all: the client deletes the node it made.
    asio::cancellation_signal sig;
    std::promise<error_code> p;
    int calls = 0;
    c->async_create(root + "/made", {}, asio::bind_cancellation_slot(sig.slot(), [&](error_code ec, CreateResult) {
                      ++calls;
                      p.set_value(ec);
                    }));
    std::this_thread::sleep_for(100ms);
    sig.emit(asio::cancellation_type::terminal);
    auto f = p.get_future();
    REQUIRE(f.wait_for(2s) == std::future_status::ready);
    CHECK(f.get() == asio::error::operation_aborted);
    server.resume();
    // The server applied the create (the parent's cversion counts it) and then the deletion.
    CHECK(eventually([&] { return admin->exists(root)->cversion >= cversion_before + 2; }, 10s));
    CHECK_FALSE(admin->exists(root + "/made"));
    sig.emit(asio::cancellation_type::terminal);  // a late emit after completion is harmless
    std::this_thread::sleep_for(100ms);
    CHECK(calls == 1);
  }
  {
    // A cancelled read whose reply comes after all leaves no watch behind: its watcher never runs.
    server.pause();
    asio::cancellation_signal sig;
    EventRecorder cancelled_watch;
    auto f = c->async_get_data(root, cancelled_watch.watcher(),
                               asio::bind_cancellation_slot(sig.slot(), asio::use_future));
    std::this_thread::sleep_for(100ms);
    sig.emit(asio::cancellation_type::terminal);
    CHECK(from_future(std::move(f), 2s).ec == asio::error::operation_aborted);
    server.resume();
    c->sync(root);  // the cancelled read's reply has come
    admin->set_data(root, "first");  // a watch left by the cancelled read would fire here
    EventRecorder marker;
    REQUIRE(c->exists(root, marker.watcher()));
    admin->set_data(root, "second");
    REQUIRE(marker.wait_count(1, 10s));  // the session's events arrive in order: "first" would have come before
    CHECK(cancelled_watch.size() == 0);
  }
  // An operation with a slot bound but never cancelled completes normally, and the client is fine.
  asio::cancellation_signal sig;
  auto f = c->async_create(root + "/kept", {.data = std::string("x")},
                           asio::bind_cancellation_slot(sig.slot(), asio::use_future));
  const auto r = from_future(std::move(f), 10s);
  REQUIRE_FALSE(r.ec);
  CHECK(r.value.path == root + "/kept");
  CHECK(c->get_data(root + "/kept").data == "x");
}

TEST_CASE("framework: a cancelled operation is not tried again when the connection comes back", "[framework][cancel]") {
  FaultProxy proxy(shared_server().port());
  StateRecorder states;
  auto c = test_builder(proxy.connect_string())
               .session_timeout(30s)
               .connection_timeout(20s)
               .retry_policy(std::make_shared<RetryNTimes>(100, Millis(50)))
               .build();
  c->add_connection_state_listener(states.sink());
  c->start();
  REQUIRE(c->block_until_connected(10s));
  auto admin = connect_shared();
  const auto root = unique_path("cancel-retry");
  admin->create(root, {.data = std::string("old")});
  admin->create(root + "/existing");
  const auto before = *admin->exists(root);

  // 1. Operations waiting for the connection: cancelled, they are never sent.
  proxy.set_refuse(true);
  proxy.drop_connections();
  REQUIRE(states.wait_for(ConnectionState::suspended, 10s));
  asio::cancellation_signal s1, s2, s3, s4, s5;
  auto set = c->async_set_data(root, "new", -1, asio::bind_cancellation_slot(s1.slot(), asio::use_future));
  auto made = c->async_create(root + "/never", {}, asio::bind_cancellation_slot(s2.slot(), asio::use_future));
  auto gone = c->async_remove(root + "/existing", {}, asio::bind_cancellation_slot(s3.slot(), asio::use_future));
  auto txn = c->async_multi({Op::create(root + "/never-in-txn")},
                            asio::bind_cancellation_slot(s4.slot(), asio::use_future));
  EventRecorder watch;
  auto read = c->async_get_children(root, watch.watcher(), asio::bind_cancellation_slot(s5.slot(), asio::use_future));
  std::this_thread::sleep_for(200ms);
  CHECK(set.wait_for(0s) == std::future_status::timeout);  // they really wait
  for (auto* s : {&s1, &s2, &s3, &s4, &s5}) s->emit(asio::cancellation_type::terminal);
  CHECK(from_future(std::move(set), 2s).ec == asio::error::operation_aborted);
  CHECK(from_future(std::move(made), 2s).ec == asio::error::operation_aborted);
  CHECK(from_void_future(std::move(gone), 2s) == asio::error::operation_aborted);
  CHECK(from_future(std::move(txn), 2s).ec == asio::error::operation_aborted);
  CHECK(from_future(std::move(read), 2s).ec == asio::error::operation_aborted);

  // 2. A protected create whose first try reached the server but lost its reply: cancelled before the retry
  // could look for the node, the node is found and deleted in the background once connected again.
  proxy.set_refuse(false);
  REQUIRE(c->block_until_connected(10s));
  proxy.arm_cut_on_create("/_c_", /*forward=*/true, 300ms, /*refuse_after=*/true);
  asio::cancellation_signal s6;
  auto prot = c->async_create(root + "/p-", {.mode = CreateMode::ephemeral_sequential, .protection = true},
                              asio::bind_cancellation_slot(s6.slot(), asio::use_future));
  REQUIRE(proxy.wait_fired(10s));
  const auto prefix = protected_prefix_of(proxy.cut_path());
  REQUIRE(eventually([&] { return proxy.cut_done(); }, 5s));
  std::this_thread::sleep_for(200ms);  // the try has failed with the connection: the loop waits for it
  s6.emit(asio::cancellation_type::terminal);
  CHECK(from_future(std::move(prot), 2s).ec == asio::error::operation_aborted);
  CHECK(children_with_prefix(*admin, root, prefix).size() == 1);  // the server did apply the cut create

  // The connection comes back in the same session.
  const auto sid = c->session_id();
  proxy.set_refuse(false);
  REQUIRE(c->block_until_connected(10s));
  CHECK(c->session_id() == sid);
  CHECK(eventually([&] { return children_with_prefix(*admin, root, prefix).empty(); }, 10s));
  c->sync(root);
  std::this_thread::sleep_for(300ms);  // time for a retry that should not happen to reach the server
  const auto after = admin->get_data(root);
  CHECK(after.data == "old");
  CHECK(after.stat.version == before.version);
  CHECK(admin->exists(root + "/existing"));
  CHECK_FALSE(admin->exists(root + "/never"));
  CHECK_FALSE(admin->exists(root + "/never-in-txn"));
  // Children changed only by the protected node's create and delete.
  CHECK(admin->exists(root)->cversion == before.cversion + 2);
  admin->create(root + "/later");
  CHECK(watch.size() == 0);  // the cancelled read left no watch
  CHECK(c->pending_guaranteed_deletes() == 0);
}
