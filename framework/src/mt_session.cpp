// The session over the multi-threaded ZooKeeper C client (see mt_session.hpp).
//
// The C client's zoo_a* calls are thread-safe in this flavour: they queue the request and wake the C client's
// I/O thread, which sends it. No call here takes the process-wide C-client mutex (zk_glue.hpp): it guards the
// single-threaded client's shared buffers against our I/O threads, while this flavour's own threads use them
// without it in any case.

#include "mt_session.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zookeeper/zookeeper_version.h>

#include <boost/asio/post.hpp>
#include <string_view>

#include "c_session_factory.hpp"

namespace asio = boost::asio;

namespace zkr::detail {

std::unique_ptr<Session> make_c_client_session(asio::io_context& ioc, const ClientConfig& config,
                                               spdlog::logger& log, SessionEvents& events) {
  return std::make_unique<MtSession>(ioc, config, log, events);
}

namespace {

// The socket of the handle's current connection attempt, or -1. The C client does not expose it in this
// flavour; its handle's first member is its socket record (`zsock_t *fd`, whose first member, `sock`, is in
// the public header), as in every release from 3.6 to 3.8, the ones this is enabled for (watch_supported_).
// The C client's own thread writes it: read atomically, and only ever used through a duplicate checked to be
// a socket (watch_attempt).
int attempt_socket(zhandle_t* zh) {
  zsock_t* z = *reinterpret_cast<zsock_t* const*>(zh);
  return z ? __atomic_load_n(&z->sock, __ATOMIC_RELAXED) : -1;
}

}  // namespace

MtSession::MtSession(asio::io_context& ioc, const ClientConfig& config, spdlog::logger& log,
                     SessionEvents& events)
    : CSession(ioc, config, log, events), watch_timer_(ioc) {
  const std::string_view v = ZOO_VERSION;
  watch_supported_ = v.starts_with("3.6.") || v.starts_with("3.7.") || v.starts_with("3.8.");
}

MtSession::~MtSession() { close(); }

bool MtSession::open() {
  add_log_fallback(&log_);        // before the C client's threads start logging
  zhandle_t* zh = init_handle();  // starts the C client's threads; it connects in the background
  if (!zh) {
    remove_log_fallback(&log_);
    return false;
  }
  {
    const std::lock_guard lock(handle_mu_);
    zh_ = zh;
  }
  attempts_abandoned_ = 0;
  last_event_state_ = 0;
  watch_attempt();
  return true;
}

// The attempt watch: the single-threaded session's handshake bound (st_session.cpp), by polling, and the
// notice of a refused SASL exchange (AUTH_FAILED, which the C client reports with no event). An attempt
// whose socket is still not connected `attempt_bound` after the watch first saw it is shut down (through our
// duplicate: the same socket), so that the C client's thread, which waits on it, sees it end and connects
// again; in a TLS handshake it is that thread's only way out.
std::chrono::milliseconds MtSession::attempt_bound(int state) const {
  if (cfg_.handshake_timeout <= std::chrono::milliseconds::zero())
    // Left to the C client, which has no timeout of its own for a TLS handshake.
    return state == kSslConnectingState ? std::chrono::milliseconds(2000) : std::chrono::milliseconds::zero();
  return handshake_bound(cfg_.handshake_timeout, attempts_abandoned_);
}

bool MtSession::track_attempt() {
  const int fd = attempt_socket(zh_);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) {
    forget_attempt();
    return false;
  }
  if (attempt_fd_ >= 0 && st.st_ino == attempt_ino_) return true;
  // A new attempt: keep a duplicate, and check that it is still the handle's socket (the C client may have
  // replaced it, and the number been reused, between the read and the duplicate).
  forget_attempt();
  const int own = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  struct stat own_st {};
  if (own >= 0 && ::fstat(own, &own_st) == 0 && own_st.st_ino == st.st_ino && attempt_socket(zh_) == fd) {
    attempt_fd_ = own;
    attempt_ino_ = st.st_ino;
    return true;
  }
  if (own >= 0) ::close(own);
  return false;
}

void MtSession::forget_attempt() {
  if (attempt_fd_ >= 0) ::close(attempt_fd_);
  attempt_fd_ = -1;
  attempt_ino_ = 0;
}

