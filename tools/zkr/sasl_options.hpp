#pragma once
// zkr's SASL options (--sasl-*), each defaulting to its environment variable (ZKR_SASL_*): docs/cli.md.

#include <optional>
#include <string>
#include <zkr/framework/sasl.hpp>

namespace zkr::cli {

struct SaslOptionText {
  std::string mechanism, user, password_file, service, host, realm, principal, keytab;
};

/// The SASL settings from the --sasl-* options, each defaulting to its variable (ZKR_SASL_MECHANISM,
/// ZKR_SASL_USER, ZKR_SASL_PASSWORD_FILE, ZKR_SASL_SERVICE, ZKR_SASL_HOST, ZKR_SASL_REALM,
/// ZKR_SASL_PRINCIPAL, ZKR_SASL_KEYTAB). SASL is on when a user (DIGEST-MD5) or a principal (GSSAPI) is
/// given. nullopt and `error` empty: no SASL (none given); `error` set: a usage error (an unknown mechanism,
/// a setting with neither, a setting of the other mechanism, a missing password file or keytab). Files are
/// only named here: the client reads them at start() and at each connection (and refuses an unreadable one).
std::optional<SaslConfig> sasl_settings(const SaslOptionText& text, std::string& error);

}  // namespace zkr::cli
