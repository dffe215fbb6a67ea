// Unit tests (no server) of PersistentNode over FakeCore: the races that must land at one exact step (a
// close while the create is in flight, a watch event that overtakes its read's reply, a delete during the
// adoption), and the node's rules for each reply (adopt, permanent failure, missing parent).
#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <string>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/nodes/persistent_node.hpp>

#include "fake_core.hpp"

namespace {

using fake::FakeCore;
using fake::Op;
using zkr::CreateMode;
using zkr::PersistentNode;

struct NodeFixture {
  std::shared_ptr<FakeCore> core = std::make_shared<FakeCore>();
  NodeFixture() = default;
  NodeFixture(const NodeFixture&) = delete;
  NodeFixture& operator=(const NodeFixture&) = delete;
  ~NodeFixture() { core->shutdown(); }

  std::unique_ptr<PersistentNode> make(CreateMode mode, bool protection, std::string path,
                                       std::string data = "d", bool parents = true) {
    return zkr::detail::access::make_unique<PersistentNode>(
        std::static_pointer_cast<zkr::detail::Core>(core), mode, protection, std::move(path), std::move(data),
        std::chrono::milliseconds(0), parents);
  }
  /// Runs `node.async_close` to its end.
  std::optional<zkr::error_code> close(PersistentNode& node) {
    std::optional<zkr::error_code> r;
    node.async_close([&](zkr::error_code e) { r = e; });
    core->run_until([&] { return r.has_value(); });
    return r;
  }
};

}  // namespace

TEST_CASE_METHOD(NodeFixture, "persistent node: a close while the create is in flight leaves no node",
                 "[nodes][pnode-unit]") {
  const auto mode = GENERATE(CreateMode::ephemeral_sequential, CreateMode::persistent_sequential,
                             CreateMode::persistent, CreateMode::ephemeral);
  const bool protection = GENERATE(false, true);
  CAPTURE(static_cast<int>(mode), protection);
  auto node = make(mode, protection, "/dir/n");
  // The close lands on the I/O thread just before the server applies the create: the reply comes after it.
  core->before_next(Op::create, [&] {
    zkr::error_code ec;
    node->close(ec);  // on the I/O thread: does not wait
    CHECK_FALSE(ec);
  });
  node->start();
  REQUIRE(core->run_until([&] { return core->faults_consumed(); }));
  core->settle();
  CHECK(core->children("/dir").empty());
  CHECK(node->state() == PersistentNode::State::closed);
  CHECK(close(*node) == zkr::error_code{});  // a second close: done
}

TEST_CASE_METHOD(NodeFixture, "persistent node: a close after a lost create reply deletes the known name",
                 "[nodes][pnode-unit]") {
  auto node = make(CreateMode::persistent, false, "/dir/n");
  node->start();
  REQUIRE(core->run_until([&] { return !node->actual_path().empty(); }));
  core->settle();
  // Deleted by someone else; the re-creation is applied but its reply is lost, and the close comes then.
  core->fail_next_applied(Op::create, zkr::zk_errc::connection_loss);
  core->after_next(Op::create, [&] {
    zkr::error_code ec;
    node->close(ec);
  });
  core->erase("/dir/n");
  core->settle();
  CHECK_FALSE(core->has("/dir/n"));
}

