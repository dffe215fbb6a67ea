// Integration tests of CuratorFramework against a real ZooKeeper server: every operation through each of its
// twins (throwing, error_code, callback, use_future, use_awaitable), watches, containers and TTL nodes.
// Elsewhere: namespaces (framework_namespace_test.cpp), ACLs and authentication (framework_acl_test.cpp), bad
// input (framework_input_test.cpp), the client's life cycle and cancellation (framework_lifecycle_test.cpp).

#include <set>

#include "client_support.hpp"
#include "completion_styles.hpp"
#include "recorders.hpp"
#include "twins.hpp"

using namespace zkr;
using namespace zkr::itest;

// ---------------------------------------------------------------------------------------------------------
// create

TEST_CASE("create: every mode through every twin", "[framework][create]") {
  auto c = connect_shared();
  const auto root = unique_path("create");
  c->create(root);
  // The server shows containers and TTL nodes as plain persistent ones (ephemeralOwner 0): they are told
  // apart by behaviour, after the loop.
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
    CHECK(op_create(*c, t, base + "/ttl0", {.mode = CreateMode::persistent_with_ttl}).ec ==
          client_errc::invalid_argument);

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
  CHECK(c->create(root + "/x-", {.mode = zkr::CreateMode::persistent_sequential}).path ==
        root + "/x-0000000003");
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
    if (ch == '.')
      ++dots;
    else if (ch < '0' || ch > '9')
      digits_only = false;
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
      auto r = op_create(*c, t, leaf,
                         {.mode = CreateMode::ephemeral, .creating_parents = true, .data = std::string("d")});
      REQUIRE_FALSE(r.ec);
      CHECK(r.value.path == leaf);
      CHECK(r.value.stat.ephemeral_owner == c->session_id());
      for (auto p : {root + "/" + twin_name(t), root + "/" + twin_name(t) + "/x",
                     root + "/" + twin_name(t) + "/x/y"}) {
        auto st = c->exists(p);
        REQUIRE(st);
        CHECK(st->ephemeral_owner == 0);
      }
    }
    // Parents that already exist are fine, and so is a sequential leaf.
    auto r = c->create(root + "/throwing/x/y/s-",
                       {.mode = CreateMode::persistent_sequential, .creating_parents = true});
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

TEST_CASE("delete: versions, quietly, deleting_children, guaranteed, through every twin",
          "[framework][delete]") {
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
  CHECK(thrown_by([&] { c->remove(root + "/v", {.version = 5, .deleting_children = true}); }) ==
        zk_errc::bad_version);
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

    auto ok = op_multi(
        *c, t,
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
    CHECK(op_multi(*c, t, {Op::create(p + "/cont", "", CreateMode::container)}).ec ==
          client_errc::invalid_argument);
    CHECK(op_multi(*c, t, {Op::create(p + "/ttl", "", CreateMode::persistent_with_ttl)}).ec ==
          client_errc::invalid_argument);
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
