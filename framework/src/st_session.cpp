// The session over the single-threaded ZooKeeper C client: the handle's life, and the pump that drives it
// from Asio (with the handshake bound and the corking of each turn's requests). The requests themselves go
// through the submit path both flavours share (c_session.cpp).

#include "st_session.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cstring>

#include "c_session_factory.hpp"
#include "socket_watchdog.hpp"
#if ZKR_HAVE_C_CLIENT_KERBEROS
#include "sasl/c_client_kerberos.hpp"
#endif

namespace asio = boost::asio;

namespace zkr::detail {
namespace {

// Errors are ignored: an uncorkable socket only costs segments, and a broken one is the C client's to report.
void set_cork(int fd, bool on) {
  const int v = on ? 1 : 0;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_CORK, &v, sizeof v);
}

}  // namespace

std::unique_ptr<Session> make_c_client_session(asio::io_context& ioc, const ClientConfig& config,
                                               spdlog::logger& log, SessionEvents& events) {
  return std::make_unique<StSession>(ioc, config, log, events);
}

StSession::StSession(asio::io_context& ioc, const ClientConfig& config, spdlog::logger& log,
                     SessionEvents& events)
    : CSession(ioc, config, log, events), sd_(ioc), pump_timer_(ioc) {
#if ZKR_HAVE_C_CLIENT_KERBEROS
  if (cfg_.sasl && cfg_.sasl->mechanism == SaslMechanism::gssapi)
    kerberos_ = {new CClientKerberos(ioc_, *cfg_.sasl), [](CClientKerberos* k) { delete k; }};
#endif
}

StSession::~StSession() { close(); }

void StSession::submit(zk::Request request, zk::ReplyCallback reply) {
  auto p = make_pending(ioc_, std::move(request), std::move(reply));
  if (!zh_) return deliver(std::move(p), events_.no_session_ec());
  cork_turn();
  int rc;
  {
    const std::lock_guard c_lock(c_client_mutex());
    rc = send_pending(zh_, p);
    if (rc != ZOK) rc = refused_rc(rc);
  }
  if (rc != ZOK) return deliver(std::move(p), rc);
  request_pump();
}

bool StSession::submit_from_caller(zk::Request& request, zk::ReplyCallback& reply) {
  auto p = make_pending(ioc_, std::move(request), std::move(reply));
  int rc = ZINVALIDSTATE;
  {
    // Corked like an I/O-thread turn (cork_turn), so that the frame's length and body leave in one segment.
    // Our duplicate of the socket stays open while sd_mu_ is held; if the C client has replaced its socket
    // since, this corks the old one, which costs nothing but the extra segment.
    const std::lock_guard sd_lock(sd_mu_);
    const int own = sd_own_fd_;
    // zh_ is written under this mutex too (open, close), so it is read safely here. The single-threaded C
    // client sends the request from this thread before the call returns, unless the socket is full; the pump
    // posted below then sends the rest.
    const std::lock_guard c_lock(c_client_mutex());
    if (zh_ && own >= 0) set_cork(own, true);
    if (zh_) rc = send_pending(zh_, p);
    if (zh_ && own >= 0) set_cork(own, false);
  }
  if (rc != ZOK) {
    take_back(std::move(p), request, reply);
    return false;
  }
  asio::post(ioc_, [this] { request_pump(); });
  return true;
}

// ---------------------------------------------------------------------------------------------------------
// The handle

bool StSession::open() {
  zhandle_t* zh;
  {
    const std::lock_guard c_lock(c_client_mutex());
    zh = init_handle();
  }
  if (!zh) return false;
  {
    const std::lock_guard sd_lock(sd_mu_);  // submit_from_caller reads zh_ under it
    zh_ = zh;
  }
  request_pump();
  return true;
}

void StSession::close() {
  if (!zh_) return;
  release_descriptor();
  ++pump_timer_gen_;
  pump_timer_armed_ = false;
  pump_timer_.cancel();
  zhandle_t* zh = zh_;
  {
    const std::lock_guard sd_lock(sd_mu_);
    zh_ = nullptr;  // late callbacks of this handle are dropped (CSession::on_c_session_event)
  }
  {
    const std::lock_guard c_lock(c_client_mutex());
    zookeeper_close(zh);  // completes every pending request (ZCLOSING); their results are posted
  }
  free_handle_ctx();
}

// The pump: drives the C client from Asio. Readiness is re-checked with a zero-timeout poll() after every
// arm, because Asio's epoll reactor is edge-triggered and the C client does not drain the socket.

void StSession::request_pump() {
  if (in_pump_ || pump_posted_) return;
  pump_posted_ = true;
  boost::asio::post(ioc_, [this] { pump(); });
}