TEST_CASE_METHOD(NodeFixture, "persistent node: re-created with the same name and the latest data",
                 "[nodes][pnode-unit]") {
  auto node = make(CreateMode::ephemeral_sequential, true, "/dir/n-", "one");
  int created = 0;
  node->add_listener([&](const std::string&) { ++created; });
  node->start();
  REQUIRE(core->run_until([&] { return node->wait_for_initial_create(std::chrono::milliseconds(0)); }));
  const auto path = node->actual_path();
  CHECK(zkr::protected_names::is_protected_node(zkr::node_name(path)));
  std::optional<zkr::error_code> set;
  node->async_set_data("two", [&](zkr::error_code e) { set = e; });
  REQUIRE(core->run_until([&] { return set.has_value(); }));
  CHECK_FALSE(*set);
  CHECK(core->data(path) == "two");

  SECTION("deleted by someone else") { core->erase(path); }
  SECTION("session expired") { core->expire_session(); }
  SECTION("session expired, the old node still visible for a while") {
    core->expire_session(/*drop_ephemerals=*/false);
    core->settle();
    CHECK(core->stat(path)->ephemeral_owner != core->session_id());
    core->erase(path);  // the server ends the old session
  }
  REQUIRE(core->run_until([&] {
    auto s = core->stat(path);
    return s && s->ephemeral_owner == core->session_id() && created == 2;
  }));
  CHECK(node->actual_path() == path);
  CHECK(core->data(path) == "two");
  CHECK(core->children("/dir").size() == 1);
  CHECK(close(*node) == zkr::error_code{});
  CHECK(core->children("/dir").empty());
}

TEST_CASE_METHOD(NodeFixture, "persistent node: an existing node is adopted with our data",
                 "[nodes][pnode-unit]") {
  core->put("/dir/n", CreateMode::persistent, 0, "theirs");
  auto node = make(CreateMode::persistent, false, "/dir/n", "ours");
  int created = 0;
  node->add_listener([&](const std::string&) { ++created; });
  node->start();
  REQUIRE(core->run_until([&] { return node->wait_for_initial_create(std::chrono::milliseconds(0)); }));
  CHECK(core->data("/dir/n") == "ours");
  CHECK(node->actual_path() == "/dir/n");
  core->settle();
  CHECK(created == 0);  // adopted, not created
  CHECK(close(*node) == zkr::error_code{});
  CHECK_FALSE(core->has("/dir/n"));  // Curator's close deletes an adopted node too
}

TEST_CASE_METHOD(NodeFixture, "persistent node: set_data before start is written by the first create",
                 "[nodes][pnode-unit]") {
  auto node = make(CreateMode::ephemeral, false, "/dir/n", "old");
  std::optional<zkr::error_code> set;
  node->async_set_data("new", [&](zkr::error_code e) { set = e; });
  REQUIRE(core->run_until([&] { return set.has_value(); }));
  CHECK_FALSE(*set);
  node->start();
  REQUIRE(core->run_until([&] { return core->has("/dir/n"); }));
  CHECK(core->data("/dir/n") == "new");
  CHECK(core->count(Op::set_data) == 0);
}

TEST_CASE_METHOD(NodeFixture, "persistent node: a watch event that overtakes its read's reply is not lost",
                 "[nodes][pnode-unit]") {
  auto node = make(CreateMode::persistent, false, "/dir/n");
  // The read back after the first create: the node is deleted right after it is applied, before its reply.
  core->after_next(Op::exists, [&] { core->erase("/dir/n"); });
  node->start();
  REQUIRE(core->run_until([&] { return core->count(Op::create) == 2 && core->has("/dir/n"); }));
  core->settle();
  CHECK(core->has("/dir/n"));
  CHECK(close(*node) == zkr::error_code{});
}

TEST_CASE_METHOD(NodeFixture, "persistent node: a permanent failure stops it with its error",
                 "[nodes][pnode-unit]") {
  auto node = make(CreateMode::ephemeral, false, "/dir/n");
  core->fail_next(Op::create, zkr::zk_errc::no_auth);
  node->start();
  std::optional<zkr::error_code> waited;
  node->async_wait_for_initial_create([&](zkr::error_code e) { waited = e; });
  REQUIRE(core->run_until([&] { return waited.has_value(); }));
  CHECK(*waited == zkr::zk_errc::no_auth);
  CHECK(node->failure() == zkr::zk_errc::no_auth);
  CHECK_FALSE(node->wait_for_initial_create(std::chrono::milliseconds(0)));
  core->settle();
  CHECK(core->count(Op::create) == 1);
}

