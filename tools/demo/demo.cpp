// zkr_demo: several processes take one ZooKeeper lock in FIFO turn, with the `zkr` command-line tool.
//
// It starts a private ZooKeeper server on 127.0.0.1 (zkr::testing::TestingServer: no network needed), takes
// the lock itself so that the workers line up behind it, starts the workers one after another (each is
// `zkr lock /demo/lock -- sh -c 'echo ...; sleep 0.3'`), shows the queue with `zkr inspect`, lets go, and
// checks that the workers got the lock in the order they queued, with strictly increasing fencing tokens.
//
// Usage: zkr_demo [WORKERS]   (default 4, at most 20). Exit status 0 when everything went as described.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <vector>
#include <zkr/testing/testing_server.hpp>
#include <zkr/zkrecipes.hpp>

extern char** environ;

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* lock_path = "/demo/lock";

std::filesystem::path zkr_binary() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "zkr";
  return self.parent_path() / "zkr";
}

/// Spawns argv; stdout goes to `out_fd` when >= 0. Returns the pid or -1.
pid_t spawn(const std::vector<std::string>& argv, int out_fd) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (out_fd >= 0) posix_spawn_file_actions_adddup2(&fa, out_fd, STDOUT_FILENO);
  // Nothing of ours (the demo's ZooKeeper socket) leaks into the workers.
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  std::vector<std::string> args = argv;
  std::vector<char*> p;
  for (auto& a : args) p.push_back(a.data());
  p.push_back(nullptr);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, p[0], &fa, nullptr, p.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    std::fprintf(stderr, "demo: cannot start %s: %s\n", p[0], std::strerror(rc));
    return -1;
  }
  return pid;
}

/// Waits (with a children watch, no polling) until the lock directory holds `n` nodes.
bool wait_for_queue(zkr::CuratorFramework& client, std::size_t n, std::chrono::milliseconds limit) {
  // Shared with the watchers, which may fire after this function has returned.
  struct Signal {
    std::mutex m;
    std::condition_variable cv;
    bool changed = false;
  };
  auto sig = std::make_shared<Signal>();
  const auto deadline = Clock::now() + limit;
  for (;;) {
    {
      std::lock_guard lk(sig->m);
      sig->changed = false;
    }
    zkr::error_code ec;
    auto kids = client.get_children(
        lock_path,
        [sig](const zkr::WatchedEvent&) {
          std::lock_guard lk(sig->m);
          sig->changed = true;
          sig->cv.notify_all();
        },
        ec);
    if (!ec && kids.size() >= n) return true;
    std::unique_lock lk(sig->m);
    if (!sig->cv.wait_until(lk, deadline, [&] { return sig->changed; })) return false;
  }
}

struct Grant {
  int worker = 0;
  std::string node;
  long long token = 0;
  double at = 0;  ///< seconds since the release of the demo's own hold
};

}  // namespace

