#pragma once
/// \file
/// TLS settings of a test server (`ServerOptions::tls`) and the PEM files a TLS client presents to it.

#include <cstdint>
#include <filesystem>
#include <string>

namespace zkr::testing {

/// What a TLS client of a test server needs: the CA that signed the server's certificate, and the client's
/// own certificate and private key, all PEM (the formats the ZooKeeper C client reads), plus a PKCS12 key
/// store with the same certificate and key for Java clients. `TestCertificates::client` makes them.
struct TlsClientFiles {
  /// The CA bundle that verifies the server's certificate.
  std::filesystem::path ca;
  /// The client certificate (leaf first).
  std::filesystem::path certificate;
  /// The client's private key, PKCS#8; encrypted with `key_password` unless that is empty.
  std::filesystem::path key;
  /// The key's passphrase, or empty for an unencrypted key.
  std::string key_password;
  /// PKCS12 key store holding the certificate and key (store and key password `key_store_password`).
  std::filesystem::path key_store;
  std::string key_store_password;
  /// The ACL id the server derives from the certificate (scheme `x509`): the subject in RFC 2253 order,
  /// e.g. "CN=client-a,OU=clients,O=zkr-test".
  std::string x509_id;

  /// The certificate argument of the C client's `zookeeper_init_ssl`: "CA,CERT,KEY[,PASSWORD]". The C client
  /// splits it at commas, so no path or password may contain one.
  std::string c_client_cert_string() const;
};

/// Runs a test server with TLS: ZooKeeper's Netty connection factory (which serves both client ports),
/// `secureClientPort` on 127.0.0.1, the `ssl.*` key and trust stores, and the `x509` authentication provider,
/// so a client certificate becomes the ACL id `x509:<subject>`. `TestCertificates::server_options()` fills
/// in everything but the ports.
struct TlsServerOptions {
  /// PKCS12 key store with the server's certificate and key (one password for store and key, as
  /// ZooKeeper's `X509Util` expects).
  std::filesystem::path key_store;
  /// PKCS12 trust store with the CA whose client certificates the server accepts.
  std::filesystem::path trust_store;
  /// The password of both stores.
  std::string store_password;
  /// `ssl.clientAuth`: "need" (a client certificate is required), "want" or "none".
  std::string client_auth = "need";
  /// The TLS client port on 127.0.0.1; 0 picks a free one. For a `TestingCluster`, member `i` uses
  /// `secure_port + i` when non-zero.
  std::uint16_t secure_port = 0;
  /// Whether the plain client port (`ServerOptions::port`) is opened too. Without it, `port()` is 0,
  /// `connect_string()` throws and four-letter words go over TLS with `probe`.
  bool plain_port = true;
  /// The client certificate the fixture itself uses for four-letter words over TLS (start-up checks and
  /// `four_letter_word` when there is no plain port), with `openssl s_client`.
  TlsClientFiles probe;
};

}  // namespace zkr::testing
