// Fault injection on a real three-server ensemble (issue 8): client sessions contend on one InterProcessMutex
// while servers are killed, the whole ensemble restarts, sessions of holders and waiters expire and a holder
// process is frozen past its session timeout. An independent checker (checker.hpp) judges every grant:
// exclusion, increasing fencing tokens, and a fenced resource that refuses the late write of a lost holder.
// Every wait is bounded; at the end no lock node is left.

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <iostream>
#include <mutex>
#include <optional>
#include <random>
#include <sstream>
#include <thread>
#include <vector>
#include <zkr/testing/testing_cluster.hpp>

#include "checker.hpp"
#include "fault_support.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

constexpr const char* holder_child_test_name = "fault helper child holder process";

/// Client sessions contending on one mutex, one thread each, with short random holds, under the checker. Each
/// client's SUSPENDED -> RECONNECTED gaps and LOST states are recorded.
class Contenders {
 public:
  Contenders(const std::string& connect, GrantChecker& checker, std::string path, int n,
             ClientOptions options = fault_options())
      : checker_(checker), path_(std::move(path)), suspended_since_(static_cast<std::size_t>(n)) {
    for (int i = 0; i < n; ++i) {
      clients_.push_back(make_client(connect, options));
      clients_.back()->add_connection_state_listener(
          [this, i = static_cast<std::size_t>(i)](ConnectionState s) { on_state(i, s); });
    }
  }
  ~Contenders() {
    stop();
    clients_.clear();  // before the members their listeners use
  }

  void start() {
    for (std::size_t i = 0; i < clients_.size(); ++i) threads_.emplace_back([this, i] { run(i); });
  }

  /// `quiet(true)`: every contender finishes its acquire or hold and waits, so that nothing is written
  /// (within a bounded wait: an acquire takes at most 2 s); `quiet(false)`: contention resumes.
  void quiet(bool on) {
    quiet_ = on;
    if (on) CHECK(eventually([&] { return parked_.load() + finished_.load() == threads_.size(); }, 10s));
  }

  /// Stops the threads (bounded: each acquire waits at most 2 s) and closes the clients. False if a thread
  /// did not finish in time (the clients are then closed to unblock it).
  bool stop() {
    stop_ = true;
    bool ok = eventually([&] { return finished_.load() == threads_.size(); }, 40s);
    if (!ok)
      for (auto& c : clients_) c->close();
    for (auto& t : threads_) t.join();
    threads_.clear();
    for (auto& c : clients_) c->close();
    return ok;
  }

  std::size_t grants() const { return grants_.load(); }
  /// Every SUSPENDED -> RECONNECTED gap seen so far, in milliseconds, sorted.
  std::vector<long> reconnect_gaps() {
    const std::lock_guard lock(state_mu_);
    auto g = gaps_;
    std::sort(g.begin(), g.end());
    return g;
  }
  std::size_t sessions_lost() const { return lost_.load(); }
  std::size_t errors() const { return errors_.load(); }
  std::chrono::milliseconds longest_acquire() const { return std::chrono::milliseconds(longest_ms_.load()); }

  /// Waits until `n` more grants happened (the lock makes progress again after a fault).
  bool progress(std::size_t n = 5, std::chrono::milliseconds limit = 30s) {
    const auto target = grants() + n;
    return eventually([&] { return grants() >= target; }, limit);
  }

 private:
  void on_state(std::size_t i, ConnectionState s) {
    const std::lock_guard lock(state_mu_);
    if (s == ConnectionState::suspended) {
      suspended_since_[i] = std::chrono::steady_clock::now();
    } else if (s == ConnectionState::lost) {
      ++lost_;
      suspended_since_[i].reset();
    } else if (s == ConnectionState::reconnected && suspended_since_[i]) {
      gaps_.push_back(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                            *suspended_since_[i])
                          .count());
      suspended_since_[i].reset();
    }
  }

  void run(std::size_t i) {
    const std::string name = "cxx-" + std::to_string(i);
    InterProcessMutex m(*clients_[i], path_);
    std::mt19937 rng(static_cast<unsigned>(i) * 7919u + 1u);
    while (!stop_) {
      if (quiet_) {
        ++parked_;
        while (quiet_ && !stop_) std::this_thread::sleep_for(5ms);
        --parked_;
        continue;
      }
      error_code ec;
      const auto t0 = std::chrono::steady_clock::now();
      const bool got = m.acquire(2s, ec);
      const auto took =
          std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0);
      for (auto cur = longest_ms_.load();
           took.count() > cur && !longest_ms_.compare_exchange_weak(cur, took.count());) {
      }
      if (ec) {
        ++errors_;
        std::this_thread::sleep_for(50ms);
        continue;
      }
      if (!got) continue;
      const auto token = m.fencing_token();
      const auto id = checker_.begin(path_, name, GrantChecker::Kind::exclusive, token);
      ++grants_;
      bool fenced_ok = checker_.fenced_write(path_, token);
      std::this_thread::sleep_for(std::chrono::milliseconds(2 + rng() % 20));
      if (m.lease_status() == LeaseStatus::lost)
        checker_.mark_lost(id);
      else
        fenced_ok = checker_.fenced_write(path_, token) && fenced_ok;
      if (!fenced_ok && m.lease_status() != LeaseStatus::lost)
        checker_.violation(name + ": fenced write with token " + std::to_string(token) +
                           " rejected while the lease says " + std::string(to_string(m.lease_status())));
      checker_.end(id);
      m.release(ec);
    }
    ++finished_;
  }

  GrantChecker& checker_;
  std::string path_;
  std::vector<std::unique_ptr<CuratorFramework>> clients_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false}, quiet_{false};
  std::atomic<std::size_t> finished_{0}, grants_{0}, errors_{0}, parked_{0};
  std::atomic<long> longest_ms_{0};
  std::mutex state_mu_;
  std::vector<std::optional<std::chrono::steady_clock::time_point>> suspended_since_;
  std::vector<long> gaps_;
  std::atomic<std::size_t> lost_{0};
};

}  // namespace

