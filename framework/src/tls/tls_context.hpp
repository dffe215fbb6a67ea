#pragma once
// The OpenSSL client side of zkrecipes's own TLS connections, shared by the preflight (tls_preflight.hpp)
// and the native transport (native/tls_stream.hpp): the context built from a TlsConfig, a connection's
// expected peer name, and what a failed handshake means.

#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <optional>
#include <string>
#include <zkr/framework/curator_framework.hpp>

#include "tls_verdict.hpp"

namespace zkr::detail {

/// A client context that trusts `tls.ca_file` only (never the system's store), requires the server's
/// certificate (TLS 1.2 at least), and presents `tls.cert_file` with `tls.key_file`. The key's password
/// reaches OpenSSL through the context's password callback while the key loads; the context keeps no copy
/// and never prompts on a terminal. Empty, with `ec` set, when a file does not load (check_tls_settings
/// says which and why).
std::optional<boost::asio::ssl::context> make_tls_client_context(const TlsConfig& tls, error_code& ec);

/// OpenSSL's PEM password callback: the password `userdata` points to (a `const std::string*`), never a
/// prompt on the terminal (OpenSSL's default callback reads one when it has no password).
int pem_password(char* buf, int size, int rwflag, void* userdata);

/// Prepares connection `ssl`, before its handshake, for a server reached as `host` (a name or an address,
/// as in the connect string): SNI for a name and, with `verify_host_name`, the name or address its
/// certificate must carry (subjectAltName; no partial wildcards).
void expect_peer_name(SSL* ssl, const std::string& host, bool verify_host_name);

/// What the failed client handshake of `ssl` with `host` (`ec`) means, with its reason for a log line (the
/// verdict's `server` is left to the caller): `refused` when the server's certificate failed our checks or
/// the server refused the handshake, `suspect` when it closed the connection in the middle of it (a
/// plain-text port?), both with client_errc::tls_handshake_failed; else (a cancelled or reset connection)
/// `unreachable`.
TlsVerdict handshake_verdict(SSL* ssl, const error_code& ec, const std::string& host);

/// Why the first read after a finished handshake failed, when the server refused us there (a TLS 1.3
/// server checks the client's certificate after the client's side of the handshake, and says no with an
/// alert); empty when `ec` is no such refusal.
std::string refusal_after_handshake(const error_code& ec);

}  // namespace zkr::detail
