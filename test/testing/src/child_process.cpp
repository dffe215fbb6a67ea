#include "child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <thread>
#include <zkr/testing/server_options.hpp>

extern char** environ;  // NOLINT: POSIX

namespace zkr::testing::detail {
namespace {

// Children are forked from one long-lived thread of ours: PR_SET_PDEATHSIG fires when the *thread* that
// forked dies, so forking from the caller's thread would kill a server when, say, a test's worker thread
// ends.
struct SpawnRequest {
  std::vector<char*> argv;  // null-terminated, pointing into the caller's strings
  std::vector<char*> envp;  // likewise; empty: ours
  std::string log;
  std::string input;
  pid_t pid = -1;
  int error = 0;
  const char* step = "";
  bool done = false;
};

// Moves a descriptor above the standard ones (so the child's dup2 onto 0..3 never clobbers it).
int high_fd(int fd) {
  if (fd < 0) return fd;
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  ::close(fd);
  return moved;
}

[[noreturn]] void child_fail(int report_fd) noexcept {
  const int e = errno;
  [[maybe_unused]] const auto n = ::write(report_fd, &e, sizeof e);
  ::_exit(127);
}

// Runs in the forked child: only async-signal-safe calls until execve.
[[noreturn]] void exec_child(const SpawnRequest& r, pid_t parent, int log_fd, int input_fd,
                             int report_fd) noexcept {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the parent died before prctl took effect

  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) {
    if (sig != SIGKILL && sig != SIGSTOP) ::sigaction(sig, &dfl, nullptr);
  }

  if (::dup2(input_fd, 0) < 0 || ::dup2(log_fd, 1) < 0 || ::dup2(log_fd, 2) < 0) child_fail(report_fd);
  if (::dup3(report_fd, 3, O_CLOEXEC) < 0) child_fail(report_fd);
  report_fd = 3;
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  ::closefrom(4);
#else
  for (int fd = 4; fd < 4096; ++fd) ::close(fd);
#endif
  ::execve(r.argv[0], r.argv.data(), r.envp.empty() ? environ : r.envp.data());
  child_fail(report_fd);
}

void spawn_now(SpawnRequest& r) noexcept {
  const int log_fd = high_fd(::open(r.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
  if (log_fd < 0) {
    r.error = errno;
    r.step = "open the log file";
    return;
  }
  const int input_fd = high_fd(::open(r.input.c_str(), O_RDONLY | O_CLOEXEC));
  int report[2] = {-1, -1};
  if (input_fd < 0 || ::pipe2(report, O_CLOEXEC) != 0) {
    r.error = errno;
    r.step = "open the input file or a pipe";
    ::close(log_fd);
    if (input_fd >= 0) ::close(input_fd);
    return;
  }
  report[0] = high_fd(report[0]);
  report[1] = high_fd(report[1]);

  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) exec_child(r, parent, log_fd, input_fd, report[1]);
  const int fork_errno = errno;
  ::close(report[1]);
  ::close(log_fd);
  ::close(input_fd);
  if (pid < 0) {
    ::close(report[0]);
    r.error = fork_errno;
    r.step = "fork";
    return;
  }
  // The pipe closes on a successful exec; otherwise the child reports its errno first.
  int child_errno = 0;
  ssize_t n;
  do {
    n = ::read(report[0], &child_errno, sizeof child_errno);
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof child_errno)) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    r.error = child_errno;
    r.step = "execute";
    return;
  }
  r.pid = pid;
}

class Spawner {
 public:
  static Spawner& instance() {
    // Deliberately never destroyed: the thread lives until the process exits.
    static Spawner* const spawner = new Spawner;
    return *spawner;
  }

  void spawn(SpawnRequest& request) {
    std::unique_lock lock(mutex_);
    queue_.push_back(&request);
    cv_.notify_all();
    cv_.wait(lock, [&] { return request.done; });
  }

