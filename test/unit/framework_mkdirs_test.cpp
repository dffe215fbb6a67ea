// Unit tests (no server) of the framework's batched mkdirs (namespace_acl.cpp, `Core::make_dirs`) and of its
// sweep of protected nodes as the recipes reach it (`Core::sweep_protected`, protected_create.cpp), over a
// fake session: one round of exists for every directory and ancestor, then one round of creates per depth,
// with a fault at each request in turn, a racing creator and a stop between the rounds.

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>
#include <zkr/framework/paths.hpp>

#include "fake_client.hpp"

namespace {

using namespace std::chrono_literals;
using fake::Call;
using fake::FakeClient;
namespace zk = fake::zk;
using zkr::zk_errc;

/// Three paths sharing ancestors; "/a" and "/a/b/d" exist.
const std::vector<std::string> paths = {"/a/b/c", "/a/b/d", "/a/e"};
/// The exists round: every directory and ancestor once, by depth, then by name.
const std::vector<std::string> probed = {"/a", "/a/b", "/a/e", "/a/b/c", "/a/b/d"};

zkr::ClientConfig containers(bool on) {
  zkr::ClientConfig cfg;
  cfg.use_container_parents = on;
  return cfg;
}

/// Takes the next `n` requests, all sent before any is answered.
std::vector<Call> round(FakeClient& c, std::size_t n) {
  std::vector<Call> calls;
  for (std::size_t i = 0; i < n; ++i) calls.push_back(c.next());
  return calls;
}

}  // namespace

TEST_CASE("framework make_dirs: one round of exists for all, then one round of creates per depth",
          "[framework][mkdirs]") {
  const bool use_containers = GENERATE(true, false);
  FakeClient c(containers(use_containers));
  c.connect();
  auto out = c.make_dirs(paths);
  auto exists = round(c, probed.size());
  for (std::size_t i = 0; i < probed.size(); ++i) {
    REQUIRE(exists[i].is<zk::Exists>());
    CHECK(exists[i].path() == probed[i]);
  }
  c.sync_io();
  CHECK(c.session().sent() == probed.size());  // nothing created before every exists has answered
  for (const auto& e : exists)
    REQUIRE(c.session().reply(e, e.path() == "/a" || e.path() == "/a/b/d" ? zk_errc::ok : zk_errc::no_node));
  // Depth 2 at once; "/a/e" was made by a racing creator meanwhile: node-exists is no failure.
  auto depth2 = round(c, 2);
  CHECK(depth2[0].path() == "/a/b");
  CHECK(depth2[1].path() == "/a/e");
  for (const auto& d : depth2) {
    REQUIRE(d.is<zk::Create>());
    CHECK(d.as<zk::Create>()->mode ==
          (use_containers ? zkr::CreateMode::container : zkr::CreateMode::persistent));
    CHECK(d.as<zk::Create>()->acl == zkr::open_acl_unsafe());
  }
  c.sync_io();
  CHECK(c.session().sent() == probed.size() + 2);  // a child waits for its parent
  REQUIRE(c.session().reply(depth2[0], zk_errc::ok));
  REQUIRE(c.session().reply(depth2[1], zk_errc::node_exists));
  REQUIRE(c.session().reply(c.expect<zk::Create>("/a/b/c"), zk_errc::ok));
  REQUIRE(out->wait());
  CHECK_FALSE(out->ec());
  CHECK(c.session().unanswered() == 0);
  CHECK(c.session().sent() == probed.size() + 3);
}

TEST_CASE("framework make_dirs: a fault at each request is retried, or is the error", "[framework][mkdirs]") {
  const zk_errc code = GENERATE(zk_errc::connection_loss, zk_errc::no_auth);
  const std::size_t fault_at = GENERATE(range(0, 8));  // 5 exists, then 3 creates
  FakeClient c;
  c.connect();
  auto out = c.make_dirs(paths);
  // A tree the test keeps: the fault's request is not applied.
  std::set<std::string> tree = {"/a", "/a/b/d"};
  std::size_t seen = 0;
  std::map<std::string, int> creates;
  for (int guard = 0; guard < 100; ++guard) {
    c.sync_io();
    if (out->done()) break;
    auto call = c.next();
    const auto path = call.path();
    zk_errc rc = zk_errc::ok;
    if (seen++ == fault_at)
      rc = code;
    else if (call.is<zk::Exists>())
      rc = tree.count(path) ? zk_errc::ok : zk_errc::no_node;
    else {
      REQUIRE(call.is<zk::Create>());
      REQUIRE(tree.count(zkr::parent_path(path)));  // parents first
      ++creates[path];
      rc = tree.insert(path).second ? zk_errc::ok : zk_errc::node_exists;
    }
    REQUIRE(c.session().reply(call, rc));
  }
  REQUIRE(out->wait());
  if (code == zk_errc::no_auth) {
    CHECK(out->ec() == zk_errc::no_auth);
  } else {
    CHECK_FALSE(out->ec());
    for (const auto& p : probed) CHECK(tree.count(p));
    for (const auto& [p, n] : creates) CHECK(n == 1);  // what exists is not made again
  }
  c.sync_io();
  CHECK(c.session().unanswered() == 0);
}

