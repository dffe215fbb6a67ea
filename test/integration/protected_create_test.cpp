// Integration tests of protected create (Curator's withProtection): the `_c_<uuid>-` names, adoption of our
// own node after a connection loss between request and reply, no adoption of an ephemeral node of an earlier
// session, the background clean-up when the retries give up, and the multi-lock's transaction of protected
// creates retried after its reply was lost.
//
// The connection loss "after the server applied the create, before the reply" is made exactly with FaultProxy
// (fault_proxy.hpp): the client talks to the server through it, and the proxy forwards the create request,
// swallows the server's reply and cuts the connection.

#include <algorithm>
#include <set>
#include <zkr/zkrecipes.hpp>

#include "client_support.hpp"
#include "completion_styles.hpp"
#include "fault_proxy.hpp"
#include "recorders.hpp"
#include "twins.hpp"

using namespace zkr;
using namespace zkr::itest;

namespace {

/// Whether `leaf` is "_c_" + a lower-case random (v4) UUID + "-" + rest, as Java's UUID.randomUUID() prints
/// it; sets `rest`. (No std::regex: GCC 12 warns inside it under the sanitizers.)
bool split_protected_name(const std::string& leaf, std::string& rest) {
  if (leaf.size() < 40 || leaf.compare(0, 3, "_c_") != 0 || leaf[39] != '-') return false;
  const std::string uuid = leaf.substr(3, 36);
  for (std::size_t i = 0; i < uuid.size(); ++i) {
    const char ch = uuid[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (ch != '-') return false;
    } else if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) {
      return false;
    }
  }
  if (uuid[14] != '4') return false;                                          // version 4
  if (std::string("89ab").find(uuid[19]) == std::string::npos) return false;  // IETF variant
  rest = leaf.substr(40);
  return true;
}

/// `n` lock directories `<base>/l0..`, made by `admin`.
std::vector<std::string> lock_dirs(auto& admin, const std::string& base, int n) {
  std::vector<std::string> paths;
  for (int i = 0; i < n; ++i) {
    paths.push_back(base + "/l" + std::to_string(i));
    admin.create(paths.back(), {.creating_parents = true});
  }
  return paths;
}

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
}

struct ModeCase {
  CreateMode mode;
  const char* name;
};
const ModeCase modes[] = {{CreateMode::persistent, "persistent"},
                          {CreateMode::ephemeral, "ephemeral"},
                          {CreateMode::persistent_sequential, "persistent_sequential"},
                          {CreateMode::ephemeral_sequential, "ephemeral_sequential"}};

}  // namespace

TEST_CASE("protected create: names carry _c_<uuid>-", "[framework][protected]") {
  auto c = connect_shared();
  const auto root = unique_path("prot");
  c->create(root);
  std::set<std::string> prefixes;
  for (auto [mode, name] : modes) {
    INFO("mode: " << name);
    for (Twin t : all_twins) {
      INFO("twin: " << twin_name(t));
      auto r = op_create(*c, t, root + "/node-", {.mode = mode, .protection = true});
      REQUIRE_FALSE(r.ec);
      CHECK(parent_path(r.value.path) == root);
      std::string rest;
      const auto leaf = node_name(r.value.path);
      REQUIRE(split_protected_name(leaf, rest));
      CHECK(protected_names::is_protected_node(leaf));
      if (is_sequential(mode)) {
        CHECK(rest.size() == 15);  // "node-" + 10 digits
        CHECK(rest.rfind("node-", 0) == 0);
        CHECK(all_digits(rest.substr(5)));
      } else {
        CHECK(rest == "node-");
      }
      CHECK(r.value.stat.ephemeral_owner == (is_ephemeral(mode) ? c->session_id() : 0));
      prefixes.insert(protected_prefix_of(r.value.path));
    }
  }
  CHECK(prefixes.size() == std::size(modes) * std::size(all_twins));  // a new UUID for every create

  // A sequential protected create of "parent/" gives "_c_<uuid>-<sequence>".
  auto r = c->create(root + "/", {.mode = CreateMode::ephemeral_sequential, .protection = true});
  std::string rest;
  CHECK(split_protected_name(node_name(r.path), rest));
  CHECK(rest.size() == 10);
  CHECK(all_digits(rest));
  // With creating_parents, only the last segment is protected.
  r = c->create(root + "/a/b/leaf", {.creating_parents = true, .protection = true});
  CHECK(parent_path(r.path) == root + "/a/b");
  CHECK(protected_names::normalize(node_name(r.path)) == "leaf");
}