void StSession::release_descriptor() {
  uncork();
  ++sd_gen_;
  read_armed_ = write_armed_ = false;
  if (sd_.is_open()) {
    // sd_ holds our own duplicate of the C client's socket (see update_descriptor): closing it deregisters
    // it from epoll by a descriptor number that is ours, never one the C client closed and someone reused.
    const std::lock_guard sd_lock(sd_mu_);
    sd_own_fd_ = -1;
    error_code ignored;
    sd_.cancel(ignored);
    sd_.close(ignored);
  }
  sd_fd_ = -1;
  sd_connected_ = false;
}

void StSession::update_descriptor(int fd, bool connected) {
  if (fd < 0) {
    if (sd_.is_open()) release_descriptor();
    return;
  }
  // The C client may close its socket and open another with the same number: compare inodes. A socket
  // seen while connected cannot have been replaced while the client stayed connected (a new socket starts
  // in the connecting state, which the pump sees on its next zookeeper_interest), so skip the fstat then.
  if (sd_.is_open() && fd == sd_fd_ && connected && sd_connected_) return;
  sd_connected_ = false;
  struct stat st {};
  if (::fstat(fd, &st) != 0) return;
  if (sd_.is_open() && fd == sd_fd_ && st.st_ino == sd_ino_) {
    sd_connected_ = connected;
    return;
  }
  if (sd_.is_open()) release_descriptor();
  // Watch a duplicate, not the C client's descriptor: the C client closes its socket on its own when the
  // connection breaks, and deregistering that number later (epoll_ctl) could hit a descriptor another thread
  // has opened since under the same number. The duplicate keeps the old socket open only until this pump
  // notices the change and closes it.
  const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (own < 0) {
    log_.warn("cannot watch the ZooKeeper socket: {}", std::strerror(errno));
    return;
  }
  error_code ec;
  {
    const std::lock_guard sd_lock(sd_mu_);
    sd_.assign(own, ec);
    if (!ec) sd_own_fd_ = own;
  }
  if (ec) {
    ::close(own);
    log_.warn("cannot watch the ZooKeeper socket: {}", ec.message());
    return;
  }
  sd_fd_ = fd;
  sd_ino_ = st.st_ino;
  sd_connected_ = connected;
}

// The handshake bound. A connection attempt is a TCP connect, then the session handshake (the C client sends
// its ConnectRequest and waits for the server's answer); the C client itself gives an attempt 2/3 of the
// session timeout. A server that accepted the connection but never answers holds the client that long:
// ZooKeeper 3.8.0 does exactly that to a client that connects between the moment its port is bound and the
// moment its database is loaded (ZOOKEEPER-5051: the connection is refused with "ZooKeeperServer not
// running", but closing it throws a NullPointerException before the socket is closed, so the client waits in
// vain, 20 s with a 30 s session, on every restart that it happens to reach in that window). The pump
// therefore watches each attempt's socket (by inode): an attempt still not connected that has heard nothing
// from the server for `handshake_bound()` (since the pump first saw its socket, or since the server's last
// answer: a SASL exchange takes several) is abandoned, the socket shut down so that the C client connects
// again at once. An answer waiting unread at the deadline counts as heard: abandoned then, a handshake the
// server had just completed came up CONNECTED and went SUSPENDED at once. From the second attempt abandoned
// in a row on, the bound doubles with each (a server that is merely slow gets its answer through), up to 16
// times; a connection starts it over.
std::chrono::milliseconds StSession::handshake_bound() const {
  return detail::handshake_bound(cfg_.handshake_timeout, handshakes_abandoned_);
}

// The longest the I/O thread waits in the C client's TLS handshake: the attempt's bound, at most twice the
// configured handshake timeout (2 s when that is left to the C client). A warm server takes 40-80 ms.
std::chrono::milliseconds StSession::tls_handshake_bound() const {
  const auto cap = cfg_.handshake_timeout > std::chrono::milliseconds::zero()
                       ? 2 * cfg_.handshake_timeout
                       : std::chrono::milliseconds(2000);
  return cfg_.handshake_timeout > std::chrono::milliseconds::zero() ? std::min(handshake_bound(), cap) : cap;
}

std::string StSession::current_server() {
  const std::lock_guard c_lock(c_client_mutex());  // its text is in a buffer shared by all handles
  const char* s = zh_ ? zoo_get_current_server(zh_) : nullptr;
  return s ? s : "?";
}