// The holder process of scenario (f): run only as a child of the fault test (hidden tag).
TEST_CASE(holder_child_test_name, "[.fault-child]") {
  const char* connect = std::getenv("ZKR_FAULT_CHILD_CONNECT");
  const char* path = std::getenv("ZKR_FAULT_CHILD_PATH");
  if (!connect || !path) return;
  auto client = make_client(connect, fault_options(child_session_timeout));
  InterProcessMutex m(*client, path);
  if (!m.acquire(60s)) {
    std::printf("child timeout\n");
    std::fflush(stdout);
    return;
  }
  std::printf("child acquired %lld\n", static_cast<long long>(m.fencing_token()));
  std::fflush(stdout);
  std::string cmd;
  while (std::getline(std::cin, cmd)) {
    if (cmd == "status") {
      std::printf("child status %s\n", std::string(to_string(m.lease_status())).c_str());
    } else if (cmd == "release") {
      error_code ec;
      m.release(ec);
      std::printf("child released %s\n", ec ? ec.message().c_str() : "ok");
    } else {
      break;
    }
    std::fflush(stdout);
  }
}

TEST_CASE(
    "fault: contention on one mutex survives server kills, an ensemble restart, expiries and a frozen holder",
    "[fault]") {
  zkr::testing::TestingCluster cluster(3);
  const std::string connect = cluster.connect_string();
  const std::string path = "/fault/mutex";
  GrantChecker checker;
  Contenders contenders(connect, checker, path, 5);
  contenders.start();
  REQUIRE(contenders.progress(10));

  // (a) kill the leader, then bring it back.
  {
    const auto leader = cluster.wait_for_leader(20s);
    checker.fault("kill leader " + std::to_string(leader));
    cluster.kill(leader);
    CHECK(contenders.progress());
    start_member_quietly(cluster, leader, [&](bool on) { contenders.quiet(on); });
    CHECK(contenders.progress());
  }
  // (b) kill a follower, then bring it back.
  {
    const auto leader = cluster.wait_for_leader(20s);
    const std::size_t follower = (leader + 1) % 3;
    checker.fault("kill follower " + std::to_string(follower));
    cluster.kill(follower);
    CHECK(contenders.progress());
    start_member_quietly(cluster, follower, [&](bool on) { contenders.quiet(on); });
    CHECK(contenders.progress());
  }
  // (c) stop and restart the whole ensemble.
  checker.fault("restart ensemble");
  WARN(restart_ensemble(cluster));
  CHECK(contenders.progress(5, 40s));
  // (d) expire a holder's session: its lease reports the loss, a contender takes over, the late write is
  // fenced.
  {
    auto hc = make_client(connect, fault_options());
    InterProcessMutex hm(*hc, path);
    REQUIRE(hm.acquire(30s));
    const auto token = hm.fencing_token();
    const auto id = checker.begin(path, "holder-d", GrantChecker::Kind::exclusive, token);
    REQUIRE(checker.fenced_write(path, token));
    checker.fault("expire holder session");
    const auto t_fault = GrantChecker::Clock::now();
    hc->inject_session_expiration();
    checker.mark_lost(id, t_fault);
    CHECK(eventually([&] { return hm.lease_status() == LeaseStatus::lost; }, 15s));
    CHECK(contenders.progress());
    CHECK_FALSE(checker.fenced_write(path, token));  // the late write of the lost holder
    checker.end(id);
    error_code ec;
    hm.release(ec);  // the node went with the session: not an error
    CHECK_FALSE(ec);
  }
  // (e) expire a waiter's session: it still acquires (with a new node) or fails, within a bound.
  {
    auto hc = make_client(connect, fault_options());
    auto wc = make_client(connect, fault_options());
    InterProcessMutex hm(*hc, path), wm(*wc, path);
    REQUIRE(hm.acquire(30s));
    const auto hid = checker.begin(path, "holder-e", GrantChecker::Kind::exclusive, hm.fencing_token());
    auto before = hm.participant_nodes().size();
    auto fut = wm.async_acquire(boost::asio::use_future);
    CHECK(eventually([&] { return hm.participant_nodes().size() > before; }, 10s));
    checker.fault("expire waiter session");
    wc->inject_session_expiration();
    std::this_thread::sleep_for(500ms);
    checker.end(hid);
    hm.release();
    REQUIRE(fut.wait_for(30s) == std::future_status::ready);
    try {
      Lease lease = fut.get();
      const auto wid = checker.begin(path, "waiter-e", GrantChecker::Kind::exclusive, lease.fencing_token());
      CHECK(checker.fenced_write(path, lease.fencing_token()));
      checker.end(wid);
      lease.release();
    } catch (const boost::system::system_error& e) {
      WARN("the expired waiter failed (allowed): " << e.what());
    }
  }
  // (f) freeze a holder process past its session timeout: its grant is lost and its late write is fenced.
  {
    ChildProcess child(holder_child_test_name,
                       {{"ZKR_FAULT_CHILD_CONNECT", connect}, {"ZKR_FAULT_CHILD_PATH", path}});
    const auto g = freeze_child_holder(child, checker, path, "child acquired ", "child-f",
                                       "SIGSTOP holder process past its session timeout");
    const auto g0 = contenders.grants();
    // The server expires the frozen session; a contender then takes the lock.
    CHECK(eventually([&] { return contenders.grants() > g0; }, child_session_timeout + 20s));
    REQUIRE(::kill(child.pid(), SIGCONT) == 0);
    CHECK(child.ask_until("status", "child status lost", 20s));
    CHECK_FALSE(checker.fenced_write(path, g.token));  // the frozen holder's late write
    checker.end(g.id);
    child.send("release");
    CHECK(child.line(10s).rfind("child released", 0) == 0);
    child.send("quit");
  }
  CHECK(contenders.progress());

  const bool stopped = contenders.stop();
  CHECK(stopped);
  WARN("contenders: " << contenders.grants() << " grants, " << contenders.errors()
                      << " acquire errors, longest acquire call " << contenders.longest_acquire().count()
                      << " ms");
  CHECK(contenders.longest_acquire() < 20s);
  CHECK(no_nodes_left(connect, path));
  CHECK(every_member_agrees(cluster, path));
  const auto violations = checker.report("fault:");
  WARN(checker.summary());
  CHECK(violations.empty());
  CHECK(checker.faults() == 6);  // (a)-(f)
}

