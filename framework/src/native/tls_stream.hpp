#pragma once
// The native session's byte stream: a TCP socket, or TLS over one (OpenSSL through Asio's ssl::stream) when
// the client is configured for TLS (docs/tls.md). Every TLS concern of the native transport is here: the
// context (built once per session from the TlsConfig, holding no password), a fresh TLS connection per
// attempt with the dialled host's name expected of the server's certificate (SNI and the host-name check,
// on every connection), and the handshake's outcome as a verdict (tls/tls_verdict.hpp) with its cause. Over
// plain text a read or a write costs one branch more than on the socket itself.
//
// Lifetimes: a TLS connection lives as long as an operation on it is pending (its handlers hold it), so
// that starting the next connection while the last one's cancelled operations are still queued is safe.

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/framework/detail/unique_function.hpp>

#include "../tls/tls_verdict.hpp"

namespace zkr::detail::native {

class Stream {
 public:
  using tcp = boost::asio::ip::tcp;
  using TlsConnection = boost::asio::ssl::stream<tcp::socket>;

  explicit Stream(boost::asio::io_context& ioc);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  /// Speaks TLS with `tls` from the next connection on: builds the context (the files are read now).
  /// False, with `ec` and nothing changed, when they do not load.
  bool use_tls(const TlsConfig& tls, error_code& ec);
  /// Whether the connections are TLS ones.
  bool tls() const noexcept { return ctx_.has_value(); }

  /// Starts a new connection (the last one closed first): TCP to the first of `endpoints` that accepts;
  /// then, over TLS, `async_handshake`.
  template <class Endpoints, class Handler>
  void async_connect(const Endpoints& endpoints, Handler&& handler) {
    close();
    if (!ctx_) return boost::asio::async_connect(plain_, endpoints, std::forward<Handler>(handler));
    tls_ = std::make_shared<TlsConnection>(ioc_, *ctx_);
    boost::asio::async_connect(tls_->next_layer(), endpoints,
                               [c = tls_, h = std::forward<Handler>(handler)](
                                   error_code ec, const tcp::endpoint& e) mutable { h(ec, e); });
  }
  /// The TLS handshake of the connection just made, with the server reached as `host` (a name or an
  /// address, as dialled): `done(verdict)`, `verified` when it passed, else the preflight's reading of the
  /// failure (tls/tls_context.hpp's handshake_verdict: refused, suspect or unreachable, with the reason).
  void async_handshake(const std::string& host, bool verify_host_name,
                       unique_function<void(TlsVerdict)> done);
  /// Why the first read after the handshake failed with `ec`, when it is the server refusing our
  /// certificate (TLS 1.3 servers say so then); empty otherwise, and over plain text.
  std::string refusal_after_handshake(const error_code& ec) const;
  /// Whether a read's `ec` says the server closed the connection (with or without TLS's close_notify).
  static bool closed_by_peer(const error_code& ec) noexcept {
    return ec == boost::asio::error::eof || ec == boost::asio::ssl::error::stream_truncated;
  }

  tcp::socket& socket() noexcept { return tls_ ? tls_->next_layer() : plain_; }
  bool is_open() const noexcept { return tls_ ? tls_->next_layer().is_open() : plain_.is_open(); }
  void close();

  template <class Buffers, class Handler>
  void async_read_some(const Buffers& buffers, Handler&& handler) {
    if (!tls_) return plain_.async_read_some(buffers, std::forward<Handler>(handler));
    tls_->async_read_some(buffers, [c = tls_, h = std::forward<Handler>(handler)](
                                       error_code ec, std::size_t n) mutable { h(ec, n); });
  }
  template <class Buffers, class Handler>
  void async_write(const Buffers& buffers, Handler&& handler) {
    if (!tls_) return boost::asio::async_write(plain_, buffers, std::forward<Handler>(handler));
    boost::asio::async_write(
        *tls_, buffers,
        [c = tls_, h = std::forward<Handler>(handler)](error_code ec, std::size_t n) mutable { h(ec, n); });
  }
  // Blocking, for the close handshake (NativeSession::close_on_wire).
  void write(boost::asio::const_buffer buffer, error_code& ec);
  std::size_t read_some(boost::asio::mutable_buffer buffer, error_code& ec);
  /// Whether bytes already read from the socket wait in the TLS layer (the socket may then be silent).
  bool input_pending() const;

 private:
  boost::asio::io_context& ioc_;
  tcp::socket plain_;
  std::optional<boost::asio::ssl::context> ctx_;
  std::shared_ptr<TlsConnection> tls_;
};

}  // namespace zkr::detail::native
