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
  gssapi,      ///< Kerberos: a principal's keys from a keytab, checked by the server's own Kerberos login
               ///< (`Krb5LoginModule`); the ACL id is `sasl:<principal>` as the server maps it (by default
               ///< `name@REALM`). On the native transport and the single-threaded C client, where the
               ///< build links MIT krb5 (`sasl_supported(SaslMechanism::gssapi)`)
};

/// "DIGEST-MD5" or "GSSAPI" (the names Cyrus SASL and ZooKeeper use).
std::string_view to_string(SaslMechanism m) noexcept;

/// SASL to the ensemble. Every connection and reconnection authenticates before the client counts as
/// connected and before any request of the caller is sent; a refusal ends the client with a typed error
/// (`client_errc::sasl_auth_failed`, LOST after an earlier state), never a quiet anonymous session.
///
/// Checked at `start()`: that the transport has SASL and the mechanism (`client_errc::sasl_unsupported`),
/// that the settings of the mechanism are there, the password file is readable and the keytab holds the
/// principal's keys (`client_errc::sasl_config_error`). The password is read from its file at each
/// connection, held only while the exchange needs it, and never logged.
///
/// GSSAPI takes the realm and its KDC from MIT krb5's configuration: `/etc/krb5.conf`, or the file
/// `$KRB5_CONFIG` names (process-wide, read by each exchange). The credentials are the client's own: the
/// keys of `principal` from `keytab`, and a ticket cache in memory that belongs to the client and ends with
/// it (never `$KRB5CCNAME` or the default cache), so two clients of one process can be two principals.
struct SaslConfig {
  SaslMechanism mechanism = SaslMechanism::digest_md5;
  /// The service name (the protocol of the SASL exchange): ZooKeeper's is "zookeeper" (Java's
  /// `zookeeper.sasl.client.username`).
  std::string service = "zookeeper";
  /// The server's host name in the exchange. Empty = the mechanism's default: "zk-sasl-md5" for DIGEST-MD5
  /// (the name ZooKeeper's server gives its DIGEST-MD5 side, which it checks in the digest URI); for GSSAPI
  /// the host of the connect string's server being connected to, as written there (Java's client does the
  /// same; the C client takes one host for all: the connect string's when its servers are on one, else their
  /// addresses): the client asks a ticket for `<service>/<host>`, which must be the server's principal
  /// (`zookeeper/zk1.example.com@REALM`). Set it where servers share one principal or are dialled by address.
  std::string server_host;
  /// DIGEST-MD5: the user name (the ACL id becomes `sasl:<user>`).
  std::string user;
  /// DIGEST-MD5: the realm; empty = the one the server offers.
  std::string realm;
  /// DIGEST-MD5: a file whose content is the password (one trailing newline is ignored).
  std::string password_file;
  /// GSSAPI: the client's principal, "name@REALM" (or "name" in krb5.conf's default realm).
  std::string principal;
  /// GSSAPI: a keytab file holding the principal's keys (`kadmin ktadd`).
  std::string keytab;
};

/// Whether the transport can authenticate with SASL (DIGEST-MD5): the native transport where this build links
/// Cyrus SASL (`ZKR_SASL`); the C client (either flavour) where it was built with Cyrus SASL
/// (tools/build-zookeeper-tls.sh's build, not Debian's packages), and never together with TLS there (a client
/// asking both of it fails at `start()` with `client_errc::sasl_unsupported`). `automatic` asks of
/// `default_transport()`.
bool sasl_supported(Transport t) noexcept;
/// `sasl_supported(Transport::automatic)`.
bool sasl_supported() noexcept;
/// Whether `sasl_supported(t)` and the mechanism is there too: DIGEST-MD5 wherever SASL is; GSSAPI where the
/// build links MIT krb5's GSS-API (`gss_acquire_cred_from`, Debian: libkrb5-dev), on the native transport and
/// on the single-threaded C client (where the native transport is built beside it; never over TLS there).
/// Cyrus's GSSAPI plugin (Debian: libsasl2-modules-gssapi-mit) is looked for at connection.
bool sasl_supported(SaslMechanism m, Transport t = Transport::automatic) noexcept;

}  // namespace zkr
