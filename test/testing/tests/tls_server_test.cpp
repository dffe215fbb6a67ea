// Tests of TestCertificates and of TestingServer / TestingCluster with TLS (ServerOptions::tls), driven by
// `openssl s_client`.

#include <catch2/catch.hpp>
#include <zkr/testing/test_certificates.hpp>
#include <zkr/testing/testing_cluster.hpp>
#include <zkr/testing/testing_server.hpp>

#include "support.hpp"
#include "tls_support.hpp"

using namespace std::chrono_literals;
using zkr::testing::CertificateAuthority;
using zkr::testing::ServerOptions;
using zkr::testing::TestCertificates;
using zkr::testing::TestingCluster;
using zkr::testing::TestingError;
using zkr::testing::TestingServer;
namespace t = zkr::testing::test;
namespace fs = std::filesystem;
using t::read_file;

namespace {
// One set of certificates for the whole test process: making them takes about 2 s.
TestCertificates& certificates() {
  static TestCertificates certs;
  return certs;
}

ServerOptions tls_options(bool plain_port = true) {
  ServerOptions options;
  options.tls = certificates().server_options();
  options.tls->plain_port = plain_port;
  return options;
}
}  // namespace

TEST_CASE("TestCertificates makes a CA, the server's stores and client certificates", "[tls]") {
  auto& certs = certificates();
  for (const char* file : {"ca.pem", "foreign-ca.pem", "server.p12", "truststore.p12"})
    CHECK(fs::is_regular_file(certs.dir() / file));
  const auto a = certs.client("client-a");
  CHECK(a.ca == certs.ca_file());
  CHECK(read_file(a.key).find("BEGIN ENCRYPTED PRIVATE KEY") != std::string::npos);
  CHECK(fs::is_regular_file(a.key_store));
  CHECK(a.x509_id == "CN=client-a,OU=clients,O=zkr-test");
  CHECK(a.c_client_cert_string() ==
        a.ca.string() + "," + a.certificate.string() + "," + a.key.string() + ",keypass");
  CHECK(certs.client("client-a").certificate == a.certificate);  // made once

  const auto plain_key = certs.client("client-nopass", {.key_password = ""});
  CHECK(read_file(plain_key.key).find("BEGIN PRIVATE KEY") != std::string::npos);
  CHECK(plain_key.c_client_cert_string().ends_with(plain_key.key.string()));
  CHECK_THROWS_AS(certs.client("a,b"), TestingError);
  CHECK_THROWS_AS(certs.client("server"), TestingError);
}

TEST_CASE("A TLS TestingServer serves TLS clients of its CA on the secure port and plain ones on the other",
          "[tls]") {
  auto& certs = certificates();
  TestingServer server(tls_options());
  CHECK(server.secure_port() != 0);
  CHECK(server.port() != 0);
  CHECK(server.secure_port() != server.port());
  CHECK(server.secure_connect_string() == "127.0.0.1:" + std::to_string(server.secure_port()));

  const std::string cfg = read_file(server.data_dir() / "zoo.cfg");
  CHECK(cfg.find("secureClientPort=" + std::to_string(server.secure_port()) + "\n") != std::string::npos);
  CHECK(cfg.find("serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n") !=
        std::string::npos);
  CHECK(cfg.find("ssl.clientAuth=need\n") != std::string::npos);
  CHECK(cfg.find("authProvider.x509=") != std::string::npos);

  // A TLS handshake with a client certificate of the test CA, then a four-letter word over it.
  const auto a = certs.client("client-a");
  const auto tls = t::tls_exchange(server.secure_port(), a, "ruok");
  INFO(tls.output);
  CHECK(tls.exit_status == 0);
  CHECK(tls.output == "imok");
  // The server derived the x509 identity from the certificate.
  CHECK(t::eventually(
      [&] {
        return read_file(server.data_dir() / "server.log")
                   .find("Authenticated Id '" + a.x509_id + "' for Scheme 'x509'") != std::string::npos;
      },
      10s));
  // An unencrypted key works as well.
  CHECK(t::tls_exchange(server.secure_port(), certs.client("client-nopass", {.key_password = ""}), "ruok")
            .output == "imok");

  // The plain port still serves plain clients (same Netty factory).
  CHECK(server.four_letter_word("ruok") == "imok");
  CHECK(server.four_letter_word("srvr").find("Mode: standalone") != std::string::npos);
  const std::string out =
      t::zk_cli(server.connect_string(), "create /zkr-tls-plain hello\nget /zkr-tls-plain");
  INFO(out);
  CHECK(out.find("hello") != std::string::npos);
}

