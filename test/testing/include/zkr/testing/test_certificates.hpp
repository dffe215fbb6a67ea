#pragma once
/// \file
/// `TestCertificates`: a throw-away PKI for TLS test servers and clients, made at test time.

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <zkr/testing/tls_options.hpp>

namespace zkr::testing {

namespace detail {
class ScratchDir;
}  // namespace detail

/// Which CA signs a client certificate.
enum class CertificateAuthority {
  test,     ///< the CA the test servers trust
  foreign,  ///< an unrelated CA: a server made from these certificates refuses its clients
};

/// How `TestCertificates::client` makes a client certificate.
struct ClientCertificateOptions {
  CertificateAuthority issuer = CertificateAuthority::test;
  /// The passphrase of the PEM key (AES-256 encrypted PKCS#8); empty for an unencrypted key.
  std::string key_password = "keypass";
};

/// Makes, with `openssl` and the JDK's `keytool`, in a scratch directory: a test CA (`ca.pem`), a foreign CA
/// (`foreign-ca.pem`), a server certificate for `localhost` / `127.0.0.1` signed by the test CA in a PKCS12
/// key store (`server.p12`), a PKCS12 trust store holding the test CA (`truststore.p12`), and on demand
/// client certificates (`<name>.pem`, `<name>.key`, `<name>.p12`) with the subject
/// "/O=zkr-test/OU=clients/CN=<name>". RSA 2048, valid for ten years. Takes about 2 s.
///
/// Thread-safety: all members may be called concurrently. The files live as long as this object (longer if
/// `dir` was given, or `ZKR_TESTING_KEEP_DIRS` is set; see `ServerOptions::data_dir`).
class TestCertificates {
 public:
  /// The password of every PKCS12 store made here.
  static constexpr const char* store_password = "changeit";

  /// Makes the CAs, the server's stores and the client certificate "probe" (used by the fixture's own
  /// four-letter words over TLS).
  /// \throws TestingError when `openssl` or `keytool` is missing or fails (with its output).
  explicit TestCertificates(std::optional<std::filesystem::path> dir = std::nullopt);
  /// Removes a temporary directory. Never throws.
  ~TestCertificates();
  TestCertificates(const TestCertificates&) = delete;
  TestCertificates& operator=(const TestCertificates&) = delete;

  /// The files of client certificate `name` (letters, digits, `-`, `_`), made at the first call for that
  /// name; later calls return the same files (the options of the first call win).
  /// \throws TestingError as the constructor, and for an invalid name.
  TlsClientFiles client(const std::string& name, const ClientCertificateOptions& options = {});
  /// TLS settings for `ServerOptions::tls`: the server's stores, client certificates of the test CA
  /// required, the plain port kept (set `plain_port` to false to close it), and "probe" as the probe.
  TlsServerOptions server_options();
  /// As `server_options()`, but the server presents a certificate of the test CA for the DNS name `name`
  /// alone (no address), made at the first call for that name (`server-<name>.p12`): a server that a client
  /// dialling it by another name must refuse. `name`: letters, digits, `-` and `.`.
  /// \throws TestingError as the constructor, and for an invalid name.
  TlsServerOptions server_options_for(const std::string& name);

  /// The test CA's certificate (PEM).
  std::filesystem::path ca_file() const;
  /// The foreign CA's certificate (PEM).
  std::filesystem::path foreign_ca_file() const;
  /// The directory holding every file.
  const std::filesystem::path& dir() const;

 private:
  std::unique_ptr<detail::ScratchDir> dir_;
  std::mutex mutex_;
  std::map<std::string, TlsClientFiles> clients_;
  std::map<std::string, std::filesystem::path> server_stores_;
};

}  // namespace zkr::testing
