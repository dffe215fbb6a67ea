// The native session's byte stream (tls_stream.hpp): the TLS side. The context and the verdict on a failed
// handshake are the preflight's too (tls/tls_context.hpp).

#include "tls_stream.hpp"

#include <boost/asio/read.hpp>

#include "../tls/tls_context.hpp"

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;

namespace zkr::detail::native {

Stream::Stream(asio::io_context& ioc) : ioc_(ioc), plain_(ioc) {}

Stream::~Stream() { close(); }

bool Stream::use_tls(const TlsConfig& tls, error_code& ec) {
  auto ctx = make_tls_client_context(tls, ec);
  if (!ctx) return false;
  ctx_.emplace(std::move(*ctx));
  return true;
}

void Stream::close() {
  error_code ignored;
  if (plain_.is_open()) plain_.close(ignored);
  if (!tls_) return;
  // No close_notify: the session is over on this connection either way, and the server needs none. The
  // connection itself stays until its pending operations have completed (they hold it).
  if (tls_->next_layer().is_open()) tls_->next_layer().close(ignored);
  tls_.reset();
}

void Stream::async_handshake(const std::string& host, bool verify_host_name,
                             unique_function<void(TlsVerdict)> done) {
  auto c = tls_;
  expect_peer_name(c->native_handle(), host, verify_host_name);
  c->async_handshake(ssl::stream_base::client, [c, host, done = std::move(done)](error_code ec) mutable {
    if (!ec) return done({TlsVerdict::Outcome::verified, {}, {}, {}});
    done(handshake_verdict(c->native_handle(), ec, host));
  });
}

std::string Stream::refusal_after_handshake(const error_code& ec) const {
  return tls_ ? detail::refusal_after_handshake(ec) : std::string();
}

void Stream::write(asio::const_buffer buffer, error_code& ec) {
  if (tls_)
    asio::write(*tls_, buffer, ec);
  else
    asio::write(plain_, buffer, ec);
}

std::size_t Stream::read_some(asio::mutable_buffer buffer, error_code& ec) {
  return tls_ ? tls_->read_some(buffer, ec) : plain_.read_some(buffer, ec);
}

bool Stream::input_pending() const { return tls_ && SSL_pending(tls_->native_handle()) > 0; }

}  // namespace zkr::detail::native
