#pragma once
// The SASL settings (ClientConfig::sasl) checked before a client starts, and the password file read at each
// connection: what the transports share. The exchange itself is the native transport's
// (native/sasl_exchange.hpp).

#include <optional>
#include <string>
#include <string_view>
#include <zkr/framework/error.hpp>
#include <zkr/framework/sasl.hpp>

namespace zkr::detail {

/// A refusal of the settings: the code, and a reason naming the setting (never a secret).
struct SaslProblem {
  error_code ec;
  std::string reason;
};

/// Whether `transport` (resolved, not automatic) can authenticate `cfg` with SASL and its mechanism, on a TLS
/// connection when `with_tls`, and whether `cfg` is complete for its mechanism: a readable password file
/// (DIGEST-MD5), a principal and a readable keytab holding its keys (GSSAPI). Empty `ec` = fine.
SaslProblem check_sasl_settings(const SaslConfig& cfg, Transport transport, bool with_tls);

/// The password in `path`, without one trailing newline (and carriage return); empty with `problem` set
/// when the file cannot be read.
std::string read_sasl_password(const std::string& path, SaslProblem& problem);

/// The host name the exchange names the server by: `cfg.server_host`, else the mechanism's default:
/// "zk-sasl-md5" for DIGEST-MD5, `connected_host` (the connect string's host being connected to) for GSSAPI.
std::string sasl_server_host(const SaslConfig& cfg, std::string_view connected_host = {});

/// Who the client authenticates as, for the log: the user (DIGEST-MD5) or the principal (GSSAPI).
const std::string& sasl_identity(const SaslConfig& cfg) noexcept;

}  // namespace zkr::detail