TEST_CASE("A TLS TestingServer refuses a client certificate from another CA and TLS on the plain port",
          "[tls]") {
  auto& certs = certificates();
  TestingServer server(tls_options());

  // Each exchange is bounded by `timeout` (exit status 124): a refusal ends it before that.
  const auto foreign = t::tls_exchange(
      server.secure_port(), certs.client("client-x", {.issuer = CertificateAuthority::foreign}), "ruok");
  INFO(foreign.output);
  CHECK(foreign.exit_status != 0);
  CHECK(foreign.exit_status != 124);  // refused, not timed out
  CHECK(foreign.output.find("imok") == std::string::npos);

  // TLS to the plain port: no handshake, no answer.
  const auto wrong_port = t::tls_exchange(server.port(), certs.client("client-a"), "ruok");
  INFO(wrong_port.output);
  CHECK(wrong_port.exit_status != 0);
  CHECK(wrong_port.exit_status != 124);
  CHECK(wrong_port.output.find("imok") == std::string::npos);

  // The server is still fine.
  CHECK(t::tls_exchange(server.secure_port(), certs.client("client-a"), "ruok").output == "imok");
}

TEST_CASE("A TLS-only TestingServer has no plain port and answers four-letter words over TLS", "[tls]") {
  TestingServer server(tls_options(false));
  CHECK(server.port() == 0);
  CHECK_THROWS_AS(server.connect_string(), TestingError);
  CHECK(server.secure_port() != 0);
  CHECK(read_file(server.data_dir() / "zoo.cfg").find("clientPort=") == std::string::npos);
  CHECK(server.four_letter_word("ruok") == "imok");
  CHECK(server.four_letter_word("srvr").find("Mode: standalone") != std::string::npos);
  CHECK(server.mntr().at("zk_server_state") == "standalone");

  // Restarts keep the TLS port.
  const auto secure = server.secure_port();
  server.restart();
  CHECK(server.secure_port() == secure);
  CHECK(t::tls_exchange(secure, certificates().client("client-a"), "ruok").output == "imok");
}

TEST_CASE("TLS options naming no stores fail at once", "[tls]") {
  ServerOptions options;
  options.tls.emplace();
  const auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_WITH(TestingServer(options), Catch::Matchers::Contains("ServerOptions::tls: key_store"));
  CHECK(t::seconds_since(start) < 5);
}

TEST_CASE("A TestingServer without TLS has no secure port", "[tls]") {
  TestingServer server;
  CHECK(server.secure_port() == 0);
  CHECK_THROWS_AS(server.secure_connect_string(), TestingError);
}

TEST_CASE("A TLS TestingCluster serves TLS on every member", "[tls][cluster]") {
  TestingCluster cluster(3, tls_options(false));
  const auto leader = cluster.wait_for_leader(30s);
  CHECK(cluster.four_letter_word(leader, "srvr").find("Mode: leader") != std::string::npos);
  std::string expected;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    CHECK(cluster.member_port(i) == 0);
    CHECK(cluster.member_secure_port(i) != 0);
    expected += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(cluster.member_secure_port(i));
    CHECK(t::tls_exchange(cluster.member_secure_port(i), certificates().client("client-a"), "ruok").output ==
          "imok");
  }
  CHECK(cluster.secure_connect_string() == expected);
  CHECK_THROWS_AS(cluster.connect_string(), TestingError);
}
