#include <algorithm>
#include <fstream>
#include <zkr/testing/java.hpp>
#include <zkr/testing/server_options.hpp>
#include <zkr/testing/test_certificates.hpp>

#include "run_tool.hpp"
#include "scratch_dir.hpp"

namespace zkr::testing {
namespace fs = std::filesystem;
namespace {

constexpr const char* organization = "/O=zkr-test";
constexpr const char* validity_days = "3650";

fs::path openssl() {
  if (auto found = detail::find_on_path("openssl")) return *found;
  throw TestingError("openssl not found on $PATH: install openssl (apt-get install openssl)");
}

// keytool from the JDK of the java the servers run, else from $PATH.
fs::path keytool() {
  std::error_code ec;
  const fs::path beside_java = fs::canonical(find_java(), ec).parent_path() / "keytool";
  if (!ec && detail::is_executable_file(beside_java)) return beside_java;
  if (auto found = detail::find_on_path("keytool")) return *found;
  throw TestingError("keytool not found: install a JDK (apt-get install default-jdk-headless)");
}

bool valid_name(const std::string& name) {
  if (name.empty() || name == "server" || name == "ca" || name == "foreign-ca" || name == "truststore")
    return false;
  for (char c : name) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (!ok) return false;
  }
  return true;
}

// Runs the openssl / keytool steps in one directory, logging to openssl.log there.
class Pki {
 public:
  explicit Pki(fs::path dir) : dir_(std::move(dir)), openssl_(openssl()) {}

  fs::path file(const std::string& name) const { return dir_ / name; }

  void make_ca(const std::string& name, const std::string& common_name) {
    ssl({"req", "-x509", "-newkey", "rsa:2048", "-sha256", "-days", validity_days, "-noenc", "-keyout",
         file(name + ".key"), "-out", file(name + ".pem"), "-subj",
         std::string(organization) + "/CN=" + common_name, "-addext", "basicConstraints=critical,CA:TRUE",
         "-addext", "keyUsage=critical,keyCertSign,cRLSign"},
        "make the test CA " + name);
  }

  // <name>.key (encrypted with `password` unless empty) and <name>.pem, signed by <ca>.pem / <ca>.key.
  void issue(const std::string& name, const std::string& ca, const std::string& subject,
             const std::string& extensions, const std::string& password) {
    const std::string what = "make the test certificate " + name;
    std::vector<std::string> genkey{"genpkey", "-quiet",           "-algorithm",
                                    "RSA",     "-pkeyopt",         "rsa_keygen_bits:2048",
                                    "-out",    file(name + ".key")};
    std::vector<std::string> request{"req",   "-new",  "-key", file(name + ".key"),
                                     "-subj", subject, "-out", file(name + ".csr")};
    if (!password.empty()) {
      genkey.insert(genkey.end(), {"-aes-256-cbc", "-pass", "pass:" + password});
      request.insert(request.end(), {"-passin", "pass:" + password});
    }
    ssl(genkey, what);
    ssl(request, what);
    std::ofstream(file(name + ".ext")) << extensions << '\n';
    ssl({"x509", "-req", "-in", file(name + ".csr"), "-CA", file(ca + ".pem"), "-CAkey", file(ca + ".key"),
         "-CAcreateserial", "-days", validity_days, "-sha256", "-extfile", file(name + ".ext"), "-out",
         file(name + ".pem")},
        what);
    std::error_code ec;
    fs::remove(file(name + ".csr"), ec);
    fs::remove(file(name + ".ext"), ec);
    fs::permissions(file(name + ".key"), fs::perms::owner_read | fs::perms::owner_write, ec);
  }

  // <name>.p12: the certificate, its key and the issuing CA, for Java.
  void key_store(const std::string& name, const std::string& ca, const std::string& password) {
    std::vector<std::string> args{
        "pkcs12",    "-export",           "-name",    name,
        "-in",       file(name + ".pem"), "-inkey",   file(name + ".key"),
        "-certfile", file(ca + ".pem"),   "-passout", std::string("pass:") + TestCertificates::store_password,
        "-out",      file(name + ".p12")};
    if (!password.empty()) args.insert(args.end(), {"-passin", "pass:" + password});
    ssl(args, "make the key store " + name + ".p12");
  }