// Issue 24: every member of the ensemble stopped and started again in turn, three full rounds, while 8
// sessions contend on one mutex. Each restart must leave the sessions alive (no LOST), the lock making
// progress, and each client's SUSPENDED -> RECONNECTED gap short: it moves to another member at once, and a
// member that is starting up must not hold a connection unanswered (the handshake bound in
// docs/architecture.md).
TEST_CASE("fault: a rolling restart of the ensemble under lock load loses no session and reconnects promptly",
          "[fault][rolling]") {
  zkr::testing::TestingCluster cluster(3);
  const std::string connect = cluster.connect_string();
  const std::string path = "/fault/rolling";
  GrantChecker checker;
  Contenders contenders(connect, checker, path, 8, fault_options(10s));
  contenders.start();
  REQUIRE(contenders.progress(10));
  for (int round = 0; round < 3; ++round)
    for (std::size_t member = 0; member < cluster.size(); ++member) {
      INFO("round " << round << ", member " << member);
      checker.fault("restart member " + std::to_string(member) + " (round " + std::to_string(round) + ")");
      cluster.stop(member);
      CHECK(contenders.progress());
      cluster.start(member);
      CHECK(contenders.progress());
    }
  const bool stopped = contenders.stop();
  CHECK(stopped);
  const auto gaps = contenders.reconnect_gaps();
  const auto pct = [&](double q) {
    if (gaps.empty()) return 0L;
    return gaps[std::min(gaps.size() - 1, static_cast<std::size_t>(q * static_cast<double>(gaps.size())))];
  };
  std::ostringstream all;
  for (auto g : gaps) all << ' ' << g;
  WARN("rolling restart: " << contenders.grants() << " grants, " << gaps.size()
                           << " reconnects, gap SUSPENDED -> RECONNECTED p50 " << pct(0.5) << " ms, p99 "
                           << pct(0.99) << " ms, max " << pct(1.0) << " ms; gaps:" << all.str());
  CHECK(contenders.sessions_lost() == 0);
  CHECK_FALSE(gaps.empty());  // the clients of each stopped member were suspended and came back
  // The bound separates a reconnect from the stall this guards against (19-20 s: a member that accepts the
  // connection and answers late, docs/reliability.md "Restarts"); with ~50 gaps, p99 is the maximum. Measured
  // max: 971 ms on a quiet machine, 2353 ms under the sanitizers beside two other ensembles.
  CHECK(pct(1.0) <= 5000);
  CHECK(no_nodes_left(connect, path));
  const auto violations = checker.report("rolling:");
  WARN(checker.summary());
  CHECK(violations.empty());
  CHECK(checker.faults() == 9);
}
