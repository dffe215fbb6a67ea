#pragma once
// What the interop tests with Java peers share (interop_mixed_test.cpp, tls_interop_test.cpp, sasl_test.cpp):
// the peer's grant log fed to the checker, Java and C++ contenders on one lock under the checker, and small
// helpers.

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>
#include <zkr/zkrecipes.hpp>

#include "checker.hpp"
#include "curator_peer.hpp"

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

/// One run of `mixed_contention`: where, with which Java peer and which C++ clients, how many rounds.
struct MixedContention {
  std::string name;     ///< names the peer's log file and the checker's report
  std::string connect;  ///< the server as the Java peer reaches it
  std::string recipe;   ///< the peer's lock recipe ("mutex", "semaphore-mutex")
  std::string path;
  CuratorPeer::Options java;  ///< how the peer starts: JVM options (TLS, JAAS), extra options
  /// Makes C++ client number i (connected, or connecting), one per contender.
  std::function<std::unique_ptr<CuratorFramework>(int)> cxx_client;
  int java_rounds = 25;
  int cxx_rounds_each = 20;
  int cxx_clients = 2;
};

/// The Java peer's `loop` and `m.cxx_clients` C++ contenders (`cxx_rounds` of `Lock`) on one lock path at
/// once: every round finishes, and the checker, fed the Java grants from the peer's log, finds no two holders
/// at once and tokens increasing in grant order. Returns the C++ clients, for checks of the caller's own.
template <class Lock>
std::vector<std::unique_ptr<CuratorFramework>> mixed_contention(const MixedContention& m) {
  GrantChecker checker;
  const std::string log = temp_log("zkr-interop", m.name);
  CuratorPeer peer(m.connect, m.recipe, {m.path}, m.java);
  std::vector<std::unique_ptr<CuratorFramework>> clients;
  for (int i = 0; i < m.cxx_clients; ++i) clients.push_back(m.cxx_client(i));
  std::atomic<int> failures{0};
  peer.send("loop " + std::to_string(m.java_rounds) + " 2000 " + log);
  std::vector<std::thread> ts;
  for (int i = 0; i < m.cxx_clients; ++i)
    ts.emplace_back([&, i] {
      cxx_rounds<Lock>(*clients[std::size_t(i)], m.path, "cxx-" + std::to_string(i), m.cxx_rounds_each,
                       checker, failures);
    });
  for (auto& t : ts) t.join();
  CHECK(peer.answer(std::chrono::seconds(120)) == "done " + std::to_string(m.java_rounds));
  CHECK(failures == 0);
  CHECK(add_java_log(checker, m.path, log) == std::size_t(m.java_rounds));
  const auto v = checker.report("interop " + m.name + ":");
  WARN(checker.summary());
  CHECK(v.empty());
  CHECK(checker.grants() == std::size_t(m.java_rounds + m.cxx_clients * m.cxx_rounds_each));
  std::filesystem::remove(log);
  return clients;
}

}  // namespace zkr::test
