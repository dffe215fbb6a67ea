#pragma once
// `FaultProxy`, a TCP proxy between a client and a ZooKeeper server that cuts a connection at an exact point
// of the protocol (between a create request and its reply), refuses or drops connections, and traces the
// frames.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace zkr::itest {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/// A TCP proxy on 127.0.0.1 in front of a ZooKeeper server, for fault injection at exact protocol points.
/// Client-to-server traffic is forwarded frame by frame (ZooKeeper frames are length-prefixed), so the proxy
/// knows which request it is forwarding; server-to-client traffic is forwarded as is.
///
/// Faults:
///  * `arm_cut_on_create(match, forward, hold)`: the next create request (opcodes create, create2,
///  createContainer,
///    createTTL) whose path contains `match` is either forwarded to the server (`forward`: the server applies
///    it) or swallowed; then everything the server sends back on that connection for `hold` is discarded and
///    the connection is cut on both sides. The client sees a connection loss exactly between request and
///    reply.
///  * `set_refuse(true)`: new connections are accepted and closed at once (an ensemble that is down);
///    `drop_connections()` cuts the existing ones; `set_upstream(port)` sends new ones to another server.
///
/// Over TLS the frames cannot be seen: a proxy made with `frames` false relays the bytes as they come (no cut
/// on create, no trace).
///
/// Observation: `record(true)` keeps a trace of the frames as they pass, in order: each request forwarded to
/// the server (its xid and opcode) and each reply forwarded to the client (its xid), so a test can tell what
/// the client sent before it had a reply.
class FaultProxy {
 public:
  struct WireEvent {
    bool request = false;  ///< client to server (else: a reply, server to client)
    std::int32_t xid = 0;
    std::int32_t type = 0;  ///< the request's opcode (requests only)
    std::string path;       ///< the request's first field when it is a path (most requests), else empty
    /// Requests only: the whole frame, length prefix included, came in one read of the client's socket (it
    /// was sent in one segment, or with the segments before it).
    bool one_read = false;
  };

 public:
  /// A proxy to `upstream_port` on 127.0.0.1, listening on `port` (0: a free one, see `port()`).
  explicit FaultProxy(std::uint16_t upstream_port, bool frames = true, std::uint16_t port = 0)
      : upstream_port_(upstream_port), frames_(frames) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listen_fd_ >= 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    REQUIRE(::bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(listen_fd_, 16) == 0);
    socklen_t len = sizeof a;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~FaultProxy() {
    stop_ = true;
    if (acceptor_.joinable()) acceptor_.join();
    std::list<std::thread> ts;
    {
      std::lock_guard lk(m_);
      ts = std::move(threads_);
    }
    for (auto& t : ts) t.join();
    ::close(listen_fd_);
  }
  FaultProxy(const FaultProxy&) = delete;
  FaultProxy& operator=(const FaultProxy&) = delete;

  std::string connect_string() const { return "127.0.0.1:" + std::to_string(port_); }
  std::uint16_t port() const { return port_; }

