#pragma once
// Running the zkr command-line tool from the cli tests: one zkr process as our own child (spawned with a
// scratch directory for its output, killed and reaped at the end), run to completion, and the checks the
// tests share (a START/END log of holders, a directory's children).
//
// The zkr binary comes from the compile definition ZKR_CLI_PATH on cli_path.cpp (test/CMakeLists.txt);
// without it the tests skip with a WARN.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "fixture.hpp"

extern char** environ;

namespace zkr::test::cli {

namespace fs = std::filesystem;

/// The zkr binary this build made, or null when the test build does not know it.
const char* zkr_cli_path();  // cli_path.cpp

/// Whether the zkr binary is there to run (else a WARN says the test is skipped).
inline bool have_zkr() {
  if (zkr_cli_path() && ::access(zkr_cli_path(), X_OK) == 0) return true;
  WARN("zkr binary not available (ZKR_CLI_PATH not defined or not built): skipping");
  return false;
}

/// A scratch directory, removed at the end of the test case.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "zkr-cli-test-XXXXXX").string();
    if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

inline std::string slurp(const std::string& file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) v.push_back(l);
  return v;
}

/// One zkr process (our own child; only ever signalled by its pid). Killed and reaped by the destructor.
class Zkr {
 public:
  /// `ignore`: signals zkr starts with ignored (as `nohup` leaves SIGHUP). `env`: "NAME=value" entries added
  /// to this process's environment for zkr.
  Zkr(std::vector<std::string> args, const TempDir& dir, std::vector<int> ignore = {},
      std::vector<std::string> env = {}) {
    static int counter = 0;
    const int n = ++counter;
    out_ = dir.file("out-" + std::to_string(n));
    err_ = dir.file("err-" + std::to_string(n));
    args.insert(args.begin(), zkr_cli_path());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (char** e = environ; *e; ++e) envp.push_back(*e);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    // An ignored disposition survives exec: ignore the signals here for the moment of the spawn.
    std::vector<struct sigaction> saved(ignore.size());
    for (std::size_t i = 0; i < ignore.size(); ++i) {
      struct sigaction ign {};
      ign.sa_handler = SIG_IGN;
      ::sigaction(ignore[i], &ign, &saved[i]);
    }
    int rc = posix_spawn(&pid_, zkr_cli_path(), &fa, nullptr, argv.data(), envp.data());
    for (std::size_t i = 0; i < ignore.size(); ++i) ::sigaction(ignore[i], &saved[i], nullptr);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("cannot start zkr");
  }
  ~Zkr() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Zkr(const Zkr&) = delete;
  Zkr& operator=(const Zkr&) = delete;

  /// The exit status (128+N for death by signal N), or nullopt when still running after `limit`.
  std::optional<int> wait(std::chrono::milliseconds limit = std::chrono::seconds(60)) {
    if (status_) return status_;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      int st = 0;
      pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return status_;
      }
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  bool running() { return !wait(std::chrono::milliseconds(0)); }
  void signal(int sig) {
    if (pid_ > 0 && !status_) ::kill(pid_, sig);
  }
  std::string out() const { return slurp(out_); }
  std::string err() const { return slurp(err_); }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::string out_, err_;
};

/// Runs zkr to completion; returns {status, stdout, stderr}.
struct Result {
  int status = -1;
  std::string out, err;
};
inline Result run_zkr(std::vector<std::string> args, const TempDir& dir,
                      std::chrono::milliseconds limit = std::chrono::seconds(90),
                      std::vector<std::string> env = {}) {
  Zkr z(std::move(args), dir, {}, std::move(env));
  auto st = z.wait(limit);
  return {st ? *st : -1, z.out(), z.err()};
}

/// A shell script (for `sh -c`) that appends `START <nanos> <token> zkr`, holds, then appends `END <nanos>
/// zkr` to $1: the same format as the Java peer's `loop`.
inline const std::string log_script =
    "echo \"START $(date +%s%N) $ZKR_FENCING_TOKEN zkr\" >> \"$1\"; sleep 0.15; "
    "echo \"END $(date +%s%N) zkr\" >> \"$1\"";

/// Checks a START/END log: strictly alternating (no two holders at once) and strictly increasing tokens.
inline void check_exclusive_log(const std::string& file, std::size_t expected_pairs) {
  auto lines = lines_of(slurp(file));
  INFO(slurp(file));
  REQUIRE(lines.size() == 2 * expected_pairs);
  long long last_token = -1;
  for (std::size_t i = 0; i < lines.size(); i += 2) {
    std::istringstream start(lines[i]), end(lines[i + 1]);
    std::string s, e, who_s, who_e;
    long long t0 = 0, t1 = 0, token = 0;
    start >> s >> t0 >> token >> who_s;
    end >> e >> t1 >> who_e;
    CHECK(s == "START");
    CHECK(e == "END");
    CHECK(who_s == who_e);  // the END belongs to the holder that wrote the START
    CHECK(t1 >= t0);
    CHECK(token > last_token);
    last_token = token;
  }
}

inline std::vector<std::string> common_args(ServerFixture& fx) {
  std::vector<std::string> args{"--connect", fx.server.connect_string(), "--session-timeout", "10s"};
  for (const char* a : {"--connection-timeout", "20s", "--handshake-timeout", "2s"}) args.emplace_back(a);
  return args;
}

inline std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// A member of a JSON object.
/// Waits until `path` has `n` children.
inline bool wait_children(ServerFixture& fx, const std::string& path, std::size_t n) {
  return eventually([&] { return fx.children(path).size() == n; }, std::chrono::seconds(30));
}

}  // namespace zkr::test::cli
