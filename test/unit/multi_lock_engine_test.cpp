// Unit tests (no server) of the path-based multi-lock's acquire (`MultiAcquire`, docs/multi-lock.md) and of
// its release, over FakeCore: a fault, a session event or a cancellation injected at each step of the batched
// path (one transaction queues us everywhere, listings pipelined behind it, later queue places given back
// before a wait). As in the engine's tests, cleanup is checked inside the completion: a cancelled, timed-out
// or failed acquire must have deleted every node of its own before it completes.

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <vector>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/multi_acquire.hpp>
#include <zkr/recipes/inter_process_multi_lock.hpp>

#include "fault_steps.hpp"

namespace {

using namespace std::chrono_literals;
using fake::FakeCore;
using fake::Op;
using zkr::error_code;
using zkr::MultiLease;
using zkr::zk_errc;
using Clock = std::chrono::steady_clock;
using CancelPtr = std::shared_ptr<zkr::detail::CancelState>;

const std::vector<std::string> dirs = {"/multi/a", "/multi/b", "/multi/c"};

struct Outcome {
  int calls = 0;
  error_code ec;
  MultiLease lease;
  std::vector<std::vector<std::string>> seen;  ///< children of every lock directory at completion
  bool done() const { return calls > 0; }
};

struct Fixture {
  std::shared_ptr<FakeCore> core = std::make_shared<FakeCore>();
  std::shared_ptr<zkr::detail::MultiShared> shared = zkr::detail::make_multi_shared(core, dirs);

  Fixture() = default;
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;
  ~Fixture() { core->shutdown(); }

  void make_dirs() {
    for (const auto& d : dirs) core->put(d, zkr::CreateMode::container);
    core->clear_log();
  }

  std::shared_ptr<Outcome> start(std::optional<Clock::time_point> deadline = std::nullopt,
                                 CancelPtr cancel = nullptr) {
    auto out = std::make_shared<Outcome>();
    boost::asio::post(core->context(), [this, out, deadline, cancel]() mutable {
      zkr::detail::multi_acquire(shared, deadline, cancel, [c = core, out](error_code ec, MultiLease l) {
        ++out->calls;
        out->ec = ec;
        out->lease = std::move(l);
        for (const auto& d : dirs)
          out->seen.push_back(c->has(d) ? c->children(d) : std::vector<std::string>{});
      });
    });
    return out;
  }

  bool wait(const Outcome& o, std::chrono::milliseconds limit = 5s) {
    return core->run_until([&] { return o.done(); }, limit);
  }

  /// Starts an acquire without deadline and expects it to be granted, each lease the sole node of its lock.
  std::shared_ptr<Outcome> acquire_granted();

  error_code release(MultiLease& l) {
    const auto ec = fake::run_release(*core, l);
    REQUIRE(ec);
    return *ec;
  }

  /// A holder of another session in `dir`, queued now.
  std::string other(const std::string& dir) {
    return core->put(zkr::make_path(dir, "_c_10000000-0000-4000-8000-000000000000-lock-"),
                     zkr::CreateMode::ephemeral_sequential, FakeCore::other_session);
  }

  /// Children of `dir` owned by this client's current session.
  std::vector<std::string> ours(const std::string& dir) const {
    std::vector<std::string> out;
    if (!core->has(dir)) return out;
    for (auto& n : core->children(dir))
      if (core->stat(zkr::make_path(dir, n))->ephemeral_owner == core->session_id()) out.push_back(n);
    return out;
  }
  std::size_t all_children() const {
    std::size_t n = 0;
    for (const auto& d : dirs)
      if (core->has(d)) n += core->children(d).size();
    return n;
  }
};

/// Every lease of `l` is the only node of its lock directory, and its fencing token is its node's czxid.
void check_sole_holder(const FakeCore& core, const MultiLease& l) {
  REQUIRE(l.size() == dirs.size());
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    INFO("lock " << dirs[i]);
    const auto& path = l.leases()[i].node_path();
    CHECK(zkr::parent_path(path) == dirs[i]);
    CHECK(core.children(dirs[i]) == std::vector<std::string>{zkr::node_name(path)});
    REQUIRE(core.stat(path));
    CHECK(l.leases()[i].fencing_token() == core.stat(path)->czxid);
  }
}

std::shared_ptr<Outcome> Fixture::acquire_granted() {
  auto out = start();
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  REQUIRE_FALSE(out->ec);
  check_sole_holder(*core, out->lease);
  return out;
}

// ===========================================================================================================
// The batched path

