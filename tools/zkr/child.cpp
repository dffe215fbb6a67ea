#include "child.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <set>

extern char** environ;

namespace zkr::cli {

namespace {

std::set<int>& inherited() {
  static std::set<int> fds;
  return fds;
}

std::set<int> open_descriptors() {
  std::set<int> fds;
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return fds;
  int self = ::dirfd(d);
  while (dirent* e = ::readdir(d)) {
    if (e->d_name[0] == '.') continue;
    int fd = std::atoi(e->d_name);
    if (fd != self) fds.insert(fd);
  }
  ::closedir(d);
  return fds;
}

sigset_t& ignored_signals() {
  static sigset_t set = [] {
    sigset_t s;
    ::sigemptyset(&s);
    return s;
  }();
  return set;
}

}  // namespace

void record_inherited_descriptors() { inherited() = open_descriptors(); }

void record_signal_dispositions() {
  ::sigemptyset(&ignored_signals());
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction sa {};
    if (sig == SIGCHLD || ::sigaction(sig, nullptr, &sa) != 0) continue;
    if (sa.sa_handler == SIG_IGN) ::sigaddset(&ignored_signals(), sig);
  }
}

bool ignored_at_start(int sig) { return sig != SIGCHLD && ::sigismember(&ignored_signals(), sig) == 1; }

pid_t spawn_command(const std::vector<std::string>& argv,
                    const std::vector<std::pair<std::string, std::string>>& extra_env, bool new_group) {
  if (argv.empty()) return -EINVAL;

  // The ZooKeeper C client does not open its socket close-on-exec; keep our descriptors out of COMMAND.
  for (int fd : open_descriptors()) {
    if (fd <= 2 || inherited().count(fd)) continue;
    int flags = ::fcntl(fd, F_GETFD);
    if (flags >= 0 && !(flags & FD_CLOEXEC)) ::fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
  }

  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e) {
    std::string_view entry(*e);
    bool overridden = false;
    for (const auto& [name, value] : extra_env) {
      if (entry.size() > name.size() && entry.substr(0, name.size()) == name && entry[name.size()] == '=') {
        overridden = true;
        break;
      }
    }
    if (!overridden) env_strings.emplace_back(entry);
  }
  for (const auto& [name, value] : extra_env) env_strings.push_back(name + "=" + value);

  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (auto& s : args) argp.push_back(s.data());
  argp.push_back(nullptr);

  posix_spawnattr_t attr;
  ::posix_spawnattr_init(&attr);
  // Every signal back to its default (zkr's handlers, and the SIG_IGN of SIGPIPE zkr set for itself), except
  // those ignored when zkr started: `nohup zkr ...` leaves COMMAND immune to SIGHUP too.
  sigset_t defaults;
  ::sigfillset(&defaults);
  ::sigdelset(&defaults, SIGKILL);
  ::sigdelset(&defaults, SIGSTOP);
  for (int sig = 1; sig < NSIG; ++sig)
    if (ignored_at_start(sig)) ::sigdelset(&defaults, sig);
  sigset_t empty;
  ::sigemptyset(&empty);
  ::posix_spawnattr_setsigdefault(&attr, &defaults);
  ::posix_spawnattr_setsigmask(&attr, &empty);
  short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
  if (new_group) {
    ::posix_spawnattr_setpgroup(&attr, 0);
    flags |= POSIX_SPAWN_SETPGROUP;
  }
  ::posix_spawnattr_setflags(&attr, flags);

  // Descriptors above the highest inherited one are all ours: close them in the child whatever happens
  // meanwhile on the client's I/O thread (a reconnect opens a new socket).
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  int first_ours = std::max(3, inherited().empty() ? 3 : *inherited().rbegin() + 1);
  ::posix_spawn_file_actions_addclosefrom_np(&actions, first_ours);

  pid_t pid = -1;
  int rc = ::posix_spawnp(&pid, argp[0], &actions, &attr, argp.data(), envp.data());
  ::posix_spawn_file_actions_destroy(&actions);
  ::posix_spawnattr_destroy(&attr);
  if (rc != 0) return -rc;
  // Also from here, as shells do, so the group exists whichever process runs first (EACCES once the child
  // has exec'd is expected: it already did it).
  if (new_group) ::setpgid(pid, pid);
  return pid;
}

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 70;
}

}  // namespace zkr::cli
