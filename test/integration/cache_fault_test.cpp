// The cache checker under ensemble faults (issue 39): C++ writers and a Java Curator writer (ChurnPeer) churn
// a tree of up to 370 nodes at three depths while a three-server ensemble loses its leader, then a follower,
// restarts as a whole, while the cache's session is expired, and while the process of a second cache is
// frozen (SIGSTOP) past its session timeout. After the writers stop: every member serves the same tree; each
// cache equals it; replaying a cache's events gives its contents; no event broke the rules (no duplicate
// create, a version that never goes back, no delete of an unknown node: Replay); `initialized` came once per
// start. Runs over both watch strategies: one-shot watches per node on the C client, one persistent recursive
// watch on the native transport (the native.* twin of this case).
#include <signal.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <iostream>
#include <random>
#include <thread>
#include <zkr/recipes/cache/curator_cache.hpp>

#include "cache_support.hpp"
#include "curator_peer.hpp"
#include "fault_support.hpp"

namespace {
namespace cache_fault {

using namespace zkr;
using namespace zkr::test;

constexpr const char* cache_child_test_name = "cache fault child: a cache reporting its digest";
const std::string churn_root = "/cf";

/// A digest of a tree (FNV-1a over its paths, versions and data in order), and its size: what the frozen
/// cache's process reports, compared with the server's.
std::string digest(const TreeView& t) {
  std::uint64_t h = 1469598103934665603ULL;
  auto mix = [&h](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
    h = (h ^ 0xff) * 1099511628211ULL;
  };
  for (auto& [path, v] : t) {
    mix(path);
    mix(std::to_string(v.first));
    mix(v.second);
  }
  return std::to_string(t.size()) + ":" + std::to_string(h);
}

/// A random path of the churned tree: /cf/a<i>, /cf/a<i>/b<j> or /cf/a<i>/b<j>/c<k> (ChurnPeer's shape).
std::string random_path(std::mt19937& rng) {
  std::string p = churn_root + "/a" + std::to_string(rng() % 10);
  const auto depth = rng() % 3;
  if (depth >= 1) p += "/b" + std::to_string(rng() % 6);
  if (depth >= 2) p += "/c" + std::to_string(rng() % 5);
  return p;
}

/// C++ writers, each on its own session, creating, setting and deleting random nodes until stopped; they
/// hold still while `quiet` (no operation in flight once `hold` returns).
class Writers {
 public:
  Writers(const std::string& connect, int n) {
    for (int i = 0; i < n; ++i) clients_.push_back(make_client(connect, fault_options()));
    for (int i = 0; i < n; ++i) threads_.emplace_back([this, i] { run(i); });
  }
  ~Writers() { stop(); }
  void hold(bool on) {
    quiet_ = on;
    if (on) eventually([&] { return in_flight_ == 0; }, 60s);
  }
  void stop() {
    done_ = true;
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }
  long ops() const { return ops_; }

 private:
  void run(int i) {
    std::mt19937 rng(static_cast<unsigned>(1000 + i));
    auto& c = *clients_[static_cast<std::size_t>(i)];
    while (!done_) {
      if (quiet_) {
        std::this_thread::sleep_for(20ms);
        continue;
      }
      ++in_flight_;
      if (quiet_) {  // quiet began meanwhile: hold() may have seen nothing in flight
        --in_flight_;
        continue;
      }
      const auto path = random_path(rng);
      const auto op = rng() % 10;
      const std::string data = "cpp" + std::to_string(i) + "-" + std::to_string(ops_.load());
      error_code ec;
      if (op < 4)
        c.create(path, {.creating_parents = true, .data = data}, ec);
      else if (op < 8)
        c.set_data(path, data, -1, ec);
      else
        c.remove(path, {}, ec);
      ++ops_;
      --in_flight_;
    }
  }

  std::vector<std::unique_ptr<CuratorFramework>> clients_;
  std::vector<std::thread> threads_;
  std::atomic<bool> quiet_{false}, done_{false};
  std::atomic<int> in_flight_{0};
  std::atomic<long> ops_{0};
};

/// Every running member's own tree at the churned root (a client connected to that member alone), once all
/// agree; nullopt when they did not within the wait (printed).
std::optional<TreeView> agreed_tree(const zkr::testing::TestingCluster& cluster) {
  std::vector<std::optional<TreeView>> views;
  const auto agree = [&] {
    views.clear();
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      auto c = make_client(cluster.member_connect_string(i), fault_options());
      views.push_back(server_tree(*c, churn_root));
      c->close();
    }
    for (auto& v : views)
      if (!v || *v != *views.front()) return false;
    return true;
  };
  if (eventually(agree, 60s)) return views.front();
  for (std::size_t i = 0; i < views.size(); ++i)
    std::printf("member %zu: %s\n", i, views[i] ? digest(*views[i]).c_str() : "unreadable");
  return std::nullopt;
}

/// Prints up to 20 nodes where `got` differs from `want`.
void print_differences(const char* what, const TreeView& got, const TreeView& want) {
  int shown = 0;
  const auto show = [&](const std::string& path, const TreeView& a, const TreeView& b) {
    if (++shown > 20) return;
    auto describe = [&path](const TreeView& t) {
      auto it = t.find(path);
      return it == t.end() ? std::string("absent")
                           : "v" + std::to_string(it->second.first) + " '" + it->second.second + "'";
    };
    std::printf("  %s: %s has %s, the server %s\n", path.c_str(), what, describe(a).c_str(),
                describe(b).c_str());
  };
  for (auto& [p, v] : got)
    if (auto it = want.find(p); it == want.end() || it->second != v) show(p, got, want);
  for (auto& [p, v] : want)
    if (!got.count(p)) show(p, got, want);
  std::printf("%s differs from the server's tree at %d node(s)\n", what, shown);
}

}  // namespace cache_fault
}  // namespace

