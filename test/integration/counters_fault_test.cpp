// The distributed atomic long's checker on a real three-server ensemble (issue 40): C++ threads (optimistic,
// and promoted to a lock) and a Java Curator 5.4 peer (promoted to the same lock) increment one counter while
// the servers of the C++ clients and the leader are killed (and started again) and a C++ session expires.
// Each successful increment claims the value it wrote; the checker proves that no two claim the same value
// (nothing lost: every success built on the one before), and that every value no success claims (an
// increment applied but not reported) is explained by an increment whose outcome its side could not vouch
// for: a C++ error (`outcome_unknown` above all), a Java increment that threw, or a Java increment during
// which its client retried a request and that claims the next value (applied twice). With the client's
// retry of a lost write (the behaviour before `outcome_unknown`) it fails about one run in two.

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <zkr/recipes/distributed_atomic_number.hpp>
#include <zkr/testing/testing_cluster.hpp>

#include "curator_peer.hpp"
#include "fault_support.hpp"

using namespace zkr;
using namespace zkr::test;

namespace counters_fault {

const std::string counter_path = "/fault/counter";
const std::string lock_path = "/fault/counter-lock";

/// What one side's increments came to.
struct Tally {
  std::vector<std::int64_t> claimed;  // the post values of the successes
  std::set<std::int64_t> doubtful;    // those of them whose increment is among the uncertain ones
  long uncertain = 0;                 // increments whose outcome the side cannot vouch for
  long other_errors = 0;  // C++: the uncertain ones that ended with another error than outcome_unknown
};

/// C++ threads incrementing the counter until stopped; `hold` pauses them between increments.
class Incrementers {
 public:
  Incrementers(std::vector<CuratorFramework*> clients, int threads_per_client) {
    for (std::size_t c = 0; c < clients.size(); ++c)
      for (int t = 0; t < threads_per_client; ++t)
        threads_.emplace_back([this, client = clients[c], promoted = c % 2 == 1] { run(*client, promoted); });
  }
  ~Incrementers() { stop(); }

  void hold(bool on) {
    held_ = on;
    // Wait for the increments in flight to end: "quiet" means no write in flight (fault_support.hpp).
    if (on)
      while (busy_ > 0) std::this_thread::sleep_for(5ms);
  }
  void stop() {
    stopping_ = true;
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }
  Tally tally() {
    std::lock_guard lk(m_);
    return tally_;
  }

 private:
  void run(CuratorFramework& client, bool promoted) {
    std::optional<PromotedToLock> lock;
    if (promoted) lock = PromotedToLock{lock_path, 30s, std::make_shared<RetryNTimes>(1000, Millis(1))};
    // Promoted writers give up their optimistic tries at once, so most of their increments take the lock.
    auto retry = promoted ? std::make_shared<RetryNTimes>(0, Millis(0))
                          : std::make_shared<RetryNTimes>(1000, Millis(1));
    DistributedAtomicLong n(client, counter_path, retry, lock);
    while (!stopping_) {
      if (held_) {
        std::this_thread::sleep_for(5ms);
        continue;
      }
      ++busy_;
      if (held_) {  // held meanwhile: the holder may have seen busy_ at 0
        --busy_;
        continue;
      }
      error_code ec;
      auto r = n.increment(ec);
      --busy_;
      std::lock_guard lk(m_);
      if (ec) {
        ++tally_.uncertain;
        if (ec != client_errc::outcome_unknown) ++tally_.other_errors;
      } else if (r.succeeded) {
        tally_.claimed.push_back(r.post_value);
      }
    }
  }

  std::atomic<bool> stopping_{false}, held_{false};
  std::atomic<int> busy_{0};
  std::mutex m_;
  Tally tally_;
  std::vector<std::thread> threads_;
};

/// Parses the Java peer's `stopped <succeeded> <uncertain> <values>`.
Tally java_tally(const std::string& line) {
  std::istringstream in(line);
  std::string word, values;
  std::size_t succeeded = 0;
  Tally t;
  in >> word >> succeeded >> t.uncertain >> values;
  REQUIRE(word == "stopped");
  if (values != "-") {
    std::istringstream v(values);
    for (std::string item; std::getline(v, item, ',');) {
      t.claimed.push_back(std::stoll(item));
      if (item.back() == '?') t.doubtful.insert(t.claimed.back());
    }
  }
  REQUIRE(t.claimed.size() == succeeded);
  return t;
}

}  // namespace counters_fault

