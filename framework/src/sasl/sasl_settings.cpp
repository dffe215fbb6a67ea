// The SASL settings checked at start() and the password file (sasl_settings.hpp), and which transports of
// this build have SASL (sasl.hpp).

#include "sasl_settings.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "../transport.hpp"
#if ZKR_HAVE_GSSAPI
#include "gss_credentials.hpp"
#endif

namespace zkr {

std::string_view to_string(SaslMechanism m) noexcept {
  return m == SaslMechanism::gssapi ? "GSSAPI" : "DIGEST-MD5";
}

// The C client has SASL where the one linked was built with Cyrus SASL (zookeeper_init_sasl:
// tools/build-zookeeper-tls.sh's build, not Debian's packages; either flavour: cmake/ZkrSasl.cmake). It
// cannot combine SASL with TLS: a client asking both of it fails at start() with
// client_errc::sasl_unsupported (client.cpp).
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

// GSSAPI: where the build links MIT krb5 (ZKR_HAVE_GSSAPI, cmake/ZkrSasl.cmake): on the native transport, and
// on the single-threaded C client where it has SASL, with the client's own ticket cache on its I/O thread
// (ZKR_HAVE_C_CLIENT_KERBEROS, sasl/c_client_kerberos.hpp).
bool sasl_supported(SaslMechanism m, Transport t) noexcept {
  if (!sasl_supported(t)) return false;
  if (m == SaslMechanism::digest_md5) return true;
  if (t == Transport::automatic) t = *default_transport();  // sasl_supported(t) said it resolves
  return t == Transport::native ? ZKR_HAVE_GSSAPI : ZKR_HAVE_C_CLIENT_KERBEROS;
}

}  // namespace zkr

namespace zkr::detail {

std::string sasl_server_host(const SaslConfig& cfg, std::string_view connected_host) {
  if (!cfg.server_host.empty()) return cfg.server_host;
  if (cfg.mechanism == SaslMechanism::gssapi) return std::string(connected_host);
  return "zk-sasl-md5";
}

const std::string& sasl_identity(const SaslConfig& cfg) noexcept {
  return cfg.mechanism == SaslMechanism::gssapi ? cfg.principal : cfg.user;
}

std::string read_sasl_password(const std::string& path, SaslProblem& problem) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    problem = {client_errc::sasl_config_error,
               "the password file '" + path + "' cannot be opened (" + std::strerror(errno) + ")"};
    return {};
  }
  std::string pw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    problem = {client_errc::sasl_config_error, "the password file '" + path + "' cannot be read"};
    return {};
  }
  if (!pw.empty() && pw.back() == '\n') pw.pop_back();
  if (!pw.empty() && pw.back() == '\r') pw.pop_back();
  return pw;
}

namespace {

SaslProblem check_gssapi_settings([[maybe_unused]] const SaslConfig& cfg) {
#if ZKR_HAVE_GSSAPI
  if (cfg.principal.empty()) return {client_errc::sasl_config_error, "GSSAPI needs a principal"};
  if (cfg.keytab.empty()) return {client_errc::sasl_config_error, "GSSAPI needs a keytab"};
  if (!std::ifstream(cfg.keytab, std::ios::binary)) {
    return {client_errc::sasl_config_error,
            "the keytab '" + cfg.keytab + "' cannot be opened (" + std::strerror(errno) + ")"};
  }
  return check_gssapi_keytab(cfg.principal, cfg.keytab);
#else
  return {client_errc::sasl_unsupported, "this build of zkrecipes has no Kerberos for GSSAPI"};
#endif
}

}  // namespace

SaslProblem check_sasl_settings(const SaslConfig& cfg, Transport transport, bool with_tls) {
  if (!sasl_supported(transport)) {
    return {client_errc::sasl_unsupported,
            transport == Transport::native
                ? "this build of zkrecipes has no Cyrus SASL (ZKR_SASL, docs/sasl.md)"
                : "the " + std::string(to_string(transport)) +
                      " transport has no SASL support (a C client built without Cyrus SASL: docs/sasl.md)"};
  }
  if (with_tls && transport == Transport::c_client) {
    // zookeeper_init_ssl takes no SASL parameters, zookeeper_init_sasl no certificate: never drop either.
    return {client_errc::sasl_unsupported,
            "the C client cannot combine SASL and TLS on one connection (the native transport can: "
            "docs/sasl.md)"};
  }
  if (!sasl_supported(cfg.mechanism, transport)) {
    return {
        client_errc::sasl_unsupported,
        transport == Transport::native
            ? "this build of zkrecipes has no Kerberos for GSSAPI (MIT krb5's GSS-API, Debian: libkrb5-dev, "
              "not found when it was built: docs/sasl.md)"
        : ZKR_C_CLIENT_MT
            ? "GSSAPI (Kerberos) over the C client needs its single-threaded flavour: the multi-threaded one "
              "runs the exchange on a thread of its own, where the client's ticket cache is not set "
              "(docs/sasl.md)"
            : "this build of zkrecipes has no Kerberos for GSSAPI over the C client (it needs MIT krb5's "
              "GSS-API and the native transport built beside it: docs/sasl.md)"};
  }
  if (cfg.service.empty()) return {client_errc::sasl_config_error, "the service name is empty"};
  if (cfg.mechanism == SaslMechanism::gssapi) return check_gssapi_settings(cfg);
  if (cfg.user.empty()) return {client_errc::sasl_config_error, "DIGEST-MD5 needs a user"};
  if (cfg.password_file.empty()) return {client_errc::sasl_config_error, "DIGEST-MD5 needs a password file"};
  SaslProblem problem;
  std::string pw = read_sasl_password(cfg.password_file, problem);
  std::fill(pw.begin(), pw.end(), '\0');
  return problem;
}

}  // namespace zkr::detail
