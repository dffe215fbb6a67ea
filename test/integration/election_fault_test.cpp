// Fault injection on a real three-server ensemble for the leader recipes (issue 28 item 7): the scenarios of
// fault_test.cpp, run once over LeaderSelector participants and once over LeaderLatch participants. Each
// participant has its own session; each term of leadership is a grant under the independent checker
// (checker.hpp), with a fenced write at its start and at its end, so the checker judges one leader at a time,
// increasing fencing tokens, and the fence refusing the late write of a leader that lost its session.
// Faults: the server the leader is connected to is killed, then one it is not connected to, the whole
// ensemble restarts, the leader's session and a follower's session expire, and a leader process is frozen
// with SIGSTOP past its session timeout. After every fault every participant must lead again (bounded waits);
// at the end no node is left.

#include <signal.h>
#include <spdlog/sinks/basic_file_sink.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
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

enum class Recipe { selector, latch };

constexpr const char* election_child_test_name = "election fault helper child participant process";

const char* recipe_name(Recipe r) { return r == Recipe::selector ? "selector" : "latch"; }

/// `n` participants of one recipe on one path, one session each. Every term of leadership is a grant under
/// the checker: a fenced write at its start and at its end while the grant is held (a leader whose grant says
/// maybe_lost or lost stops writing, as the loss signal asks). While `hold(true)`, a leader keeps its term as
/// long as its grant is held, so that the test can aim a fault at it. Selector participants requeue after
/// each term (`auto_requeue`); latch participants close their latch after each term and join again with a new
/// one.
class Election {
 public:
  Election(Recipe recipe, const std::string& connect, GrantChecker& checker, std::string path, std::size_t n)
      : recipe_(recipe),
        checker_(checker),
        path_(std::move(path)),
        admin_(make_client(connect, fault_options())) {
    for (std::size_t i = 0; i < n; ++i) {
      auto p = std::make_unique<Participant>();
      p->name = std::string(recipe_name(recipe)) + "-" + std::to_string(i);
      auto o = fault_options();
      // ZKR_TEST_LOG_DIR: each participant's client logs at debug level to <dir>/<name>.log (diagnosis).
      if (const char* dir = std::getenv("ZKR_TEST_LOG_DIR"); dir && *dir) {
        o.logger = std::make_shared<spdlog::logger>(
            p->name,
            std::make_shared<spdlog::sinks::basic_file_sink_mt>(std::string(dir) + "/" + p->name + ".log"));
        o.logger->set_level(spdlog::level::debug);
        o.logger->flush_on(spdlog::level::debug);
      }
      p->client = make_client(connect, o);
      ps_.push_back(std::move(p));
    }
  }
  ~Election() { stop(); }

  void start() {
    for (std::size_t i = 0; i < ps_.size(); ++i) {
      auto& p = *ps_[i];
      if (recipe_ == Recipe::selector) {
        p.selector = std::make_unique<LeaderSelector>(*p.client, path_, std::make_shared<Term>(*this, i));
        p.selector->set_id(p.name);
        p.selector->auto_requeue();
        p.selector->start();
      } else {
        p.thread = std::thread([this, i] { run_latch(i); });
      }
    }
  }

  /// Closes every participant (bounded: a term ends at its stop request or within 200 ms) and its client.
  /// False if a latch thread did not finish in time.
  bool stop() {
    if (stopped_) return true;
    stopped_ = true;
    stopping_ = true;
    hold_ = false;
    bool ok = true;
    if (recipe_ == Recipe::selector) {
      for (auto& p : ps_) {
        error_code ec;
        if (p->selector) p->selector->close(ec);
      }
    } else {
      ok = eventually([&] { return latch_threads_done_.load() == ps_.size(); }, 40s);
      if (!ok)
        for (auto& p : ps_) p->client->close();
      for (auto& p : ps_) p->thread.join();
    }
    for (auto& p : ps_) p->client->close();
    admin_->close();
    return ok;
  }

