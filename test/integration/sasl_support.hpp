#pragma once
// Helpers shared by the SASL integration tests (sasl_test.cpp, sasl_kerberos_test.cpp, cli_sasl_test.cpp).

#include <stdlib.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <zkr/testing/test_kdc.hpp>
#include <zkr/testing/testing_cluster.hpp>

#include "fixture.hpp"

namespace zkr::test {

/// The Kerberos realm of this test process (made at the first call), and $KRB5_CONFIG naming it: read by
/// each of MIT's contexts in this process, and inherited by the programs it starts (zkr).
inline zkr::testing::TestKdc& test_realm() {
  static zkr::testing::TestKdc realm;
  static const bool configured = ::setenv("KRB5_CONFIG", realm.krb5_conf().c_str(), 1) == 0;
  REQUIRE(configured);
  return realm;
}

/// Options of a client that must be refused: no retry, a 10 s connection bound, `logger` to capture the log.
inline ClientOptions quick(std::shared_ptr<spdlog::logger> logger = {}) {
  ClientOptions o;
  o.connection_timeout = 10s;
  o.retry = std::make_shared<RetryNTimes>(0, Millis(0));
  o.logger = std::move(logger);
  return o;
}

/// A started client of `c`, connected (and so authenticated) within 20 s, else \throws std::runtime_error.
inline std::unique_ptr<CuratorFramework> connected(const ClientConfig& c) {
  auto client = std::make_unique<CuratorFramework>(c);
  client->start();
  if (!client->block_until_connected(20s)) throw std::runtime_error("SASL client did not connect");
  return client;
}

/// For a transport without `what` (SASL, or Kerberos): says so (WARN) and checks that start() of a client
/// asking `sasl` is refused with `client_errc::sasl_unsupported`, before any server is dialled. Returns
/// false, for the caller's case to end.
inline bool refusal_checked(const SaslConfig& sasl, const std::string& what) {
  WARN(what << " checked as a refusal only: the " << std::string(to_string(*default_transport()))
            << " transport of this build has no " << what << " (docs/sasl.md)");
  ClientConfig c = client_config("127.0.0.1:2181", {});
  c.sasl = sasl;
  CuratorFramework client(c);
  error_code ec;
  client.start(ec);
  CHECK(ec == client_errc::sasl_unsupported);
  return false;
}

/// Whether the server counts `client` as sasl:`user`: whoAmI where the transport has it (3.7+), else (the C
/// client's 3.5-era protocol) a node whose ACL admits only sasl:`user` is created and read back.
inline bool authenticated_as(CuratorFramework& client, const std::string& user) {
  if (*default_transport() != Transport::c_client) {
    const auto ids = client.who_am_i();
    return std::find(ids.begin(), ids.end(), ClientIdentity{"sasl", user}) != ids.end();
  }
  static int n = 0;
  const std::string path = "/sasl-identity-" + std::to_string(++n);
  client.create(path, {.acl = AclList{Acl{perms::all, {"sasl", user}}}, .data = std::string("id")});
  error_code ec;
  const auto got = client.get_data(path, {}, ec);
  return !ec && got.data == "id";
}

/// Each member of `cluster` down in turn (two stay up: a quorum): the one `client` is on sends it to another
/// member, whose exchange must authenticate the session again, or the read of `path` (whose ACL admits only
/// the client's identity) fails; the session stays the same.
inline void move_across_members(zkr::testing::TestingCluster& cluster, CuratorFramework& client,
                                const std::string& path, const std::string& data) {
  const auto session = client.session_id();
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    CAPTURE(i);
    cluster.kill(i);
    CHECK(client.get_data(path).data == data);
    CHECK(client.session_id() == session);
    cluster.start(i);
  }
}

}  // namespace zkr::test
