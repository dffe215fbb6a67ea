#pragma once
// Adapters of the lock contract (lock_contract_test.cpp, and its TLS run in tls_lock_test.cpp): how the
// contract drives each lock type. A lock type joins the contract by adding an adapter here.
//
// `nodes(fx, path)` takes any fixture with `children(path)` (the children as an independent client sees them,
// empty when the path does not exist): `ServerFixture`, or the TLS fixture of tls_lock_test.cpp.

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <zkr/zkrecipes.hpp>

namespace zkr::test {

struct MutexAdapter {
  using Lock = InterProcessMutex;
  static constexpr bool reentrant = true;
  static constexpr const char* name = "InterProcessMutex";
  static std::unique_ptr<Lock> make(CuratorFramework& c, const std::string& path) {
    return std::make_unique<Lock>(c, path);
  }
  static std::int64_t token(Lock& l) { return l.fencing_token(); }
  /// Every node the lock keeps under `path`.
  template <class Fixture>
  static std::size_t nodes(Fixture& fx, const std::string& path) {
    return fx.children(path).size();
  }
  /// How many nodes `holders` holders and `waiters` waiters keep.
  static std::size_t expected_nodes(std::size_t holders, std::size_t waiters) { return holders + waiters; }
};

/// The mutex over `StandardLockDriver` (Curator's request pattern, no pre-watch; the default is
/// `PrewatchLockDriver`): the same contract must hold with either.
struct StandardMutexAdapter : MutexAdapter {
  static constexpr const char* name = "InterProcessMutex (StandardLockDriver)";
  static std::unique_ptr<Lock> make(CuratorFramework& c, const std::string& path) {
    return std::make_unique<Lock>(c, path, std::make_shared<StandardLockDriver>());
  }
};

struct SemaphoreMutexAdapter {
  using Lock = InterProcessSemaphoreMutex;
  static constexpr bool reentrant = false;
  static constexpr const char* name = "InterProcessSemaphoreMutex";
  static std::unique_ptr<Lock> make(CuratorFramework& c, const std::string& path) {
    return std::make_unique<Lock>(c, path);
  }
  static std::int64_t token(Lock& l) { return l.fencing_token(); }
  template <class Fixture>
  static std::size_t nodes(Fixture& fx, const std::string& path) {
    return fx.children(path + "/locks").size() + fx.children(path + "/leases").size();
  }
  /// The first waiter holds the internal mutex and a lease node while it waits for a free slot.
  static std::size_t expected_nodes(std::size_t holders, std::size_t waiters) {
    return holders + (waiters ? waiters + 1 : 0);
  }
};

/// The contract's mutual exclusion: `threads_per_client` threads on each client take the lock `rounds` times
/// each (every acquire bounded by a minute); checks that no two ever held it at once, that every round got
/// it, and that the fencing tokens increase in grant order.
template <class A>
void check_exclusion(const std::vector<CuratorFramework*>& clients, const std::string& path,
                     int threads_per_client, int rounds) {
  std::atomic<int> holders{0}, max_holders{0}, grants{0}, failures{0};
  std::mutex tokens_mu;
  std::vector<std::int64_t> tokens;
  std::vector<std::thread> ts;
  for (auto* client : clients)
    for (int t = 0; t < threads_per_client; ++t)
      ts.emplace_back([&, client] {
        auto lock = A::make(*client, path);
        for (int r = 0; r < rounds; ++r) {
          if (!lock->acquire(std::chrono::seconds(60))) {
            ++failures;
            return;
          }
          int now = ++holders;
          int prev = max_holders.load();
          while (now > prev && !max_holders.compare_exchange_weak(prev, now)) {
          }
          {
            std::lock_guard lk(tokens_mu);
            tokens.push_back(A::token(*lock));
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
          --holders;
          ++grants;
          lock->release();
        }
      });
  for (auto& t : ts) t.join();
  CHECK(failures == 0);
  CHECK(grants == static_cast<int>(clients.size()) * threads_per_client * rounds);
  CHECK(max_holders == 1);
  REQUIRE(tokens.size() == std::size_t(grants));
  CHECK(std::adjacent_find(tokens.begin(), tokens.end(), std::greater_equal<>()) == tokens.end());
}

}  // namespace zkr::test