  void hold(bool on) { hold_ = on; }
  std::size_t size() const { return ps_.size(); }
  CuratorFramework& client(std::size_t i) { return *ps_[i]->client; }
  std::size_t terms() const { return terms_.load(); }
  std::size_t terms(std::size_t i) const { return ps_[i]->terms.load(); }
  /// Terms whose participant learned that its grant was lost (its session expired under it).
  std::size_t losses(std::size_t i) const { return ps_[i]->losses.load(); }
  std::size_t losses() const {
    std::size_t n = 0;
    for (auto& p : ps_) n += p->losses.load();
    return n;
  }
  std::int64_t token(std::size_t i) const { return ps_[i]->token.load(); }
  std::size_t grant(std::size_t i) const { return ps_[i]->grant.load(); }

  /// Participant `i` is in a term whose grant is held.
  bool leading(std::size_t i) const { return ps_[i]->leading.load(); }
  /// The participant in a term whose grant is held (wait for one while holding), if any.
  std::optional<std::size_t> leader() const {
    for (std::size_t i = 0; i < ps_.size(); ++i)
      if (leading(i)) return i;
    return std::nullopt;
  }
  std::optional<std::size_t> wait_leader(std::chrono::milliseconds limit = 30s) const {
    std::optional<std::size_t> l;
    eventually([&] { return (l = leader()).has_value(); }, limit);
    return l;
  }

  /// Leadership goes on: every participant leads at least once more within `limit` (so every participant that
  /// lost its session is back in the election). On failure the state of the election is printed.
  bool progress(std::chrono::milliseconds limit = 30s) const {
    std::vector<std::size_t> before;
    for (auto& p : ps_) before.push_back(p->terms.load());
    const bool ok = eventually(
        [&] {
          for (std::size_t i = 0; i < ps_.size(); ++i)
            if (ps_[i]->terms.load() <= before[i]) return false;
          return true;
        },
        limit);
    if (!ok)
      std::printf("no progress within %lld ms:\n%s", static_cast<long long>(limit.count()),
                  describe().c_str());
    return ok;
  }

  /// Each participant (session, terms, whether it leads) and each node of the election (owner session).
  std::string describe() const {
    std::ostringstream out;
    out << std::hex;
    for (auto& p : ps_)
      out << "  " << p->name << ": session 0x" << p->client->session_id() << std::dec << ", "
          << p->terms.load() << " terms, leading " << p->leading.load() << ", in a term " << p->in_term.load()
          << std::hex << '\n';
    error_code ec;
    auto nodes = admin_->get_children(path_, {}, ec);
    std::sort(nodes.begin(), nodes.end(), [](const std::string& a, const std::string& b) {
      return a.substr(a.size() - 10) < b.substr(b.size() - 10);
    });
    if (ec) out << "  nodes: " << ec.message() << '\n';
    for (auto& n : nodes) {
      error_code e;
      const auto d = admin_->get_data(path_ + "/" + n, {}, e);
      out << "  node " << n << " (" << d.data << "): owner 0x" << d.stat.ephemeral_owner << '\n';
    }
    return out.str();
  }

 private:
  struct Participant {
    std::string name;
    std::unique_ptr<CuratorFramework> client;
    std::unique_ptr<LeaderSelector> selector;
    std::thread thread;
    std::atomic<std::size_t> terms{0}, losses{0}, grant{0};
    std::atomic<std::int64_t> token{0};
    std::atomic<bool> leading{false}, in_term{false};
  };

  class Term : public LeaderSelectorListenerAdapter {
   public:
    Term(Election& e, std::size_t i) : e_(e), i_(i) {}
    void take_leadership(CuratorFramework&, Leadership& l) override {
      e_.term(
          i_, l.fencing_token(), [&] { return l.status(); }, [&] { return l.stop_requested(); });
    }

   private:
    Election& e_;
    std::size_t i_;
  };