  /// Cuts the connection after the next create whose path contains `match` (or the next transaction with such
  /// a path in it): the request is forwarded (`forward`) or swallowed, the server's replies are swallowed for
  /// `hold`, then both sides are closed.
  /// `refuse_after`: once the cut is made, refuse new connections (as `set_refuse(true)`) so the client
  /// cannot reconnect until the test allows it.
  void arm_cut_on_create(std::string match, bool forward, std::chrono::milliseconds hold = 300ms,
                         bool refuse_after = false) {
    std::lock_guard lk(m_);
    armed_ = true;
    refuse_after_ = refuse_after;
    fired_ = false;
    match_ = std::move(match);
    forward_ = forward;
    hold_ = hold;
    cut_path_.clear();
  }
  /// Whether the armed cut happened; waits up to `timeout` for it.
  bool wait_fired(std::chrono::milliseconds timeout) {
    std::unique_lock lk(m_);
    return cv_.wait_for(lk, timeout, [&] { return fired_; });
  }
  /// The (server-side, full) path of the create that was cut.
  std::string cut_path() const {
    std::lock_guard lk(m_);
    return cut_path_;
  }
  /// Whether the connection cut after the armed create has been closed (the hold is over).
  bool cut_done() const { return cut_done_; }
  void set_refuse(bool refuse) { refuse_ = refuse; }
  /// From now on the server's bytes reach the client only up to `bytes` more (over all connections); the rest
  /// is swallowed while the connections stay open, even once the server has closed its side: a reply (over
  /// TLS, a record) that arrives in part.
  void stall_replies_after(std::size_t bytes) { reply_budget_ = static_cast<std::int64_t>(bytes); }
  void drop_connections() { ++drop_epoch_; }
  void set_upstream(std::uint16_t port) { upstream_port_ = port; }
  /// Connections accepted so far.
  int connections() const { return accepted_; }
  /// Starts (clearing the trace) or stops recording the frames that pass.
  void record(bool on) {
    std::lock_guard lk(m_);
    recording_ = on;
    if (on) trace_.clear();
  }
  std::vector<WireEvent> trace() const {
    std::lock_guard lk(m_);
    return trace_;
  }