TEST_CASE_METHOD(Fixture, "multi-lock engine: free locks cost one transaction and one listing per lock",
                 "[multi-engine]") {
  make_dirs();
  auto out = acquire_granted();
  INFO(core->describe_log());
  CHECK(core->count(Op::multi) == 1);
  CHECK(core->count(Op::get_children) == dirs.size());
  CHECK(core->count_all() == 1 + dirs.size());
  // One transaction, one zxid: every node has the same czxid, and it is every lease's token.
  const auto tokens = out->lease.fencing_tokens();
  CHECK(std::all_of(tokens.begin(), tokens.end(), [&](auto t) { return t == tokens.front(); }));
  // The transaction's scratch node is gone with it.
  for (const auto& d : dirs) CHECK(core->children(d).size() == 1);

  core->clear_log();
  CHECK_FALSE(release(out->lease));
  CHECK(core->count_all() == 1);  // one transaction deletes them all
  CHECK(core->count(Op::multi) == 1);
  CHECK(all_children() == 0);
}

TEST_CASE_METHOD(Fixture, "multi-lock engine: missing directories are made as containers, then queued again",
                 "[multi-engine]") {
  auto out = start();  // no directory exists: the transaction fails with no-node
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  REQUIRE_FALSE(out->ec);
  check_sole_holder(*core, out->lease);
  CHECK(core->count(Op::multi) == 2);
  CHECK(core->count(Op::make_dirs) == 1);  // the three lock directories and /multi, in one batch
  CHECK(core->count(Op::create) == 0);
  for (const auto& d : dirs) CHECK(core->stat(d)->ephemeral_owner == 0);
}

TEST_CASE_METHOD(Fixture, "multi-lock engine: the directories failing to be made -> lock by lock",
                 "[multi-engine][fault]") {
  core->fail_next(Op::make_dirs, zk_errc::no_auth);
  auto out = acquire_granted();
  INFO(core->describe_log());
  CHECK(core->count(Op::make_dirs) == 1);
  CHECK(core->count(Op::multi) == 1);
  CHECK(core->count(Op::create) == dirs.size());  // the engine, lock by lock, with its container parents
}

TEST_CASE_METHOD(Fixture,
                 "multi-lock engine: cancelled while the directories are made -> stopped, nothing left",
                 "[multi-engine][fault][cancel]") {
  auto cancel = std::make_shared<zkr::detail::CancelState>();
  core->before_next(Op::make_dirs, [&] { cancel->request(); });
  auto out = start(std::nullopt, cancel);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  CHECK(out->ec == boost::asio::error::operation_aborted);
  CHECK(core->count(Op::multi) == 1);  // not queued again
  for (const auto& seen : out->seen) CHECK(seen.empty());
}

TEST_CASE_METHOD(Fixture, "multi-lock engine: a taken lock gives back the later queue places before the wait",
                 "[multi-engine]") {
  make_dirs();
  const auto holder = other(dirs[1]);
  auto out = start();
  // Queued in a, b and c at once; b is taken: a is held, c given back, and we wait in b behind the holder.
  REQUIRE(core->run_until([&] { return core->watch_count(holder) == 1; }));
  core->settle();
  CHECK(ours(dirs[0]).size() == 1);
  CHECK(ours(dirs[1]).size() == 1);
  CHECK(ours(dirs[2]).empty());
  CHECK_FALSE(out->done());
  const auto waiting_in_b = ours(dirs[1]).front();
  core->erase(holder);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  REQUIRE_FALSE(out->ec);
  check_sole_holder(*core, out->lease);
  CHECK(zkr::node_name(out->lease.leases()[1].node_path()) == waiting_in_b);  // kept its place in b's queue
}

// ===========================================================================================================
// Faults at each step

namespace {

struct Run {
  std::shared_ptr<Outcome> out;
  std::vector<std::string> others;  ///< names of the nodes the test put (other clients')
};

}  // namespace

