// The TLS preflight (tls_preflight.hpp), over Asio's OpenSSL streams. Built when the C client speaks TLS.

#include "tls_preflight.hpp"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <vector>

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using asio::ip::tcp;

namespace zkr::detail {
namespace {

struct HostPort {
  std::string host;
  std::string port;
};

/// The servers of a connect string ("host:port,host:port[/chroot]"; start() has validated it).
std::vector<HostPort> servers_of(std::string_view cs) {
  std::vector<HostPort> out;
  cs = cs.substr(0, cs.find('/'));
  while (!cs.empty()) {
    const auto comma = cs.find(',');
    auto one = cs.substr(0, comma);
    const auto colon = one.rfind(':');
    auto host = one.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    out.push_back({std::string(host), std::string(one.substr(colon + 1))});
    if (comma == std::string_view::npos) break;
    cs.remove_prefix(comma + 1);
  }
  return out;
}

bool is_ip_address(const std::string& host) {
  error_code ec;
  (void)asio::ip::make_address(host, ec);
  return !ec;
}

}  // namespace

/// One round: a probe per address, a deadline for all, the verdicts gathered.
struct TlsPreflight::Round : std::enable_shared_from_this<TlsPreflight::Round> {
  struct Probe {
    Probe(asio::io_context& ioc, ssl::context& ctx) : stream(ioc, ctx) {}
    ssl::stream<tcp::socket> stream;
    std::string host;
    std::string label;  // "host:port (address)"
    tcp::endpoint endpoint;
    std::array<char, 64> buf{};
  };

  Round(asio::io_context& ioc, ssl::context ctx) : ioc(ioc), ctx(std::move(ctx)), deadline(ioc) {}

  asio::io_context& ioc;
  ssl::context ctx;
  asio::steady_timer deadline;
  std::vector<std::unique_ptr<Probe>> probes;
  std::size_t outstanding = 0;
  bool finished = false;
  bool timed_out = false;
  std::chrono::milliseconds bound{};
  std::vector<TlsVerdict> verdicts;
  unique_function<void(TlsVerdict)> done;

  void start_probe(Probe& p) {
    auto self = shared_from_this();
    p.stream.next_layer().async_connect(p.endpoint, [this, self, &p](error_code ec) {
      if (finished) return;
      if (ec) return result(p, TlsVerdict::Outcome::unreachable, {}, "cannot connect: " + ec.message());
      SSL* s = p.stream.native_handle();
      if (!is_ip_address(p.host)) SSL_set_tlsext_host_name(s, p.host.c_str());
      p.stream.async_handshake(ssl::stream_base::client, [this, self, &p](error_code ec) {
        if (finished) return;
        if (ec) return handshake_failed(p, ec);
        // Ask for any answer: it shows that the server accepted our certificate (see the header).
        static constexpr char kIsro[] = "isro";
        asio::async_write(p.stream, asio::buffer(kIsro, 4), [this, self, &p](error_code ec, std::size_t) {
          if (finished) return;
          if (ec) return after_handshake_failed(p, ec);
          p.stream.async_read_some(asio::buffer(p.buf), [this, self, &p](error_code ec, std::size_t n) {
            if (finished) return;
            if (n > 0) return result(p, TlsVerdict::Outcome::verified, {}, {});
            after_handshake_failed(p, ec);
          });
        });
      });
    });
  }

  void handshake_failed(Probe& p, error_code ec) {
    const long verify = SSL_get_verify_result(p.stream.native_handle());
    if (verify != X509_V_OK) {
      std::string why = X509_verify_cert_error_string(verify);
      if (verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH)
        why = "its certificate does not name the host '" + p.host + "' (" + why + ")";
      else
        why = "its certificate failed verification against ca_file: " + why;
      return result(p, TlsVerdict::Outcome::refused, errc::tls_handshake_failed, why);
    }
    if (ec == ssl::error::stream_truncated || ec == asio::error::eof || ec == asio::error::connection_reset)
      return result(p, TlsVerdict::Outcome::suspect, errc::tls_handshake_failed,
                    "it closed the connection during the TLS handshake (a plain-text port?)");
    if (ec.category() == asio::error::get_ssl_category())
      return result(p, TlsVerdict::Outcome::refused, errc::tls_handshake_failed,
                    "the TLS handshake failed: " + ec.message());
    result(p, TlsVerdict::Outcome::unreachable, {}, "TLS handshake: " + ec.message());
  }

  void after_handshake_failed(Probe& p, error_code ec) {
    // A TLS 1.3 server checks our certificate after our side of the handshake: its refusal is an alert here.
    if (ec.category() == asio::error::get_ssl_category() && ec != ssl::error::stream_truncated)
      return result(p, TlsVerdict::Outcome::refused, errc::tls_handshake_failed,
                    "it refused our client certificate: " + ec.message());
    result(p, TlsVerdict::Outcome::unreachable, {},
           "no answer after the TLS handshake: " + (ec ? ec.message() : std::string("end of stream")));
  }