bool StSession::handshake_overdue(int fd, int state, std::chrono::steady_clock::time_point now) {
  const bool attempting = fd >= 0 && sd_.is_open() && fd == sd_fd_ && state != ZOO_CONNECTED_STATE &&
                          state != ZOO_READONLY_STATE && state != ZOO_EXPIRED_SESSION_STATE &&
                          state != ZOO_AUTH_FAILED_STATE;
  if (!attempting) {
    if (state == ZOO_CONNECTED_STATE || state == ZOO_READONLY_STATE) handshakes_abandoned_ = 0;
    handshake_ino_ = 0;
    return false;
  }
  if (cfg_.handshake_timeout <= std::chrono::milliseconds::zero()) return false;
  if (handshake_ino_ != sd_ino_) {
    handshake_ino_ = sd_ino_;
    handshake_since_ = now;
    return false;
  }
  if (now - handshake_since_ < handshake_bound()) return false;
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, 0) > 0 && (p.revents & POLLIN)) {
    handshake_since_ = now;  // the server answered: the answer is read first, the bound starts again
    return false;
  }
  return true;
}

// The C client writes each frame with two send() calls on its TCP_NODELAY socket, the 4-byte length and then
// the body, and the single-threaded client sends at once from every zoo_a* call: every request left as two
// segments (seen with tcpdump; the Java client sends one). The first submission of an I/O-thread turn corks
// the socket and posts the uncork, so the requests submitted until that handler runs (a create and the
// listing pipelined behind it, say) leave together, in as few segments as the kernel can make.
void StSession::cork_turn() {
  if (corked_fd_ >= 0 || !sd_.is_open() || !sd_connected_) return;
  corked_fd_ = sd_.native_handle();
  set_cork(corked_fd_, true);
  boost::asio::post(ioc_, [this] { uncork(); });
}

void StSession::uncork() {
  if (corked_fd_ < 0) return;
  if (sd_.is_open() && sd_.native_handle() == corked_fd_) set_cork(corked_fd_, false);
  corked_fd_ = -1;
}

void StSession::arm_wait(asio::posix::descriptor_base::wait_type type, bool& armed) {
  if (armed || !sd_.is_open()) return;
  armed = true;
  sd_.async_wait(type, [this, &armed, g = sd_gen_](error_code ec) {
    if (g != sd_gen_) return;
    armed = false;
    if (!ec) pump();
  });
}

// GSSAPI: the C client starts the exchange when it reads the server's answer to the session request (in
// ASSOCIATING, the state of the exchange too), asking GSS-API for the thread's default credential. That
// answer stays unread until the client's cache holds a ticket-granting ticket (got on the pool: the KDC may
// take long); the handshake watch counts it as heard meanwhile, and the C client's own bound of an attempt
// (two thirds of the session timeout) still runs.
bool StSession::kerberos_ready(int state, const SaslProblem*& refusal) {
  refusal = nullptr;
#if ZKR_HAVE_C_CLIENT_KERBEROS
  if (!kerberos_ || state != ZOO_ASSOCIATING_STATE) return true;
  if (kerberos_->ready([this] { request_pump(); })) return true;
  if (kerberos_->failure().ec) refusal = &kerberos_->failure();
  return false;
#else
  (void)state;
  return true;
#endif
}