TEST_CASE("protected create: our node is adopted after a connection loss between request and reply",
          "[framework][protected]") {
  FaultProxy proxy(shared_server().port());
  StateRecorder states;
  auto c = test_builder(proxy.connect_string()).session_timeout(10s).connection_timeout(5s).build();
  c->add_connection_state_listener([&](ConnectionState s) { states.push(s); });
  c->start();
  REQUIRE(c->block_until_connected(10s));
  auto plain = connect_shared();
  const auto root = unique_path("adopt");
  c->create(root);
  const auto sid = c->session_id();

  for (auto [mode, name] : modes) {
    for (Twin t : {Twin::error_code, Twin::future}) {
      INFO("mode: " << name << " twin: " << twin_name(t));
      const auto before_states = states.size();
      proxy.arm_cut_on_create("/_c_", /*forward=*/true, 300ms);
      auto r = op_create(*c, t, root + "/lock-", {.mode = mode, .protection = true});
      REQUIRE(proxy.wait_fired(0ms));
      REQUIRE_FALSE(r.ec);
      // The connection really was lost, and the session kept.
      CHECK(states.wait_for(ConnectionState::suspended, 1s, before_states));
      CHECK(states.wait_for(ConnectionState::reconnected, 5s, before_states));
      CHECK(c->session_id() == sid);
      // The server applied the request we cut: the node we got is that one, not a second one.
      const auto cut = proxy.cut_path();
      if (is_sequential(mode))
        CHECK(r.value.path.rfind(cut, 0) ==
              0);  // the request named the prefix; the server added the sequence
      else
        CHECK(r.value.path == cut);
      const auto prefix = protected_prefix_of(r.value.path);
      const auto same = children_with_prefix(*plain, root, prefix);
      REQUIRE(same.size() == 1);
      CHECK(root + "/" + same[0] == r.value.path);
      const auto st = plain->exists(r.value.path);
      REQUIRE(st);
      CHECK(st->czxid == r.value.stat.czxid);
      CHECK(st->ephemeral_owner == (is_ephemeral(mode) ? sid : 0));
    }
  }
  CHECK(c->pending_guaranteed_deletes() == 0);
}

TEST_CASE("protected create: a request lost before the server saw it is simply retried",
          "[framework][protected]") {
  FaultProxy proxy(shared_server().port());
  auto c = started(test_builder(proxy.connect_string()).session_timeout(10s).connection_timeout(5s));
  auto plain = connect_shared();
  const auto root = unique_path("retry");
  c->create(root);
  for (auto [mode, name] : modes) {
    INFO("mode: " << name);
    proxy.arm_cut_on_create("/_c_", /*forward=*/false, 0ms);
    auto r = c->create(root + "/n-", {.mode = mode, .protection = true});
    REQUIRE(proxy.wait_fired(0ms));
    CHECK(children_with_prefix(*plain, root, protected_prefix_of(r.path)).size() == 1);
    CHECK(plain->exists(r.path));
  }
}

TEST_CASE(
    "protected create: when the retries give up, the node left on the server is deleted in the background",
    "[framework][protected]") {
  FaultProxy proxy(shared_server().port());
  auto c = started(test_builder(proxy.connect_string())
                       .retry_policy(std::make_shared<RetryNTimes>(0, Millis(0)))
                       .session_timeout(10s)
                       .connection_timeout(5s));
  auto plain = connect_shared();
  const auto root = unique_path("giveup");
  c->create(root);
  for (auto [mode, name] : modes) {
    INFO("mode: " << name);
    proxy.arm_cut_on_create("/_c_", /*forward=*/true, 300ms);
    error_code ec;
    c->create(root + "/n-", {.mode = mode, .protection = true}, ec);
    REQUIRE(proxy.wait_fired(0ms));
    CHECK(ec == zk_errc::connection_loss);
    const auto prefix = protected_prefix_of(proxy.cut_path());
    // The server did apply the create; the client finds and deletes the node once it is connected again.
    CHECK(eventually([&] { return children_with_prefix(*plain, root, prefix).empty(); }, 10s));
    CHECK(eventually([&] { return c->pending_guaranteed_deletes() == 0; }, 5s));
  }
  // The client is healthy afterwards.
  CHECK(c->create(root + "/after", {.protection = true}).path.find("/_c_") != std::string::npos);
}

