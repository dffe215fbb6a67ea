// zkr with SASL (docs/cli.md, docs/sasl.md): the --sasl-* options and $ZKR_SASL_* reach a SASL-enforcing
// server and take a lock, with DIGEST-MD5 and with Kerberos (the test realm's KDC); refused settings exit 64
// or 78, a refused authentication 69, and no password is printed.

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>
#include <zkr/framework/sasl.hpp>
#include <zkr/testing/testing_server.hpp>

#include "cli_support.hpp"
#include "sasl_support.hpp"

using namespace zkr::test::cli;

TEST_CASE("zkr over SASL: the --sasl-* options and ZKR_SASL_* take a lock, refusals exit 64, 69 or 78",
          "[cli][sasl]") {
  if (!have_zkr()) return;
  TempDir dir;
  const std::string password = "Cli-Alice-Pw-41";
  {
    std::ofstream(dir.file("alice.pw")) << password << "\n";
    std::ofstream(dir.file("wrong.pw")) << "Cli-Not-The-Pw\n";
  }
  if (!zkr::sasl_supported()) {
    // Without SASL on this transport: refused before connecting, never an anonymous session.
    auto r = run_zkr({"lock", "--connect", "127.0.0.1:1", "--sasl-user", "alice", "--sasl-password-file",
                      dir.file("alice.pw"), "/cli/sasl", "--", "true"},
                     dir);
    CHECK(r.status == 78);
    return;
  }
  zkr::testing::ServerOptions so;
  so.sasl = zkr::testing::SaslServerOptions{{{"alice", password}}};
  zkr::testing::TestingServer server(so);
  const std::vector<std::string> common{"--connect", server.connect_string(), "--connection-timeout", "20s"};
  auto sasl = [&](const std::string& file) {
    return cat(common, {"--sasl-user", "alice", "--sasl-password-file", dir.file(file)});
  };

  // Each run in a scope of its own: its INFO reports with its checks only.
  {
    auto ok =
        run_zkr(cat(cat({"lock", "/cli/sasl"}, sasl("alice.pw")), {"-w", "0", "--", "echo", "ran"}), dir);
    INFO(ok.err);
    CHECK(ok.status == 0);
    CHECK(ok.out == "ran\n");
  }

  {
    auto wrong =
        run_zkr(cat(cat({"lock", "/cli/sasl"}, sasl("wrong.pw")), {"-w", "0", "--", "echo", "ran"}), dir);
    INFO(wrong.err);
    CHECK(wrong.status == 69);
    CHECK(wrong.out.empty());
    CHECK(wrong.err.find("Cli-Not-The-Pw") == std::string::npos);
    CHECK(wrong.err.find(password) == std::string::npos);
  }

  auto missing = run_zkr(cat(cat({"lock", "/cli/sasl"}, sasl("no-such.pw")), {"--", "true"}), dir);
  CHECK(missing.status == 78);

  auto partial = run_zkr(
      cat(cat({"lock", "/cli/sasl"}, common), {"--sasl-password-file", dir.file("alice.pw"), "--", "true"}),
      dir);
  CHECK(partial.status == 64);
  auto mechanism = run_zkr(
      cat(cat({"lock", "/cli/sasl"}, sasl("alice.pw")), {"--sasl-mechanism", "PLAIN", "--", "true"}), dir);
  CHECK(mechanism.status == 64);

  // The environment stands for the options.
  {
    auto env = run_zkr(cat(cat({"lock", "/cli/sasl"}, common), {"-w", "0", "--", "echo", "ran"}), dir,
                       std::chrono::seconds(90),
                       {"ZKR_SASL_USER=alice", "ZKR_SASL_PASSWORD_FILE=" + dir.file("alice.pw")});
    INFO(env.err);
    CHECK(env.status == 0);
    CHECK(env.out == "ran\n");
  }
}