 private:
  static std::int32_t be32(const char* p) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return static_cast<std::int32_t>(ntohl(v));
  }
  static bool write_all(int fd, const char* p, std::size_t n) {
    while (n > 0) {
      auto w = ::send(fd, p, n, MSG_NOSIGNAL);
      if (w <= 0) return false;
      p += w;
      n -= static_cast<std::size_t>(w);
    }
    return true;
  }

  /// Follows the server's frames through `n` more bytes (before they are forwarded) and, while recording,
  /// traces each reply completed.
  void trace_replies(std::string& outbuf, bool& first_reply, const char* p, std::size_t n) {
    std::lock_guard lk(m_);
    outbuf.append(p, n);
    while (outbuf.size() >= 4) {
      const auto len = be32(outbuf.data());
      if (len < 0 || outbuf.size() < 4 + static_cast<std::size_t>(len)) break;
      if (recording_ && !first_reply && len >= 4)
        trace_.push_back({false, be32(outbuf.data() + 4), 0, {}, false});
      first_reply = false;
      outbuf.erase(0, 4 + static_cast<std::size_t>(len));
    }
  }

  void accept_loop() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      int c = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (c < 0) continue;
      ++accepted_;
      if (refuse_) {
        ::close(c);
        continue;
      }
      std::lock_guard lk(m_);
      threads_.emplace_back([this, c] { relay(c); });
    }
  }

  void relay(int client) {
    int server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(upstream_port_.load());
    if (::connect(server, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(server);
      ::close(client);
      return;
    }
    const int epoch = drop_epoch_;
    std::string inbuf;        // client-to-server bytes not yet forwarded (an incomplete frame)
    bool first_frame = true;  // the ConnectRequest has no request header
    std::string outbuf;       // server-to-client bytes seen, for the trace (forwarded as they come)
    bool first_reply = true;  // the ConnectResponse has no reply header
    std::optional<Clock::time_point> cut_at;  // swallowing the server's output until then, then cut
    char buf[65536];
    for (;;) {
      if (stop_ || drop_epoch_ != epoch) break;
      if (cut_at && Clock::now() >= *cut_at) {
        {
          std::lock_guard lk(m_);
          if (refuse_after_) refuse_ = true;
        }
        cut_done_ = true;
        break;
      }
      // While a cut is pending only the server is read (its reply is swallowed); the client is left waiting.
      pollfd ps[2] = {{server, POLLIN, 0}, {client, POLLIN, 0}};
      if (::poll(ps, cut_at ? 1 : 2, 20) < 0) break;
      if (ps[0].revents & (POLLIN | POLLHUP | POLLERR)) {
        auto n = ::recv(server, buf, sizeof buf, 0);
        if (n <= 0) {
          // Stalled: the client is left waiting on its open connection, as behind a network that lost the
          // rest.
          while (reply_budget_ >= 0 && !stop_ && drop_epoch_ == epoch) std::this_thread::sleep_for(20ms);
          break;
        }
        auto pass = static_cast<std::size_t>(n);
        if (const auto budget = reply_budget_.load(); budget >= 0) {
          pass = std::min(pass, static_cast<std::size_t>(budget));
          reply_budget_ = budget - static_cast<std::int64_t>(pass);
        }
        if (!cut_at && pass > 0) {
          if (frames_) trace_replies(outbuf, first_reply, buf, pass);
          if (!write_all(client, buf, pass)) break;
        }
      }
      if (cut_at) continue;
      if (ps[1].revents & (POLLIN | POLLHUP | POLLERR)) {
        auto n = ::recv(client, buf, sizeof buf, 0);
        if (n <= 0) break;
        if (!frames_) {
          if (!write_all(server, buf, static_cast<std::size_t>(n))) break;
          continue;
        }
        std::size_t fresh_from = inbuf.size();  // bytes of inbuf before this offset came in earlier reads
        inbuf.append(buf, static_cast<std::size_t>(n));
        while (inbuf.size() >= 4) {
          const auto len = be32(inbuf.data());
          if (len < 0 || inbuf.size() < 4 + static_cast<std::size_t>(len)) break;
          const std::size_t frame = 4 + static_cast<std::size_t>(len);
          bool cut = false, forward = true;
          if (!first_frame && len >= 12) {
            const auto type = be32(inbuf.data() + 8);
            const bool is_create = type == 1 || type == 15 || type == 19 || type == 21;
            const bool is_multi = type == 14;
            if (is_create || is_multi) {
              const auto plen = be32(inbuf.data() + 12);
              // A transaction matches when any of its operations' paths does: search the whole frame.
              std::string path = is_multi ? inbuf.substr(12, frame - 12)
                                 : plen > 0 && 16 + static_cast<std::size_t>(plen) <= frame
                                     ? inbuf.substr(16, static_cast<std::size_t>(plen))
                                     : std::string();
              std::lock_guard lk(m_);
              if (armed_ && path.find(match_) != std::string::npos) {
                armed_ = false;
                fired_ = true;
                cut_path_ = is_multi ? match_ : path;
                cut = true;
                forward = forward_;
                cut_at = Clock::now() + hold_;
                cv_.notify_all();
              }
            }
          }
          if (!first_frame && len >= 8) {
            std::lock_guard lk(m_);
            if (recording_) {
              std::string path;
              if (len >= 12) {
                const auto plen = be32(inbuf.data() + 12);
                if (plen > 0 && 16 + static_cast<std::size_t>(plen) <= frame && inbuf[16] == '/')
                  path = inbuf.substr(16, static_cast<std::size_t>(plen));
              }
              trace_.push_back(
                  {true, be32(inbuf.data() + 4), be32(inbuf.data() + 8), std::move(path), fresh_from == 0});
            }
          }
          first_frame = false;
          if (forward && !write_all(server, inbuf.data(), frame)) {
            inbuf.clear();
            break;
          }
          inbuf.erase(0, frame);
          fresh_from = fresh_from > frame ? fresh_from - frame : 0;
          if (cut) {
            inbuf.clear();
            break;
          }
        }
      }
    }
    ::shutdown(client, SHUT_RDWR);
    ::close(client);
    ::close(server);
  }

  std::atomic<std::uint16_t> upstream_port_;
  const bool frames_;
  std::uint16_t port_ = 0;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<bool> refuse_{false};
  std::atomic<int> drop_epoch_{0};
  std::atomic<int> accepted_{0};
  std::atomic<bool> cut_done_{false};
  std::atomic<std::int64_t> reply_budget_{-1};  // -1: no stall
  mutable std::mutex m_;
  std::condition_variable cv_;
  bool armed_ = false, fired_ = false, forward_ = true, refuse_after_ = false;
  bool recording_ = false;
  std::vector<WireEvent> trace_;
  std::string match_;
  std::chrono::milliseconds hold_{300};
  std::string cut_path_;
  std::thread acceptor_;
  std::list<std::thread> threads_;
};

}  // namespace zkr::itest
