// The TLS settings checked with OpenSSL the way the ZooKeeper C client will load them (tls_checks.hpp). Built
// with TLS (the C client's, ZKR_ZOOKEEPER_TLS, or the native transport's); tls_unsupported.cpp otherwise.

#include "tls_checks.hpp"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

#include "tls_context.hpp"

namespace zkr::detail {

namespace {

struct CtxFree {
  void operator()(SSL_CTX* c) const noexcept { SSL_CTX_free(c); }
};
struct X509Free {
  void operator()(X509* x) const noexcept { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const noexcept { EVP_PKEY_free(k); }
};
struct FileClose {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};

/// OpenSSL's last error on this thread as text (the queue is cleared).
std::string openssl_reason() {
  unsigned long e = 0, last = 0;
  while ((e = ERR_get_error()) != 0) last = e;
  if (last == 0) return "no reason given";
  char buf[256];
  ERR_error_string_n(last, buf, sizeof buf);
  // "error:0480006C:PEM routines::no start line" -> "PEM routines::no start line"
  std::string s = buf;
  const auto pos = s.find(':', s.find(':') + 1);
  return pos == std::string::npos ? s : s.substr(pos + 1);
}

TlsProblem file_problem(const std::string& file, std::string reason) {
  return {client_errc::tls_file_error, file, std::move(reason)};
}

/// Empty when `file` can be opened for reading, else why not.
std::string unreadable(const std::string& file) {
  std::unique_ptr<std::FILE, FileClose> f(std::fopen(file.c_str(), "rb"));
  if (!f) return std::strerror(errno);
  return {};
}

bool whole_file_contains(const std::string& file, const char* text) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str().find(text) != std::string::npos;
}

TlsProblem check_certificate_dates(const std::string& file) {
  std::unique_ptr<std::FILE, FileClose> f(std::fopen(file.c_str(), "rb"));
  if (!f) return file_problem(file, std::strerror(errno));
  std::unique_ptr<X509, X509Free> leaf(PEM_read_X509(f.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (!leaf) return {};  // SSL_CTX_use_certificate_chain_file has said it loads
  if (X509_cmp_current_time(X509_get0_notAfter(leaf.get())) < 0)
    return file_problem(file, "the client certificate has expired");
  if (X509_cmp_current_time(X509_get0_notBefore(leaf.get())) > 0)
    return file_problem(file, "the client certificate is not valid yet");
  return {};
}

}  // namespace

TlsProblem check_tls_settings(const TlsConfig& tls) {
  const std::pair<const char*, const std::string*> files[] = {
      {"ca_file", &tls.ca_file}, {"cert_file", &tls.cert_file}, {"key_file", &tls.key_file}};
  for (const auto& [name, path] : files) {
    if (path->empty())
      return file_problem(name, std::string("no ") + name +
                                    " given (the ZooKeeper C client needs a CA, a "
                                    "client certificate and its key)");
    if (path->find(',') != std::string::npos)
      return file_problem(*path, "the path holds a comma, which the ZooKeeper C client cannot take");
    if (auto why = unreadable(*path); !why.empty()) return file_problem(*path, why);
  }
  if (tls.key_password.find(',') != std::string::npos)
    return {client_errc::tls_key_error, "key_password",
            "the password holds a comma, which the ZooKeeper C client cannot take"};

  ERR_clear_error();
  std::unique_ptr<SSL_CTX, CtxFree> ctx(SSL_CTX_new(TLS_client_method()));
  if (!ctx) return {client_errc::tls_file_error, "TLS", "cannot make a TLS context: " + openssl_reason()};
  if (SSL_CTX_load_verify_locations(ctx.get(), tls.ca_file.c_str(), nullptr) != 1)
    return file_problem(tls.ca_file, "not a PEM CA certificate file: " + openssl_reason());
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), tls.cert_file.c_str()) != 1)
    return file_problem(tls.cert_file, "not a PEM certificate chain: " + openssl_reason());
  if (auto p = check_certificate_dates(tls.cert_file); p.ec) return p;

  // The key alone first (does the password open it?), then against the certificate.
  std::string password = tls.key_password;
  std::unique_ptr<EVP_PKEY, KeyFree> key;
  {
    std::unique_ptr<std::FILE, FileClose> f(std::fopen(tls.key_file.c_str(), "rb"));
    if (!f) return file_problem(tls.key_file, std::strerror(errno));
    key.reset(PEM_read_PrivateKey(f.get(), nullptr, pem_password, &password));
  }
  if (!key) {
    const auto reason = openssl_reason();
    if (whole_file_contains(tls.key_file, "ENCRYPTED")) {
      if (tls.key_password.empty())
        return {client_errc::tls_key_error, tls.key_file,
                "the key is encrypted and no key_password was given"};
      return {client_errc::tls_key_error, tls.key_file, "the key_password does not open the key"};
    }
    return file_problem(tls.key_file, "not a PEM private key: " + reason);
  }
  if (SSL_CTX_use_PrivateKey(ctx.get(), key.get()) != 1 || SSL_CTX_check_private_key(ctx.get()) != 1)
    return {client_errc::tls_key_error, tls.key_file,
            "the key does not match the certificate " + tls.cert_file + ": " + openssl_reason()};
  return {};
}

std::string c_client_cert_string(const TlsConfig& tls) {
  std::string s = tls.ca_file + "," + tls.cert_file + "," + tls.key_file;
  if (!tls.key_password.empty()) s += "," + tls.key_password;
  return s;
}

}  // namespace zkr::detail