int main(int argc, char** argv) {
  int workers = 4;
  if (argc > 1) {
    workers = std::atoi(argv[1]);
    if (workers < 1 || workers > 20) {
      std::fprintf(stderr, "usage: zkr_demo [WORKERS]   (1 to 20, default 4)\n");
      return 64;
    }
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const auto zkr = zkr_binary();
  if (::access(zkr.c_str(), X_OK) != 0) {
    std::fprintf(stderr, "demo: the zkr tool was not found next to this program (%s)\n", zkr.c_str());
    return 1;
  }

  std::printf("zkr demo: %d processes take one ZooKeeper lock in turn, first come, first served.\n\n",
              workers);
  std::printf("1. Starting a private ZooKeeper server on 127.0.0.1 (a few seconds)...\n");
  std::optional<zkr::testing::TestingServer> server;
  try {
    server.emplace();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "demo: cannot start ZooKeeper: %s\n", e.what());
    return 1;
  }
  const std::string connect = server->connect_string();
  std::printf("   ZooKeeper is up at %s.\n\n", connect.c_str());

  std::vector<pid_t> pids;
  auto kill_workers = [&] {
    for (pid_t p : pids)
      if (p > 0) ::kill(p, SIGTERM);
    for (pid_t& p : pids)
      if (p > 0) ::waitpid(p, nullptr, 0), p = -1;
  };

  try {
    zkr::ClientConfig cfg;
    cfg.connect_string = connect;
    cfg.retry_policy = std::make_shared<zkr::ExponentialBackoffRetry>(zkr::Millis(100), 5);
    cfg.default_data = "zkr_demo";
    zkr::CuratorFramework client(cfg);
    client.start();
    if (!client.block_until_connected(20s)) throw std::runtime_error("cannot connect to " + connect);

    std::printf(
        "2. The demo takes %s itself (an InterProcessMutex), so that the workers queue up behind it.\n",
        lock_path);
    zkr::InterProcessMutex gate(client, lock_path);
    gate.acquire();

    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    std::printf(
        "\n3. Starting %d workers, one at a time; each runs:\n"
        "     %s lock --connect %s --data 'worker N' %s -- \\\n"
        "         sh -c 'echo \"worker N holds $ZKR_LOCK_PATH token $ZKR_FENCING_TOKEN\"; sleep 0.3'\n",
        workers, zkr.c_str(), connect.c_str(), lock_path);
    for (int i = 1; i <= workers; ++i) {
      std::string script = "echo \"worker " + std::to_string(i) +
                           " holds $ZKR_LOCK_PATH token $ZKR_FENCING_TOKEN\"; sleep 0.3";
      pid_t pid = spawn({zkr.string(), "lock", "--connect", connect, "--quiet", "--data",
                         "worker " + std::to_string(i), lock_path, "--", "/bin/sh", "-c", script},
                        fds[1]);
      if (pid < 0) throw std::runtime_error("cannot start worker");
      pids.push_back(pid);
      // Start the next one only once this one is queued: the queue order is then the start order.
      if (!wait_for_queue(client, static_cast<std::size_t>(i) + 1, 30s))
        throw std::runtime_error("worker " + std::to_string(i) + " did not queue within 30s");
      std::printf("   worker %d (pid %d) is queued at position %d\n", i, static_cast<int>(pid), i + 1);
    }
    ::close(fds[1]);

    std::printf("\n4. The queue, as `zkr inspect %s` shows it (position 1 holds the lock):\n\n", lock_path);
    pid_t insp = spawn({zkr.string(), "inspect", "--connect", connect, lock_path}, -1);
    if (insp > 0) ::waitpid(insp, nullptr, 0);

    std::printf("\n5. The demo releases its hold: the workers now get the lock one after another.\n\n");
    gate.release();
    const auto released = Clock::now();

    // Read the workers' lines until every worker has closed the pipe (that is, exited).
    std::vector<Grant> grants;
    std::regex line_re(R"(worker (\d+) holds (\S+) token (\d+))");
    std::string buffer;
    const auto deadline = released + 60s;
    for (;;) {
      pollfd pfd{fds[0], POLLIN, 0};
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) throw std::runtime_error("the workers did not finish within 60s");
      int r = ::poll(&pfd, 1, static_cast<int>(left));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) continue;
      char chunk[4096];
      ssize_t n = ::read(fds[0], chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      buffer.append(chunk, static_cast<std::size_t>(n));
      std::size_t nl;
      while ((nl = buffer.find('\n')) != std::string::npos) {
        std::string line = buffer.substr(0, nl);
        buffer.erase(0, nl + 1);
        double at = std::chrono::duration<double>(Clock::now() - released).count();
        std::printf("   [+%.2fs] %s\n", at, line.c_str());
        std::smatch m;
        if (std::regex_search(line, m, line_re))
          grants.push_back({std::stoi(m[1]), m[2], std::stoll(m[3]), at});
      }
    }
    ::close(fds[0]);

    int failures = 0;
    for (std::size_t i = 0; i < pids.size(); ++i) {
      int st = 0;
      ::waitpid(pids[i], &st, 0);
      pids[i] = -1;
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        std::printf("   worker %zu failed (status %d)\n", i + 1,
                    WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        ++failures;
      }
    }

    // The summary.
    std::printf("\n6. Summary\n");
    bool fifo = static_cast<int>(grants.size()) == workers;
    bool increasing = true;
    std::string order, tokens;
    for (std::size_t i = 0; i < grants.size(); ++i) {
      order += (i ? " -> " : "") + std::string("worker ") + std::to_string(grants[i].worker);
      tokens += (i ? " < " : "") + std::to_string(grants[i].token);
      if (grants[i].worker != static_cast<int>(i) + 1) fifo = false;
      if (i > 0 && grants[i].token <= grants[i - 1].token) increasing = false;
    }
    std::printf("   order of grants : %s\n", order.c_str());
    std::printf("   fencing tokens  : %s\n", tokens.c_str());
    std::printf("   %s the workers got the lock in the order they queued (FIFO)\n", fifo ? "ok  " : "FAIL");
    std::printf(
        "   %s every fencing token is larger than the one before (a storage system can reject a\n"
        "        late write from a holder that lost its lock by remembering the largest token seen)\n",
        increasing && !grants.empty() ? "ok  " : "FAIL");
    std::printf("   %s every worker exited with status 0\n", failures == 0 ? "ok  " : "FAIL");
    client.close();
    const bool ok = fifo && increasing && !grants.empty() && failures == 0;
    std::printf("\n%s\n", ok ? "Demo succeeded. Try it yourself: `zkr lock --help`, `zkr inspect --help`; "
                               "docs/cli.md explains every option."
                             : "Demo FAILED.");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "demo: %s\n", e.what());
    kill_workers();
    return 1;
  }
}