  /// One term of participant `i` with grant `token`: `status` reads the grant's loss signal, `stop_requested`
  /// whether the recipe asks the term to end (the selector's stop token).
  void term(std::size_t i, std::int64_t token, const std::function<LeaseStatus()>& status,
            const std::function<bool()>& stop_requested) {
    auto& p = *ps_[i];
    const auto id = checker_.begin(path_, p.name, GrantChecker::Kind::exclusive, token);
    p.in_term = true;
    p.token = token;
    p.grant = id;
    ++p.terms;
    ++terms_;
    const auto write = [&](const char* when) {
      if (status() == LeaseStatus::held && !checker_.fenced_write(path_, token) &&
          status() == LeaseStatus::held)
        checker_.violation(p.name + ": fenced write at the " + when + " of its term with token " +
                           std::to_string(token) + " rejected while its grant is held");
    };
    write("start");
    p.leading = status() == LeaseStatus::held;
    thread_local std::mt19937 rng(static_cast<unsigned>(i) * 7919u + 1u);
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2 + rng() % 20);
    const auto hold_limit = std::chrono::steady_clock::now() + 60s;
    while (!stop_requested() && status() == LeaseStatus::held &&
           (std::chrono::steady_clock::now() < until ||
            (hold_ && std::chrono::steady_clock::now() < hold_limit)))
      std::this_thread::sleep_for(1ms);
    write("end");
    p.leading = false;
    checker_.end(id);  // the leader stops acting as one here
    if (stopping_) {
      p.in_term = false;
      return;
    }
    // Connection trouble ended the term: learn how it ends (bounded). The selector's stop request and the
    // grant's loss signal follow the same connection event, the signal possibly a moment later.
    if (stop_requested()) eventually([&] { return status() != LeaseStatus::held; }, 1s);
    eventually([&] { return stopping_ || status() != LeaseStatus::maybe_lost; }, 30s);
    if (status() == LeaseStatus::lost) ++p.losses;
    p.in_term = false;
  }

  void run_latch(std::size_t i) {
    auto& p = *ps_[i];
    std::unique_ptr<LeaderLatch> latch;
    while (!stopping_) {
      error_code ec;
      if (!latch) {
        latch = std::make_unique<LeaderLatch>(*p.client, path_, p.name);
        latch->start(ec);
      }
      if (!latch->await(200ms)) continue;
      const auto node = latch->our_path();
      const auto token = latch->fencing_token();
      if (token == 0 || node.empty()) continue;
      // The grant is this node's: a new node (made after a session expiry) means it was lost.
      term(
          i, token, [&] { return latch->our_path() != node ? LeaseStatus::lost : latch->lease_status(); },
          [] { return false; });
      latch->close(ec);  // deletes the node in the background; the next latch queues at the tail
      latch.reset();
    }
    if (latch) {
      error_code ec;
      latch->close(ec);
    }
    ++latch_threads_done_;
  }

  Recipe recipe_;
  GrantChecker& checker_;
  std::string path_;
  std::unique_ptr<CuratorFramework> admin_;  // for `describe`
  std::vector<std::unique_ptr<Participant>> ps_;
  std::atomic<bool> hold_{false}, stopping_{false};
  bool stopped_ = false;
  std::atomic<std::size_t> terms_{0}, latch_threads_done_{0};
};