using namespace cache_fault;

// The frozen cache's process: run only as a child of the fault case (hidden tag). It caches the tree, says
// "child initialized", then answers each "digest" with "child digest <size>:<hash> <problems> <initialized>".
TEST_CASE(cache_child_test_name, "[.fault-child]") {
  const char* connect = std::getenv("ZKR_CACHE_CHILD_CONNECT");
  if (!connect) return;
  auto client = make_client(connect, fault_options(child_session_timeout));
  Replay replay;
  auto cache = CuratorCache::build(*client, churn_root);
  cache.add_listener(replay.listener());
  cache.start();
  if (!cache.await_initialized(60s)) return;
  std::printf("child initialized\n");
  std::fflush(stdout);
  std::string cmd;
  while (std::getline(std::cin, cmd) && cmd == "digest") {
    const auto mine = as_tree(cache.stream());
    const bool replay_agrees = replayed_tree(replay) == mine;
    std::printf("child digest %s %zu %d\n", replay_agrees ? digest(mine).c_str() : "replay-differs",
                replay.issues().size(), replay.initialized_calls());
    std::fflush(stdout);
  }
}

TEST_CASE(
    "fault: caches equal the tree after writers churn it through kills, a restart, an expiry and a freeze",
    "[fault][cache]") {
  if (!CuratorPeer::available()) WARN("the Java writer is skipped: no Java Curator peer on this machine");
  zkr::testing::TestingCluster cluster(3);
  const auto connect = cluster.connect_string();
  auto admin = make_client(connect, fault_options());
  admin->create(churn_root, {});

  auto cc = make_client(connect, fault_options());
  Replay replay;
  auto cache = CuratorCache::build(*cc, churn_root);
  cache.add_listener(replay.listener());
  cache.start();
  REQUIRE(cache.await_initialized(30s));
  ChildProcess child(cache_child_test_name, {{"ZKR_CACHE_CHILD_CONNECT", connect}});
  REQUIRE(child.line(60s) == "child initialized");

  Writers writers(connect, 2);
  std::unique_ptr<CuratorPeer> java;
  if (CuratorPeer::available()) {
    CuratorPeer::Options o;
    o.main_class = "ChurnPeer";
    o.session_timeout = fault_session_timeout;
    o.extra = {"--seed", "7"};
    java = std::make_unique<CuratorPeer>(connect, churn_root, std::vector<std::string>{}, o);
    REQUIRE(java->call("run") == "running");
  }
  const auto quiet = [&](bool on) {
    writers.hold(on);
    if (java) REQUIRE(java->call(on ? "pause" : "run", 90s).rfind(on ? "paused" : "running", 0) == 0);
  };
  const auto churn = [] { std::this_thread::sleep_for(2s); };

  churn();
  const auto leader = cluster.wait_for_leader(30s);
  cluster.kill(leader);  // (a) the leader
  churn();
  start_member_quietly(cluster, leader, quiet);
  churn();
  const auto follower = (cluster.wait_for_leader(30s) + 1) % cluster.size();
  cluster.kill(follower);  // (b) a follower
  churn();
  start_member_quietly(cluster, follower, quiet);
  churn();
  quiet(true);  // (c) the whole ensemble, with no write in flight (fault_support.hpp: ZOOKEEPER-4785)
  std::printf("%s\n", restart_ensemble(cluster).c_str());
  std::this_thread::sleep_for(1s);
  quiet(false);
  churn();
  cc->inject_session_expiration();  // (d) the cache's session
  churn();
  REQUIRE(::kill(child.pid(), SIGSTOP) == 0);  // (e) the second cache's process, past its session timeout
  std::this_thread::sleep_for(child_session_timeout + 3s);
  REQUIRE(::kill(child.pid(), SIGCONT) == 0);
  churn();

  writers.stop();
  std::string java_ops;
  if (java) {
    const auto paused = java->call("pause", 90s);
    REQUIRE(paused.rfind("paused ", 0) == 0);
    java_ops = paused.substr(7);
    java.reset();  // quits it
  }
  const auto tree = agreed_tree(cluster);
  REQUIRE(tree);
  std::printf("cache fault checker: %ld C++ writes, %s Java writes, %zu nodes at the end\n", writers.ops(),
              java_ops.empty() ? "no" : java_ops.c_str(), tree->size());
  CHECK(tree->size() > 1);
  const bool cache_equal =
      eventually([&] { return as_tree(cache.stream()) == *tree && replayed_tree(replay) == *tree; }, 60s);
  if (!cache_equal) {
    print_differences("cache", as_tree(cache.stream()), *tree);
    std::printf("the cache holds %zu watches for %zu nodes (persistent: %d)\n", cache.watch_count(),
                cache.size(), int(cache.uses_persistent_watch()));
    for (std::size_t i = 0; i < cluster.size(); ++i)
      std::printf("member %zu: %s\n", i, cluster.four_letter_word(i, "wchs").c_str());
  }
  CHECK(cache_equal);
  CHECK(replay.issues().empty());
  CHECK(replay.initialized_calls() == 1);
  CHECK(child.ask_until("digest", "child digest " + digest(*tree) + " 0 1", 60s));
}