TEST_CASE("multi-lock engine: a fault at every step -> that error and nothing left, or every lock granted",
          "[multi][fault]") {
  const bool contended = GENERATE(false, true);
  CAPTURE(contended);
  fake::for_each_failed_step<Fixture>(
      [contended](Fixture& f) {
        f.make_dirs();
        std::string holder;
        if (contended)
          holder = f.other(dirs[1]);  // b is taken: the later place is given back, b is waited on
        auto out = f.start();
        f.core->settle();
        if (!holder.empty() && !out->done()) f.core->erase(holder);
        f.wait(*out);
        return Run{out, holder.empty() ? std::vector<std::string>{} : std::vector{zkr::node_name(holder)}};
      },
      {zk_errc::connection_loss, zk_errc::no_auth},
      [](Fixture& f, const Run& run, error_code code, const fake::FaultStep&) {
        const auto& out = *run.out;
        REQUIRE(out.seen.size() == dirs.size());
        for (std::size_t i = 0; i < dirs.size(); ++i) {
          INFO("lock " << dirs[i]);
          auto mine = out.seen[i];
          std::erase_if(mine, [&](const std::string& n) {
            return std::find(run.others.begin(), run.others.end(), n) != run.others.end();
          });
          if (out.ec) {
            CHECK(mine.empty());
          } else {
            REQUIRE(out.lease.size() == dirs.size());
            CHECK(mine == std::vector<std::string>{zkr::node_name(out.lease.leases()[i].node_path())});
          }
        }
        if (out.ec) CHECK(out.ec == code);
        f.core->settle();
        for (const auto& d : dirs) CHECK(f.ours(d).size() == (out.ec ? 0u : 1u));
      },
      fake::unkept_delete);
}

TEST_CASE_METHOD(Fixture, "multi-lock engine: a transaction lost before the server saw it -> lock by lock",
                 "[multi-engine][fault]") {
  make_dirs();
  core->fail_next(Op::multi, zk_errc::connection_loss);
  auto out = acquire_granted();
  INFO(core->describe_log());
  CHECK(core->count(Op::multi) == 1);
  CHECK(core->count(Op::create) == dirs.size());  // the engine, lock by lock
}

TEST_CASE_METHOD(Fixture,
                 "multi-lock engine: a transaction applied whose reply was lost leaves no node behind",
                 "[multi-engine][fault]") {
  make_dirs();
  core->fail_next_applied(Op::multi, zk_errc::connection_loss);
  // The transaction's nodes sort ahead of the engine's: they are found by their protected prefixes and
  // deleted, and that is what lets the engine's nodes through.
  auto out = acquire_granted();
  INFO(core->describe_log());
  CHECK(core->count(Op::multi) == 1);
  core->settle();
  CHECK(all_children() == dirs.size());
}

TEST_CASE_METHOD(Fixture,
                 "multi-lock engine: a transaction committed twice by a retry leaves no orphan in any lock",
                 "[multi-engine][fault]") {
  // The core retried the transaction after losing the reply of a try that committed: every lock holds two
  // nodes of ours with the same protected prefix. Lock b is taken, so the scan stops there; the first try's
  // node in c (after the lock we wait for) must go too, or we would later queue behind it.
  make_dirs();
  const auto holder = other(dirs[1]);
  core->apply_next_multi_twice();
  auto out = start();
  REQUIRE(core->run_until([&] { return core->watch_count(holder) == 1; }));
  core->settle();
  INFO(core->describe_log());
  CHECK(ours(dirs[0]).size() == 1);
  CHECK(ours(dirs[1]).size() == 1);
  CHECK(ours(dirs[2]).empty());  // no node of ours in a later lock while we wait
  core->erase(holder);
  REQUIRE(wait(*out, 2s));
  REQUIRE_FALSE(out->ec);
  check_sole_holder(*core, out->lease);
}

TEST_CASE_METHOD(
    Fixture, "multi-lock engine: cancelled as a transaction committed twice returns -> both tries deleted",
    "[multi-engine][fault][cancel]") {
  make_dirs();
  auto cancel = std::make_shared<zkr::detail::CancelState>();
  core->apply_next_multi_twice();
  core->before_next(Op::multi, [&] { cancel->request(); });
  auto out = start(std::nullopt, cancel);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  CHECK(out->ec == boost::asio::error::operation_aborted);
  for (const auto& seen : out->seen) CHECK(seen.empty());  // inside the completion: nothing of ours is left
}

TEST_CASE_METHOD(Fixture,
                 "multi-lock engine: a failed listing is listed again, and failing twice is that error",
                 "[multi-engine][fault]") {
  make_dirs();
  core->fail_nth(Op::get_children, 2,
                 zk_errc::no_auth);  // one of the listings pipelined behind the transaction
  SECTION("the listing after the transaction's reply succeeds") {
    auto out = acquire_granted();
    INFO(core->describe_log());
    CHECK(core->count(Op::get_children) == 2 * dirs.size());
  }
  SECTION("it fails too -> that error, every node deleted first") {
    core->fail_nth(Op::get_children, 5, zk_errc::no_auth);
    auto out = start();
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    CHECK(out->ec == zk_errc::no_auth);
    CHECK_FALSE(out->lease.valid());
    for (const auto& s : out->seen) CHECK(s.empty());
  }
}

