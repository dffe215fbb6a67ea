// The TLS preflight (tls_preflight.hpp), over Asio's OpenSSL streams. Built with TLS (the C client's or the
// native transport's).

#include "tls_preflight.hpp"

#include <spdlog/logger.h>

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

#include "tls_context.hpp"

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
    auto v = handshake_verdict(p.stream.native_handle(), ec, p.host);
    result(p, v.outcome, v.ec, std::move(v.reason));
  }

  void after_handshake_failed(Probe& p, error_code ec) {
    // A TLS 1.3 server checks our certificate after our side of the handshake: its refusal is an alert here.
    if (auto why = refusal_after_handshake(ec); !why.empty())
      return result(p, TlsVerdict::Outcome::refused, client_errc::tls_handshake_failed, std::move(why));
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
    for (auto& v : verdicts)
      if (timed_out && v.outcome == TlsVerdict::Outcome::unreachable &&
          v.reason.find("aborted") != std::string::npos)
        v.reason = "no TLS answer within " + std::to_string(bound.count()) + " ms";
    auto best = best_verdict(verdicts);
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
  error_code ec;
  auto ctx = make_tls_client_context(tls, ec);
  if (!ctx) {
    asio::post(ioc_, [done = std::move(done), why = ec.message()]() mutable {
      done({TlsVerdict::Outcome::refused,
            client_errc::tls_file_error,
            {},
            "the TLS files no longer load: " + why});
    });
    return;
  }
  auto round = std::make_shared<Round>(ioc_, std::move(*ctx));
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
      p->label = tls_server_label(s.host, s.port, p->endpoint.address().to_string());
      expect_peer_name(p->stream.native_handle(), s.host, tls.verify_host_name);
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
