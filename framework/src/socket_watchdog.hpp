#pragma once
// A watchdog for a call that may block on a socket: if the call has not returned by its deadline, the
// socket is shut down (shutdown(2), both ways), which wakes whatever waits on it. The single-threaded C
// client runs its whole TLS handshake inside one zookeeper_process call, with select() in a loop, and against
// a peer that accepts the connection and never answers it never returns (docs/tls.md): this bounds it.
//
// One thread per process, started with the first arming. The caller passes a descriptor of its own (a
// duplicate of the C client's socket) that stays open until it disarms: the watchdog never touches a
// descriptor number that someone else may have reused.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <thread>

namespace zkr::detail {

class SocketWatchdog {
 public:
  using Clock = std::chrono::steady_clock;
  static SocketWatchdog& instance();
  ~SocketWatchdog();

  /// Shuts `fd` down at `deadline` unless disarmed first. `fd` must stay open until `disarm` returns.
  std::uint64_t arm(int fd, Clock::time_point deadline);
  /// Ends the watch; true when the socket was shut down by it.
  bool disarm(std::uint64_t ticket);

 private:
  SocketWatchdog() = default;
  void run();

  struct Watch {
    int fd;
    Clock::time_point deadline;
    bool fired = false;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::uint64_t, Watch> watches_;
  std::uint64_t next_ = 1;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace zkr::detail
