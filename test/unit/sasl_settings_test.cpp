// Unit tests for SASL's parts without a server (docs/sasl.md): the GetSASLRequest / SetSASLResponse records
// byte for byte, the settings refused at start() with their typed errors, the password file's reading, and
// the classification of the new codes.

#include "sasl/sasl_settings.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "native/jute.hpp"
#include "native/records.hpp"

namespace {

namespace native = zkr::detail::native;
namespace jute = zkr::detail::native::jute;
namespace fs = std::filesystem;

/// A file with `content` under the system's temporary directory, removed at the end of the case.
struct TempFile {
  explicit TempFile(const std::string& content)
      : path(fs::temp_directory_path() /
             ("zkr-sasl-unit-" + std::to_string(::getpid()) + "-" + std::to_string(counter++))) {
    std::ofstream(path, std::ios::binary) << content;
  }
  ~TempFile() {
    std::error_code ec;
    fs::remove(path, ec);
  }
  fs::path path;
  static inline int counter = 0;
};

zkr::SaslConfig digest(const std::string& password_file) {
  zkr::SaslConfig c;
  c.user = "alice";
  c.password_file = password_file;
  return c;
}

}  // namespace

TEST_CASE("sasl records: GetSASLRequest is opcode 102 with a normal xid, SetSASLResponse is a buffer",
          "[sasl]") {
  jute::Bytes out;
  native::encode_sasl(out, 3, "tok");
  CHECK(out == jute::Bytes{0, 0, 0, 15, 0, 0, 0, 3, 0, 0, 0, 102, 0, 0, 0, 3, 't', 'o', 'k'});
  out.clear();
  native::encode_sasl(out, 1, "");
  CHECK(out == jute::Bytes{0, 0, 0, 12, 0, 0, 0, 1, 0, 0, 0, 102, 0, 0, 0, 0});

  const jute::Bytes reply{0, 0, 0, 2, 'o', 'k'};
  jute::Reader in(reply);
  CHECK(native::decode_sasl_response(in) == "ok");
  CHECK_FALSE(in.error());
  const jute::Bytes short_reply{0, 0, 0, 9, 'o', 'k'};
  jute::Reader bad(short_reply);
  (void)native::decode_sasl_response(bad);
  CHECK(bad.error() == zkr::client_errc::malformed_reply);
}

TEST_CASE("sasl settings: incomplete settings and unreadable files are sasl_config_error", "[sasl]") {
  using zkr::Transport;
  TempFile pw("secret\n");
  const bool native_sasl = zkr::sasl_supported(Transport::native);
  if (!native_sasl) {
    CHECK(zkr::detail::check_sasl_settings(digest(pw.path.string()), Transport::native, false).ec ==
          zkr::client_errc::sasl_unsupported);
    return;
  }
  CHECK_FALSE(zkr::detail::check_sasl_settings(digest(pw.path.string()), Transport::native, false).ec);

  auto no_user = digest(pw.path.string());
  no_user.user.clear();
  CHECK(zkr::detail::check_sasl_settings(no_user, Transport::native, false).ec ==
        zkr::client_errc::sasl_config_error);
  auto no_file = digest("");
  CHECK(zkr::detail::check_sasl_settings(no_file, Transport::native, false).ec ==
        zkr::client_errc::sasl_config_error);
  auto missing = digest((fs::temp_directory_path() / "zkr-sasl-unit-no-such-file").string());
  const auto problem = zkr::detail::check_sasl_settings(missing, Transport::native, false);
  CHECK(problem.ec == zkr::client_errc::sasl_config_error);
  CHECK(problem.reason.find("zkr-sasl-unit-no-such-file") != std::string::npos);
  auto no_service = digest(pw.path.string());
  no_service.service.clear();
  CHECK(zkr::detail::check_sasl_settings(no_service, Transport::native, false).ec ==
        zkr::client_errc::sasl_config_error);

  // GSSAPI without a principal or keytab: refused as incomplete where the build has Kerberos, else as
  // unsupported.
  auto gssapi = digest(pw.path.string());
  gssapi.mechanism = zkr::SaslMechanism::gssapi;
  const bool kerberos = zkr::sasl_supported(zkr::SaslMechanism::gssapi, Transport::native);
  CHECK(zkr::detail::check_sasl_settings(gssapi, Transport::native, false).ec ==
        (kerberos ? zkr::client_errc::sasl_config_error : zkr::client_errc::sasl_unsupported));
  // On the C client where it has SASL and the build has Kerberos (the single-threaded flavour, beside the
  // native transport): the same check; else refused as unsupported, not as incomplete.
  const bool c_client_kerberos = zkr::sasl_supported(zkr::SaslMechanism::gssapi, Transport::c_client);
  if (c_client_kerberos) CHECK((zkr::sasl_supported(Transport::c_client) && kerberos));
  CHECK(zkr::detail::check_sasl_settings(gssapi, Transport::c_client, false).ec ==
        (c_client_kerberos ? zkr::client_errc::sasl_config_error : zkr::client_errc::sasl_unsupported));
  if (!kerberos) return;
  gssapi.principal = "alice@ZKR.TEST";
  CHECK(zkr::detail::check_sasl_settings(gssapi, Transport::native, false).ec ==
        zkr::client_errc::sasl_config_error);
  gssapi.keytab = (fs::temp_directory_path() / "zkr-sasl-unit-no-such-keytab").string();
  const auto no_keytab = zkr::detail::check_sasl_settings(gssapi, Transport::native, false);
  CHECK(no_keytab.ec == zkr::client_errc::sasl_config_error);
  CHECK(no_keytab.reason.find("zkr-sasl-unit-no-such-keytab") != std::string::npos);
  // A file that is no keytab holds no key of the principal.
  gssapi.keytab = pw.path.string();
  CHECK(zkr::detail::check_sasl_settings(gssapi, Transport::native, false).ec ==
        zkr::client_errc::sasl_config_error);
}