  void result(Probe& p, TlsVerdict::Outcome outcome, error_code ec, std::string reason) {
    verdicts.push_back({outcome, ec, p.label, std::move(reason)});
    error_code ignored;
    p.stream.next_layer().close(ignored);
    --outstanding;
    if (outcome == TlsVerdict::Outcome::verified) {
      // One is enough: the others are dropped (their handlers see the round finished).
      finish();
      for (auto& other : probes) other->stream.next_layer().close(ignored);
      return;
    }
    if (outstanding == 0) finish();
  }

  void on_deadline() {
    if (finished) return;
    timed_out = true;
    // Every probe still running ends with "operation aborted": its handler records it as unreachable.
    for (auto& p : probes) {
      error_code ignored;
      p->stream.next_layer().close(ignored);
    }
  }

  void finish() {
    if (finished) return;
    finished = true;
    deadline.cancel();
    // The best verdict: one server verified is enough; else a refusal; else a suspect; else unreachable.
    TlsVerdict best;
    best.reason = "no server to try";
    auto rank = [](TlsVerdict::Outcome o) {
      switch (o) {
        case TlsVerdict::Outcome::verified:
          return 0;
        case TlsVerdict::Outcome::refused:
          return 1;
        case TlsVerdict::Outcome::suspect:
          return 2;
        case TlsVerdict::Outcome::unreachable:
          return 3;
      }
      return 3;
    };
    bool have = false;
    for (auto& v : verdicts) {
      if (timed_out && v.outcome == TlsVerdict::Outcome::unreachable &&
          v.reason.find("aborted") != std::string::npos)
        v.reason = "no TLS answer within " + std::to_string(bound.count()) + " ms";
      if (!have || rank(v.outcome) < rank(best.outcome)) best = v, have = true;
    }
    if (done)
      asio::post(ioc, [d = std::move(done), best = std::move(best)]() mutable { d(std::move(best)); });
  }
};

TlsPreflight::TlsPreflight(asio::io_context& ioc, const ClientConfig& config, spdlog::logger& log)
    : ioc_(ioc), cfg_(config), log_(log) {}

TlsPreflight::~TlsPreflight() { cancel(); }

void TlsPreflight::cancel() {
  if (!round_) return;
  round_->done = nullptr;
  round_->on_deadline();
  round_.reset();
}

void TlsPreflight::run(std::chrono::milliseconds bound, unique_function<void(TlsVerdict)> done) {
  cancel();
  const TlsConfig& tls = *cfg_.tls;
  // The files again (check_tls_settings passed them at start): a context that trusts ca_file only.
  ssl::context ctx(ssl::context::tls_client);
  error_code ec;
  ctx.set_verify_mode(ssl::verify_peer, ec);
  if (!ec) ctx.load_verify_file(tls.ca_file, ec);
  if (!ec) ctx.use_certificate_chain_file(tls.cert_file, ec);
  if (!ec)
    ctx.set_password_callback(
        [pw = tls.key_password](std::size_t, ssl::context::password_purpose) { return pw; }, ec);
  if (!ec) ctx.use_private_key_file(tls.key_file, ssl::context::pem, ec);
  if (ec) {
    asio::post(ioc_, [done = std::move(done), why = ec.message()]() mutable {
      done({TlsVerdict::Outcome::refused, errc::tls_file_error, {}, "the TLS files no longer load: " + why});
    });
    return;
  }
  auto round = std::make_shared<Round>(ioc_, std::move(ctx));
  round->bound = bound;
  round->done = std::move(done);
  round_ = round;
  std::vector<TlsVerdict> unresolved;
  tcp::resolver resolver(ioc_);
  for (const auto& s : servers_of(cfg_.connect_string)) {
    // Synchronous, as the C client resolves when it connects.
    auto results = resolver.resolve(s.host, s.port, ec);
    if (ec) {
      round->verdicts.push_back(
          {TlsVerdict::Outcome::unreachable, {}, s.host + ":" + s.port, "cannot resolve: " + ec.message()});
      continue;
    }
    for (const auto& r : results) {
      auto p = std::make_unique<Round::Probe>(ioc_, round->ctx);
      p->host = s.host;
      p->endpoint = r.endpoint();
      p->label = s.host + ":" + s.port;
      if (p->endpoint.address().to_string() != s.host)
        p->label += " (" + p->endpoint.address().to_string() + ")";
      SSL* h = p->stream.native_handle();
      if (tls.verify_host_name) {
        X509_VERIFY_PARAM* param = SSL_get0_param(h);
        if (is_ip_address(s.host)) {
          X509_VERIFY_PARAM_set1_ip_asc(param, s.host.c_str());
        } else {
          X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
          X509_VERIFY_PARAM_set1_host(param, s.host.c_str(), 0);
        }
      }
      round->probes.push_back(std::move(p));
    }
  }
  round->outstanding = round->probes.size();
  if (round->probes.empty()) return round->finish();
  round->deadline.expires_after(bound);
  round->deadline.async_wait([w = std::weak_ptr(round)](error_code e) {
    if (auto r = w.lock(); r && !e) r->on_deadline();
  });
  for (auto& p : round->probes) round->start_probe(*p);
  if (log_.should_log(spdlog::level::debug))
    log_.debug("TLS preflight: {} address(es), within {} ms", round->probes.size(), bound.count());
}

}  // namespace zkr::detail