/// The scenarios (a)-(f), over `recipe`'s participants.
void run_election_faults(Recipe recipe) {
  zkr::testing::TestingCluster cluster(3);
  const std::string connect = cluster.connect_string();
  const std::string path = std::string("/fault/election-") + recipe_name(recipe);
  GrantChecker checker;
  Election election(recipe, connect, checker, path, 3);
  election.start();
  REQUIRE(election.progress());
  const auto progress = [&](std::chrono::milliseconds limit = 30s) {
    if (election.progress(limit)) return true;
    every_member_agrees(cluster, path);  // prints the members' views if one diverged
    return false;
  };

  // (a) kill the server the leader is connected to, (b) one it is not connected to; then bring it back.
  const auto kill_member = [&](bool the_leaders) {
    election.hold(true);
    const auto leader = election.wait_leader();
    REQUIRE(leader);
    std::optional<std::size_t> serving;  // (a member slow to answer `cons` is asked again)
    REQUIRE(eventually(
        [&] { return (serving = serving_member(cluster, election.client(*leader))).has_value(); }, 20s));
    const std::size_t member = the_leaders ? *serving : (*serving + 1) % cluster.size();
    checker.fault("kill member " + std::to_string(member) +
                  (the_leaders ? ", the leader's server" : ", not the leader's server"));
    cluster.kill(member);
    // The leader's own connection broke: its term ends although the test still holds it (SUSPENDED).
    if (the_leaders) CHECK(eventually([&] { return !election.leading(*leader); }, 20s));
    election.hold(false);
    CHECK(progress());
    start_member_quietly(cluster, member, [&](bool on) {
      election.hold(on);  // the leader keeps its term, the others wait: no write
      if (on) REQUIRE(election.wait_leader());
    });
    CHECK(progress());
  };
  kill_member(true);
  kill_member(false);
  // (c) stop and restart the whole ensemble.
  checker.fault("restart ensemble");
  WARN(restart_ensemble(cluster));
  CHECK(progress(60s));
  // (d) expire the leader's session: it learns that it lost, another leads, its late write is fenced, and it
  // leads again in its new session.
  {
    election.hold(true);
    const auto leader = election.wait_leader();
    REQUIRE(leader);
    const auto token = election.token(*leader);
    const auto losses = election.losses(*leader);
    checker.fault("expire the leader's session");
    const auto t_fault = GrantChecker::Clock::now();
    election.client(*leader).inject_session_expiration();
    checker.mark_lost(election.grant(*leader), t_fault);
    CHECK(eventually([&] { return election.losses(*leader) > losses; }, 20s));
    election.hold(false);
    CHECK(progress());
    CHECK_FALSE(checker.fenced_write(path, token));  // the late write of the lost leader
  }
  // (e) expire a follower's session (its node queued behind the leader): it joins again in its new session.
  {
    election.hold(true);
    const auto leader = election.wait_leader();
    REQUIRE(leader);
    const std::size_t follower = (*leader + 1) % election.size();
    auto admin = make_client(connect, fault_options());
    const bool all_queued = eventually(
        [&] {
          error_code ec;
          return admin->get_children(path, {}, ec).size() == election.size() && !ec;
        },
        10s);
    if (!all_queued) {
      std::printf("not every participant queued:\n%s", election.describe().c_str());
      every_member_agrees(cluster, path);
    }
    CHECK(all_queued);
    const auto session = election.client(follower).session_id();
    checker.fault("expire a follower's session");
    election.client(follower).inject_session_expiration();
    CHECK(eventually([&] { return election.client(follower).session_id() != session; }, 20s));
    election.hold(false);
    CHECK(progress());
  }
  // (f) freeze a leader process past its session timeout: the others lead meanwhile; once resumed it learns
  // that it lost, its late write is fenced, and it is back in the election.
  {
    ChildProcess child(election_child_test_name, {{"ZKR_ELECTION_CHILD_CONNECT", connect},
                                                  {"ZKR_ELECTION_CHILD_PATH", path},
                                                  {"ZKR_ELECTION_CHILD_RECIPE", recipe_name(recipe)}});
    const auto g = freeze_child_holder(child, checker, path, "child leading ", "child",
                                       "SIGSTOP the leader process past its session timeout");
    CHECK(progress(child_session_timeout + 30s));  // the server expired the frozen session
    REQUIRE(::kill(child.pid(), SIGCONT) == 0);
    CHECK(child.ask_until("status", "child status lost", 20s));
    CHECK_FALSE(checker.fenced_write(path, g.token));  // the frozen leader's late write
    checker.end(g.id);
    CHECK(child.ask_until("rejoined", "child rejoined yes", 20s));  // queued again, with a new node
    child.send("quit");
    CHECK(child.line(20s) == "child closed");
  }
  CHECK(progress());

  const bool stopped = election.stop();
  CHECK(stopped);
  WARN(recipe_name(recipe) << " election: " << election.terms() << " terms, " << election.losses()
                           << " of them ended by a session loss the leader learned of");
  CHECK(no_nodes_left(connect, path));
  CHECK(every_member_agrees(cluster, path));
  const auto violations = checker.report(std::string("election fault (") + recipe_name(recipe) + "):");
  WARN(checker.summary());
  CHECK(violations.empty());
  CHECK(checker.faults() == 6);  // (a)-(f)
}