TEST_CASE("zkr over Kerberos: --sasl-principal and --sasl-keytab take a lock, refusals exit 64, 69 or 78",
          "[cli][sasl][kerberos]") {
  if (!have_zkr()) return;
  TempDir dir;
  if (!zkr::sasl_supported(zkr::SaslMechanism::gssapi)) {
    // Without Kerberos on this transport: refused before connecting.
    auto r = run_zkr({"lock", "--connect", "127.0.0.1:1", "--sasl-principal", "alice@ZKR.TEST",
                      "--sasl-keytab", dir.file("alice.keytab"), "/cli/krb", "--", "true"},
                     dir);
    CHECK(r.status == 78);
    return;
  }
  auto& realm = zkr::test::test_realm();  // $KRB5_CONFIG, which zkr inherits
  zkr::testing::ServerOptions so;
  so.sasl = realm.server_options("localhost");
  zkr::testing::TestingServer server(so);
  // Dialled as localhost: the client asks a ticket for zookeeper/localhost, the server's principal.
  const std::vector<std::string> common{"--connect", "localhost:" + std::to_string(server.port()),
                                        "--connection-timeout", "20s"};
  const auto alice = realm.principal("cli-alice");
  const auto keytab = realm.add_principal("cli-alice").string();
  auto kerberos = [&](const std::string& principal, const std::string& file) {
    return cat(common, {"--sasl-principal", principal, "--sasl-keytab", file});
  };

  // The principal alone switches SASL on, with GSSAPI.
  {
    auto ok = run_zkr(
        cat(cat({"lock", "/cli/krb"}, kerberos(alice, keytab)), {"-w", "0", "--", "echo", "ran"}), dir);
    INFO(ok.err);
    CHECK(ok.status == 0);
    CHECK(ok.out == "ran\n");
  }

  // The environment stands for the options.
  {
    auto env =
        run_zkr(cat(cat({"lock", "/cli/krb"}, common), {"-w", "0", "--", "echo", "ran"}), dir,
                std::chrono::seconds(90), {"ZKR_SASL_PRINCIPAL=" + alice, "ZKR_SASL_KEYTAB=" + keytab});
    INFO(env.err);
    CHECK(env.status == 0);
    CHECK(env.out == "ran\n");
  }

  // Refused before connecting (78): a keytab without the principal's keys, a missing keytab.
  const auto other = realm.add_principal("cli-other").string();
  CHECK(run_zkr(cat(cat({"lock", "/cli/krb"}, kerberos(alice, other)), {"--", "true"}), dir).status == 78);
  CHECK(run_zkr(cat(cat({"lock", "/cli/krb"}, kerberos(alice, dir.file("none.keytab"))), {"--", "true"}), dir)
            .status == 78);

  // Refused by the realm (69): a principal the KDC no longer knows, though its keytab still holds keys.
  const auto gone = realm.add_principal("cli-gone").string();
  realm.remove_principal("cli-gone");
  {
    auto refused = run_zkr(
        cat(cat({"lock", "/cli/krb"}, kerberos(realm.principal("cli-gone"), gone)), {"--", "true"}), dir);
    INFO(refused.err);
    CHECK(refused.status == 69);
  }

  // Usage errors (64): a keytab with no principal, DIGEST-MD5's settings with Kerberos's, GSSAPI with no
  // keytab.
  CHECK(
      run_zkr(cat(cat({"lock", "/cli/krb"}, common), {"--sasl-keytab", keytab, "--", "true"}), dir).status ==
      64);
  CHECK(
      run_zkr(cat(cat({"lock", "/cli/krb"}, kerberos(alice, keytab)), {"--sasl-user", "alice", "--", "true"}),
              dir)
          .status == 64);
  CHECK(run_zkr(cat(cat({"lock", "/cli/krb"}, common), {"--sasl-principal", alice, "--", "true"}), dir)
            .status == 64);
  CHECK(run_zkr(cat(cat({"lock", "/cli/krb"}, kerberos(alice, keytab)),
                    {"--sasl-mechanism", "DIGEST-MD5", "--", "true"}),
                dir)
            .status == 64);
}
