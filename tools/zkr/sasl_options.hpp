#pragma once
// zkr's SASL options (--sasl-*), each defaulting to its environment variable (ZKR_SASL_*): docs/cli.md.

#include <optional>
#include <string>
#include <zkr/framework/sasl.hpp>

namespace zkr::cli {

struct SaslOptionText {
  std::string mechanism, user, password_file, service, host, realm;
};

/// The SASL settings from the --sasl-* options (ZKR_SASL_MECHANISM, ZKR_SASL_USER, ZKR_SASL_PASSWORD_FILE,
/// ZKR_SASL_SERVICE, ZKR_SASL_HOST, ZKR_SASL_REALM). nullopt and `error` empty: no SASL (none given);
/// `error` set: a usage error (an unknown mechanism, a setting without --sasl-user). The password file is
/// only named here: the client reads it at each connection (start() refuses an unreadable one).
std::optional<SaslConfig> sasl_settings(const SaslOptionText& text, std::string& error);

}  // namespace zkr::cli