// The watch runs only while an attempt may be under way: it stops once the handle is connected *and* the C
// client's event for that connection has arrived, and a session event that is not a connection restarts it.
// (On a lost connection the C client queues its CONNECTING event before it marks the handle not connected, so
// the handle may still read connected when that event arrives: the watch then goes on until the next
// connection's event.)
void MtSession::on_session_event(int state) {
  last_event_state_ = state;
  if (!watching_ && !is_connected_state(state)) watch_attempt();
}

void MtSession::watch_attempt() {
  watching_ = false;
  if (!zh_) return;
  const int state = zoo_state(zh_);
  if (state == ZOO_AUTH_FAILED_STATE) {
    // A refused SASL exchange: the C client's thread enters AUTH_FAILED for good without a session event
    // (zookeeper.c's SASL completion sets the state only); the watch is what notices it.
    forget_attempt();
    return report_auth_failed();
  }
  // Without the attempt's socket (a C client outside 3.6-3.8) only a refused SASL exchange is watched for.
  if (!watch_supported_ && !cfg_.sasl) return;
  constexpr auto none = std::chrono::milliseconds::zero();
  if (is_connected_state(state)) {
    attempts_abandoned_ = 0;
    forget_attempt();
    if (is_connected_state(last_event_state_)) return;  // stopped until the next session event
  } else if (const auto bound = watch_supported_ ? attempt_bound(state) : none; bound > none) {
    const ino_t before = attempt_ino_;
    if (!track_attempt()) {
      // no socket now
    } else if (attempt_ino_ != before) {
      attempt_since_ = std::chrono::steady_clock::now();
    } else if (std::chrono::steady_clock::now() - attempt_since_ >= bound) {
      log_.info("no answer to the connection {}handshake within {} ms: connecting again",
                state == kSslConnectingState ? "(TLS) " : "", bound.count());
      ++attempts_abandoned_;
      (void)::shutdown(attempt_fd_, SHUT_RDWR);
      forget_attempt();
    }
  }
  watching_ = true;
  watch_timer_.expires_after(std::chrono::milliseconds(100));
  watch_timer_.async_wait([this, g = watch_gen_](error_code ec) {
    if (!ec && g == watch_gen_) watch_attempt();
  });
}

void MtSession::close() {
  if (!zh_) return;
  ++watch_gen_;
  watch_timer_.cancel();
  watching_ = false;
  // A TLS handshake in progress holds the C client's thread, which zookeeper_close joins: end it now.
  if (watch_supported_ && zoo_state(zh_) == kSslConnectingState && track_attempt())
    (void)::shutdown(attempt_fd_, SHUT_RDWR);
  forget_attempt();
  zhandle_t* zh = zh_;
  {
    const std::lock_guard lock(handle_mu_);
    zh_ = nullptr;  // late callbacks of this handle are dropped (CSession::on_c_session_event)
  }
  // Sends the session's close if connected, stops and joins the C client's threads, then completes every
  // pending request (ZCLOSING) on this thread; their results are posted. No callback of the handle runs
  // after it returns.
  zookeeper_close(zh);
  free_handle_ctx();
  remove_log_fallback(&log_);
  // The requests whose completion the C client dropped (mt_session.hpp).
  auto left = in_flight_.take_all();
  if (!left.empty() && log_.should_log(spdlog::level::debug))
    log_.debug("the C client closed with {} request(s) not completed: completing them (ZCLOSING)",
               left.size());
  for (auto& p : left) deliver(std::move(p), ZCLOSING);
}

void MtSession::submit(zk::Request request, zk::ReplyCallback reply) {
  auto p = make_pending(ioc_, std::move(request), std::move(reply), &in_flight_);
  if (!zh_) return deliver(std::move(p), events_.no_session_ec());
  const int rc = send_pending(zh_, p);
  if (rc != ZOK) deliver(std::move(p), refused_rc(rc));
}

bool MtSession::submit_from_caller(zk::Request& request, zk::ReplyCallback& reply) {
  auto p = make_pending(ioc_, std::move(request), std::move(reply), &in_flight_);
  int rc = ZINVALIDSTATE;
  {
    const std::lock_guard lock(handle_mu_);
    if (zh_) rc = send_pending(zh_, p);
  }
  if (rc != ZOK) {
    take_back(std::move(p), request, reply);
    return false;
  }
  return true;
}

}  // namespace zkr::detail
