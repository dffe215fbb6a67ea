// Integration tests of ACLs and authentication in CuratorFramework against a real ZooKeeper server: get_acl
// and set_acl through each twin, with digest authentication, ACL versions, the server's refusals, a
// namespace, and the ACL a client's ACL provider gives a lock node; an ACL provider's paths and enforcement;
// digest authentication, and a scheme the server rejects.

#include <algorithm>
#include <ctime>
#include <zkr/recipes/inter_process_mutex.hpp>

#include "client_support.hpp"
#include "completion_styles.hpp"
#include "recorders.hpp"
#include "twins.hpp"

using namespace zkr;
using namespace zkr::itest;

namespace {

/// The ACL entry the server stores for `auth:` (every authenticated identity of the session): the digest id.
bool is_digest_of(const Acl& a, const std::string& user) {
  return a.id.scheme == "digest" && a.id.id.rfind(user + ":", 0) == 0 && a.id.id.size() > user.size() + 1;
}

}  // namespace

TEST_CASE("get_acl and set_acl: digest ACLs, versions and refusals through every twin", "[framework][acl]") {
  const auto root = unique_path("acl");
  const auto cs = shared_server().connect_string();
  auto alice = started(test_builder(cs).authorization("digest", "alice:secret"));
  auto anon = connect_shared();
  alice->create(root);
  for (Twin t : all_twins) {
    INFO("twin: " << twin_name(t));
    const auto p = root + "/" + twin_name(t);
    alice->create(p, {.data = std::string("d")});

    auto a = op_get_acl(*alice, t, p);
    REQUIRE_FALSE(a.ec);
    CHECK(a.value.acl == open_acl_unsafe());
    CHECK(a.value.stat.aversion == 0);
    CHECK(a.value.stat.czxid == alice->exists(p)->czxid);

    // `auth:` becomes the digest id of the authenticated user; the ACL's version is the Stat's aversion.
    auto s = op_set_acl(*alice, t, p, creator_all_acl(), 0);
    REQUIRE_FALSE(s.ec);
    CHECK(s.value.aversion == 1);
    CHECK(s.value.version == 0);  // the data's version is another counter
    a = op_get_acl(*alice, t, p);
    REQUIRE_FALSE(a.ec);
    REQUIRE(a.value.acl.size() == 1);
    CHECK(a.value.acl[0].perms == perms::all);
    CHECK(is_digest_of(a.value.acl[0], "alice"));
    CHECK(a.value.stat.aversion == 1);
    CHECK(thrown_by([&] { anon->get_data(p); }) == zk_errc::no_auth);
    CHECK(op_get_acl(*anon, t, p).ec == zk_errc::no_auth);  // neither READ nor ADMIN
    CHECK(op_set_acl(*anon, t, p, open_acl_unsafe()).ec == zk_errc::no_auth);

    // A stale ACL version, an empty list, a missing node, a bad path.
    CHECK(op_set_acl(*alice, t, p, open_acl_unsafe(), 0).ec == zk_errc::bad_version);
    CHECK(op_set_acl(*alice, t, p, {}).ec == zk_errc::invalid_acl);
    CHECK(op_set_acl(*anon, t, root, creator_all_acl()).ec ==
          zk_errc::invalid_acl);  // `auth:` with no identity
    CHECK(op_get_acl(*alice, t, p + "/missing").ec == zk_errc::no_node);
    CHECK(op_set_acl(*alice, t, p + "/missing", open_acl_unsafe()).ec == zk_errc::no_node);
    CHECK(op_get_acl(*alice, t, p + "/").ec == client_errc::invalid_path);
    CHECK(op_set_acl(*alice, t, "relative", open_acl_unsafe()).ec == client_errc::invalid_path);

    // An explicit digest id (as read back), READ only for alice and READ for everyone: anon reads, alice can
    // no longer change the ACL.
    const auto digest_id = a.value.acl[0].id;
    s = op_set_acl(*alice, t, p, {Acl{perms::read, digest_id}, Acl{perms::read, Id{"world", "anyone"}}}, 1);
    REQUIRE_FALSE(s.ec);
    CHECK(s.value.aversion == 2);
    CHECK(anon->get_data(p).data == "d");
    CHECK(op_set_acl(*alice, t, p, open_acl_unsafe()).ec == zk_errc::no_auth);
    CHECK(op_get_acl(*anon, t, p).value.acl.size() == 2);
  }
}

TEST_CASE("get_acl and set_acl: paths under the client's namespace", "[framework][acl][namespace]") {
  const auto ns = unique_path("aclns2").substr(1);
  auto c = started(test_builder(shared_server().connect_string()).namespace_name(ns));
  auto plain = connect_shared();
  c->create("/n");
  auto s = c->set_acl("/n", read_acl_unsafe());
  CHECK(s.aversion == 1);
  CHECK(plain->get_acl("/" + ns + "/n").acl == read_acl_unsafe());
  CHECK(c->get_acl("/n").acl == read_acl_unsafe());
  CHECK(thrown_by([&] { c->set_data("/n", "x"); }) == zk_errc::no_auth);
}

TEST_CASE("get_acl: a lock node carries the ACL of the client's ACL provider", "[framework][acl][lock]") {
  const auto root = unique_path("acllock");
  const auto lock_path = root + "/mutex";
  const auto cs = shared_server().connect_string();
  auto seen = std::make_shared<Recorder<std::string>>();
  // Every node under the lock's path (the lock's directory too) only for the authenticated creator.
  auto provider = [seen, root](std::string_view path) -> AclList {
    seen->push(std::string(path));
    if (path.rfind(root + "/", 0) == 0) return creator_all_acl();
    return {};
  };
  auto alice = started(test_builder(cs).authorization("digest", "alice:secret").acl_provider(provider));
  auto anon = connect_shared();
  InterProcessMutex m(*alice, lock_path);
  m.acquire();
  const auto node = m.lock_path();
  REQUIRE_FALSE(node.empty());
  auto a = alice->get_acl(node);
  REQUIRE(a.acl.size() == 1);
  CHECK(a.acl[0].perms == perms::all);
  CHECK(is_digest_of(a.acl[0], "alice"));
  CHECK(a.stat.ephemeral_owner == alice->session_id());
  CHECK(a.stat.czxid == m.fencing_token());
  // The lock's directory, made by the engine as a container, got the provider's ACL as well.
  auto dir = alice->get_acl(lock_path);
  REQUIRE(dir.acl.size() == 1);
  CHECK(is_digest_of(dir.acl[0], "alice"));
  CHECK(thrown_by([&] { anon->get_acl(node); }) == zk_errc::no_auth);
  CHECK(thrown_by([&] { anon->get_children(lock_path); }) == zk_errc::no_auth);
  auto paths = seen->items();
  // Asked with the node's full protected path (before the server appends the sequence number).
  CHECK(std::any_of(paths.begin(), paths.end(), [&](const std::string& p) {
    return p.find("/_c_") != std::string::npos && node.rfind(p, 0) == 0;
  }));
  m.release();
  CHECK_FALSE(alice->exists(node));
}

// ---------------------------------------------------------------------------------------------------------
// ACL providers and authentication

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
  CHECK(std::count(paths.begin(), paths.end(), nsp) == 1);              // the namespace root
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
