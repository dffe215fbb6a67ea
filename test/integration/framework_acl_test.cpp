// Integration tests of CuratorFramework::get_acl and set_acl against a real ZooKeeper server: through each
// twin, with digest authentication, ACL versions, the server's refusals, a namespace, and the ACL a client's
// ACL provider gives a lock node.

#include "framework_support.hpp"

#include <zkr/recipes/inter_process_mutex.hpp>

#include <algorithm>

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
    CHECK(op_set_acl(*anon, t, root, creator_all_acl()).ec == zk_errc::invalid_acl);  // `auth:` with no identity
    CHECK(op_get_acl(*alice, t, p + "/missing").ec == zk_errc::no_node);
    CHECK(op_set_acl(*alice, t, p + "/missing", open_acl_unsafe()).ec == zk_errc::no_node);
    CHECK(op_get_acl(*alice, t, p + "/").ec == errc::invalid_path);
    CHECK(op_set_acl(*alice, t, "relative", open_acl_unsafe()).ec == errc::invalid_path);

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