TEST_CASE(
    "fault: increments of C++ and Java Curator on one counter lose none and double none through kills and an "
    "expiry",
    "[fault][counters][interop]") {
  using namespace counters_fault;
  if (!CuratorPeer::available())
    WARN("the Java incrementer is skipped: no Java Curator peer on this machine");
  zkr::testing::TestingCluster cluster(3);
  const auto connect = cluster.connect_string();
  auto c1 = make_client(connect, fault_options());  // optimistic
  auto c2 = make_client(connect, fault_options());  // promoted
  std::unique_ptr<CuratorPeer> java;
  if (CuratorPeer::available()) {
    CuratorPeer::Options o;
    o.main_class = "CounterPeer";
    o.session_timeout = fault_session_timeout;
    o.extra = {"--lock", lock_path};
    java = std::make_unique<CuratorPeer>(connect, "long", std::vector<std::string>{counter_path}, o);
  }
  Incrementers cxx({c1.get(), c2.get()}, 2);
  if (java) REQUIRE(java->call("run") == "running");
  const auto quiet = [&](bool on) {
    cxx.hold(on);
    if (java) REQUIRE(java->call(on ? "stop" : "run", 90s).rfind(on ? "stopped" : "running", 0) == 0);
  };
  const auto churn = [] { std::this_thread::sleep_for(2s); };

  // Kills `member`, or the leader where it is not known, with the increments running, then starts it again.
  const auto kill_and_restart = [&](std::optional<std::size_t> member) {
    const auto victim = member ? *member : cluster.wait_for_leader(30s);
    cluster.kill(victim);
    churn();
    start_member_quietly(cluster, victim, quiet);
    churn();
  };

  churn();
  // (a) the server of the optimistic writers, with their writes in flight to it: the answers of those it
  // forwarded are lost, and some were applied.
  kill_and_restart(serving_member(cluster, *c1));
  c1->inject_session_expiration();  // (b) their session
  churn();
  kill_and_restart(serving_member(cluster, *c2));  // (c) the promoted writers' server
  kill_and_restart(std::nullopt);                  // (d) the leader
  cxx.stop();
  std::vector<Tally> sides{cxx.tally()};
  if (java) {
    sides.push_back(java_tally(java->call("stop", 90s)));
    java.reset();  // quits it
  }
  auto admin = make_client(connect, fault_options());
  admin->sync(counter_path);
  const auto final_value =
      DistributedAtomicLong(*admin, counter_path, std::make_shared<RetryNTimes>(3, Millis(100)))
          .get()
          .post_value;

  std::vector<std::int64_t> claimed;
  std::set<std::int64_t> doubtful;
  long uncertain_unclaimed = 0;  // uncertain increments with no claimed value
  for (const auto& s : sides) {
    claimed.insert(claimed.end(), s.claimed.begin(), s.claimed.end());
    doubtful.insert(s.doubtful.begin(), s.doubtful.end());
    uncertain_unclaimed += s.uncertain - static_cast<long>(s.doubtful.size());
  }
  std::sort(claimed.begin(), claimed.end());
  const auto twice = std::adjacent_find(claimed.begin(), claimed.end());
  // The values nobody claims: increments applied but not reported. Each is explained by an uncertain
  // increment: one that claims nothing (a C++ error, a Java exception), or one that claims the next value
  // (applied twice: its first write, then a second on top of it, as Curator's retry may do).
  std::vector<std::int64_t> unclaimed;
  for (std::int64_t v = 1, i = 0; v <= final_value; ++v) {
    while (i < static_cast<std::int64_t>(claimed.size()) && claimed[i] < v) ++i;
    if (i == static_cast<std::int64_t>(claimed.size()) || claimed[i] != v) unclaimed.push_back(v);
  }
  long explained_by_next = 0;
  for (auto v : unclaimed)
    if (doubtful.erase(v + 1) == 1) ++explained_by_next;
  const long unexplained = static_cast<long>(unclaimed.size()) - explained_by_next;
  std::printf(
      "counter checker: final value %lld; C++ %zu successes, %ld uncertain (%ld not outcome_unknown); Java "
      "%s; "
      "%zu values unclaimed, %ld of them before a doubtful claim\n",
      static_cast<long long>(final_value), sides[0].claimed.size(), sides[0].uncertain, sides[0].other_errors,
      sides.size() > 1 ? (std::to_string(sides[1].claimed.size()) + " successes, " +
                          std::to_string(sides[1].uncertain) + " uncertain")
                             .c_str()
                       : "skipped",
      unclaimed.size(), explained_by_next);
  CHECK(claimed.size() > 50);  // the scenario did real work
  INFO("a value claimed twice: " << (twice == claimed.end() ? std::string("none") : std::to_string(*twice)));
  CHECK(twice == claimed.end());                              // no increment lost
  CHECK((claimed.empty() || claimed.back() <= final_value));  // nothing claimed beyond the end
  std::ostringstream gaps;
  for (auto v : unclaimed) gaps << v << ' ';
  INFO("unclaimed values: " << gaps.str());
  CHECK(unexplained <= uncertain_unclaimed);  // applied but unreported only where the outcome was in doubt
  CHECK(every_member_agrees(cluster, "/fault"));
}
