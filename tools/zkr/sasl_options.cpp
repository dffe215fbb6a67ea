// zkr's SASL options (sasl_options.hpp).

#include "sasl_options.hpp"

#include "common.hpp"

namespace zkr::cli {

std::optional<SaslConfig> sasl_settings(const SaslOptionText& text, std::string& error) {
  const auto mechanism = env_or(text.mechanism, "ZKR_SASL_MECHANISM");
  const auto user = env_or(text.user, "ZKR_SASL_USER");
  const auto password_file = env_or(text.password_file, "ZKR_SASL_PASSWORD_FILE");
  const auto service = env_or(text.service, "ZKR_SASL_SERVICE");
  const auto host = env_or(text.host, "ZKR_SASL_HOST");
  const auto realm = env_or(text.realm, "ZKR_SASL_REALM");
  const auto principal = env_or(text.principal, "ZKR_SASL_PRINCIPAL");
  const auto keytab = env_or(text.keytab, "ZKR_SASL_KEYTAB");
  if (user.empty() && principal.empty()) {
    if (!mechanism.empty() || !password_file.empty() || !service.empty() || !host.empty() || !realm.empty() ||
        !keytab.empty())
      error =
          "SASL needs --sasl-user (DIGEST-MD5) or --sasl-principal (GSSAPI), or $ZKR_SASL_USER or "
          "$ZKR_SASL_PRINCIPAL, with the other --sasl-* options";
    return std::nullopt;
  }
  SaslConfig s;
  if (mechanism.empty()) {
    s.mechanism = principal.empty() ? SaslMechanism::digest_md5 : SaslMechanism::gssapi;
  } else if (mechanism == "DIGEST-MD5" || mechanism == "digest-md5") {
    s.mechanism = SaslMechanism::digest_md5;
  } else if (mechanism == "GSSAPI" || mechanism == "gssapi") {
    s.mechanism = SaslMechanism::gssapi;
  } else {
    error = "unknown SASL mechanism '" + mechanism + "' (DIGEST-MD5 or GSSAPI)";
    return std::nullopt;
  }
  if (s.mechanism == SaslMechanism::digest_md5) {
    if (!principal.empty() || !keytab.empty()) {
      error = "--sasl-principal and --sasl-keytab are GSSAPI's (Kerberos), not DIGEST-MD5's";
    } else if (password_file.empty()) {
      error = "DIGEST-MD5 needs --sasl-password-file (or $ZKR_SASL_PASSWORD_FILE)";
    }
  } else {
    if (!user.empty() || !password_file.empty() || !realm.empty()) {
      error =
          "--sasl-user, --sasl-password-file and --sasl-realm are DIGEST-MD5's; GSSAPI (Kerberos) takes "
          "--sasl-principal and --sasl-keytab";
    } else if (principal.empty()) {
      error = "GSSAPI needs --sasl-principal (or $ZKR_SASL_PRINCIPAL)";
    } else if (keytab.empty()) {
      error = "GSSAPI needs --sasl-keytab (or $ZKR_SASL_KEYTAB): zkr takes Kerberos keys from a keytab";
    }
  }
  if (!error.empty()) return std::nullopt;
  s.user = user;
  s.password_file = password_file;
  s.realm = realm;
  s.principal = principal;
  s.keytab = keytab;
  if (!service.empty()) s.service = service;
  s.server_host = host;
  return s;
}

}  // namespace zkr::cli