 private:
  Spawner() {
    std::thread([this] { run(); }).detach();
  }

  [[noreturn]] void run() {
    for (;;) {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return !queue_.empty(); });
      SpawnRequest* request = queue_.front();
      queue_.pop_front();
      lock.unlock();
      spawn_now(*request);
      lock.lock();
      request->done = true;
      cv_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<SpawnRequest*> queue_;
};

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log,
                           const std::filesystem::path& input, const std::vector<std::string>& env) {
  if (argv.empty()) throw TestingError("ChildProcess: empty command line");
  SpawnRequest request;
  for (const auto& arg : argv) request.argv.push_back(const_cast<char*>(arg.c_str()));
  request.argv.push_back(nullptr);
  // Built here, before the fork: ours without the names `env` sets, then `env`.
  std::vector<std::string> environment;
  if (!env.empty()) {
    auto name = [](std::string_view entry) { return entry.substr(0, entry.find('=') + 1); };
    for (char** e = environ; e && *e; ++e) {
      const std::string_view entry(*e);
      if (std::none_of(env.begin(), env.end(), [&](const std::string& x) { return name(x) == name(entry); }))
        environment.emplace_back(entry);
    }
    environment.insert(environment.end(), env.begin(), env.end());
    for (const auto& entry : environment) request.envp.push_back(const_cast<char*>(entry.c_str()));
    request.envp.push_back(nullptr);
  }
  request.log = log.string();
  request.input = input.string();
  Spawner::instance().spawn(request);
  if (request.pid < 0) {
    throw TestingError("cannot start " + argv[0] + ": " + request.step +
                       " failed: " + std::strerror(request.error));
  }
  pid_ = request.pid;
}

ChildProcess::~ChildProcess() { kill_and_wait(); }

bool ChildProcess::poll_locked() {
  if (wait_status_ || lost_ || pid_ < 0) return false;
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      wait_status_ = status;
      return false;
    }
    if (r == 0) return true;
    if (errno == EINTR) continue;
    lost_ = true;  // ECHILD: someone else reaped it; the pid may be reused, so never touch it again
    return false;
  }
}

bool ChildProcess::running() {
  std::lock_guard lock(mutex_);
  return poll_locked();
}

bool ChildProcess::signal(int sig) {
  std::lock_guard lock(mutex_);
  // Safe against pid reuse: only we reap this child, under this mutex, so an exited one stays a zombie here.
  if (!poll_locked()) return false;
  return ::kill(pid_, sig) == 0;
}

bool ChildProcess::wait_for_exit(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto step = std::chrono::milliseconds{1};
  for (;;) {
    if (!running()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(step);
    step = std::min(step * 2, std::chrono::milliseconds{20});
  }
}

void ChildProcess::kill_and_wait() noexcept {
  try {
    if (signal(SIGKILL)) wait_for_exit(std::chrono::seconds{10});
  } catch (...) {
    // Never throws: a child we cannot reap is abandoned (the kernel kills it with us anyway).
  }
}

std::optional<int> ChildProcess::exit_code() const {
  std::lock_guard lock(mutex_);
  if (!wait_status_ || !WIFEXITED(*wait_status_)) return std::nullopt;
  return WEXITSTATUS(*wait_status_);
}

std::string ChildProcess::describe_exit() const {
  std::lock_guard lock(mutex_);
  if (lost_) return "exited (reaped elsewhere, status unknown)";
  if (!wait_status_) return "is running";
  const int status = *wait_status_;
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sig == SIGKILL   ? " (SIGKILL)"
                       : sig == SIGTERM ? " (SIGTERM)"
                       : sig == SIGABRT ? " (SIGABRT)"
                       : sig == SIGSEGV ? " (SIGSEGV)"
                                        : "";
    return "was killed by signal " + std::to_string(sig) + name;
  }
  return "ended (status " + std::to_string(status) + ")";
}

}  // namespace zkr::testing::detail
