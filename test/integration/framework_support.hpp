#pragma once
// Helpers shared by the framework integration tests: a shared test server, client factories, thread-safe
// recorders for watch events and connection states, bounded waits, runners for the three async completion
// styles (callback, use_future, use_awaitable), and `FaultProxy`, a TCP proxy between a client and the server
// that can cut a connection exactly between a create request and its reply.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <exception>
#include <functional>
#include <future>
#include <limits>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include <zkr/framework/curator_framework.hpp>
#include <zkr/testing/testing_server.hpp>

namespace zkr::itest {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/// Whether this build runs over the multi-threaded C client (ZKR_ZOOKEEPER_CLIENT, test/CMakeLists.txt). The
/// few behaviours only the single-threaded session has (the handshake bound, one segment per request) are
/// skipped there, with a warning that says so.
bool on_mt_client();  // client_flavour.cpp

/// A logger for test clients: silent unless ZKR_TEST_LOG is set (then to stderr at that level, e.g. "debug").
inline std::shared_ptr<spdlog::logger> test_logger() {
  static const std::shared_ptr<spdlog::logger> log = [] {
    const char* lvl = std::getenv("ZKR_TEST_LOG");
    if (lvl && *lvl) {
      auto l = std::make_shared<spdlog::logger>("zkr-test", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
      l->set_level(spdlog::level::from_str(lvl));
      return l;
    }
    auto l = std::make_shared<spdlog::logger>("zkr-test", std::make_shared<spdlog::sinks::null_sink_mt>());
    l->set_level(spdlog::level::off);
    return l;
  }();
  return log;
}

/// One server for the tests that do not disturb it (each uses its own paths). Started on first use, killed at exit.
inline zkr::testing::TestingServer& shared_server() {
  static zkr::testing::TestingServer server;
  return server;
}

/// A path prefix unique in this process run: "/<tag>-<n>-<random>".
inline std::string unique_path(const std::string& tag) {
  static std::atomic<int> counter{0};
  static const auto salt = std::random_device{}();
  return "/" + tag + "-" + std::to_string(++counter) + "-" + std::to_string(salt % 100000);
}

/// Builder defaults for tests: short timeouts, a quick retry policy, fixed default data, quiet logger.
inline CuratorFrameworkFactory::Builder test_builder(const std::string& connect) {
  return CuratorFrameworkFactory::builder()
      .connect_string(connect)
      .retry_policy(std::make_shared<RetryNTimes>(3, Millis(100)))
      .session_timeout(10s)
      .connection_timeout(3s)
      .default_data("")
      .logger(test_logger());
}

/// Builds, starts and waits for the connection.
inline std::unique_ptr<CuratorFramework> started(const CuratorFrameworkFactory::Builder& b) {
  auto c = b.build();
  c->start();
  REQUIRE(c->block_until_connected(10s));
  return c;
}

inline std::unique_ptr<CuratorFramework> connect_shared() { return started(test_builder(shared_server().connect_string())); }

/// Polls `pred` every 20 ms until it holds or `timeout` passes.
template <class Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (pred()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(20ms);
  }
}

/// Milliseconds since `t0`.
inline long long ms_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

/// Records things delivered on other threads; waits for them with a bound.
template <class T>
class Recorder {
 public:
  void push(T v) {
    // Notified under the lock: a waiting test may see the item, return and destroy this recorder as soon as
    // it can take the mutex, which must not be before this thread is done with the condition variable.
    std::lock_guard lk(m_);
    items_.push_back(std::move(v));
    cv_.notify_all();
  }
  /// A callable that records its argument.
  auto sink() {
    return [this](const T& v) { push(v); };
  }
  std::vector<T> items() const {
    std::lock_guard lk(m_);
    return items_;
  }
  std::size_t size() const {
    std::lock_guard lk(m_);
    return items_.size();
  }
  /// Waits until at least `n` items were recorded.
  bool wait_count(std::size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock lk(m_);
    return cv_.wait_for(lk, timeout, [&] { return items_.size() >= n; });
  }
  /// Waits until an item equal to `v` was recorded (at index >= `from`); returns its index.
  std::optional<std::size_t> wait_for(const T& v, std::chrono::milliseconds timeout, std::size_t from = 0) {
    std::unique_lock lk(m_);
    std::optional<std::size_t> at;
    cv_.wait_for(lk, timeout, [&] {
      for (std::size_t i = from; i < items_.size(); ++i)
        if (items_[i] == v) {
          at = i;
          return true;
        }
      return false;
    });
    return at;
  }