TEST_CASE("framework make_dirs: a stop during a round sends no further round", "[framework][mkdirs]") {
  FakeClient c;
  c.connect();
  auto stop = std::make_shared<zkr::detail::StopSignal>();
  auto out = c.make_dirs(paths, {.stop = stop});
  auto exists = round(c, probed.size());
  c.stop(stop);
  for (const auto& e : exists)
    REQUIRE(c.session().reply(e, e.path() == "/a" ? zk_errc::ok : zk_errc::no_node));
  REQUIRE(out->wait());
  CHECK(out->ec() == boost::asio::error::operation_aborted);
  c.sync_io();
  CHECK(c.session().sent() == probed.size());
}

TEST_CASE("framework make_dirs: nothing to make answers after one round, and a bad path is refused",
          "[framework][mkdirs]") {
  FakeClient c;
  c.connect();
  auto out = c.make_dirs({"/x/y"});
  REQUIRE(c.session().reply(c.expect<zk::Exists>("/x"), zk_errc::ok));
  REQUIRE(c.session().reply(c.expect<zk::Exists>("/x/y"), zk_errc::ok));
  REQUIRE(out->wait());
  CHECK_FALSE(out->ec());
  auto bad = c.make_dirs({"/ok", "no-slash"});
  REQUIRE(bad->wait());
  CHECK(bad->ec() == zkr::client_errc::invalid_path);
  c.sync_io();
  CHECK(c.session().sent() == 2);
}

TEST_CASE("framework make_dirs: in a namespace, under its root", "[framework][mkdirs][namespace]") {
  zkr::ClientConfig cfg;
  cfg.namespace_name = "ns";
  FakeClient c(std::move(cfg));
  c.connect();
  auto out = c.make_dirs({"/m/a"});
  REQUIRE(c.session().reply(c.expect<zk::Exists>("/ns"), zk_errc::ok));  // the root, made on first use
  auto exists = round(c, 3);
  CHECK(exists[0].path() == "/ns");
  CHECK(exists[1].path() == "/ns/m");
  CHECK(exists[2].path() == "/ns/m/a");
  for (const auto& e : exists)
    REQUIRE(c.session().reply(e, e.path() == "/ns" ? zk_errc::ok : zk_errc::no_node));
  REQUIRE(c.session().reply(c.expect<zk::Create>("/ns/m"), zk_errc::ok));
  REQUIRE(c.session().reply(c.expect<zk::Create>("/ns/m/a"), zk_errc::ok));
  REQUIRE(out->wait());
  CHECK_FALSE(out->ec());
}

// ---------------------------------------------------------------------------------------------------------
// The sweep, as the recipes reach it

TEST_CASE("framework sweep_protected: the parent's nodes with the prefix are deleted in the background",
          "[framework][protected]") {
  const bool lose = GENERATE(false, true);  // the listing lost once: listed again after a pause
  FakeClient c;
  c.connect();
  const auto prefix = zkr::protected_names::prefix_for(zkr::protected_names::new_protected_id());
  const auto other = zkr::protected_names::prefix_for(zkr::protected_names::new_protected_id());
  c.io([&c, prefix] { c.core().sweep_protected("/p", prefix); });
  if (lose) REQUIRE(c.session().reply(c.expect<zk::GetChildren>("/p"), zk_errc::connection_loss));
  REQUIRE(c.session().reply(c.expect<zk::GetChildren>("/p"),
                            fake::with_children({prefix + "lock-0000000001", other + "lock-0000000002",
                                                 "lock-0000000003", prefix + "zkr-multi-stamp"})));
  auto d1 = c.expect<zk::Delete>("/p/" + prefix + "lock-0000000001");
  auto d2 = c.expect<zk::Delete>("/p/" + prefix + "zkr-multi-stamp");
  c.sync_io();
  CHECK(c.core().pending_deletes() == 2);
  REQUIRE(c.session().reply(d1, zk_errc::ok));
  REQUIRE(c.session().reply(d2, zk_errc::no_node));
  c.sync_io();
  CHECK(c.core().pending_deletes() == 0);
  CHECK(c.session().unanswered() == 0);
  // An empty prefix would match every child: it does nothing.
  const auto sent = c.session().sent();
  c.io([&c] { c.core().sweep_protected("/p", ""); });
  c.sync_io();
  CHECK(c.session().sent() == sent);
}
