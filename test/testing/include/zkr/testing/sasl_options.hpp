#pragma once
/// \file
/// SASL settings of a test server (`ServerOptions::sasl`).

#include <filesystem>
#include <map>
#include <optional>
#include <string>

namespace zkr::testing {

/// Kerberos for a test server (GSSAPI): its principal's keys and the KDC's krb5.conf.
/// `TestKdc::server_options()` makes them.
struct KerberosServerOptions {
  /// The krb5.conf naming the realm and its KDC, given to the JVM with `-Djava.security.krb5.conf`.
  std::filesystem::path krb5_conf;
  /// A keytab holding the keys of `principal`.
  std::filesystem::path keytab;
  /// The server's principal, "zookeeper/<host>@<REALM>": the service and host clients name in the exchange.
  std::string principal;
};

/// Runs a test server that requires SASL of every client (unless `required` is false): ZooKeeper's
/// `SASLAuthenticationProvider` with `enforce.auth.enabled=true` and `enforce.auth.schemes=sasl` (a client
/// that does not authenticate gets error -124 and is closed), and a JAAS file whose `Server` section holds
/// either the DIGEST-MD5 users
/// (`DigestLoginModule`) or, with `kerberos`, the server's Kerberos login (`Krb5LoginModule` with its keytab:
/// the server then offers GSSAPI), passed to the JVM with `-Djava.security.auth.login.config`. A DIGEST-MD5
/// user's ACL id is `sasl:<user>`; a Kerberos client's is `sasl:<principal>` (name and realm, as ZooKeeper
/// maps it by default). Four-letter words are not requests and stay open.
struct SaslServerOptions {
  /// DIGEST-MD5 users: name → password (no `"` or `\` in either).
  std::map<std::string, std::string> digest_users;
  /// Kerberos instead of DIGEST-MD5 (with no `digest_users`: ZooKeeper's server offers one mechanism).
  std::optional<KerberosServerOptions> kerberos;
  /// Whether every client must authenticate (`enforce.auth.*`). False: the server offers SASL and a client
  /// may also stay anonymous, so that a benchmark compares both on one server.
  bool required = true;
};

}  // namespace zkr::testing
