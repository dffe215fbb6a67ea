// Integration tests of CuratorFramework's namespace against a real ZooKeeper server: applied to every path
// and removed from every result, its root a container, an invalid namespace refused at start.

#include "client_support.hpp"
#include "recorders.hpp"

using namespace zkr;
using namespace zkr::itest;

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

  auto m = c->multi(
      {Op::create("/m"), Op::create("/m/s-", "", CreateMode::persistent_sequential), Op::check("/a", 1)});
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
  auto c2 = started(
      test_builder(shared_server().connect_string()).namespace_name(ns2).dont_use_container_parents());
  c2->create("/x");
  c2->remove("/x");
  std::this_thread::sleep_for(600ms);
  CHECK(plain->exists("/" + ns2));
}

TEST_CASE("namespace: an invalid namespace fails start", "[framework][namespace]") {
  for (const std::string& bad :
       std::vector<std::string>{"a/", "a//b", ".", "a/../b", std::string("a\0b", 3)}) {
    INFO("namespace: " << bad);
    auto c = test_builder(shared_server().connect_string()).namespace_name(bad).build();
    error_code ec;
    c->start(ec);
    CHECK(ec == client_errc::invalid_path);
  }
  // A nested namespace is valid.
  const auto ns = unique_path("nested").substr(1) + "/inner";
  auto c = started(test_builder(shared_server().connect_string()).namespace_name(ns));
  CHECK(c->create("/x").path == "/x");
  auto plain = connect_shared();
  CHECK(plain->exists("/" + ns + "/x"));
}