TEST_CASE("protected create: an ephemeral node of an earlier session is not adopted",
          "[framework][protected]") {
  // The cut create reaches the server in session S1. The client may not reconnect until it declares the
  // session LOST (simulated expiry at 30 % of the session timeout) and opens S2, while the server still keeps
  // S1 (and its node) alive. The retry then finds S1's node: it must delete it and create its own
  // (CURATOR-498).
  for (auto [mode, name] : {ModeCase{CreateMode::ephemeral, "ephemeral"},
                            ModeCase{CreateMode::ephemeral_sequential, "ephemeral_sequential"}}) {
    INFO("mode: " << name);
    FaultProxy proxy(shared_server().port());
    StateRecorder states;
    auto c = test_builder(proxy.connect_string())
                 .retry_policy(std::make_shared<RetryNTimes>(3, Millis(100)))
                 .session_timeout(8s)
                 .connection_timeout(10s)
                 .simulated_session_expiration_percent(30)
                 .build();
    c->add_connection_state_listener([&](ConnectionState s) { states.push(s); });
    c->start();
    REQUIRE(c->block_until_connected(10s));
    auto plain = connect_shared();
    const auto root = unique_path("earlier");
    c->create(root);
    const auto s1 = c->session_id();

    proxy.arm_cut_on_create("/_c_", /*forward=*/true, 300ms, /*refuse_after=*/true);
    auto fut = c->async_create(root + "/n-", {.mode = mode, .protection = true}, asio::use_future);
    REQUIRE(proxy.wait_fired(5s));
    REQUIRE(eventually([&] { return proxy.cut_done(); }, 5s));
    // S1's node is on the server.
    const auto prefix = protected_prefix_of(proxy.cut_path());
    auto old_names = children_with_prefix(*plain, root, prefix);
    REQUIRE(old_names.size() == 1);
    const auto old_stat = plain->exists(root + "/" + old_names[0]);
    REQUIRE(old_stat);
    CHECK(old_stat->ephemeral_owner == s1);

    REQUIRE(states.wait_for(ConnectionState::lost, 10s));
    proxy.set_refuse(false);
    auto r = from_future(std::move(fut), 15s);
    REQUIRE_FALSE(r.ec);
    const auto s2 = c->session_id();
    CHECK(s2 != s1);
    CHECK(r.value.stat.ephemeral_owner == s2);
    CHECK(r.value.stat.czxid > old_stat->czxid);
    // Exactly one node with our prefix: ours, in S2.
    CHECK(eventually([&] { return children_with_prefix(*plain, root, prefix).size() == 1; }, 5s));
    const auto now = children_with_prefix(*plain, root, prefix);
    REQUIRE(now.size() == 1);
    CHECK(root + "/" + now[0] == r.value.path);
    auto st = plain->exists(r.value.path);
    REQUIRE(st);
    CHECK(st->ephemeral_owner == s2);
    CHECK(eventually([&] { return c->pending_guaranteed_deletes() == 0; }, 5s));
  }
}

TEST_CASE("protected create: a persistent node of an earlier session is adopted", "[framework][protected]") {
  // Curator checks the session only for ephemeral nodes: the UUID alone identifies a persistent one as ours.
  FaultProxy proxy(shared_server().port());
  StateRecorder states;
  auto c = test_builder(proxy.connect_string())
               .session_timeout(8s)
               .connection_timeout(10s)
               .simulated_session_expiration_percent(30)
               .build();
  c->add_connection_state_listener([&](ConnectionState s) { states.push(s); });
  c->start();
  REQUIRE(c->block_until_connected(10s));
  auto plain = connect_shared();
  const auto root = unique_path("earlierp");
  c->create(root);
  const auto s1 = c->session_id();
  proxy.arm_cut_on_create("/_c_", /*forward=*/true, 300ms, /*refuse_after=*/true);
  auto fut = c->async_create(root + "/n", {.protection = true}, asio::use_future);
  REQUIRE(proxy.wait_fired(5s));
  REQUIRE(states.wait_for(ConnectionState::lost, 10s));
  proxy.set_refuse(false);
  auto r = from_future(std::move(fut), 15s);
  REQUIRE_FALSE(r.ec);
  CHECK(c->session_id() != s1);
  CHECK(r.value.path == proxy.cut_path());
  CHECK(children_with_prefix(*plain, root, protected_prefix_of(r.value.path)).size() == 1);
}

