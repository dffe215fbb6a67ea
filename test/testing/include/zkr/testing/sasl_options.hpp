#pragma once
/// \file
/// SASL settings of a test server (`ServerOptions::sasl`).

#include <map>
#include <string>

namespace zkr::testing {

/// Runs a test server that requires SASL of every client: ZooKeeper's `SASLAuthenticationProvider` with
/// `enforce.auth.enabled=true` and `enforce.auth.schemes=sasl` (a client that does not authenticate gets
/// error -124 and is closed), and a JAAS file whose `Server` section (`DigestLoginModule`) holds the
/// DIGEST-MD5 users, passed to the JVM with `-Djava.security.auth.login.config`. A user's ACL id is
/// `sasl:<user>`. Four-letter words are not requests and stay open.
struct SaslServerOptions {
  /// DIGEST-MD5 users: name → password (no `"` or `\` in either).
  std::map<std::string, std::string> digest_users;
};

}  // namespace zkr::testing
