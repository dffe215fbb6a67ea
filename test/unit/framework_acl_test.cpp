// Unit tests (no server) of get_acl and set_acl (operations.cpp), over a fake session: the requests they
// send, what their replies become, and the retry loop with a connection loss injected at each request of a
// try.

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "fake_client.hpp"

namespace {

using namespace std::chrono_literals;
using fake::FakeClient;
namespace zk = fake::zk;
using zkr::client_errc;
using zkr::zk_errc;

const zkr::AclList digest_acl = {
    zkr::Acl{zkr::perms::read | zkr::perms::admin, zkr::Id{"digest", "u:hash="}}};

zk::Reply with_acl(zkr::AclList acl, zkr::Stat stat) {
  auto r = fake::with_stat(stat);
  r.acl = std::move(acl);
  return r;
}

zkr::Stat stat_with_aversion(int aversion) {
  zkr::Stat s;
  s.aversion = aversion;
  s.czxid = 42;
  return s;
}

}  // namespace

TEST_CASE("framework get_acl: one request, the reply's ACL and Stat, after a connection loss at each try",
          "[framework][acl]") {
  const int succeed_at = GENERATE(1, 2, 3, 4);  // RetryNTimes(3): four tries at most
  FakeClient c;
  c.connect();
  auto out = c.get_acl("/a");
  for (int i = 1; i < succeed_at; ++i)
    REQUIRE(c.session().reply(c.expect<zk::GetAcl>("/a"), zk_errc::connection_loss));
  REQUIRE(c.session().reply(c.expect<zk::GetAcl>("/a"), with_acl(digest_acl, stat_with_aversion(3))));
  REQUIRE(out->wait());
  CHECK_FALSE(out->ec());
  CHECK(out->value().acl == digest_acl);
  CHECK(out->value().stat.aversion == 3);
  CHECK(out->value().stat.czxid == 42);
  c.sync_io();
  CHECK(c.session().sent() == static_cast<std::size_t>(succeed_at));
}

TEST_CASE("framework get_acl: no node and no auth end it at once, the retry policy's limit ends a loss",
          "[framework][acl]") {
  FakeClient c;
  c.connect();
  SECTION("not retried") {
    const zk_errc code = GENERATE(zk_errc::no_node, zk_errc::no_auth);
    auto out = c.get_acl("/a");
    REQUIRE(c.session().reply(c.expect<zk::GetAcl>("/a"), code));
    REQUIRE(out->wait());
    CHECK(out->ec() == zkr::error_code(code));
    CHECK(out->value().acl.empty());
    c.sync_io();
    CHECK(c.session().sent() == 1);
  }
  SECTION("every try lost") {
    auto out = c.get_acl("/a");
    for (int i = 0; i < 4; ++i)
      REQUIRE(c.session().reply(c.expect<zk::GetAcl>("/a"), zk_errc::connection_loss));
    REQUIRE(out->wait());
    CHECK(out->ec() == zk_errc::connection_loss);
    c.sync_io();
    CHECK(c.session().sent() == 4);
  }
}

TEST_CASE("framework get_acl and set_acl: a bad path is refused before anything is sent",
          "[framework][acl]") {
  FakeClient c;
  c.connect();
  auto g = c.get_acl("no-slash");
  auto s = c.set_acl("/a/", digest_acl, -1);
  REQUIRE(g->wait());
  REQUIRE(s->wait());
  CHECK(g->ec() == client_errc::invalid_path);
  CHECK(s->ec() == client_errc::invalid_path);
  c.sync_io();
  CHECK(c.session().sent() == 0);
}

TEST_CASE("framework set_acl: the ACL and version as given, with a read of the Stat right behind it",
          "[framework][acl]") {
  FakeClient c;
  c.connect();
  auto out = c.set_acl("/a", digest_acl, 7);
  auto set = c.expect<zk::SetAcl>("/a");
  CHECK(set.as<zk::SetAcl>()->acl == digest_acl);
  CHECK(set.as<zk::SetAcl>()->version == 7);
  // Pipelined: sent before the set's reply.
  auto read = c.expect<zk::Exists>("/a");
  CHECK(read.watch() == 0);
  REQUIRE(c.session().reply(set, zk_errc::ok));
  c.sync_io();
  CHECK_FALSE(out->done());  // waits for the Stat
  REQUIRE(c.session().reply(read, fake::with_stat(stat_with_aversion(8))));
  REQUIRE(out->wait());
  CHECK_FALSE(out->ec());
  CHECK(out->value().aversion == 8);
}

