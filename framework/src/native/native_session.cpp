// The native session (see native_session.hpp): the connection's life, framing, timing and routing. The
// records themselves are records.cpp's.

#include "native_session.hpp"

#include <poll.h>

#include <algorithm>
#include <array>
#include <boost/asio/post.hpp>
#include <charconv>
#include <limits>
#include <random>

namespace asio = boost::asio;
using asio::ip::tcp;

namespace zkr::detail {

namespace native {
namespace {

constexpr std::int32_t code(zk_errc e) noexcept { return static_cast<std::int32_t>(e); }
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr std::size_t kMinReadRoom = 4 * 1024;
// A burst of requests (a cache's first load sends one per node) grows the write buffers and the queue of
// requests awaiting replies to its peak: past these, they are given back once the burst is written /
// answered, so that a quiet session keeps no memory per past request.
constexpr std::size_t kKeptWriteBuffer = 4 * 1024;
constexpr std::size_t kKeptSentQueue = 1024;
// How long close() waits for the server's answer to closeSession (the server deletes the ephemerals first).
constexpr auto kCloseWait = std::chrono::milliseconds(2000);

}  // namespace

NativeSession::NativeSession(asio::io_context& ioc, const ClientConfig& config, spdlog::logger& log,
                             SessionEvents& events)
    : ioc_(ioc),
      cfg_(config),
      log_(log),
      events_(events),
      stream_(ioc),
      resolver_(ioc),
      attempt_timer_(ioc),
      tick_timer_(ioc),
      retry_timer_(ioc) {}

NativeSession::~NativeSession() { close(); }

// ---------------------------------------------------------------------------------------------------------
// The session

bool NativeSession::open() {
  if (open_) return true;
  error_code ec;
  cs_ = parse_connect_string(cfg_.connect_string, ec);
  if (ec) {
    log_.error("invalid connect string '{}'", cfg_.connect_string);
    return false;
  }
  std::shuffle(cs_.hosts.begin(), cs_.hosts.end(), std::mt19937(std::random_device{}()));
  // The TLS context once per client: the files were checked at start() and again when this session opened.
  if (cfg_.tls && !stream_.tls() && !stream_.use_tls(*cfg_.tls, ec)) {
    log_.error("TLS settings refused: the files do not load: {}", ec.message());
    return false;
  }
  open_ = true;
  ++open_gen_;
  dead_rc_ = 0;
  session_id_ = 0;
  passwd_.assign(16, '\0');
  timeout_ms_ = 0;
  last_zxid_ = 0;
  seen_rw_ = false;
  next_host_ = failed_in_pass_ = 0;
  attempts_abandoned_ = tls_refusals_ = 0;
  opening_ = true;
  pass_.clear();
  watches_.clear();
  connect_next();
  return true;
}

void NativeSession::close() {
  if (!open_) return;
  if (phase_ == Phase::connected) close_on_wire();
  shut_socket();
  phase_ = Phase::idle;
  open_ = false;
  ++open_gen_;
  const auto rc = code(zk_errc::closing);
  fail(sent_, rc);
  fail(queued_, rc);
  watches_.clear();
  session_id_ = 0;
}

// closeSession, then the server's answer or its end of the stream, waited for here (the server deletes the
// session's ephemeral nodes before it answers, so that they are gone when close() returns, as with the C
// client's zookeeper_close). Blocking, bounded by kCloseWait (reads that would block wait in poll, with the
// time left).
void NativeSession::close_on_wire() {
  const std::int32_t xid = next_xid();
  encode_close(out_, xid);
  error_code ec;
  // The pending read and write complete as aborted, after this (their generation is old).
  stream_.socket().cancel(ec);
  ++gen_;
  // A write in flight has almost always left already (Asio writes at once when it can): only what was never
  // handed to the socket goes now, so that no frame is sent twice.
  jute::Bytes all = std::move(out_);
  writing_.clear();
  writing_now_ = false;
  stream_.write(asio::buffer(all), ec);
  // From here no read blocks: a TLS record that arrives in part would hold a blocking read (and the caller of
  // close) for as long as the connection stays open, past the bound. A read that would block waits in poll.
  if (!ec) stream_.socket().non_blocking(true, ec);
  const auto deadline = Clock::now() + kCloseWait;
  while (!ec) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd p{stream_.socket().native_handle(), POLLIN, 0};
    if (!stream_.input_pending() && ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
    if (in_.size() < in_len_ + kReadChunk) in_.resize(in_len_ + kReadChunk);
    const std::size_t n = stream_.read_some(asio::buffer(in_.data() + in_len_, in_.size() - in_len_), ec);
    if (ec == asio::error::would_block) {
      ec = {};
      continue;
    }
    if (ec) break;
    in_len_ += n;
    // The close's reply ends the wait; earlier replies complete their requests as usual.
    bool closed = false;
    std::size_t at = 0;
    for (;;) {
      error_code fec;
      const auto len =
          jute::frame_length(jute::ByteSpan(in_.data() + at, in_len_ - at), jute::max_buffer, fec);
      if (fec) closed = true;
      if (len < 0 || at + 4 + static_cast<std::size_t>(len) > in_len_) break;
      jute::Reader in(jute::ByteSpan(in_.data() + at + 4, static_cast<std::size_t>(len)));
      const auto h = decode_reply_header(in);
      if (h.xid == xid)
        closed = true;
      else if (h.xid > 0 && !sent_.empty() && sent_.front().xid == h.xid && !on_reply(h, in))
        closed = true;
      at += 4 + static_cast<std::size_t>(len);
    }
    std::copy(in_.begin() + static_cast<std::ptrdiff_t>(at),
              in_.begin() + static_cast<std::ptrdiff_t>(in_len_), in_.begin());
    in_len_ -= at;
    if (closed) break;
  }
}

void NativeSession::submit(zk::Request request, zk::ReplyCallback reply) {
  if (!open_) {
    zk::Reply r;
    r.ec = events_.no_session_ec();
    return deliver(std::move(reply), std::move(r));
  }
  if (phase_ == Phase::dead) {
    zk::Reply r;
    set_result(r, dead_rc_);
    return deliver(std::move(reply), std::move(r));
  }
  // Removing one watch of ours: the server's watch stays while another of ours on the path needs it. (One
  // whose read is still in flight is the framework's to count: CoreImpl::remove_watch sends no removal then.)
  if (auto* rw = std::get_if<zk::RemoveWatches>(&request)) {
    const auto removal = watches_.remove(rw->path, rw->kind, rw->watch);
    if (rw->watch != 0 && (!removal.found || removal.others_left)) {
      zk::Reply r;
      set_result(r, removal.found ? 0 : code(zk_errc::no_watcher));
      return deliver(std::move(reply), std::move(r));
    }
  }
  Pending p{0, std::move(request), std::move(reply), Internal::none};
  if (phase_ != Phase::connected) return queued_.push_back(std::move(p));
  send(std::move(p));
}

// ---------------------------------------------------------------------------------------------------------
// Connecting

// One attempt's bound, from the name resolution to the server's answer to the handshake: the handshake
// timeout, doubled with each attempt abandoned in a row from the second on (up to 16 times), as the C-client
// sessions do; two thirds of the session timeout when the handshake timeout is zero (the C client's own).
std::chrono::milliseconds NativeSession::attempt_bound() const {
  if (cfg_.handshake_timeout <= std::chrono::milliseconds::zero()) return cfg_.session_timeout * 2 / 3;
  return cfg_.handshake_timeout * (1 << std::clamp(attempts_abandoned_ - 1, 0, 4));
}

void NativeSession::connect_next() {
  shut_socket();
  phase_ = Phase::connecting;
  dialled_.clear();
  const auto& hp = cs_.hosts[next_host_++ % cs_.hosts.size()];
  const auto g = gen_;
  attempt_timer_.expires_after(attempt_bound());
  attempt_timer_.async_wait([this, g](error_code ec) {
    if (ec || g != gen_) return;
    ++attempts_abandoned_;
    attempt_failed("no answer to the connection handshake within the bound");
  });
  auto connect = [this, g](const auto& endpoints) {
    stream_.async_connect(endpoints, [this, g](error_code cec, const tcp::endpoint& e) {
      if (g != gen_) return;
      if (cec) return attempt_failed("cannot connect");
      on_tcp_connected(e);
    });
  };
  // An address needs no look-up: Asio's resolver runs getaddrinfo on a thread of its own, a hand-off each
  // way.
  error_code aec;
  const auto address = asio::ip::make_address(hp.host, aec);
  std::uint16_t port = 0;
  const auto [end, pec] = std::from_chars(hp.port.data(), hp.port.data() + hp.port.size(), port);
  if (!aec && pec == std::errc() && end == hp.port.data() + hp.port.size())
    return connect(std::array{tcp::endpoint(address, port)});
  resolver_.async_resolve(hp.host, hp.port,
                          [this, g, connect](error_code ec, const tcp::resolver::results_type& results) {
                            if (g != gen_) return;
                            if (ec) return attempt_failed("cannot resolve the host");
                            connect(results);
                          });
}

// Requests queued meanwhile fail (connection loss, as with the C client), so that the framework's retry loop
// and connection timeout see the ensemble's state; then the next host, after a pause once every host failed.
// While a TLS session opens, the attempt's verdict counts towards its pass (native_session_tls.cpp).
void NativeSession::attempt_failed(const char* why, TlsVerdict verdict) {
  if (log_.should_log(spdlog::level::debug))
    log_.debug("connection attempt to {} failed: {}", current_host().host, why);
  shut_socket();
  phase_ = Phase::connecting;
  fail(queued_, code(zk_errc::connection_loss));
  const bool pass_done = ++failed_in_pass_ >= cs_.hosts.size();
  if (pass_done) failed_in_pass_ = 0;
  if (verdict.reason.empty()) verdict.reason = why;
  opening_pass(std::move(verdict), pass_done);
  const auto pause =
      pass_done ? std::chrono::milliseconds(50 + std::random_device{}() % 200) : std::chrono::milliseconds(0);
  retry_timer_.expires_after(pause);
  retry_timer_.async_wait([this, g = gen_](error_code ec) {
    if (!ec && g == gen_ && phase_ == Phase::connecting) connect_next();
  });
}

const HostPort& NativeSession::current_host() const { return cs_.hosts[(next_host_ - 1) % cs_.hosts.size()]; }

void NativeSession::on_stream_ready() {
  phase_ = Phase::handshake;
  ConnectRequest req;
  req.last_zxid_seen = last_zxid_;
  req.timeout_ms = static_cast<std::int32_t>(cfg_.session_timeout.count());
  // As Java's client: a session first seen on a read-only server is not resumed (it cannot be).
  req.session_id = seen_rw_ ? session_id_ : 0;
  if (seen_rw_) req.passwd = passwd_;
  req.read_only = cfg_.can_be_read_only;
  out_.clear();
  encode(out_, req);
  // Nothing else until the answer: an expired session's answer is followed by a close, and more bytes
  // written meanwhile could make the server's end reset the connection before we read it.
  flush();
  in_len_ = 0;
  last_recv_ = Clock::now();
  read_some();
}

void NativeSession::read_some() {
  // A read takes the room left, grown only when little is (a frame longer than the room grows it in on_read).
  if (in_.size() < in_len_ + kMinReadRoom) in_.resize(std::max(in_len_ + kMinReadRoom, kReadChunk));
  stream_.async_read_some(
      asio::buffer(in_.data() + in_len_, in_.size() - in_len_),
      [this, g = gen_](error_code ec, std::size_t n) {
        if (g != gen_) return;
        if (!ec) return on_read(n);
        if (phase_ == Phase::handshake)
          if (auto why = stream_.refusal_after_handshake(ec); !why.empty())
            return tls_refused({TlsVerdict::Outcome::refused, client_errc::tls_handshake_failed, {}, why});
        drop(Stream::closed_by_peer(ec) ? "the server closed the connection" : "read error");
      });
}

void NativeSession::on_read(std::size_t n) {
  in_len_ += n;
  last_recv_ = Clock::now();
  const auto g = gen_;
  std::size_t at = 0;
  for (;;) {
    error_code ec;
    const auto len = jute::frame_length(jute::ByteSpan(in_.data() + at, in_len_ - at), jute::max_buffer, ec);
    if (ec) return drop("a frame longer than jute.maxbuffer");
    if (len < 0) break;
    const auto whole = 4 + static_cast<std::size_t>(len);
    if (at + whole > in_len_) {
      if (in_.size() < whole) in_.resize(whole);  // it moves to the buffer's start below
      break;
    }
    if (!on_frame(jute::ByteSpan(in_.data() + at + 4, static_cast<std::size_t>(len))))
      return drop("a malformed or out-of-order reply");
    if (g != gen_) return;  // the frame ended the connection (expiry, auth failure)
    at += whole;
  }
  std::copy(in_.begin() + static_cast<std::ptrdiff_t>(at), in_.begin() + static_cast<std::ptrdiff_t>(in_len_),
            in_.begin());
  in_len_ -= at;
  if (in_len_ == 0 && in_.size() > kReadChunk) {  // the room a long frame took, given back
    in_.resize(kReadChunk);
    in_.shrink_to_fit();
  }
  read_some();
}

bool NativeSession::on_frame(jute::ByteSpan payload) {
  jute::Reader in(payload);
  if (phase_ == Phase::handshake) return on_handshake(in);
  if (phase_ == Phase::sasl) return on_sasl_reply(in);
  const auto h = decode_reply_header(in);
  if (in.error()) return false;
  if (h.xid == xid::notification) {
    on_notification(in);
    return !in.error();
  }
  if (h.xid == xid::ping) return true;
  if (h.xid == xid::auth) {
    if (h.err != 0) {
      log_.error("the server refused the auth info ({})", zk_error(h.err).message());
      end_session(SessionState::auth_failed, code(zk_errc::auth_failed));
    }
    return true;
  }
  return on_reply(h, in);
}

bool NativeSession::on_handshake(jute::Reader& in) {
  const auto resp = decode_connect_response(in);
  if (in.error()) return false;
  if (resp.timeout_ms <= 0 || resp.session_id == 0) {
    log_.warn("session 0x{:x} expired (the server answered the handshake with timeout {})", session_id_,
              resp.timeout_ms);
    end_session(SessionState::expired, code(zk_errc::session_expired));
    return true;
  }
  if (session_id_ != 0 && resp.session_id != session_id_) {
    // A session first made on a read-only server, not resumed: the old one is gone.
    end_session(SessionState::expired, code(zk_errc::session_expired));
    return true;
  }
  session_id_ = resp.session_id;
  passwd_ = resp.passwd;
  timeout_ms_ = resp.timeout_ms;
  if (!resp.read_only) seen_rw_ = true;
  if (cfg_.sasl) {
    begin_sasl(resp.read_only);
    return true;
  }
  connected(resp.read_only);
  return true;
}

void NativeSession::connected(bool read_only) {
  attempt_timer_.cancel();
  attempts_abandoned_ = tls_refusals_ = 0;
  failed_in_pass_ = 0;
  opening_ = false;  // from now on a refusal waits for another server (docs/tls.md)
  pass_.clear();
  phase_ = Phase::connected;
  if (log_.should_log(spdlog::level::info))
    log_.info("session 0x{:x} connected (timeout {} ms{})", session_id_, timeout_ms_,
              read_only ? ", read-only" : "");
  report(read_only ? SessionState::read_only : SessionState::connected);
  // The connection's own packets first (auth, then the watches to set again), then what waited.
  for (const auto& a : cfg_.auth) encode_auth(out_, a.scheme, a.auth);
  if (!watches_.empty()) {
    SetWatches sw;
    sw.relative_zxid = last_zxid_;
    watches_.list(cs_.chroot, sw);
    for (const auto& batch : split_set_watches(sw)) {
      Pending p;
      p.xid = next_xid();
      p.internal = Internal::set_watches;
      encode_set_watches(out_, p.xid, batch);
      sent_.push_back(std::move(p));
    }
  }
  auto waiting = std::move(queued_);
  queued_.clear();
  for (auto& p : waiting) send(std::move(p));
  schedule_flush();
  arm_tick();
}

bool NativeSession::on_reply(const ReplyHeader& h, jute::Reader& in) {
  if (sent_.empty() || sent_.front().xid != h.xid) return false;
  Pending p = std::move(sent_.front());
  sent_.pop_front();
  if (sent_.empty() && sent_peak_ > kKeptSentQueue) {
    std::deque<Pending>().swap(sent_);
    sent_peak_ = 0;
  }
  if (h.zxid > 0) last_zxid_ = h.zxid;
  if (p.internal != Internal::none) {
    if (h.err != 0) log_.warn("setting the watches again failed: {}", zk_error(h.err).message());
    return true;
  }
  zk::Reply r;
  set_result(r, h.err);
  if (h.err == 0) decode_reply(in, p.request, r);
  if (in.error()) {
    sent_.push_front(std::move(p));  // failed with the others by the drop
    return false;
  }
  if (auto* m = std::get_if<zk::Multi>(&p.request); m && h.err != 0)
    r.results.assign(m->ops.size(), OpResult{zk_error(h.err), {}, {}});
  if (!r.path.empty() && std::holds_alternative<zk::Create>(p.request))
    r.path = without_chroot(cs_.chroot, r.path);
  for (auto& o : r.results)
    if (!o.path.empty()) o.path = without_chroot(cs_.chroot, o.path);
  register_watch(p.request, h.err);
  deliver(std::move(p.cb), std::move(r));
  return true;
}

// As the server set it: exists sets a watch on a missing node too; getData and getChildren only on success.
void NativeSession::register_watch(const zk::Request& request, std::int32_t err) {
  std::visit(
      [&](const auto& r) {
        using R = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<R, zk::Exists>) {
          if (r.watch != 0 && err == 0) watches_.add(WatchTable::Kind::data, r.path, r.watch);
          if (r.watch != 0 && err == code(zk_errc::no_node))
            watches_.add(WatchTable::Kind::exist, r.path, r.watch);
        } else if constexpr (std::is_same_v<R, zk::GetData>) {
          if (r.watch != 0 && err == 0) watches_.add(WatchTable::Kind::data, r.path, r.watch);
        } else if constexpr (std::is_same_v<R, zk::GetChildren>) {
          if (r.watch != 0 && err == 0) watches_.add(WatchTable::Kind::child, r.path, r.watch);
        } else if constexpr (std::is_same_v<R, zk::AddWatch>) {
          const auto kind = r.mode == AddWatchMode::persistent_recursive
                                ? WatchTable::Kind::persistent_recursive
                                : WatchTable::Kind::persistent;
          if (r.watch != 0 && err == 0) watches_.add(kind, r.path, r.watch);
        }
      },
      request);
}

void NativeSession::on_notification(jute::Reader& in) {
  const auto ev = decode_watcher_event(in);
  if (in.error() || ev.type < 1 || ev.type > 4) return;
  const auto type = static_cast<EventType>(ev.type);
  auto path = without_chroot(cs_.chroot, ev.path);
  const auto fired = watches_.fire(type, path);
  if (log_.should_log(spdlog::level::debug))
    log_.debug("session 0x{:x}: watch event {} on {}: {} watch(es)", session_id_, ev.type, ev.path,
               fired.size());
  if (fired.empty()) return;
  asio::post(ioc_, [this, g = open_gen_, fired, type, path = std::move(path)] {
    for (WatchId id : fired)
      if (g == open_gen_) events_.on_watch_event(id, type, path);
  });
}

// The connection is lost (the session may live on): what was sent fails with connection loss, the watches
// stay to be set again, and the next host is tried.
void NativeSession::drop(const char* why) {
  const bool was_connected = phase_ == Phase::connected;
  if (phase_ == Phase::handshake || phase_ == Phase::sasl || phase_ == Phase::connecting)
    return attempt_failed(why);
  if (!was_connected) return;
  log_.info("connection of session 0x{:x} lost: {}", session_id_, why);
  shut_socket();
  phase_ = Phase::connecting;
  fail(sent_, code(zk_errc::connection_loss));
  fail(queued_, code(zk_errc::connection_loss));
  report(SessionState::connecting);
  connect_next();
}

// The session is over for good (expired, or the server refused our auth info).
void NativeSession::end_session(SessionState state, std::int32_t rc) {
  shut_socket();
  phase_ = Phase::dead;
  dead_rc_ = rc;
  fail(sent_, rc);
  fail(queued_, rc);
  watches_.clear();
  report(state);
}

void NativeSession::shut_socket() {
  ++gen_;
  attempt_timer_.cancel();
  tick_timer_.cancel();
  retry_timer_.cancel();
  resolver_.cancel();
  stream_.close();
  sasl_.reset();
  out_.clear();
  writing_.clear();
  writing_now_ = false;
  in_len_ = 0;
}

// ---------------------------------------------------------------------------------------------------------
// Pings and the read timeout: one timer, ticking at a sixth of the negotiated timeout.

void NativeSession::arm_tick() {
  tick_timer_.expires_after(std::chrono::milliseconds(std::max(timeout_ms_ / 6, 10)));
  tick_timer_.async_wait([this, g = gen_](error_code ec) {
    if (!ec && g == gen_) tick();
  });
}

void NativeSession::tick() {
  const auto now = Clock::now();
  const auto timeout = std::chrono::milliseconds(timeout_ms_);
  if (now - last_recv_ >= timeout * 2 / 3) return drop("nothing received within the read timeout");
  if (now - last_send_ >= timeout / 3) {
    encode_ping(out_);
    flush();
  }
  arm_tick();
}

// ---------------------------------------------------------------------------------------------------------
// Writing: a request's frame joins the buffer, written at the end of the I/O turn with what else the turn
// queued (one write, as few segments as the kernel makes of it).

std::int32_t NativeSession::next_xid() {
  xid_ = xid_ == std::numeric_limits<std::int32_t>::max() ? 1 : xid_ + 1;
  return xid_;
}

void NativeSession::send(Pending p) {
  p.xid = next_xid();
  encode_request(out_, p.xid, p.request, cs_.chroot);
  sent_.push_back(std::move(p));
  sent_peak_ = std::max(sent_peak_, sent_.size());
  schedule_flush();
}

void NativeSession::schedule_flush() {
  if (flush_posted_) return;
  flush_posted_ = true;
  asio::post(ioc_, [this] {
    flush_posted_ = false;
    flush();
  });
}

void NativeSession::flush() {
  if (writing_now_ || out_.empty() || !stream_.is_open()) return;
  writing_.swap(out_);
  writing_now_ = true;
  last_send_ = Clock::now();
  stream_.async_write(asio::buffer(writing_), [this, g = gen_](error_code ec, std::size_t) {
    if (g != gen_) return;
    writing_now_ = false;
    if (writing_.capacity() > kKeptWriteBuffer)
      jute::Bytes().swap(writing_);
    else
      writing_.clear();
    if (ec) return drop("write error");
    flush();
  });
}

// ---------------------------------------------------------------------------------------------------------
// Delivery

void NativeSession::deliver(zk::ReplyCallback cb, zk::Reply reply) {
  if (!cb) return;
  asio::post(ioc_, [cb = std::move(cb), reply = std::move(reply)]() mutable { cb(std::move(reply)); });
}

void NativeSession::fail(std::deque<Pending>& queue, std::int32_t rc) {
  auto failed = std::move(queue);
  queue.clear();
  for (auto& p : failed) {
    zk::Reply r;
    set_result(r, rc);
    deliver(std::move(p.cb), std::move(r));
  }
}

void NativeSession::report(SessionState state) {
  asio::post(ioc_, [this, g = open_gen_, state] {
    if (g == open_gen_) events_.on_session_state(state);
  });
}

}  // namespace native
}  // namespace zkr::detail
