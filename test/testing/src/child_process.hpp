#pragma once
// A child process started by the testing library, signalled only by its own pid and always reaped.

#include <chrono>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace zkr::testing::detail {

class ChildProcess {
 public:
  /// Starts `argv[0]` (an absolute path) with `argv`, stdin from `input` (default /dev/null) and
  /// stdout/stderr appended to `log`. The child gets no other descriptor of ours, default signal handling,
  /// and is killed (SIGKILL) by the kernel when this process dies. Its environment is ours, with the
  /// "NAME=value" entries of `env` added (replacing ours of the same name). \throws TestingError if it cannot
  /// be started (e.g. exec fails).
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log,
               const std::filesystem::path& input = "/dev/null", const std::vector<std::string>& env = {});
  /// SIGKILL and reap if still running. Never throws.
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  int pid() const noexcept { return pid_; }
  /// Reaps the child if it has exited; true while it is alive (stopped counts as alive).
  bool running();
  /// Sends `sig` if the child is still running; returns whether it was sent.
  bool signal(int sig);
  /// Waits up to `timeout` for the child to exit; true once it has.
  bool wait_for_exit(std::chrono::milliseconds timeout);
  /// SIGKILL and wait (bounded; a child that cannot be reaped after 10 s is abandoned).
  void kill_and_wait() noexcept;
  /// The exit status once the child has exited normally; empty while it runs or if a signal ended it.
  std::optional<int> exit_code() const;
  /// "exited with status N" / "was killed by signal N (SIGKILL)" / "is running".
  std::string describe_exit() const;

 private:
  bool poll_locked();

  mutable std::mutex mutex_;
  int pid_ = -1;
  std::optional<int> wait_status_;
  bool lost_ = false;  // reaped by someone else (ECHILD): never signal that pid again
};

}  // namespace zkr::testing::detail
