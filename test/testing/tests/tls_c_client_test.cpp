// Sessions of the TLS-capable ZooKeeper C client (tools/build-zookeeper-tls.sh) against TLS test servers,
// through test/testing/tls_client/zkr_tls_connect.c. Skipped with a warning when that client was not built
// (no prefix at the CMake cache variable ZKR_TLS_CLIENT_PREFIX).

#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <zkr/testing/test_certificates.hpp>
#include <zkr/testing/testing_server.hpp>

#include "support.hpp"

using zkr::testing::CertificateAuthority;
using zkr::testing::ServerOptions;
using zkr::testing::TestCertificates;
using zkr::testing::TestingServer;
using zkr::testing::TlsClientFiles;
namespace t = zkr::testing::test;

namespace {

#ifdef ZKR_TLS_CONNECT_PATH
constexpr std::string_view connect_program = ZKR_TLS_CONNECT_PATH;
#else
constexpr std::string_view connect_program;  // not built
#endif

bool have_tls_client() {
  if (!connect_program.empty()) return true;
  WARN(
      "skipped: no TLS-capable ZooKeeper C client; run tools/build-zookeeper-tls.sh (or point the CMake "
      "cache variable ZKR_TLS_CLIENT_PREFIX at its prefix) and reconfigure");
  return false;
}

// One zkr_tls_connect run: connect within `seconds`, create/read the ACL of/delete an ephemeral node.
t::CommandResult tls_session(const std::string& connect, const TlsClientFiles& client, int seconds) {
  return t::run_command("timeout " + std::to_string(seconds + 20) + " '" + std::string(connect_program) +
                        "' " + connect + " '" + client.c_client_cert_string() + "' " +
                        std::to_string(seconds) + " 2>&1");
}

// A TLS server (plain port kept) and its certificates.
struct TlsServer {
  TestCertificates certs;
  TestingServer server{[this] {
    ServerOptions options;
    options.tls = certs.server_options();
    return options;
  }()};
};

}  // namespace

TEST_CASE("The TLS C client makes a session on a TLS TestingServer, with its certificate as x509 identity",
          "[tls][c-client]") {
  if (!have_tls_client()) return;
  TlsServer fixture;
  auto& [certs, server] = fixture;
  const auto a = certs.client("client-a");

  const auto session = tls_session(server.secure_connect_string(), a, 20);
  INFO(session.output);
  CHECK(session.exit_status == 0);
  CHECK(session.output.find("connected\n") != std::string::npos);
  CHECK(session.output.find("acl x509:" + a.x509_id + " perms=31\n") != std::string::npos);

  // An unencrypted key, no password in the string.
  const auto plain_key =
      tls_session(server.secure_connect_string(), certs.client("c", {.key_password = ""}), 20);
  INFO(plain_key.output);
  CHECK(plain_key.exit_status == 0);
}

TEST_CASE("The TLS C client gets no session with a certificate of another CA, nor on the plain port",
          "[tls][c-client]") {
  if (!have_tls_client()) return;
  TlsServer fixture;
  auto& [certs, server] = fixture;

  const auto foreign = tls_session(server.secure_connect_string(),
                                   certs.client("x", {.issuer = CertificateAuthority::foreign}), 3);
  INFO(foreign.output);
  CHECK(foreign.exit_status == 2);  // refused, and retried silently until the program gave up
  // ZSSLCONNECTIONERROR from zookeeper_process(), never a session event (TLS 1.2; a TLS 1.3 server would make
  // the refusal a connection loss, -4: docs/tls.md).
  CHECK(foreign.output.find("last zookeeper_process rc=-15\n") != std::string::npos);
  CHECK(foreign.output.find("connected\n") == std::string::npos);

  const auto plain_port = tls_session(server.connect_string(), certs.client("a"), 3);
  INFO(plain_port.output);
  CHECK(plain_port.exit_status == 2);

  // The server still serves the right client.
  CHECK(tls_session(server.secure_connect_string(), certs.client("a"), 20).exit_status == 0);
}