TEST_CASE("sasl settings: a C client without SASL is refused naming no secret, one with SASL is not",
          "[sasl]") {
  TempFile pw("c-client-secret");
  const auto problem =
      zkr::detail::check_sasl_settings(digest(pw.path.string()), zkr::Transport::c_client, false);
  CHECK(problem.reason.find("c-client-secret") == std::string::npos);
  if (zkr::sasl_supported(zkr::Transport::c_client))
    CHECK_FALSE(problem.ec);  // the C client linked was built with Cyrus SASL (tools/build-zookeeper-tls.sh)
  else
    CHECK(problem.ec == zkr::client_errc::sasl_unsupported);
}

TEST_CASE("sasl settings: SASL with TLS is refused on the C client, never one of them dropped", "[sasl]") {
  TempFile pw("secret");
  const auto problem =
      zkr::detail::check_sasl_settings(digest(pw.path.string()), zkr::Transport::c_client, true);
  CHECK(problem.ec == zkr::client_errc::sasl_unsupported);
  if (zkr::sasl_supported(zkr::Transport::c_client)) CHECK(problem.reason.find("TLS") != std::string::npos);
  if (zkr::sasl_supported(zkr::Transport::native))
    CHECK_FALSE(zkr::detail::check_sasl_settings(digest(pw.path.string()), zkr::Transport::native, true).ec);
}

TEST_CASE("sasl settings: the password file loses one trailing newline only", "[sasl]") {
  const auto [content, expected] = GENERATE(table<std::string, std::string>(
      {{"pw", "pw"}, {"pw\n", "pw"}, {"pw\r\n", "pw"}, {"pw\n\n", "pw\n"}, {" pw ", " pw "}, {"", ""}}));
  TempFile f(content);
  zkr::detail::SaslProblem problem;
  CHECK(zkr::detail::read_sasl_password(f.path.string(), problem) == expected);
  CHECK_FALSE(problem.ec);
}

TEST_CASE("sasl settings: the server host defaults to zk-sasl-md5, or the host connected to for GSSAPI",
          "[sasl]") {
  zkr::SaslConfig c;
  CHECK(zkr::detail::sasl_server_host(c, "zk2.example") == "zk-sasl-md5");
  c.mechanism = zkr::SaslMechanism::gssapi;
  CHECK(zkr::detail::sasl_server_host(c, "zk2.example") == "zk2.example");
  c.server_host = "zk1.example";
  CHECK(zkr::detail::sasl_server_host(c, "zk2.example") == "zk1.example");
  CHECK(zkr::to_string(zkr::SaslMechanism::digest_md5) == "DIGEST-MD5");
  CHECK(zkr::to_string(zkr::SaslMechanism::gssapi) == "GSSAPI");
}

TEST_CASE("sasl errors: a refusal ends the session, with its own message", "[sasl]") {
  for (auto e : {zkr::client_errc::sasl_auth_failed, zkr::client_errc::sasl_config_error}) {
    CHECK(zkr::is_session_lost(make_error_code(e)));
    CHECK_FALSE(zkr::is_retryable(make_error_code(e)));
  }
  CHECK_FALSE(zkr::is_session_lost(make_error_code(zkr::client_errc::sasl_unsupported)));
  CHECK(make_error_code(zkr::client_errc::sasl_auth_failed).message().find("SASL") != std::string::npos);
  CHECK(make_error_code(zkr::client_errc::sasl_unsupported).message().find("SASL") != std::string::npos);
}
