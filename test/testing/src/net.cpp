#include "net.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <zkr/testing/server_options.hpp>

namespace zkr::testing {
namespace detail {
namespace {

using Clock = std::chrono::steady_clock;

class Socket {
 public:
  Socket() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) {}
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_;
};

sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

// Waits for `events` on `fd` until `deadline`; false on timeout.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::max<long long>(left, 0)));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

std::string where(std::uint16_t port, std::string_view cmd) {
  return "four-letter word '" + std::string(cmd) + "' to 127.0.0.1:" + std::to_string(port);
}

}  // namespace

std::string four_letter_word(std::uint16_t port, std::string_view cmd, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  Socket s;
  if (s.fd() < 0) throw TestingError(where(port, cmd) + ": socket: " + std::strerror(errno));
  const sockaddr_in addr = loopback(port);
  if (::connect(s.fd(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS) throw TestingError(where(port, cmd) + ": connect: " + std::strerror(errno));
    if (!wait_for(s.fd(), POLLOUT, deadline)) {
      throw TestingError(where(port, cmd) + ": connect timed out after " + std::to_string(timeout.count()) +
                         " ms");
    }
    int err = 0;
    socklen_t len = sizeof err;
    ::getsockopt(s.fd(), SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) throw TestingError(where(port, cmd) + ": connect: " + std::strerror(err));
  }
  std::size_t sent = 0;
  while (sent < cmd.size()) {
    const ssize_t n = ::send(s.fd(), cmd.data() + sent, cmd.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<std::size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!wait_for(s.fd(), POLLOUT, deadline)) throw TestingError(where(port, cmd) + ": send timed out");
    } else {
      throw TestingError(where(port, cmd) + ": send: " + std::strerror(errno));
    }
  }
  std::string answer;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::recv(s.fd(), buf, sizeof buf, 0);
    if (n > 0) {
      answer.append(buf, static_cast<std::size_t>(n));
    } else if (n == 0) {
      return answer;
    } else if (errno == EAGAIN || errno == EINTR) {
      if (!wait_for(s.fd(), POLLIN, deadline)) {
        throw TestingError(where(port, cmd) + ": no complete answer within " +
                           std::to_string(timeout.count()) + " ms");
      }
    } else if (errno == ECONNRESET && !answer.empty()) {
      return answer;  // the server may reset after writing its answer
    } else {
      throw TestingError(where(port, cmd) + ": recv: " + std::strerror(errno));
    }
  }
}

bool port_is_free(std::uint16_t port, bool reuse_address) {
  Socket s;
  if (s.fd() < 0) return false;
  if (reuse_address) {
    const int on = 1;
    ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  }
  const sockaddr_in addr = loopback(port);
  return ::bind(s.fd(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
}

}  // namespace detail

std::uint16_t free_port() {
  static std::mutex mutex;
  static std::set<std::uint16_t> handed_out;
  static std::mt19937 rng(std::random_device{}() ^ static_cast<unsigned>(::getpid()));
  std::lock_guard lock(mutex);

  // Stay out of the ephemeral range: a client connection could take such a port between a server's stop and
  // its restart.
  int ephemeral_low = 32768, ephemeral_high = 60999;
  if (std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range"); range)
    range >> ephemeral_low >> ephemeral_high;
  std::vector<std::pair<int, int>> ranges;
  if (ephemeral_low > 10000) ranges.emplace_back(10000, std::min(ephemeral_low, 65536) - 1);
  if (ephemeral_high < 65535) ranges.emplace_back(std::max(ephemeral_high + 1, 10000), 65535);
  std::size_t total = 0;
  for (auto [lo, hi] : ranges) total += static_cast<std::size_t>(hi - lo + 1);

  if (total >= 1000) {
    std::uniform_int_distribution<std::size_t> pick(0, total - 1);
    for (int attempt = 0; attempt < 2000; ++attempt) {
      std::size_t k = pick(rng);
      int port = 0;
      for (auto [lo, hi] : ranges) {
        const auto width = static_cast<std::size_t>(hi - lo + 1);
        if (k < width) {
          port = lo + static_cast<int>(k);
          break;
        }
        k -= width;
      }
      const auto p = static_cast<std::uint16_t>(port);
      if (handed_out.count(p) == 0 && detail::port_is_free(p, false)) {
        handed_out.insert(p);
        return p;
      }
    }
  }
  // Fallback: let the kernel choose.
  for (int attempt = 0; attempt < 100; ++attempt) {
    detail::Socket s;
    sockaddr_in addr = detail::loopback(0);
    socklen_t len = sizeof addr;
    if (s.fd() >= 0 && ::bind(s.fd(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(s.fd(), reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      const auto p = ntohs(addr.sin_port);
      if (handed_out.insert(p).second) return p;
    }
  }
  throw TestingError("free_port: no free TCP port found on 127.0.0.1");
}

}  // namespace zkr::testing