 private:
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::vector<T> items_;
};

struct Event {
  EventType type;
  std::string path;
  friend bool operator==(const Event&, const Event&) = default;
};

/// Records watch events.
class EventRecorder : public Recorder<Event> {
 public:
  Watcher watcher() {
    return [this](const WatchedEvent& e) { push(Event{e.type, e.path}); };
  }
};

using StateRecorder = Recorder<ConnectionState>;

// ---------------------------------------------------------------------------------------------------------
// The three asynchronous completion styles.

template <class T>
struct Outcome {
  error_code ec;
  T value{};
};

/// Runs `start(callback)` where the callback is a plain lambda taking (error_code, T); waits up to `timeout`.
template <class T, class Start>
Outcome<T> with_callback(Start&& start, std::chrono::milliseconds timeout = 20s) {
  auto p = std::make_shared<std::promise<Outcome<T>>>();
  auto f = p->get_future();
  start([p](error_code ec, T v) { p->set_value(Outcome<T>{ec, std::move(v)}); });
  REQUIRE(f.wait_for(timeout) == std::future_status::ready);
  return f.get();
}

/// As `with_callback` for operations completing with (error_code) only.
template <class Start>
error_code with_void_callback(Start&& start, std::chrono::milliseconds timeout = 20s) {
  auto p = std::make_shared<std::promise<error_code>>();
  auto f = p->get_future();
  start([p](error_code ec) { p->set_value(ec); });
  REQUIRE(f.wait_for(timeout) == std::future_status::ready);
  return f.get();
}

/// Waits for a `use_future` future and returns its value, or the error code it failed with.
template <class T>
Outcome<T> from_future(std::future<T> f, std::chrono::milliseconds timeout = 20s) {
  REQUIRE(f.wait_for(timeout) == std::future_status::ready);
  try {
    return Outcome<T>{{}, f.get()};
  } catch (const boost::system::system_error& e) {
    return Outcome<T>{e.code(), T{}};
  }
}
inline error_code from_void_future(std::future<void> f, std::chrono::milliseconds timeout = 20s) {
  REQUIRE(f.wait_for(timeout) == std::future_status::ready);
  try {
    f.get();
    return {};
  } catch (const boost::system::system_error& e) {
    return e.code();
  }
}

/// Runs the coroutine `make()` (returning `asio::awaitable<T>`) with `co_spawn` on a fresh io_context in this
/// thread; a `system_error` thrown by an awaited operation becomes the outcome's error code.
template <class T, class Make>
Outcome<T> with_awaitable(Make&& make, std::chrono::milliseconds timeout = 20s) {
  asio::io_context ioc;
  std::optional<Outcome<T>> out;
  std::exception_ptr other;
  asio::co_spawn(ioc, make(), [&](std::exception_ptr e, T v) {
    if (!e) {
      out.emplace(Outcome<T>{{}, std::move(v)});
      return;
    }
    try {
      std::rethrow_exception(e);
    } catch (const boost::system::system_error& se) {
      out.emplace(Outcome<T>{se.code(), T{}});
    } catch (...) {
      other = std::current_exception();
    }
  });
  ioc.run_for(timeout);
  if (other) std::rethrow_exception(other);
  REQUIRE(out.has_value());
  return std::move(*out);
}
template <class Make>
error_code with_void_awaitable(Make&& make, std::chrono::milliseconds timeout = 20s) {
  asio::io_context ioc;
  std::optional<error_code> out;
  std::exception_ptr other;
  asio::co_spawn(ioc, make(), [&](std::exception_ptr e) {
    if (!e) {
      out.emplace();
      return;
    }
    try {
      std::rethrow_exception(e);
    } catch (const boost::system::system_error& se) {
      out.emplace(se.code());
    } catch (...) {
      other = std::current_exception();
    }
  });
  ioc.run_for(timeout);
  if (other) std::rethrow_exception(other);
  REQUIRE(out.has_value());
  return *out;
}

/// The error code a throwing twin threw (empty when it did not throw).
template <class F>
error_code thrown_by(F&& f) {
  try {
    f();
  } catch (const zkr::Error& e) {
    return e.code();
  }
  return {};
}

/// "_c_<uuid>-" of a protected path's last segment.
inline std::string protected_prefix_of(const std::string& path) {
  return node_name(path).substr(0, protected_names::prefix_with_uuid_length);
}

/// Names of `parent`'s children seen by `client` that start with `prefix`.
inline std::vector<std::string> children_with_prefix(CuratorFramework& client, const std::string& parent,
                                                     const std::string& prefix) {
  std::vector<std::string> out;
  for (auto& n : client.get_children(parent))
    if (n.rfind(prefix, 0) == 0) out.push_back(n);
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// FaultProxy

/// A TCP proxy on 127.0.0.1 in front of a ZooKeeper server, for fault injection at exact protocol points.
/// Client-to-server traffic is forwarded frame by frame (ZooKeeper frames are length-prefixed), so the proxy
/// knows which request it is forwarding; server-to-client traffic is forwarded as is.
///
/// Faults:
///  * `arm_cut_on_create(match, forward, hold)`: the next create request (opcodes create, create2, createContainer,
///    createTTL) whose path contains `match` is either forwarded to the server (`forward`: the server applies
///    it) or swallowed; then everything the server sends back on that connection for `hold` is discarded and the
///    connection is cut on both sides. The client sees a connection loss exactly between request and reply.
///  * `set_refuse(true)`: new connections are accepted and closed at once (an ensemble that is down);
///    `drop_connections()` cuts the existing ones.
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
  explicit FaultProxy(std::uint16_t upstream_port) : upstream_port_(upstream_port) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(listen_fd_ >= 0);
    int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
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

  /// Cuts the connection after the next create whose path contains `match` (or the next transaction with such
  /// a path in it): the request is forwarded (`forward`) or swallowed, the server's replies are swallowed for
  /// `hold`, then both sides are closed.
  /// `refuse_after`: once the cut is made, refuse new connections (as `set_refuse(true)`) so the client cannot
  /// reconnect until the test allows it.
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
  void drop_connections() { ++drop_epoch_; }
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
      if (recording_ && !first_reply && len >= 4) trace_.push_back({false, be32(outbuf.data() + 4), 0, {}, false});
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
    a.sin_port = htons(upstream_port_);
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
        if (n <= 0) break;
        if (!cut_at) {
          trace_replies(outbuf, first_reply, buf, static_cast<std::size_t>(n));
          if (!write_all(client, buf, static_cast<std::size_t>(n))) break;
        }
      }
      if (cut_at) continue;
      if (ps[1].revents & (POLLIN | POLLHUP | POLLERR)) {
        auto n = ::recv(client, buf, sizeof buf, 0);
        if (n <= 0) break;
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

  std::uint16_t upstream_port_;
  std::uint16_t port_ = 0;
  int listen_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<bool> refuse_{false};
  std::atomic<int> drop_epoch_{0};
  std::atomic<int> accepted_{0};
  std::atomic<bool> cut_done_{false};
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


// ---------------------------------------------------------------------------------------------------------
// Every operation through each of its twins.

enum class Twin { throwing, error_code, callback, future, awaitable };
inline constexpr Twin all_twins[] = {Twin::throwing, Twin::error_code, Twin::callback, Twin::future, Twin::awaitable};

inline std::string twin_name(Twin t) {
  switch (t) {
    case Twin::throwing: return "throwing";
    case Twin::error_code: return "error_code";
    case Twin::callback: return "callback";
    case Twin::future: return "future";
    case Twin::awaitable: return "awaitable";
  }
  return "?";
}

/// Runs a throwing twin; an `zkr::Error` becomes the outcome's code (and must name `op` and `path`).
template <class T, class F>
Outcome<T> catching(F&& f, const std::string& op, const std::string& path) {
  try {
    return Outcome<T>{{}, f()};
  } catch (const zkr::Error& e) {
    CHECK(e.operation() == op);
    CHECK(e.path() == path);
    return Outcome<T>{e.code(), T{}};
  }
}
template <class F>
error_code catching_void(F&& f, const std::string& op, const std::string& path) {
  try {
    f();
    return {};
  } catch (const zkr::Error& e) {
    CHECK(e.operation() == op);
    CHECK(e.path() == path);
    return e.code();
  }
}

inline Outcome<CreateResult> op_create(CuratorFramework& c, Twin t, const std::string& path,
                                       const CreateOptions& o = {}) {
  switch (t) {
    case Twin::throwing: return catching<CreateResult>([&] { return c.create(path, o); }, "create", path);
    case Twin::error_code: {
      error_code ec;
      auto r = c.create(path, o, ec);
      return {ec, std::move(r)};
    }
    case Twin::callback:
      return with_callback<CreateResult>([&](auto cb) { c.async_create(path, o, std::move(cb)); });
    case Twin::future: return from_future(c.async_create(path, o, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<CreateResult>([&]() -> asio::awaitable<CreateResult> {
        co_return co_await c.async_create(path, o, asio::use_awaitable);
      });
  }
  return {};
}

inline error_code op_remove(CuratorFramework& c, Twin t, const std::string& path, const DeleteOptions& o = {}) {
  switch (t) {
    case Twin::throwing: return catching_void([&] { c.remove(path, o); }, "delete", path);
    case Twin::error_code: {
      error_code ec;
      c.remove(path, o, ec);
      return ec;
    }
    case Twin::callback: return with_void_callback([&](auto cb) { c.async_remove(path, o, std::move(cb)); });
    case Twin::future: return from_void_future(c.async_remove(path, o, asio::use_future));
    case Twin::awaitable:
      return with_void_awaitable([&]() -> asio::awaitable<void> { co_await c.async_remove(path, o, asio::use_awaitable); });
  }
  return {};
}

inline Outcome<std::optional<Stat>> op_exists(CuratorFramework& c, Twin t, const std::string& path, Watcher w = {}) {
  using R = std::optional<Stat>;
  switch (t) {
    case Twin::throwing: return catching<R>([&] { return c.exists(path, w); }, "exists", path);
    case Twin::error_code: {
      error_code ec;
      auto r = c.exists(path, w, ec);
      return {ec, r};
    }
    case Twin::callback: return with_callback<R>([&](auto cb) { c.async_exists(path, w, std::move(cb)); });
    case Twin::future: return from_future(c.async_exists(path, w, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<R>([&]() -> asio::awaitable<R> { co_return co_await c.async_exists(path, w, asio::use_awaitable); });
  }
  return {};
}

inline Outcome<NodeData> op_get_data(CuratorFramework& c, Twin t, const std::string& path, Watcher w = {}) {
  switch (t) {
    case Twin::throwing: return catching<NodeData>([&] { return c.get_data(path, w); }, "get_data", path);
    case Twin::error_code: {
      error_code ec;
      auto r = c.get_data(path, w, ec);
      return {ec, std::move(r)};
    }
    case Twin::callback: return with_callback<NodeData>([&](auto cb) { c.async_get_data(path, w, std::move(cb)); });
    case Twin::future: return from_future(c.async_get_data(path, w, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<NodeData>([&]() -> asio::awaitable<NodeData> {
        co_return co_await c.async_get_data(path, w, asio::use_awaitable);
      });
  }
  return {};
}

inline Outcome<std::vector<std::string>> op_get_children(CuratorFramework& c, Twin t, const std::string& path,
                                                         Watcher w = {}) {
  using R = std::vector<std::string>;
  switch (t) {
    case Twin::throwing: return catching<R>([&] { return c.get_children(path, w); }, "get_children", path);
    case Twin::error_code: {
      error_code ec;
      auto r = c.get_children(path, w, ec);
      return {ec, std::move(r)};
    }
    case Twin::callback: return with_callback<R>([&](auto cb) { c.async_get_children(path, w, std::move(cb)); });
    case Twin::future: return from_future(c.async_get_children(path, w, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<R>([&]() -> asio::awaitable<R> {
        co_return co_await c.async_get_children(path, w, asio::use_awaitable);
      });
  }
  return {};
}

inline Outcome<Stat> op_set_data(CuratorFramework& c, Twin t, const std::string& path, const std::string& data,
                                 int version = -1) {
  switch (t) {
    case Twin::throwing: return catching<Stat>([&] { return c.set_data(path, data, version); }, "set_data", path);
    case Twin::error_code: {
      error_code ec;
      auto r = c.set_data(path, data, version, ec);
      return {ec, r};
    }
    case Twin::callback:
      return with_callback<Stat>([&](auto cb) { c.async_set_data(path, data, version, std::move(cb)); });
    case Twin::future: return from_future(c.async_set_data(path, data, version, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<Stat>([&]() -> asio::awaitable<Stat> {
        co_return co_await c.async_set_data(path, data, version, asio::use_awaitable);
      });
  }
  return {};
}

inline Outcome<AclResult> op_get_acl(CuratorFramework& c, Twin t, const std::string& path) {
  switch (t) {
    case Twin::throwing: return catching<AclResult>([&] { return c.get_acl(path); }, "get_acl", path);
    case Twin::error_code: {
      error_code ec;
      auto r = c.get_acl(path, ec);
      return {ec, std::move(r)};
    }
    case Twin::callback: return with_callback<AclResult>([&](auto cb) { c.async_get_acl(path, std::move(cb)); });
    case Twin::future: return from_future(c.async_get_acl(path, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<AclResult>(
          [&]() -> asio::awaitable<AclResult> { co_return co_await c.async_get_acl(path, asio::use_awaitable); });
  }
  return {};
}

inline Outcome<Stat> op_set_acl(CuratorFramework& c, Twin t, const std::string& path, const AclList& acl,
                                int version = -1) {
  switch (t) {
    case Twin::throwing: return catching<Stat>([&] { return c.set_acl(path, acl, version); }, "set_acl", path);
    case Twin::error_code: {
      error_code ec;
      auto r = c.set_acl(path, acl, version, ec);
      return {ec, r};
    }
    case Twin::callback:
      return with_callback<Stat>([&](auto cb) { c.async_set_acl(path, acl, version, std::move(cb)); });
    case Twin::future: return from_future(c.async_set_acl(path, acl, version, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<Stat>([&]() -> asio::awaitable<Stat> {
        co_return co_await c.async_set_acl(path, acl, version, asio::use_awaitable);
      });
  }
  return {};
}

inline Outcome<std::vector<OpResult>> op_multi(CuratorFramework& c, Twin t, const std::vector<Op>& ops) {
  using R = std::vector<OpResult>;
  const std::string first = ops.empty() ? "" : ops.front().path;
  switch (t) {
    case Twin::throwing: return catching<R>([&] { return c.multi(ops); }, "multi", first);
    case Twin::error_code: {
      error_code ec;
      auto r = c.multi(ops, ec);
      return {ec, std::move(r)};
    }
    case Twin::callback: return with_callback<R>([&](auto cb) { c.async_multi(ops, std::move(cb)); });
    case Twin::future: return from_future(c.async_multi(ops, asio::use_future));
    case Twin::awaitable:
      return with_awaitable<R>([&]() -> asio::awaitable<R> { co_return co_await c.async_multi(ops, asio::use_awaitable); });
  }
  return {};
}

inline error_code op_sync(CuratorFramework& c, Twin t, const std::string& path) {
  switch (t) {
    case Twin::throwing: return catching_void([&] { c.sync(path); }, "sync", path);
    case Twin::error_code: {
      error_code ec;
      c.sync(path, ec);
      return ec;
    }
    case Twin::callback: return with_void_callback([&](auto cb) { c.async_sync(path, std::move(cb)); });
    case Twin::future: return from_void_future(c.async_sync(path, asio::use_future));
    case Twin::awaitable:
      return with_void_awaitable([&]() -> asio::awaitable<void> { co_await c.async_sync(path, asio::use_awaitable); });
  }
  return {};
}

inline error_code op_remove_watches(CuratorFramework& c, Twin t, const std::string& path) {
  switch (t) {
    case Twin::throwing: return catching_void([&] { c.remove_watches(path); }, "remove_watches", path);
    case Twin::error_code: {
      error_code ec;
      c.remove_watches(path, ec);
      return ec;
    }
    case Twin::callback:
      return with_void_callback([&](auto cb) { c.async_remove_watches(path, std::move(cb)); });
    case Twin::future: return from_void_future(c.async_remove_watches(path, asio::use_future));
    case Twin::awaitable:
      return with_void_awaitable(
          [&]() -> asio::awaitable<void> { co_await c.async_remove_watches(path, asio::use_awaitable); });
  }
  return {};
}

}  // namespace zkr::itest