TEST_CASE("framework set_acl: an empty list is the server's to refuse", "[framework][acl]") {
  FakeClient c;
  c.connect();
  auto out = c.set_acl("/a", {}, -1);
  auto set = c.expect<zk::SetAcl>("/a");
  CHECK(set.as<zk::SetAcl>()->acl.empty());  // not replaced by the ACL provider's or OPEN_ACL_UNSAFE
  auto read = c.expect<zk::Exists>("/a");
  REQUIRE(c.session().reply(set, zk_errc::invalid_acl));
  REQUIRE(c.session().reply(read, fake::with_stat(stat_with_aversion(0))));
  REQUIRE(out->wait());
  CHECK(out->ec() == zk_errc::invalid_acl);
  CHECK(out->value().aversion == 0);  // no Stat with an error
}

TEST_CASE("framework set_acl: bad version, no node and no auth are not retried", "[framework][acl]") {
  const zk_errc code = GENERATE(zk_errc::bad_version, zk_errc::no_node, zk_errc::no_auth);
  FakeClient c;
  c.connect();
  auto out = c.set_acl("/a", digest_acl, 1);
  auto set = c.expect<zk::SetAcl>("/a");
  auto read = c.expect<zk::Exists>("/a");
  REQUIRE(c.session().reply(set, code));
  REQUIRE(c.session().reply(read, code == zk_errc::no_node ? zk_errc::no_node : zk_errc::ok));
  REQUIRE(out->wait());
  CHECK(out->ec() == zkr::error_code(code));
  c.sync_io();
  CHECK(c.session().sent() == 2);
}

TEST_CASE("framework set_acl: a connection loss at each request of a try", "[framework][acl]") {
  const int lost_at = GENERATE(0, 1, 2);  // 0: the set's reply; 1: the read's; 2: both
  FakeClient c;
  c.connect();
  auto out = c.set_acl("/a", digest_acl, 4);
  auto set = c.expect<zk::SetAcl>("/a");
  auto read = c.expect<zk::Exists>("/a");
  REQUIRE(c.session().reply(set, lost_at == 1 ? zk_errc::ok : zk_errc::connection_loss));
  REQUIRE(c.session().reply(
      read, lost_at == 0 ? fake::with_stat(stat_with_aversion(4)) : fake::rc(zk_errc::connection_loss)));
  if (lost_at == 1) {
    // The set applied: it is not sent again (with a version, it would now fail); only the Stat is read again.
    REQUIRE(c.session().reply(c.expect<zk::Exists>("/a"), fake::with_stat(stat_with_aversion(5))));
  } else {
    auto again = c.expect<zk::SetAcl>("/a");
    CHECK(again.as<zk::SetAcl>()->version == 4);
    REQUIRE(c.session().reply(again, zk_errc::ok));
    REQUIRE(c.session().reply(c.expect<zk::Exists>("/a"), fake::with_stat(stat_with_aversion(5))));
  }
  REQUIRE(out->wait());
  CHECK_FALSE(out->ec());
  CHECK(out->value().aversion == 5);
  c.sync_io();
  CHECK(c.session().sent() == (lost_at == 1 ? 3u : 4u));
}

TEST_CASE("framework set_acl: the retry policy's limit ends it, with the last try's error",
          "[framework][acl]") {
  FakeClient c;  // RetryNTimes(3)
  c.connect();
  auto out = c.set_acl("/a", digest_acl, -1);
  for (int i = 0; i < 4; ++i) {
    REQUIRE(c.session().reply(c.expect<zk::SetAcl>("/a"), zk_errc::connection_loss));
    REQUIRE(c.session().reply(c.expect<zk::Exists>("/a"), zk_errc::connection_loss));
  }
  REQUIRE(out->wait());
  CHECK(out->ec() == zk_errc::connection_loss);
  c.sync_io();
  CHECK(c.session().sent() == 8);
}

TEST_CASE("framework get_acl and set_acl: paths under the namespace", "[framework][acl]") {
  zkr::ClientConfig cfg;
  cfg.namespace_name = "ns";
  FakeClient c(cfg);
  c.connect();
  auto out = c.get_acl("/a");
  // The namespace's root is made on first use (exists, then create), then the request.
  REQUIRE(c.session().reply(c.expect<zk::Exists>("/ns"), zk_errc::ok));
  REQUIRE(c.session().reply(c.expect<zk::GetAcl>("/ns/a"), with_acl(digest_acl, {})));
  REQUIRE(out->wait());
  CHECK_FALSE(out->ec());
  auto s = c.set_acl("/a", digest_acl, -1);
  REQUIRE(c.session().reply(c.expect<zk::SetAcl>("/ns/a"), zk_errc::ok));
  REQUIRE(c.session().reply(c.expect<zk::Exists>("/ns/a"), fake::with_stat({})));
  REQUIRE(s->wait());
  CHECK_FALSE(s->ec());
}
