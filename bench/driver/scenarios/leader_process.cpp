#include "leader_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace zkr_bench {

using namespace std::chrono_literals;

LeaderProcess::LeaderProcess(const std::vector<std::string>& argv) {
  int in[2], out[2];
  if (::pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]);
    ::close(in[1]);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  ::posix_spawn_file_actions_init(&fa);
  ::posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  ::posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const int rc = ::posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ);
  ::posix_spawn_file_actions_destroy(&fa);
  ::close(in[0]);
  ::close(out[1]);
  to_ = in[1];
  from_ = out[0];
  if (rc != 0) {
    pid_ = -1;
    throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
}

LeaderProcess::~LeaderProcess() {
  kill();
  if (to_ >= 0) ::close(to_);
  if (from_ >= 0) ::close(from_);
}

std::string LeaderProcess::read_line(Clock::time_point deadline) {
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) throw std::runtime_error("the leader process printed no line in time");
    pollfd pfd{from_, POLLIN, 0};
    const int n = ::poll(&pfd, 1, int(std::min<long>(left, 1000)));
    if (n < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    if (n <= 0) continue;
    char buf[512];
    const ssize_t got = ::read(from_, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) throw std::runtime_error("the leader process ended its output (it failed: see above)");
    buffer_.append(buf, std::size_t(got));
  }
}

void LeaderProcess::send(const std::string& line) {
  const std::string text = line + "\n";
  if (::write(to_, text.data(), text.size()) != ssize_t(text.size())) {
    throw std::runtime_error(std::string("cannot write to the leader process: ") + std::strerror(errno));
  }
}

void LeaderProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

bool LeaderProcess::wait_exit(Clock::duration d) {
  const auto dl = Clock::now() + d;
  int status = 0;
  while (pid_ > 0) {
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    if (Clock::now() > dl) {
      kill();
      return false;
    }
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

std::string self_executable() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot read /proc/self/exe");
  return std::string(buf, std::size_t(n));
}

}  // namespace zkr_bench