void StSession::pump() {
  pump_posted_ = false;
  if (!zh_ || in_pump_) return;
  in_pump_ = true;
  for (int iteration = 0; iteration < 64; ++iteration) {
    int fd = -1, interest = 0;
    timeval tv{};
    bool connected = false;
    bool auth_failed = false;
    int state_after = 0;
    {
      const std::lock_guard c_lock(c_client_mutex());
      const int state = zoo_state(zh_);
      // The server refused our auth info: the C client stays in this state for good, and zookeeper_interest
      // and zookeeper_process fail at once with a zero timeout, so pumping on would spin.
      auth_failed = state == ZOO_AUTH_FAILED_STATE;
      // A request call (zoo_a*) whose immediate send fails closes the socket and marks the handle not
      // connected without a session event; its reconnect then reports no CONNECTING either, as the handle was
      // not connected when it gave up. Deliver that event ourselves, or the framework stays connected, with
      // no SUSPENDED and no session-timeout clock. A duplicate of a real event still queued is harmless.
      if (events_.believes_connected() && state != ZOO_CONNECTED_STATE && state != ZOO_READONLY_STATE &&
          state != ZOO_EXPIRED_SESSION_STATE && state != ZOO_AUTH_FAILED_STATE)
        on_c_session_event(generation_, ZOO_CONNECTING_STATE);
      if (!auth_failed) {
        zookeeper_interest(zh_, &fd, &interest, &tv);
        state_after = zoo_state(zh_);
        connected = state_after == ZOO_CONNECTED_STATE;
      }
    }
    if (auth_failed) {
      in_pump_ = false;
      return report_auth_failed();
    }
    if (!zh_) break;
    const SaslProblem* refusal = nullptr;
    if (!kerberos_ready(state_after, refusal)) interest &= ~ZOOKEEPER_READ;
    if (refusal) {
      in_pump_ = false;
      return events_.on_refused(refusal->ec, "SASL authentication failed: " + refusal->reason);
    }
    update_descriptor(fd, connected);
    const auto now = std::chrono::steady_clock::now();
    if (handshake_overdue(fd, state_after, now)) {
      // Shut the socket down (through our duplicate: same socket): the C client reads end-of-stream at once,
      // drops the connection as lost and connects again.
      log_.info("no answer to the connection handshake with {} within {} ms: connecting again",
                current_server(), handshake_bound().count());
      ++handshakes_abandoned_;
      handshake_ino_ = 0;
      (void)::shutdown(sd_.native_handle(), SHUT_RDWR);
      continue;
    }
    short want = 0;
    if (interest & ZOOKEEPER_READ) want |= POLLIN;
    if (interest & ZOOKEEPER_WRITE) want |= POLLOUT;
    int ready = 0;
    if (fd >= 0 && want) {
      pollfd p{fd, want, 0};
      if (::poll(&p, 1, 0) > 0) {
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) ready |= ZOOKEEPER_READ;
        if (p.revents & POLLOUT) ready |= ZOOKEEPER_WRITE;
      }
    }
    // The server answered during the handshake (the C client reads it below): its silence starts over.
    if ((ready & ZOOKEEPER_READ) && handshake_ino_ != 0 && handshake_ino_ == sd_ino_) handshake_since_ = now;
    const bool timed_out = tv.tv_sec == 0 && tv.tv_usec == 0;
    if (ready || timed_out) {
      // A flush of what the C client could not send at once, or a ping: corked like a turn's submissions
      // (cork_turn).
      const int cork =
          (ready & ZOOKEEPER_WRITE || timed_out) && corked_fd_ < 0 && sd_.is_open() && fd == sd_fd_
              ? sd_.native_handle()
              : -1;
      if (cork >= 0) set_cork(cork, true);
      // Over TLS, the C client runs its whole handshake inside this call, blocking (docs/tls.md): bounded
      // by the watchdog, which shuts the socket down (our duplicate of it, open until this returns).
      std::uint64_t watch = 0;
      if (cfg_.tls && state_after == kSslConnectingState && (ready & ZOOKEEPER_WRITE) && sd_own_fd_ >= 0)
        watch = SocketWatchdog::instance().arm(sd_own_fd_, now + tls_handshake_bound());
      {
        const std::lock_guard c_lock(c_client_mutex());
        zookeeper_process(zh_, ready);
      }
      if (watch != 0) {
        if (SocketWatchdog::instance().disarm(watch)) {
          log_.info("the TLS handshake with {} took longer than {} ms: connecting again", current_server(),
                    tls_handshake_bound().count());
          ++handshakes_abandoned_;
          handshake_ino_ = 0;
        } else if (log_.should_log(spdlog::level::debug)) {
          const auto took =
              std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - now);
          log_.debug("the TLS handshake with {} held the I/O thread {:.1f} ms", current_server(),
                     static_cast<double>(took.count()) / 1000.0);
        }
      }
      if (cork >= 0 && sd_.is_open() && sd_.native_handle() == cork) set_cork(cork, false);
      if (!zh_) break;
      continue;
    }
    // Nothing to do now: arm the waits.
    if (fd >= 0 && (interest & ZOOKEEPER_READ))
      arm_wait(asio::posix::stream_descriptor::wait_read, read_armed_);
    if (fd >= 0 && (interest & ZOOKEEPER_WRITE))
      arm_wait(asio::posix::stream_descriptor::wait_write, write_armed_);
    // The C client's next deadline (pings, timeouts). A timer already due earlier is kept: it pumps, and the
    // pump arms the next one (re-arming on every pump would cost a timerfd_settime per request).
    auto deadline = now + std::chrono::seconds(tv.tv_sec) + std::chrono::microseconds(tv.tv_usec);
    if (handshake_ino_ != 0) deadline = std::min(deadline, handshake_since_ + handshake_bound());
    if (!pump_timer_armed_ || deadline < pump_timer_.expiry()) {
      pump_timer_armed_ = true;
      pump_timer_.expires_at(deadline);
      pump_timer_.async_wait([this, g = ++pump_timer_gen_](error_code ec) {
        if (ec || g != pump_timer_gen_) return;
        pump_timer_armed_ = false;
        pump();
      });
    }
    // Anything that became ready between the poll above and the arming would produce no edge: look again.
    in_pump_ = false;
    if (fd >= 0 && want) {
      pollfd p{fd, want, 0};
      if (::poll(&p, 1, 0) > 0) request_pump();
    }
    return;
  }
  in_pump_ = false;
  if (zh_) request_pump();
}

}  // namespace zkr::detail
