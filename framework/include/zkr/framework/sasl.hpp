#pragma once
/// \file
/// SASL authentication to an ensemble that requires it (ZooKeeper's `SASLAuthenticationProvider`, with
/// `enforce.auth.schemes=sasl` or `sessionRequireClientSASLAuth=true`): the client's settings, and which
/// transports of this build can do it. See docs/sasl.md.

#include <string>
#include <zkr/framework/transport.hpp>

namespace zkr {

/// A SASL mechanism.
enum class SaslMechanism {
  digest_md5,  ///< DIGEST-MD5: a user and a password, checked against the server's JAAS `Server` section
               ///< (`DigestLoginModule`); the ACL id is `sasl:<user>`
  gssapi,      ///< Kerberos; not yet supported: `start()` fails with `errc::sasl_unsupported`
};

/// "DIGEST-MD5" or "GSSAPI" (the names Cyrus SASL and ZooKeeper use).
std::string_view to_string(SaslMechanism m) noexcept;

/// SASL to the ensemble. Every connection and reconnection authenticates before the client counts as
/// connected and before any request of the caller is sent; a refusal ends the client with a typed error
/// (`errc::sasl_auth_failed`, LOST after an earlier state), never a quiet anonymous session.
///
/// Checked at `start()`: that the transport has SASL (`errc::sasl_unsupported`), that the settings of the
/// mechanism are there and the password file is readable (`errc::sasl_config_error`). The password is read
/// from its file at each connection, held only while the exchange needs it, and never logged.
struct SaslConfig {
  SaslMechanism mechanism = SaslMechanism::digest_md5;
  /// The service name (the protocol of the SASL exchange): ZooKeeper's is "zookeeper" (Java's
  /// `zookeeper.sasl.client.username`).
  std::string service = "zookeeper";
  /// The server's host name in the exchange. Empty = the mechanism's default: "zk-sasl-md5" for DIGEST-MD5
  /// (the name ZooKeeper's server gives its DIGEST-MD5 side, which it checks in the digest URI).
  std::string server_host;
  /// DIGEST-MD5: the user name (the ACL id becomes `sasl:<user>`).
  std::string user;
  /// DIGEST-MD5: the realm; empty = the one the server offers.
  std::string realm;
  /// DIGEST-MD5: a file whose content is the password (one trailing newline is ignored).
  std::string password_file;
};

/// Whether the transport can authenticate with SASL (DIGEST-MD5): the native transport where this build links
/// Cyrus SASL (`ZKR_SASL`); the single-threaded C client where it was built with Cyrus SASL
/// (tools/build-zookeeper-tls.sh's build, not Debian's packages), and never together with TLS there (a client
/// asking both of it fails at `start()` with `errc::sasl_unsupported`). `automatic` asks of
/// `default_transport()`.
bool sasl_supported(Transport t) noexcept;
/// `sasl_supported(Transport::automatic)`.
bool sasl_supported() noexcept;

}  // namespace zkr
