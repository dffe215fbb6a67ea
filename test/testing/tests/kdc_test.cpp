// Tests of TestKdc: a realm of its own whose KDC MIT's own `kinit` talks to, and a Kerberos test server.

#include <catch2/catch.hpp>
#include <zkr/testing/test_kdc.hpp>
#include <zkr/testing/testing_server.hpp>

#include "support.hpp"

using zkr::testing::TestingError;
using zkr::testing::TestKdc;
namespace t = zkr::testing::test;
namespace fs = std::filesystem;

namespace {
// kinit with the keytab, into a ticket cache of its own; the output and status of kinit then klist.
t::CommandResult kinit(const TestKdc& kdc, const fs::path& keytab, const std::string& principal,
                       const std::string& cache) {
  const std::string env = "KRB5_CONFIG='" + kdc.krb5_conf().string() +
                          "' KRB5CCNAME='FILE:" + (kdc.dir() / cache).string() + "' ";
  return t::run_command(env + "timeout 30 kinit -k -t '" + keytab.string() + "' " + principal + " 2>&1 && " +
                        env + "klist 2>&1");
}
}  // namespace

TEST_CASE("TestKdc runs a realm whose KDC issues tickets for the keytabs it makes", "[kerberos]") {
  TestKdc kdc;
  CHECK(kdc.realm() == "ZKR.TEST");
  const auto keytab = kdc.add_principal("alice");
  CHECK(fs::is_regular_file(keytab));
  CHECK(kdc.add_principal("alice") == keytab);  // made once
  const auto ok = kinit(kdc, keytab, kdc.principal("alice"), "alice.cc");
  INFO(ok.output);
  CHECK(ok.exit_status == 0);
  CHECK(ok.output.find("krbtgt/ZKR.TEST@ZKR.TEST") != std::string::npos);

  // The keytab of one principal does not get tickets for another.
  kdc.add_principal("bob");
  CHECK(kinit(kdc, keytab, kdc.principal("bob"), "bob.cc").exit_status != 0);
  // A deleted principal gets none from the KDC.
  kdc.remove_principal("alice");
  CHECK(kinit(kdc, keytab, kdc.principal("alice"), "alice2.cc").exit_status != 0);
  // A KDC that is down answers no one; started again, it does.
  const auto carol = kdc.add_principal("carol");
  kdc.stop();
  CHECK(kinit(kdc, carol, kdc.principal("carol"), "carol.cc").exit_status != 0);
  kdc.start();
  CHECK(kinit(kdc, carol, kdc.principal("carol"), "carol.cc").exit_status == 0);

  CHECK_THROWS_AS(kdc.add_principal("a b"), TestingError);
  CHECK_THROWS_AS(kdc.add_principal("a/b/c"), TestingError);
}

TEST_CASE("A TestingServer with a Kerberos login starts against a TestKdc", "[kerberos]") {
  TestKdc kdc;
  zkr::testing::ServerOptions options;
  options.sasl = kdc.server_options();
  CHECK(options.sasl->kerberos->principal == "zookeeper/localhost@ZKR.TEST");
  zkr::testing::TestingServer server(options);
  const auto jaas = t::read_file(server.data_dir() / "jaas.conf");
  CHECK(jaas.find("Krb5LoginModule") != std::string::npos);
  // The server logged in with its keytab at start-up (Krb5LoginModule asks the KDC for a ticket).
  CHECK(server.four_letter_word("ruok") == "imok");
}
