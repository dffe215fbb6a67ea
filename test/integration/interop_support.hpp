#pragma once
// What the interop tests with Java peers share (interop_mixed_test.cpp, tls_interop_test.cpp): the peer's
// grant log fed to the checker, and small helpers.

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <zkr/zkrecipes.hpp>

#include "checker.hpp"

namespace zkr::test {

/// A fresh log file in the temporary directory: "<prefix>-<pid>-<name>.log".
inline std::string temp_log(const std::string& prefix, const std::string& name) {
  auto p = std::filesystem::temp_directory_path() /
           (prefix + "-" + std::to_string(::getpid()) + "-" + name + ".log");
  std::filesystem::remove(p);
  return p.string();
}

/// Feeds the peer's `loop` log (START <epochNanos> <czxid> java / END <epochNanos> java) to the checker.
inline std::size_t add_java_log(GrantChecker& checker, const std::string& lock, const std::string& file) {
  std::ifstream in(file);
  std::string line;
  std::size_t n = 0;
  std::optional<std::pair<std::int64_t, std::int64_t>> open;  // start nanos, czxid
  using namespace std::chrono;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string kind;
    std::int64_t t = 0;
    s >> kind >> t;
    if (kind == "START") {
      std::int64_t czxid = 0;
      s >> czxid;
      open = std::make_pair(t, czxid);
    } else if (kind == "END" && open) {
      checker.add_external(
          lock, "java", GrantChecker::Kind::exclusive, open->second,
          system_clock::time_point(duration_cast<system_clock::duration>(nanoseconds(open->first))),
          system_clock::time_point(duration_cast<system_clock::duration>(nanoseconds(t))));
      open.reset();
      ++n;
    }
  }
  return n;
}

/// The creation zxid of `node` (-1 when it does not exist).
inline std::int64_t czxid_of(CuratorFramework& c, const std::string& node) {
  auto st = c.exists(node);
  return st ? st->czxid : -1;
}

/// One C++ contender: `rounds` acquire/hold/release cycles under the checker.
template <class Lock>
inline void cxx_rounds(CuratorFramework& client, const std::string& path, const std::string& name, int rounds,
                       GrantChecker& checker, std::atomic<int>& failures) {
  Lock lock(client, path);
  for (int i = 0; i < rounds; ++i) {
    if (!lock.acquire(std::chrono::seconds(60))) {
      ++failures;
      return;
    }
    const auto id = checker.begin(path, name, GrantChecker::Kind::exclusive, lock.fencing_token());
    if (!checker.fenced_write(path, lock.fencing_token())) ++failures;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    checker.end(id);
    lock.release();
  }
}

}  // namespace zkr::test