  // truststore.p12 with <ca>.pem as a trusted entry (openssl 3.0 cannot mark an entry trusted for Java).
  void trust_store(const std::string& ca) {
    detail::run_tool({keytool().string(), "-importcert", "-noprompt", "-alias", ca, "-file",
                      file(ca + ".pem"), "-keystore", file("truststore.p12"), "-storetype", "PKCS12",
                      "-storepass", TestCertificates::store_password},
                     file("openssl.log"), "make the trust store");
  }

 private:
  void ssl(std::vector<std::string> args, const std::string& what) {
    args.insert(args.begin(), openssl_.string());
    detail::run_tool(args, file("openssl.log"), what);
  }

  fs::path dir_;
  fs::path openssl_;
};

constexpr const char* server_usage =
    "extendedKeyUsage=serverAuth,clientAuth\n"
    "keyUsage=critical,digitalSignature,keyEncipherment";
constexpr const char* client_extensions =
    "extendedKeyUsage=clientAuth\n"
    "keyUsage=critical,digitalSignature,keyEncipherment";

}  // namespace

std::string TlsClientFiles::c_client_cert_string() const {
  std::string s = ca.string() + "," + certificate.string() + "," + key.string();
  if (!key_password.empty()) s += "," + key_password;
  return s;
}

TestCertificates::TestCertificates(std::optional<fs::path> dir)
    : dir_(std::make_unique<detail::ScratchDir>(dir, "certs")) {
  Pki pki(dir_->path());
  pki.make_ca("ca", "zkr test CA");
  pki.make_ca("foreign-ca", "zkr foreign CA");
  pki.issue("server", "ca", std::string(organization) + "/CN=localhost",
            std::string("subjectAltName=DNS:localhost,IP:127.0.0.1\n") + server_usage, "");
  pki.key_store("server", "ca", "");
  pki.trust_store("ca");
  client("probe");
}

TestCertificates::~TestCertificates() = default;

TlsClientFiles TestCertificates::client(const std::string& name, const ClientCertificateOptions& options) {
  if (!valid_name(name)) {
    throw TestingError("TestCertificates::client: invalid name '" + name +
                       "' (letters, digits, '-' and '_'; not server, ca, foreign-ca or truststore)");
  }
  std::lock_guard lock(mutex_);  // also serializes the CA's serial file
  if (auto it = clients_.find(name); it != clients_.end()) return it->second;
  const std::string ca = options.issuer == CertificateAuthority::test ? "ca" : "foreign-ca";
  Pki pki(dir_->path());
  pki.issue(name, ca, std::string(organization) + "/OU=clients/CN=" + name, client_extensions,
            options.key_password);
  pki.key_store(name, ca, options.key_password);
  TlsClientFiles files{.ca = ca_file(),
                       .certificate = pki.file(name + ".pem"),
                       .key = pki.file(name + ".key"),
                       .key_password = options.key_password,
                       .key_store = pki.file(name + ".p12"),
                       .key_store_password = store_password,
                       .x509_id = "CN=" + name + ",OU=clients,O=zkr-test"};
  return clients_.emplace(name, std::move(files)).first->second;
}

TlsServerOptions TestCertificates::server_options() {
  return TlsServerOptions{.key_store = dir_->path() / "server.p12",
                          .trust_store = dir_->path() / "truststore.p12",
                          .store_password = store_password,
                          .probe = client("probe")};
}

TlsServerOptions TestCertificates::server_options_for(const std::string& name) {
  const bool valid = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
  });
  if (!valid)
    throw TestingError("TestCertificates::server_options_for: invalid name '" + name +
                       "' (letters, digits, '-' and '.')");
  auto options = server_options();
  std::lock_guard lock(mutex_);
  auto it = server_stores_.find(name);
  if (it == server_stores_.end()) {
    const std::string file = "server-" + name;
    Pki pki(dir_->path());
    pki.issue(file, "ca", std::string(organization) + "/CN=" + name,
              "subjectAltName=DNS:" + name + "\n" + server_usage, "");
    pki.key_store(file, "ca", "");
    it = server_stores_.emplace(name, pki.file(file + ".p12")).first;
  }
  options.key_store = it->second;
  return options;
}

fs::path TestCertificates::ca_file() const { return dir_->path() / "ca.pem"; }
fs::path TestCertificates::foreign_ca_file() const { return dir_->path() / "foreign-ca.pem"; }
const fs::path& TestCertificates::dir() const { return dir_->path(); }

}  // namespace zkr::testing