TEST_CASE("protected create: adoption with a paused server (no proxy)", "[framework][protected][pause]") {
  // The server is paused (SIGSTOP) before the request is sent: the request waits in the server's socket
  // buffer. The client gives the connection up after 2/3 of the session timeout (the create fails with
  // operation_timeout, which is retried); the server, resumed, reads and applies the request of the dead
  // connection (it does so reliably here), and the client's retry in the same session must find that node:
  // without adoption there would be two ephemeral-sequential nodes with our prefix.
  zkr::testing::TestingServer server;
  auto c = started(test_builder(server.connect_string())
                       .retry_policy(std::make_shared<RetryNTimes>(5, Millis(200)))
                       .session_timeout(6s)
                       .connection_timeout(10s));
  const auto sid = c->session_id();
  const auto root = unique_path("paused");
  c->create(root);
  StateRecorder states;
  c->add_connection_state_listener([&](ConnectionState s) { states.push(s); });
  server.pause();
  auto fut = c->async_create(root + "/n-", {.mode = CreateMode::ephemeral_sequential, .protection = true},
                             asio::use_future);
  REQUIRE(states.wait_for(ConnectionState::suspended, 10s));
  server.resume();
  auto r = from_future(std::move(fut), 20s);
  REQUIRE_FALSE(r.ec);
  CHECK(c->session_id() == sid);
  auto plain = started(test_builder(server.connect_string()));
  CHECK(children_with_prefix(*plain, root, protected_prefix_of(r.value.path)).size() == 1);
  CHECK(plain->get_children(root).size() == 1);
}

TEST_CASE("protected: a multi-lock transaction whose reply is lost leaves no node behind",
          "[protected][multi]") {
  // The transaction reaches the server and commits, its reply is lost with the connection, and the core
  // retries it on the same session. The first try's nodes (same protected names, lower sequence numbers) must
  // not stay queued ahead of the second try's: that would be a wait on ourselves until the session ends.
  FaultProxy proxy(shared_server().port());
  auto c = started(test_builder(proxy.connect_string()).session_timeout(10s).connection_timeout(5s));
  auto admin = connect_shared();
  const auto base = unique_path("multi-lost-reply");
  const auto paths = lock_dirs(*admin, base, 3);
  InterProcessMultiLock multi(*c, paths);
  proxy.arm_cut_on_create(paths[0] + "/_c_", /*forward=*/true, 300ms);
  REQUIRE(multi.acquire(20s));
  CHECK(proxy.wait_fired(0ms));
  for (const auto& p : paths) {
    INFO(p);
    CHECK(eventually([&] { return admin->get_children(p).size() == 1; }, 10s));  // our node only
  }
  // Another client takes the locks once we let go.
  auto other = connect_shared();
  InterProcessMultiLock theirs(*other, paths);
  CHECK_FALSE(theirs.acquire(300ms));
  multi.release();
  CHECK(theirs.acquire(10s));
  theirs.release();
}

TEST_CASE(
    "protected: a multi-lock transaction committed twice while a lock is taken leaves no orphan in later "
    "locks",
    "[protected][multi]") {
  // As above, but l1 is held by another client: the listing stops there. The first try's node in l2 (after
  // the lock we wait for) must go too; left alone, we would later queue behind it and never get l2.
  FaultProxy proxy(shared_server().port());
  auto c = started(test_builder(proxy.connect_string()).session_timeout(10s).connection_timeout(5s));
  auto admin = connect_shared();
  const auto base = unique_path("multi-lost-reply-taken");
  const auto paths = lock_dirs(*admin, base, 3);
  auto other = connect_shared();
  InterProcessMutex holder(*other, paths[1]);
  holder.acquire();
  InterProcessMultiLock multi(*c, paths);
  proxy.arm_cut_on_create(paths[0] + "/_c_", /*forward=*/true, 300ms);
  auto f = multi.async_try_acquire_for(30s, asio::use_future);
  CHECK(proxy.wait_fired(10s));
  // Waiting in l1: one node of ours in l0 and in l1, none in l2.
  CHECK(eventually([&] { return admin->get_children(paths[0]).size() == 1; }, 10s));
  CHECK(eventually([&] { return admin->get_children(paths[1]).size() == 2; }, 10s));
  CHECK(eventually([&] { return admin->get_children(paths[2]).empty(); }, 10s));
  holder.release();
  REQUIRE(f.wait_for(20s) == std::future_status::ready);
  MultiLease lease = f.get();
  REQUIRE(lease.valid());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    INFO(paths[i]);
    CHECK(admin->get_children(paths[i]) == std::vector<std::string>{node_name(lease.node_paths()[i])});
  }
  lease.release();
}
