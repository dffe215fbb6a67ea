// The socket watchdog (socket_watchdog.hpp).

#include "socket_watchdog.hpp"

#include <sys/socket.h>

#include <algorithm>

namespace zkr::detail {

SocketWatchdog& SocketWatchdog::instance() {
  static SocketWatchdog watchdog;
  return watchdog;
}

SocketWatchdog::~SocketWatchdog() {
  {
    const std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::uint64_t SocketWatchdog::arm(int fd, Clock::time_point deadline) {
  std::uint64_t ticket;
  {
    const std::lock_guard lock(mu_);
    ticket = next_++;
    watches_.emplace(ticket, Watch{fd, deadline});
    if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
  }
  cv_.notify_all();
  return ticket;
}

bool SocketWatchdog::disarm(std::uint64_t ticket) {
  const std::lock_guard lock(mu_);
  auto it = watches_.find(ticket);
  if (it == watches_.end()) return false;
  const bool fired = it->second.fired;
  watches_.erase(it);
  return fired;
}

void SocketWatchdog::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    auto next = Clock::time_point::max();
    const auto now = Clock::now();
    for (auto& [ticket, w] : watches_) {
      if (w.fired) continue;
      if (w.deadline <= now) {
        // Under the mutex: disarm (which the owner calls before closing fd) cannot have returned yet.
        (void)::shutdown(w.fd, SHUT_RDWR);
        w.fired = true;
      } else {
        next = std::min(next, w.deadline);
      }
    }
    if (next == Clock::time_point::max())
      cv_.wait(lock);
    else
      cv_.wait_until(lock, next);
  }
}

}  // namespace zkr::detail
