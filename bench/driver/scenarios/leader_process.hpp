#pragma once
// A leader in a process of its own, for the failover scenario.

#include <sys/types.h>

#include <string>
#include <vector>

#include "../measure.hpp"

namespace zkr_bench {

/// A leader in a process of its own: `argv` spawned with its stdin and stdout piped to us (its stderr is
/// ours). The destructor kills and reaps a process still running; if we die first, its stdin ends and it
/// exits.
class LeaderProcess {
 public:
  explicit LeaderProcess(const std::vector<std::string>& argv);
  ~LeaderProcess();
  LeaderProcess(const LeaderProcess&) = delete;
  LeaderProcess& operator=(const LeaderProcess&) = delete;

  /// The next line the process prints (without the newline); throws at the deadline or when its output ends.
  std::string read_line(Clock::time_point deadline);
  void send(const std::string& line);
  /// SIGKILL, then reap.
  void kill();
  /// Waits up to `d` for the process to exit by itself (killed after that); true when it exited with 0.
  bool wait_exit(Clock::duration d);

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buffer_;
};

/// This program's path (/proc/self/exe), to spawn leaders with.
std::string self_executable();

}  // namespace zkr_bench