TEST_CASE_METHOD(Fixture,
                 "multi-lock engine: the session expires after the transaction -> new nodes, none of the old",
                 "[multi-engine][session]") {
  make_dirs();
  const auto old_session = core->session_id();
  core->before_next(Op::get_children, [&] { core->expire_session(); });
  auto out = acquire_granted();
  INFO(core->describe_log());
  CHECK(core->session_id() != old_session);
  for (const auto& l : out->lease.leases())
    CHECK(core->stat(l.node_path())->ephemeral_owner == core->session_id());
}

TEST_CASE_METHOD(
    Fixture,
    "multi-lock engine: the session expires while waiting in b -> a is taken again, never two holders",
    "[multi-engine][session]") {
  // We hold a and wait in b. The session expires: our node in a goes, another client takes a. The engine gets
  // b under the new session; the lease on a (of the old session) grants nothing, so the acquire must not
  // succeed with it: it gives b back and waits in a.
  make_dirs();
  const auto holder_b = other(dirs[1]);
  auto out = start();
  REQUIRE(core->run_until([&] { return core->watch_count(holder_b) == 1; }));
  core->settle();
  REQUIRE(ours(dirs[0]).size() == 1);
  core->expire_session();
  const auto holder_a = other(dirs[0]);
  core->erase(holder_b);
  core->run_until([&] { return out->done() || core->watch_count(holder_a) == 1; });
  core->settle();
  INFO(core->describe_log());
  REQUIRE_FALSE(out->done());    // a is someone else's
  CHECK(ours(dirs[1]).empty());  // no node in a later lock while waiting for a
  CHECK(ours(dirs[2]).empty());
  core->erase(holder_a);
  REQUIRE(wait(*out));
  REQUIRE_FALSE(out->ec);
  check_sole_holder(*core, out->lease);
  for (const auto& l : out->lease.leases())
    CHECK(core->stat(l.node_path())->ephemeral_owner == core->session_id());
}

TEST_CASE_METHOD(Fixture,
                 "multi-lock engine: releasing when the transaction fails -> one guaranteed delete each",
                 "[multi-engine][fault]") {
  make_dirs();
  auto out = acquire_granted();
  core->clear_log();
  core->fail_next(Op::multi, zk_errc::connection_loss);
  CHECK_FALSE(release(out->lease));
  INFO(core->describe_log());
  CHECK(core->count(Op::remove) == dirs.size());
  CHECK(all_children() == 0);
}

// ===========================================================================================================
// Cancellation and timeouts

TEST_CASE_METHOD(Fixture, "multi-lock engine: cancellation at each step deletes every node before completing",
                 "[multi-engine][cancel]") {
  make_dirs();
  auto cancel = std::make_shared<zkr::detail::CancelState>();
  std::string holder;
  std::shared_ptr<Outcome> out;
  SECTION("while the transaction is in flight") {
    core->before_next(Op::multi, [&] { cancel->request(); });
    out = start(std::nullopt, cancel);
  }
  SECTION("while listing") {
    core->before_next(Op::get_children, [&] { cancel->request(); });
    out = start(std::nullopt, cancel);
  }
  SECTION("while waiting in the second lock, holding the first") {
    holder = other(dirs[1]);
    out = start(std::nullopt, cancel);
    REQUIRE(core->run_until([&] { return core->watch_count(holder) == 1; }));
    core->settle();
    boost::asio::post(core->context(), [cancel] { cancel->request(); });
  }
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  CHECK(out->ec == boost::asio::error::operation_aborted);
  CHECK_FALSE(out->lease.valid());
  for (std::size_t i = 0; i < dirs.size(); ++i) {
    INFO("lock " << dirs[i]);
    CHECK(out->seen[i] == (i == 1 && !holder.empty() ? std::vector<std::string>{zkr::node_name(holder)}
                                                     : std::vector<std::string>{}));
  }
  CHECK(core->watch_count() == 0);
  core->run_for(20ms);
  CHECK(out->calls == 1);
}

TEST_CASE_METHOD(Fixture,
                 "multi-lock engine: a timeout while a lock is taken -> empty lease, no error, nothing left",
                 "[multi-engine][timeout]") {
  make_dirs();
  const auto holder = other(dirs[2]);
  auto out = start(Clock::now() + 50ms);
  REQUIRE(wait(*out, 5s));
  INFO(core->describe_log());
  CHECK_FALSE(out->ec);
  CHECK_FALSE(out->lease.valid());
  CHECK(out->seen[0].empty());
  CHECK(out->seen[1].empty());
  CHECK(out->seen[2] == std::vector<std::string>{zkr::node_name(holder)});
}

}  // namespace
