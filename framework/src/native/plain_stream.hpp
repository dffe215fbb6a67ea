#pragma once
// The native session's byte stream in a build whose native transport has no TLS (ZKR_ZOOKEEPER_TLS=OFF, or
// no OpenSSL): a TCP socket, with the interface of the TLS-capable one (tls_stream.hpp) so that the session
// is the same code either way. Such a build refuses a client configured for TLS at start()
// (tls/tls_unsupported.cpp), before a session exists; `use_tls` refuses too, should it be reached.

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <string>
#include <utility>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/framework/detail/unique_function.hpp>

#include "../tls/tls_verdict.hpp"

namespace zkr::detail::native {

class Stream {
 public:
  using tcp = boost::asio::ip::tcp;

  explicit Stream(boost::asio::io_context& ioc) : ioc_(ioc), plain_(ioc) {}
  ~Stream() { close(); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  bool use_tls(const TlsConfig&, error_code& ec) {
    ec = client_errc::tls_unsupported;
    return false;
  }
  bool tls() const noexcept { return false; }

  template <class Endpoints, class Handler>
  void async_connect(const Endpoints& endpoints, Handler&& handler) {
    close();
    boost::asio::async_connect(plain_, endpoints, std::forward<Handler>(handler));
  }
  void async_handshake(const std::string&, bool, unique_function<void(TlsVerdict)> done) {
    boost::asio::post(ioc_, [done = std::move(done)]() mutable {
      done({TlsVerdict::Outcome::refused,
            client_errc::tls_unsupported,
            {},
            "no TLS in this build's native transport"});
    });
  }
  std::string refusal_after_handshake(const error_code&) const { return {}; }
  static bool closed_by_peer(const error_code& ec) noexcept { return ec == boost::asio::error::eof; }

  tcp::socket& socket() noexcept { return plain_; }
  bool is_open() const noexcept { return plain_.is_open(); }
  void close() {
    error_code ignored;
    if (plain_.is_open()) plain_.close(ignored);
  }

  template <class Buffers, class Handler>
  void async_read_some(const Buffers& buffers, Handler&& handler) {
    plain_.async_read_some(buffers, std::forward<Handler>(handler));
  }
  template <class Buffers, class Handler>
  void async_write(const Buffers& buffers, Handler&& handler) {
    boost::asio::async_write(plain_, buffers, std::forward<Handler>(handler));
  }
  void write(boost::asio::const_buffer buffer, error_code& ec) { boost::asio::write(plain_, buffer, ec); }
  std::size_t read_some(boost::asio::mutable_buffer buffer, error_code& ec) {
    return plain_.read_some(buffer, ec);
  }
  bool input_pending() const { return false; }

 private:
  boost::asio::io_context& ioc_;
  tcp::socket plain_;
};

}  // namespace zkr::detail::native
