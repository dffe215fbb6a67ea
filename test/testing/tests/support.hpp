#pragma once
// Helpers for the tests of zkr::testing: ZooKeeper's own Java CLI as an independent client, process checks.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <zkr/test/eventually.hpp>
#include <zkr/testing/java.hpp>

namespace zkr::testing::test {

/// The whole content of a file ("" when it cannot be read).
inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct CommandResult {
  int exit_status = -1;  // the shell's exit status (124 when coreutils `timeout` ended the command)
  std::string output;    // what it printed
};

/// Runs `cmd` with /bin/sh and returns what it printed on stdout (add `2>&1` for stderr) and its status.
inline CommandResult run_command(const std::string& cmd) {
  CommandResult result;
  if (FILE* pipe = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) result.output.append(buf, n);
    const int status = ::pclose(pipe);
    result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  return result;
}

/// A file for one command's input, unique in this process, under the system temporary directory.
inline std::filesystem::path input_file(const std::string& kind, const std::string& content) {
  static std::atomic<int> counter = 0;
  const auto path =
      std::filesystem::temp_directory_path() /
      ("zkr-" + kind + "-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + ".txt");
  std::ofstream(path) << content;
  return path;
}

/// Runs `org.apache.zookeeper.ZooKeeperMain -server <connect>` with `commands` (one per line) on stdin and
/// returns everything it printed. Bounded by coreutils `timeout`.
inline std::string zk_cli(const std::string& connect, const std::string& commands) {
  const auto input = input_file("cli", commands + "\nquit\n");
  const std::string cmd =
      "timeout 60 '" + find_java().string() + "' -Xmx128m -XX:+UseSerialGC -cp '" + zookeeper_classpath() +
      "' -Dorg.slf4j.simpleLogger.defaultLogLevel=warn org.apache.zookeeper.ZooKeeperMain "
      "-server " +
      connect + " < '" + input.string() + "' 2>&1";
  std::string output = run_command(cmd).output;
  std::filesystem::remove(input);
  return output;
}

/// Whether a process with this pid exists (zombies of other parents included).
inline bool process_exists(int pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

/// The value after `key` on its line of a `srvr`/`stat` answer, e.g. "Node count: ".
inline std::string field(const std::string& answer, const std::string& key) {
  const auto pos = answer.find(key);
  if (pos == std::string::npos) return {};
  const auto end = answer.find('\n', pos);
  return answer.substr(pos + key.size(),
                       end == std::string::npos ? std::string::npos : end - pos - key.size());
}

using ::zkr::test::eventually;  // bounded waiting, shared by every tier (test/support)

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace zkr::testing::test
