// The SASL settings checked at start() and the password file (sasl_settings.hpp), and which transports of
// this build have SASL (sasl.hpp).

#include "sasl_settings.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "../transport.hpp"

namespace zkr {

std::string_view to_string(SaslMechanism m) noexcept {
  return m == SaslMechanism::gssapi ? "GSSAPI" : "DIGEST-MD5";
}

// The C client has SASL where the one linked was built with Cyrus SASL (zookeeper_init_sasl:
// tools/build-zookeeper-tls.sh's build, not Debian's packages; the st flavour: cmake/ZkrSasl.cmake). It
// cannot combine SASL with TLS: a client asking both of it fails at start() with errc::sasl_unsupported
// (client.cpp).
bool sasl_supported(Transport t) noexcept {
  if (t == Transport::automatic) {
    auto resolved = default_transport();
    if (!resolved) return false;
    t = *resolved;
  }
  if (t == Transport::c_client) return ZKR_HAVE_C_CLIENT_SASL && transport_available(Transport::c_client);
  return t == Transport::native && ZKR_HAVE_SASL && transport_available(Transport::native);
}

bool sasl_supported() noexcept { return sasl_supported(Transport::automatic); }

}  // namespace zkr

namespace zkr::detail {

std::string sasl_server_host(const SaslConfig& cfg) {
  if (!cfg.server_host.empty()) return cfg.server_host;
  return "zk-sasl-md5";
}

std::string read_sasl_password(const std::string& path, SaslProblem& problem) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    problem = {errc::sasl_config_error,
               "the password file '" + path + "' cannot be opened (" + std::strerror(errno) + ")"};
    return {};
  }
  std::string pw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    problem = {errc::sasl_config_error, "the password file '" + path + "' cannot be read"};
    return {};
  }
  if (!pw.empty() && pw.back() == '\n') pw.pop_back();
  if (!pw.empty() && pw.back() == '\r') pw.pop_back();
  return pw;
}

SaslProblem check_sasl_settings(const SaslConfig& cfg, Transport transport, bool with_tls) {
  if (!sasl_supported(transport)) {
    return {errc::sasl_unsupported, transport == Transport::native
                                        ? "this build of zkrecipes has no Cyrus SASL (ZKR_SASL, docs/sasl.md)"
                                        : "the " + std::string(to_string(transport)) +
                                              " transport has no SASL support (a C client built without "
                                              "Cyrus SASL: docs/sasl.md)"};
  }
  if (with_tls && transport == Transport::c_client) {
    // zookeeper_init_ssl takes no SASL parameters, zookeeper_init_sasl no certificate: never drop either.
    return {errc::sasl_unsupported,
            "the C client cannot combine SASL and TLS on one connection (the native transport can: "
            "docs/sasl.md)"};
  }
  if (cfg.mechanism == SaslMechanism::gssapi)
    return {errc::sasl_unsupported, "GSSAPI (Kerberos) is not supported yet (docs/sasl.md)"};
  if (cfg.service.empty()) return {errc::sasl_config_error, "the service name is empty"};
  if (cfg.user.empty()) return {errc::sasl_config_error, "DIGEST-MD5 needs a user"};
  if (cfg.password_file.empty()) return {errc::sasl_config_error, "DIGEST-MD5 needs a password file"};
  SaslProblem problem;
  std::string pw = read_sasl_password(cfg.password_file, problem);
  std::fill(pw.begin(), pw.end(), '\0');
  return problem;
}

}  // namespace zkr::detail
