// zkrecipes's own TLS client side over OpenSSL (tls_context.hpp): the context, the expected peer name, the
// reading of a failed handshake.

#include "tls_context.hpp"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

#include <boost/asio/error.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/error.hpp>
#include <cstring>

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;

namespace zkr::detail {
namespace {

bool is_ip_address(const std::string& host) {
  error_code ec;
  (void)asio::ip::make_address(host, ec);
  return !ec;
}

/// Afterwards: no password, and no prompt on the terminal (OpenSSL's default callback's).
int no_password(char*, int, int, void*) { return 0; }

error_code last_openssl_error() {
  unsigned long e = 0, last = 0;
  while ((e = ERR_get_error()) != 0) last = e;
  return {static_cast<int>(last), asio::error::get_ssl_category()};
}

}  // namespace

int pem_password(char* buf, int size, int, void* userdata) {
  const auto* pw = static_cast<const std::string*>(userdata);
  if (pw == nullptr || pw->empty() || static_cast<int>(pw->size()) > size) return 0;
  std::memcpy(buf, pw->data(), pw->size());
  return static_cast<int>(pw->size());
}

std::optional<ssl::context> make_tls_client_context(const TlsConfig& tls, error_code& ec) {
  ssl::context ctx(ssl::context::tls_client);
  ec = {};
  SSL_CTX* native = ctx.native_handle();
  SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
  ctx.set_verify_mode(ssl::verify_peer, ec);
  if (!ec) ctx.load_verify_file(tls.ca_file, ec);
  if (!ec) ctx.use_certificate_chain_file(tls.cert_file, ec);
  if (ec) return std::nullopt;
  std::string password = tls.key_password;
  SSL_CTX_set_default_passwd_cb(native, pem_password);
  SSL_CTX_set_default_passwd_cb_userdata(native, &password);
  ERR_clear_error();
  const bool key_loaded = SSL_CTX_use_PrivateKey_file(native, tls.key_file.c_str(), SSL_FILETYPE_PEM) == 1 &&
                          SSL_CTX_check_private_key(native) == 1;
  SSL_CTX_set_default_passwd_cb_userdata(native, nullptr);
  SSL_CTX_set_default_passwd_cb(native, no_password);
  OPENSSL_cleanse(password.data(), password.size());
  if (!key_loaded) {
    ec = last_openssl_error();
    return std::nullopt;
  }
  return ctx;
}

void expect_peer_name(SSL* ssl, const std::string& host, bool verify_host_name) {
  const bool address = is_ip_address(host);
  if (!address) SSL_set_tlsext_host_name(ssl, host.c_str());
  if (!verify_host_name) return;
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (address) {
    X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str());
  } else {
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    X509_VERIFY_PARAM_set1_host(param, host.c_str(), 0);
  }
}

TlsVerdict handshake_verdict(SSL* ssl, const error_code& ec, const std::string& host) {
  using O = TlsVerdict::Outcome;
  const error_code refused = client_errc::tls_handshake_failed;
  const long verify = SSL_get_verify_result(ssl);
  if (verify != X509_V_OK) {
    std::string why = X509_verify_cert_error_string(verify);
    if (verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH)
      return {O::refused, refused, {}, "its certificate does not name the host '" + host + "' (" + why + ")"};
    return {O::refused, refused, {}, "its certificate failed verification against ca_file: " + why};
  }
  if (ec == ssl::error::stream_truncated || ec == asio::error::eof || ec == asio::error::connection_reset)
    return {
        O::suspect, refused, {}, "it closed the connection during the TLS handshake (a plain-text port?)"};
  if (ec.category() == asio::error::get_ssl_category())
    return {O::refused, refused, {}, "the TLS handshake failed: " + ec.message()};
  return {O::unreachable, {}, {}, "TLS handshake: " + ec.message()};
}

std::string refusal_after_handshake(const error_code& ec) {
  if (ec.category() == asio::error::get_ssl_category() && ec != ssl::error::stream_truncated)
    return "it refused our client certificate: " + ec.message();
  return {};
}

}  // namespace zkr::detail
