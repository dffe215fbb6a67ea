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
  if (user.empty()) {
    if (!mechanism.empty() || !password_file.empty() || !service.empty() || !host.empty() || !realm.empty())
      error = "SASL needs --sasl-user (or $ZKR_SASL_USER) with the other --sasl-* options";
    return std::nullopt;
  }
  SaslConfig s;
  if (mechanism.empty() || mechanism == "DIGEST-MD5" || mechanism == "digest-md5") {
    s.mechanism = SaslMechanism::digest_md5;
  } else if (mechanism == "GSSAPI" || mechanism == "gssapi") {
    s.mechanism = SaslMechanism::gssapi;
  } else {
    error = "unknown SASL mechanism '" + mechanism + "' (DIGEST-MD5 or GSSAPI)";
    return std::nullopt;
  }
  if (password_file.empty() && s.mechanism == SaslMechanism::digest_md5) {
    error = "DIGEST-MD5 needs --sasl-password-file (or $ZKR_SASL_PASSWORD_FILE)";
    return std::nullopt;
  }
  s.user = user;
  s.password_file = password_file;
  if (!service.empty()) s.service = service;
  s.server_host = host;
  s.realm = realm;
  return s;
}

}  // namespace zkr::cli
