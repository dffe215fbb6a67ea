// zkr with SASL (docs/cli.md, docs/sasl.md): the --sasl-* options and $ZKR_SASL_* reach a SASL-enforcing
// server and take a lock; refused settings exit 64 or 78, a refused authentication 69, and no password is
// printed.

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>
#include <zkr/framework/sasl.hpp>
#include <zkr/testing/testing_server.hpp>

#include "cli_support.hpp"

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

  auto ok = run_zkr(cat(cat({"lock", "/cli/sasl"}, sasl("alice.pw")), {"-w", "0", "--", "echo", "ran"}), dir);
  INFO(ok.err);
  CHECK(ok.status == 0);
  CHECK(ok.out == "ran\n");

  auto wrong =
      run_zkr(cat(cat({"lock", "/cli/sasl"}, sasl("wrong.pw")), {"-w", "0", "--", "echo", "ran"}), dir);
  INFO(wrong.err);
  CHECK(wrong.status == 69);
  CHECK(wrong.out.empty());
  CHECK(wrong.err.find("Cli-Not-The-Pw") == std::string::npos);
  CHECK(wrong.err.find(password) == std::string::npos);

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
  auto env = run_zkr(cat(cat({"lock", "/cli/sasl"}, common), {"-w", "0", "--", "echo", "ran"}), dir,
                     std::chrono::seconds(90),
                     {"ZKR_SASL_USER=alice", "ZKR_SASL_PASSWORD_FILE=" + dir.file("alice.pw")});
  INFO(env.err);
  CHECK(env.status == 0);
  CHECK(env.out == "ran\n");
}
