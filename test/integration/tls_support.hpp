#pragma once
// TLS in the integration tests: a test PKI made at test time, a ZooKeeper server with a secure client port,
// and clients of zkrecipes configured for it (docs/tls.md). Without TLS support in the linked C client
// (`zkr::tls_supported()`), the tests that need a TLS session say so with a warning and end.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <zkr/testing/server_options.hpp>
#include <zkr/testing/test_certificates.hpp>

#include "fixture.hpp"

namespace zkr::test {

/// The client settings for `files` (from `TestCertificates::client`).
inline TlsConfig tls_settings(const zkr::testing::TlsClientFiles& files) {
  TlsConfig t;
  t.ca_file = files.ca.string();
  t.cert_file = files.certificate.string();
  t.key_file = files.key.string();
  t.key_password = files.key_password;
  return t;
}

/// Server options for a TLS client port only (no plain port to fall back to), with `tls`'s certificate.
inline zkr::testing::ServerOptions tls_only(zkr::testing::TlsServerOptions tls) {
  zkr::testing::ServerOptions o;
  o.tls = std::move(tls);
  o.tls->plain_port = false;
  return o;
}

/// The error an operation gets now: none when connected, the reason once the client has given up, else
/// connection_timeout after the connection wait.
inline error_code exists_error(CuratorFramework& c) {
  error_code ec;
  (void)c.exists("/", {}, ec);
  return ec;
}

/// A started client over TLS, not waited for.
inline std::unique_ptr<CuratorFramework> make_tls_client_unconnected(const std::string& connect,
                                                                     TlsConfig tls, ClientOptions o = {}) {
  ClientConfig c = client_config(connect, o);
  c.tls = std::move(tls);
  auto client = std::make_unique<CuratorFramework>(std::move(c));
  client->start();
  return client;
}

/// A started client over TLS, connected.
inline std::unique_ptr<CuratorFramework> make_tls_client(const std::string& connect, TlsConfig tls,
                                                         ClientOptions o = {}) {
  auto client = make_tls_client_unconnected(connect, std::move(tls), std::move(o));
  if (!client->block_until_connected(20s))
    throw std::runtime_error("test client could not connect over TLS to " + connect);
  return client;
}

/// Whether this build can make TLS sessions; if not, a warning names the test that ends here.
inline bool tls_available() {
  if (zkr::tls_supported()) return true;
  WARN("skipped: this build's ZooKeeper C client has no TLS support (ZKR_ZOOKEEPER_TLS; docs/tls.md)");
  return false;
}

/// A test PKI and one standalone server with a TLS client port (and its plain port, unless `plain_port` is
/// false), started per test case.
struct TlsServerFixture {
  explicit TlsServerFixture(bool plain_port = true) : server(options(certs, plain_port)) {}

  zkr::testing::TestCertificates certs;
  zkr::testing::TestingServer server;

  /// The files of client certificate `name` of the test CA (made at the first call).
  zkr::testing::TlsClientFiles files(const std::string& name = "client-a") { return certs.client(name); }
  /// A connected TLS client with certificate `name`.
  std::unique_ptr<CuratorFramework> client(const std::string& name = "client-a", ClientOptions o = {}) {
    return make_tls_client(server.secure_connect_string(), tls_settings(files(name)), std::move(o));
  }

 private:
  static zkr::testing::ServerOptions options(zkr::testing::TestCertificates& certs, bool plain_port) {
    zkr::testing::ServerOptions o;
    o.tls = certs.server_options();
    o.tls->plain_port = plain_port;
    return o;
  }
};

}  // namespace zkr::test