TEST_CASE_METHOD(NodeFixture, "persistent node: without parent creation a missing parent is waited for",
                 "[nodes][pnode-unit]") {
  auto node = make(CreateMode::ephemeral, false, "/dir/n", "d", /*parents=*/false);
  node->start();
  core->settle();
  CHECK_FALSE(core->has("/dir"));
  core->put("/dir");
  REQUIRE(core->run_until([&] { return core->has("/dir/n"); }));
  core->erase("/dir/n");
  core->erase("/dir");
  core->settle();
  CHECK_FALSE(core->has("/dir"));  // never made by the node
  CHECK(close(*node) == zkr::error_code{});
}

TEST_CASE("persistent node: bad input is a typed error", "[nodes][pnode-unit]") {
  auto core = std::make_shared<FakeCore>();
  auto make = [&](CreateMode m, std::string path, std::chrono::milliseconds ttl) {
    return zkr::detail::access::make_unique<PersistentNode>(std::static_pointer_cast<zkr::detail::Core>(core),
                                                            m, false, std::move(path), "", ttl, true);
  };
  auto code = [&](auto&& f) -> zkr::error_code {
    try {
      f();
    } catch (const zkr::Error& e) {
      return e.code();
    }
    return {};
  };
  using ms = std::chrono::milliseconds;
  CHECK(code([&] { make(CreateMode::persistent, "no-slash", ms(0)); }) == zkr::client_errc::invalid_path);
  CHECK(code([&] { make(CreateMode::persistent, "/a//b", ms(0)); }) == zkr::client_errc::invalid_path);
  CHECK(code([&] { make(CreateMode::persistent_with_ttl, "/a", ms(0)); }) ==
        zkr::client_errc::invalid_argument);
  CHECK(code([&] { make(CreateMode::persistent_with_ttl, "/a", ms(-5)); }) ==
        zkr::client_errc::invalid_argument);
  CHECK(code([&] { make(CreateMode::persistent, "/a", ms(100)); }) == zkr::client_errc::invalid_argument);
  CHECK(code([&] { make(CreateMode::persistent_sequential_with_ttl, "/a/", ms(100)); }) == zkr::error_code{});
  core->shutdown();
}

namespace {

/// One run of the node's life over `f`: made, its data changed, closed. What it reached.
struct NodeRun {
  bool made = false;
  bool written = false;
  std::optional<zkr::error_code> closed;
};
NodeRun node_life(NodeFixture& f) {
  NodeRun r;
  auto node = f.make(CreateMode::ephemeral_sequential, true, "/dir/n-", "one");
  node->start();
  r.made = f.core->run_until([&] { return !node->actual_path().empty(); });
  node->async_set_data("two", [](zkr::error_code) {});
  r.written = f.core->run_until([&] {
    auto p = node->actual_path();
    return !p.empty() && f.core->data(p) == "two";
  });
  r.closed = f.close(*node);
  f.core->settle();
  return r;
}

}  // namespace

TEST_CASE("persistent node: a connection loss at any step still ends with the node and its data, then none",
          "[nodes][pnode-unit]") {
  std::vector<fake::FaultStep> steps;
  {
    NodeFixture clean;
    auto r = node_life(clean);
    REQUIRE(r.written);
    steps = fake::fault_steps(*clean.core);
  }
  REQUIRE(steps.size() >= 4);  // create, exists, set_data, remove
  for (const auto& step : steps) {
    INFO("failing " << fake::to_string(step) << " (of " << steps.size() << " steps)");
    NodeFixture f;
    fake::fail(*f.core, step, zkr::zk_errc::connection_loss);
    auto r = node_life(f);
    INFO(f.core->describe_log());
    CHECK(f.core->faults_consumed());
    CHECK(r.made);
    CHECK(r.written);  // a failed write is written again once the node is read back
    CHECK(r.closed == zkr::error_code{});
    CHECK(f.core->children("/dir").empty());
  }
}