/// The child's selector term: the first term prints its token and holds until released; it records the
/// grant's loss signal until it ends. Later terms hold until released too.
class ChildTerm : public LeaderSelectorListenerAdapter {
 public:
  std::atomic<int> terms{0};
  std::atomic<LeaseStatus> first_status{LeaseStatus::released};
  std::atomic<bool> release{false};
  void take_leadership(CuratorFramework&, Leadership& l) override {
    const bool first = ++terms == 1;
    if (first) {
      first_status = l.status();
      std::printf("child leading %lld\n", static_cast<long long>(l.fencing_token()));
      std::fflush(stdout);
    }
    while (!l.stop_requested() && !release) {
      if (first) first_status = l.status();
      std::this_thread::sleep_for(5ms);
    }
    // The loss signal may follow the stop request by a moment.
    if (first)
      eventually(
          [&] {
            first_status = l.status();
            return first_status != LeaseStatus::held && first_status != LeaseStatus::maybe_lost;
          },
          5s);
  }
};

}  // namespace

// The leader process of scenario (f): run only as a child of the election fault tests (hidden tag). It joins
// the election, and answers "status" (the loss signal of its first leadership), "rejoined" (it is queued
// again with a new node) and "quit" (it leaves the election).
TEST_CASE(election_child_test_name, "[.fault-child]") {
  const char* connect = std::getenv("ZKR_ELECTION_CHILD_CONNECT");
  const char* path = std::getenv("ZKR_ELECTION_CHILD_PATH");
  const char* recipe = std::getenv("ZKR_ELECTION_CHILD_RECIPE");
  if (!connect || !path || !recipe) return;
  auto client = make_client(connect, fault_options(child_session_timeout));
  std::function<std::string()> status, rejoined;
  std::function<void()> quit;
  std::unique_ptr<LeaderLatch> latch;
  std::unique_ptr<LeaderSelector> selector;
  std::string first_node;
  if (std::string(recipe) == "latch") {
    latch = std::make_unique<LeaderLatch>(*client, path, "child");
    latch->start();
    if (!latch->await(60s)) return;
    first_node = latch->our_path();
    std::printf("child leading %lld\n", static_cast<long long>(latch->fencing_token()));
    std::fflush(stdout);
    // A new node (made after a session expiry) means the first leadership was lost.
    status = [&] {
      return std::string(latch->our_path() != first_node ? "lost" : to_string(latch->lease_status()));
    };
    rejoined = [&] {
      return std::string(!latch->our_path().empty() && latch->our_path() != first_node ? "yes" : "no");
    };
    quit = [&] { latch->close(); };
  } else {
    auto term = std::make_shared<ChildTerm>();
    selector = std::make_unique<LeaderSelector>(*client, path, term);
    selector->set_id("child");
    selector->auto_requeue();
    selector->start();
    status = [term] { return std::string(to_string(term->first_status.load())); };
    rejoined = [&, term] {
      if (term->terms > 1) return std::string("yes");
      error_code ec;
      const auto ps = selector->get_participants(ec);
      return std::string(std::any_of(ps.begin(), ps.end(), [](auto& p) { return p.id == "child"; }) ? "yes"
                                                                                                    : "no");
    };
    quit = [&, term] {
      term->release = true;
      selector->close();
    };
  }
  std::string cmd;
  while (std::getline(std::cin, cmd)) {
    if (cmd == "status") {
      std::printf("child status %s\n", status().c_str());
    } else if (cmd == "rejoined") {
      std::printf("child rejoined %s\n", rejoined().c_str());
    } else {
      quit();
      client->close();  // ends the session: nothing of ours is left behind
      std::printf("child closed\n");
      std::fflush(stdout);
      break;
    }
    std::fflush(stdout);
  }
}

TEST_CASE(
    "fault: LeaderSelector terms stay exclusive and go on through server kills, an ensemble "
    "restart, expiries and a frozen leader",
    "[fault][election]") {
  run_election_faults(Recipe::selector);
}

TEST_CASE(
    "fault: LeaderLatch leadership stays exclusive and goes on through server kills, an ensemble "
    "restart, expiries and a frozen leader",
    "[fault][election]") {
  run_election_faults(Recipe::latch);
}
