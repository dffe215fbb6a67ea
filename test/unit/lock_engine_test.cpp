// Unit tests (no server) of the lock engine (`LockInternals::Attempt`) and of the semaphore state machine
// (`SemAcquire`), over FakeCore: round trips counted from the request log, and a fault, a session event or a
// cancellation injected at every step. Cleanup is checked *inside* the completion (the tree as the completion
// saw it), since a cancelled or failed operation must delete its nodes before it completes.

#include <algorithm>
#include <atomic>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>
#include <zkr/drivers/read_write_lock_driver.hpp>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/lease_core.hpp>
#include <zkr/recipes/detail/lock_internals.hpp>
#include <zkr/recipes/inter_process_semaphore_v2.hpp>

#include "fake_core.hpp"

namespace {

using namespace std::chrono_literals;
using fake::FakeCore;
using fake::Op;
using zkr::errc;
using zkr::error_code;
using zkr::Lease;
using zkr::LeaseStatus;
using zkr::zk_errc;
using Clock = std::chrono::steady_clock;
using CancelPtr = std::shared_ptr<zkr::detail::CancelState>;

const std::string dir = "/locks/m";
const std::string sem = "/sem";
const std::string sem_locks = "/sem/locks";
const std::string sem_leases = "/sem/leases";

/// What one acquire completed with, and the tree its completion saw.
struct Outcome {
  int calls = 0;
  error_code ec;
  Lease lease;
  std::vector<Lease> leases;
  std::vector<std::string> seen;   ///< children of the lock directory (or the lease directory) at completion
  std::vector<std::string> seen2;  ///< children of the semaphore's lock directory at completion
  std::size_t watches_seen = 0;    ///< watches registered at completion
  bool on_io_thread = false;
  bool done() const { return calls > 0; }
};

struct Fixture {
  std::shared_ptr<FakeCore> core = std::make_shared<FakeCore>();

  Fixture() = default;
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;
  ~Fixture() { core->shutdown(); }

  std::shared_ptr<zkr::detail::LockInternals> engine(std::size_t max_leases = 1) {
    return std::make_shared<zkr::detail::LockInternals>(core, dir, "lock-", max_leases, nullptr);
  }

  /// An engine over `PrewatchLockDriver`.
  std::shared_ptr<zkr::detail::LockInternals> prewatch_engine(std::size_t max_leases = 1) {
    return std::make_shared<zkr::detail::LockInternals>(core, dir, "lock-", max_leases,
                                                        std::make_shared<zkr::PrewatchLockDriver>());
  }

  /// Starts one engine attempt on the I/O thread.
  std::shared_ptr<Outcome> start(const std::shared_ptr<zkr::detail::LockInternals>& e,
                                 zkr::detail::AcquireOptions o = {}, CancelPtr cancel = nullptr) {
    auto out = std::make_shared<Outcome>();
    boost::asio::post(core->context(), [c = core, e, out, o = std::move(o), cancel]() mutable {
      e->attempt_lock(std::move(o), cancel, [c, out](error_code ec, Lease l) {
        ++out->calls;
        out->ec = ec;
        out->lease = std::move(l);
        out->seen = c->children(dir);
        out->watches_seen = c->watch_count();
        out->on_io_thread = c->running_in_io_thread();
      });
    });
    return out;
  }

  std::shared_ptr<zkr::detail::SemaphoreShared> semaphore(int max_leases) {
    return zkr::detail::make_semaphore_shared(core, sem, max_leases);
  }

  /// Starts one semaphore acquire of `qty` leases on the I/O thread.
  std::shared_ptr<Outcome> sem_start(const std::shared_ptr<zkr::detail::SemaphoreShared>& s, int qty,
                                     std::optional<Clock::time_point> deadline = std::nullopt,
                                     CancelPtr cancel = nullptr) {
    auto out = std::make_shared<Outcome>();
    boost::asio::post(core->context(), [c = core, s, qty, deadline, out, cancel]() mutable {
      zkr::detail::semaphore_acquire(s, qty, deadline, cancel, [c, out](error_code ec, std::vector<Lease> v) {
        ++out->calls;
        out->ec = ec;
        out->leases = std::move(v);
        out->seen = c->children(sem_leases);
        out->seen2 = c->children(sem_locks);
        out->watches_seen = c->watch_count();
        out->on_io_thread = c->running_in_io_thread();
      });
    });
    return out;
  }

  bool wait(const Outcome& o, std::chrono::milliseconds limit = 5s) {
    return core->run_until([&] { return o.done(); }, limit);
  }

  void fire(const CancelPtr& c) {
    boost::asio::post(core->context(), [c] { c->request(); });
  }

  error_code release(Lease& l) {
    const auto ec = fake::run_release(*core, l);
    REQUIRE(ec);
    return *ec;
  }

  /// A contender of another session, queued now (as another client would).
  std::string other(const std::string& parent = dir, const std::string& name = "lock-") {
    return core->put(zkr::make_path(parent, "_c_10000000-0000-4000-8000-000000000000-" + name),
                     zkr::CreateMode::ephemeral_sequential, FakeCore::other_session);
  }

  std::vector<std::string> kids(const std::string& path = dir) const { return core->children(path); }

  /// Deletes every node of ours (this session's) under `path`.
  void erase_ours(const std::string& path) {
    for (auto& n : core->children(path)) {
      auto p = zkr::make_path(path, n);
      if (core->stat(p)->ephemeral_owner == core->session_id()) core->erase(p);
    }
  }

  std::string name_of(const std::string& path) const { return zkr::node_name(path); }
};

/// The connection drops, comes back to a read-only server, then to a read-write one: the lease is maybe lost
/// (a read-only server is cut off from its quorum, which may expire the session), then held again.
void suspend_read_only_reconnect(FakeCore& core, const Lease& lease) {
  core.suspend();
  core.reconnect(/*read_only=*/true);
  core.settle();
  CHECK(lease.status() == LeaseStatus::maybe_lost);
  core.reconnect();
  core.settle();
  CHECK(lease.status() == LeaseStatus::held);
}

std::vector<std::string> names(std::initializer_list<std::string> paths) {
  std::vector<std::string> v;
  for (auto& p : paths) v.push_back(zkr::node_name(p));
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

// ===========================================================================================================
// Round trips

TEST_CASE_METHOD(Fixture, "engine: an uncontended acquire is create + get_children, a release one delete",
                 "[engine]") {
  auto e = engine();
  auto out = start(e);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  REQUIRE_FALSE(out->ec);
  REQUIRE(out->lease.valid());
  CHECK(out->on_io_thread);
  REQUIRE(core->count_all() == 2);
  CHECK(core->requests()[0].op == Op::create);
  CHECK(core->requests()[0].path == dir + "/lock-");
  CHECK(core->requests()[1].op == Op::get_children);
  CHECK(core->requests()[1].path == dir);

  const auto k = kids();
  REQUIRE(k.size() == 1);
  CHECK(zkr::protected_names::is_protected_node(k[0]));
  CHECK(zkr::protected_names::normalize(k[0]) == "lock-0000000000");
  const auto path = dir + "/" + k[0];
  CHECK(out->lease.node_path() == path);
  CHECK(out->lease.fencing_token() == core->stat(path)->czxid);
  CHECK(out->lease.session_id() == core->session_id());
  CHECK(core->stat(path)->ephemeral_owner == core->session_id());
  CHECK(out->lease.status() == LeaseStatus::held);
  CHECK(core->watch_count() == 0);

  core->clear_log();
  CHECK_FALSE(release(out->lease));
  CHECK(core->count_all() == 1);
  CHECK(core->count(Op::remove, path) == 1);
  CHECK(kids().empty());
  CHECK(core->state_listener_count() == 0);
}

TEST_CASE_METHOD(Fixture, "engine: max_leases > 1 grants below the limit in two round trips", "[engine]") {
  auto e = engine(3);
  other();
  other();
  auto out = start(e);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  REQUIRE(out->lease.valid());
  CHECK(core->count_all() == 2);
  CHECK(kids().size() == 3);

  // The fourth waits on the node max_leases places ahead of it (the first one), not on its predecessor.
  auto by_sequence = kids();  // the fake lists by full name; the queue order is the sequence order
  std::sort(by_sequence.begin(), by_sequence.end(), [](const std::string& a, const std::string& b) {
    return zkr::sequential_suffix(a) < zkr::sequential_suffix(b);
  });
  const auto first = dir + "/" + by_sequence[0];
  core->clear_log();
  auto fourth = start(e);
  REQUIRE(core->run_until([&] { return core->watch_count(first) == 1; }));
  CHECK_FALSE(fourth->done());
  CHECK(core->count(Op::get_data) == 1);
  CHECK(core->requests().back().path == first);
  core->erase(first);
  REQUIRE(wait(*fourth));
  REQUIRE(fourth->lease.valid());
  CHECK(core->count(Op::get_children) == 1);  // the watched node was the only one in the way: no re-list
}

TEST_CASE_METHOD(Fixture,
                 "engine: a waiter watches only its predecessor, whose deletion grants with no re-list",
                 "[engine]") {
  auto e = engine();
  const auto pred = other();
  auto out = start(e);
  REQUIRE(core->run_until([&] { return core->watch_count(pred) == 1; }));
  core->settle();
  INFO(core->describe_log());
  CHECK_FALSE(out->done());
  REQUIRE(core->count_all() == 3);
  CHECK(core->requests()[2].op == Op::get_data);
  CHECK(core->requests()[2].path == pred);
  CHECK(core->watch_count() == 1);

  core->erase(pred);
  REQUIRE(wait(*out));
  REQUIRE_FALSE(out->ec);
  REQUIRE(out->lease.valid());
  CHECK(core->count_all() == 3);  // no further get_children
  CHECK(core->count(Op::get_children) == 1);
  CHECK(core->watch_count() == 0);
}

TEST_CASE_METHOD(Fixture, "engine: a queue of waiters in one process wakes one at a time", "[engine]") {
  // With the pre-watch, the third waiter also watches the first node and lists again while the second holds,
  // so that it too is granted by its watch alone.
  const bool pre = GENERATE(false, true);
  CAPTURE(pre);
  auto e = pre ? prewatch_engine() : engine();
  auto a = start(e);
  REQUIRE(wait(*a));
  REQUIRE(a->lease.valid());
  auto b = start(e);
  REQUIRE(core->run_until([&] { return core->watch_count() == 1; }));
  auto c = start(e);
  REQUIRE(core->run_until([&] { return core->watch_count() == (pre ? 3u : 2u); }));
  core->settle();
  CHECK_FALSE(b->done());
  CHECK_FALSE(c->done());
  const auto k = kids();  // by name; the sequence decides the order
  REQUIRE(k.size() == 3);
  std::string b_path, c_path;
  for (auto& n : k) {
    auto p = dir + "/" + n;
    if (p == a->lease.node_path()) continue;
    (zkr::sequential_suffix(n) == "0000000001" ? b_path : c_path) = p;
  }
  // b watches a; c watches b, not a: no herd. With the pre-watch c watches a too: a release still notifies at
  // most two waiters, whatever the queue's length.
  CHECK(core->watch_count(a->lease.node_path()) == (pre ? 2u : 1u));
  CHECK(core->watch_count(b_path) == 1);

  const auto token_a = a->lease.fencing_token();
  core->clear_log();
  CHECK_FALSE(release(a->lease));
  REQUIRE(wait(*b));
  REQUIRE(b->lease.valid());
  CHECK(b->lease.node_path() == b_path);
  core->settle();
  INFO(core->describe_log());
  CHECK_FALSE(c->done());
  // The release only: b was granted by its watch. With the pre-watch, also c's listing (off the path of the
  // next hand-off); c keeps its watch on b.
  CHECK(core->count_all() == (pre ? 2u : 1u));
  CHECK(core->count(Op::get_children) == (pre ? 1u : 0u));
  CHECK(core->watch_count(b_path) == 1);

  const auto token_b = b->lease.fencing_token();
  core->clear_log();
  CHECK_FALSE(release(b->lease));
  REQUIRE(wait(*c));
  REQUIRE(c->lease.valid());
  CHECK(c->lease.node_path() == c_path);
  // With the pre-watch, c is granted by its watch: the release is the only request.
  CHECK(core->count_all() == (pre ? 1u : 2u));
  CHECK(c->watches_seen == 0);
  CHECK(c->lease.fencing_token() > token_b);  // a later grant always has a larger token
  CHECK(token_b > token_a);
}

TEST_CASE_METHOD(Fixture, "engine: a burst of acquires on one engine shares its listings, and keeps FIFO",
                 "[engine]") {
  auto e = engine();
  const auto holder = other();
  std::vector<std::shared_ptr<Outcome>> outs;
  for (int i = 0; i < 6; ++i) outs.push_back(start(e));  // six attempts started in one turn of the I/O thread
  REQUIRE(core->run_until([&] { return core->watch_count() == 6; }));
  core->settle();
  INFO(core->describe_log());
  CHECK(core->count(Op::create) == 6);
  // The first attempt's listing goes out at once, right behind its create; the other five, arriving while it
  // is in flight, share the next one.
  CHECK(core->count(Op::get_children) == 2);
  CHECK(core->count(Op::get_data) == 6);  // each watches only its own predecessor: no herd
  CHECK(core->watch_count(holder) == 1);

  // Granted in queue order, each exactly once.
  core->erase(holder);
  std::vector<std::string> granted;
  for (int round = 0; round < 6; ++round) {
    REQUIRE(core->run_until([&] {
      return std::count_if(outs.begin(), outs.end(), [](auto& o) { return o->done(); }) == round + 1;
    }));
    core->settle();
    std::shared_ptr<Outcome> now;
    for (auto& o : outs)
      if (o->done() && o->lease.valid()) now = o;
    REQUIRE(now);
    CHECK(now->calls == 1);
    granted.emplace_back(zkr::sequential_suffix(now->lease.node_name()));
    CHECK_FALSE(release(now->lease));
  }
  CHECK(std::is_sorted(granted.begin(), granted.end()));
}

TEST_CASE_METHOD(Fixture, "engine: read-write wake-ups skip the re-listing only where the rules allow",
                 "[engine][rwlock]") {
  auto unowned = [](const zkr::LockDriver& d) {
    return std::shared_ptr<const zkr::LockDriver>(&d, [](const zkr::LockDriver*) {});
  };
  auto readers = std::make_shared<zkr::detail::LockInternals>(core, dir, std::string(zkr::read_lock_name),
                                                              SIZE_MAX, unowned(zkr::read_lock_driver()));
  auto writers = std::make_shared<zkr::detail::LockInternals>(core, dir, std::string(zkr::write_lock_name), 1,
                                                              unowned(zkr::write_lock_driver()));
  const std::string R(zkr::read_lock_name), W(zkr::write_lock_name);
  // `ahead` queued by another session; our attempt; then every node ahead deleted, first to last.
  auto run = [&](const std::shared_ptr<zkr::detail::LockInternals>& e, std::vector<std::string> ahead_names,
                 bool foreign = false) {
    if (foreign) core->put(dir + "/zzz");  // not a node of the lock; sorts after every sequence
    std::vector<std::string> ahead;
    for (const auto& n : ahead_names) ahead.push_back(other(dir, n));
    auto out = start(e);
    REQUIRE(core->run_until([&] { return core->watch_count() == 1; }));
    core->settle();
    REQUIRE_FALSE(out->done());
    core->clear_log();
    for (const auto& a : ahead) core->erase(a);
    REQUIRE(wait(*out));
    REQUIRE(out->lease.valid());
    const auto lists = core->count(Op::get_children);
    CHECK_FALSE(release(out->lease));
    core->clear_log();
    return lists;
  };
  SECTION("a reader behind one writer (readers ahead too): granted by the watch alone") {
    CHECK(run(readers, {R, W, R}) == 0);
  }
  SECTION("a reader behind two writers: lists again") { CHECK(run(readers, {W, W}) >= 1); }
  SECTION("a writer behind one reader: granted by the watch alone") { CHECK(run(writers, {R}) == 0); }
  SECTION("a writer behind one writer (it may downgrade): lists again") { CHECK(run(writers, {W}) >= 1); }
  SECTION("a writer behind one reader, a foreign node in the directory: lists again") {
    CHECK(run(writers, {R}, true) >= 1);
  }
}

TEST_CASE_METHOD(Fixture, "engine: a foreign child in the directory disables the no-re-list shortcut",
                 "[engine]") {
  auto e = engine();
  const auto foreign = core->put(dir + "/0");  // CURATOR-43: sorts before every sequence
  auto out = start(e);
  REQUIRE(core->run_until([&] { return core->watch_count(foreign) == 1; }));
  core->settle();
  CHECK_FALSE(out->done());
  CHECK(core->count(Op::get_children) == 1);
  core->erase(foreign);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  REQUIRE(out->lease.valid());
  CHECK(core->count(Op::get_children) == 2);  // listed again after the wake-up
}

TEST_CASE_METHOD(Fixture, "engine: a deletion that does not free us leads to a re-list and a new watch",
                 "[engine]") {
  auto e = engine();
  const auto first = other();
  const auto second = other();
  auto out = start(e);
  REQUIRE(core->run_until([&] { return core->watch_count(second) == 1; }));
  core->erase(first);  // not watched: nothing happens
  core->settle();
  CHECK(core->count(Op::get_children) == 1);
  core->erase(second);  // watched, but the driver did not promise a grant (index 2 of max 1 at listing time)
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  REQUIRE(out->lease.valid());
  CHECK(core->count(Op::get_children) == 2);
}

// ===========================================================================================================
// The pre-watch (PrewatchLockDriver): the listing moves off the hand-off's critical path

TEST_CASE_METHOD(Fixture, "engine, pre-watch: deletions ahead, in order or not, never grant too early",
                 "[engine][prewatch]") {
  auto e = prewatch_engine();
  const auto first = other();
  const auto second = other();
  auto out = start(e);
  REQUIRE(core->run_until([&] { return core->watch_count(second) == 1; }));
  core->settle();
  CHECK(core->watch_count(first) == 1);  // pre-watched: the node ahead of the one we wait for
  SECTION("in order: the listing after the first went makes the second's deletion a grant") {
    core->erase(first);
    core->settle();
    CHECK_FALSE(out->done());
    CHECK(core->count(Op::get_children) == 2);
    CHECK(core->count(Op::get_data) == 2);  // the watch on the second was kept, not set again
    core->erase(second);
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    REQUIRE(out->lease.valid());
    CHECK(core->count(Op::get_children) == 2);  // no listing after the second went
  }
  SECTION("the second leaves first (a timeout, say): no grant, we list again and wait for the first") {
    core->erase(second);
    core->settle();
    INFO(core->describe_log());
    CHECK_FALSE(out->done());
    CHECK(core->count(Op::get_children) == 2);
    CHECK(core->watch_count(first) == 1);  // now the predecessor, watched once (the pre-watch was dropped)
    core->erase(first);
    REQUIRE(wait(*out));
    REQUIRE(out->lease.valid());
    CHECK(core->count(Op::get_children) == 2);  // the first was the only one ahead: granted by the watch
  }
  SECTION("a data change on the pre-watched node is no reason to list") {
    core->set(first, "x");
    core->settle();
    CHECK_FALSE(out->done());
    CHECK(core->count(Op::get_children) == 1);
    core->erase(first);  // no longer pre-watched: we learn of it when the second goes
    core->settle();
    CHECK(core->count(Op::get_children) == 1);
    core->erase(second);
    REQUIRE(wait(*out));
    REQUIRE(out->lease.valid());
    CHECK(core->count(Op::get_children) == 2);
  }
  SECTION("a node ahead of the pre-watched one goes: not watched, nothing happens") {
    // Only the second and first are ahead here; queue one more of ours behind to see its pre-watch instead.
    auto behind = start(e);
    REQUIRE(core->run_until([&] { return core->watch_count() == 4; }));
    core->settle();
    core->clear_log();
    core->erase(first);  // out's pre-watch fires: out lists; behind (pre-watching second) does nothing
    core->settle();
    CHECK(core->count(Op::get_children) == 1);
    CHECK_FALSE(behind->done());
    core->erase(second);  // out granted by its watch; behind, pre-watching second, lists
    REQUIRE(wait(*out));
    REQUIRE(out->lease.valid());
    core->settle();
    CHECK(core->count(Op::get_children) == 2);
    CHECK_FALSE(behind->done());
    core->clear_log();
    CHECK_FALSE(release(out->lease));
    REQUIRE(wait(*behind));
    REQUIRE(behind->lease.valid());
    CHECK(core->count_all() == 1);  // the release: behind was granted by its watch
    CHECK_FALSE(release(behind->lease));
  }
}

TEST_CASE_METHOD(Fixture, "engine, pre-watch: the node to pre-watch is already gone: we list again at once",
                 "[engine][prewatch]") {
  auto e = prewatch_engine();
  const auto first = other();
  const auto second = other();
  // The first goes between our listing and our read of it: the read finds no node and sets no watch.
  core->before_nth(Op::get_data, 2, [&] { core->erase(first); });
  auto out = start(e);
  REQUIRE(core->run_until([&] { return core->count(Op::get_children) == 2; }));
  core->settle();
  INFO(core->describe_log());
  CHECK_FALSE(out->done());
  CHECK(core->watch_count(second) == 1);
  CHECK(core->watch_count() == 1);
  core->erase(second);
  REQUIRE(wait(*out));
  REQUIRE(out->lease.valid());
  CHECK(core->count(Op::get_children) == 2);  // the re-listing showed the second as the only one ahead
}

TEST_CASE_METHOD(Fixture,
                 "engine, pre-watch: a failed pre-watch read only loses the pre-watch until the next listing",
                 "[engine][prewatch]") {
  auto e = prewatch_engine();
  const auto first = other();
  const auto second = other();
  core->fail_next(Op::get_data, zk_errc::connection_loss, name_of(first));  // the pre-watch's read
  auto out = start(e);
  REQUIRE(core->run_until([&] { return core->watch_count(second) == 1; }));
  core->settle();
  CHECK_FALSE(out->done());  // not an error of the acquire
  CHECK(core->watch_count(first) == 0);
  // A data change on the watched node: we list again, and that listing pre-watches the first again.
  core->set(second, "x");
  REQUIRE(core->run_until([&] { return core->watch_count(first) == 1; }));
  core->settle();
  CHECK(core->watch_count(second) == 1);
  core->erase(first);
  core->settle();
  core->erase(second);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  REQUIRE(out->lease.valid());
  CHECK(core->count(Op::get_children) == 3);  // create's, after the data change, after the first went
}

TEST_CASE_METHOD(Fixture, "engine, pre-watch: the watched node goes while the re-listing is in flight",
                 "[engine][prewatch]") {
  auto e = prewatch_engine();
  const auto first = other();
  const auto second = other();
  auto out = start(e);
  REQUIRE(core->run_until([&] { return core->watch_count() == 2; }));
  core->settle();
  // The first goes (our re-listing starts); the second goes while that listing is in flight, its event
  // arriving after the listing's reply: the listing no longer shows it, so it grants directly.
  core->before_next(Op::get_children, [&] { core->erase(second); });
  core->erase(first);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  REQUIRE(out->lease.valid());
  CHECK(out->calls == 1);
  core->run_for(20ms);
  CHECK(out->calls == 1);
  CHECK(core->watch_count() == 0);
}

TEST_CASE_METHOD(Fixture, "engine, pre-watch: a cancel or a timeout while waiting drops both watches",
                 "[engine][prewatch][cancel]") {
  auto e = prewatch_engine();
  const auto first = other();
  const auto second = other();
  auto cancel = std::make_shared<zkr::detail::CancelState>();
  zkr::detail::AcquireOptions o;
  const bool by_timeout = GENERATE(false, true);
  if (by_timeout) o.deadline = Clock::now() + 200ms;
  auto out = start(e, o, cancel);
  REQUIRE(core->run_until([&] { return core->watch_count() == 2; }));
  core->settle();
  if (!by_timeout) fire(cancel);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  CHECK_FALSE(out->lease.valid());
  CHECK(out->ec == (by_timeout ? error_code() : error_code(boost::asio::error::operation_aborted)));
  CHECK(out->watches_seen == 0);
  CHECK(out->seen == names({first, second}));  // our node deleted before completing
  const auto before = core->count_all();
  core->erase(first);
  core->erase(second);
  core->run_for(20ms);
  CHECK(core->count_all() == before);  // neither watch wakes the finished attempt
  CHECK(out->calls == 1);
}

// ===========================================================================================================
// Faults, step by step

TEST_CASE_METHOD(Fixture, "engine: create fails -> that error, nothing left, no request after its reply",
                 "[engine][fault]") {
  const auto code = GENERATE(error_code(zk_errc::connection_loss), error_code(zk_errc::operation_timeout),
                             error_code(zk_errc::session_expired), error_code(zk_errc::no_auth),
                             error_code(zk_errc::invalid_acl), error_code(zk_errc::marshalling_error));
  CAPTURE(code.message());
  auto e = engine();
  core->fail_next(Op::create, code);
  auto out = start(e);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  CHECK(out->ec == code);
  CHECK_FALSE(out->lease.valid());
  CHECK(out->seen.empty());
  // The create and the listing pipelined behind it; nothing after the create's reply.
  CHECK(core->count_all() == 2);
  CHECK(core->count(Op::create) == 1);
  CHECK(core->count(Op::get_children) == 1);
  core->settle();
  CHECK(kids().empty());
}

TEST_CASE_METHOD(
    Fixture, "engine: create applied but its reply lost -> error, and the core's clean-up removes the node",
    "[engine][fault]") {
  auto e = engine();
  core->fail_next_applied(Op::create, zk_errc::connection_loss);
  auto out = start(e);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  CHECK(out->ec == zk_errc::connection_loss);
  CHECK_FALSE(out->lease.valid());
  // The engine never learnt the node's name: besides the listing pipelined behind the create, no request of
  // its own (no delete).
  CHECK(core->count_all() == 2);
  CHECK(core->count(Op::remove) == 0);
  core->settle();
  CHECK(
      kids().empty());  // the protected name lets the core find and delete it (find-and-delete in background)
}

TEST_CASE_METHOD(Fixture, "engine: create answers no-node -> retried with a new node under the retry policy",
                 "[engine][fault]") {
  auto e = engine();
  SECTION("retries left: granted") {
    core->fail_next(Op::create, zk_errc::no_node);
    auto out = start(e);
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    REQUIRE(out->lease.valid());
    CHECK(core->count(Op::create) == 2);
    CHECK(kids().size() == 1);
  }
  SECTION("RetryNTimes(0): node_not_found_after_retries") {
    core->set_retry_policy(std::make_shared<zkr::RetryNTimes>(0, 0ms));
    core->fail_next(Op::create, zk_errc::no_node);
    auto out = start(e);
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    CHECK(out->ec == errc::node_not_found_after_retries);
    CHECK(core->count(Op::create) == 1);
    CHECK(out->seen.empty());
  }
}

TEST_CASE_METHOD(Fixture, "engine: get_children fails -> our node deleted before the error completes",
                 "[engine][fault]") {
  const auto code = GENERATE(error_code(zk_errc::connection_loss), error_code(zk_errc::session_expired),
                             error_code(zk_errc::no_auth), error_code(zk_errc::operation_timeout));
  CAPTURE(code.message());
  auto e = engine();
  const auto pred = other();
  core->fail_next(Op::get_children, code);
  auto out = start(e);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  CHECK(out->ec == code);
  CHECK_FALSE(out->lease.valid());
  CHECK(out->seen == names({pred}));
  REQUIRE(core->count_all() == 3);
  CHECK(core->requests()[2].op == Op::remove);
  CHECK(core->count(Op::get_data) == 0);
}

TEST_CASE_METHOD(Fixture, "engine: get_data fails -> our node deleted before the error completes",
                 "[engine][fault]") {
  const auto code = GENERATE(error_code(zk_errc::connection_loss), error_code(zk_errc::session_expired),
                             error_code(zk_errc::no_auth));
  CAPTURE(code.message());
  auto e = engine();
  const auto pred = other();
  core->fail_next(Op::get_data, code);
  auto out = start(e);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  CHECK(out->ec == code);
  CHECK_FALSE(out->lease.valid());
  CHECK(out->seen == names({pred}));
  CHECK(out->watches_seen == 0);
  CHECK(core->count(Op::remove) == 1);
}

TEST_CASE_METHOD(Fixture,
                 "engine: the clean-up delete fails -> still the original error, and the delete is kept",
                 "[engine][fault]") {
  auto e = engine();
  core->fail_next(Op::get_children, zk_errc::no_auth);
  core->fail_next(Op::remove, zk_errc::connection_loss);
  auto out = start(e);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  CHECK(out->ec == zk_errc::no_auth);
  core->settle();
  CHECK(kids().empty());  // guaranteed delete: finished in the background
}

TEST_CASE_METHOD(Fixture, "engine: our node vanishes before the listing -> a new node under the retry policy",
                 "[engine][fault]") {
  auto e = engine();
  const auto s0 = core->session_id();
  SECTION("session expired (ephemerals dropped): granted with a node of the new session") {
    core->before_next(Op::get_children, [&] { core->expire_session(); });
    auto out = start(e);
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    REQUIRE_FALSE(out->ec);
    REQUIRE(out->lease.valid());
    CHECK(core->count(Op::create) == 2);
    CHECK(core->session_id() != s0);
    CHECK(out->lease.session_id() == core->session_id());
    CHECK(kids().size() == 1);
  }
  SECTION("deleted by someone: the policy's sleep is honoured") {
    core->set_retry_policy(std::make_shared<zkr::RetryNTimes>(1, 100ms));
    core->before_next(Op::get_children, [&] { erase_ours(dir); });
    const auto t0 = Clock::now();
    auto out = start(e);
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    REQUIRE(out->lease.valid());
    CHECK(Clock::now() - t0 >= 100ms);
    CHECK(core->count(Op::create) == 2);
    CHECK(kids().size() == 1);
  }
  SECTION("RetryNTimes(0): node_not_found_after_retries and nothing left") {
    core->set_retry_policy(std::make_shared<zkr::RetryNTimes>(0, 0ms));
    core->before_next(Op::get_children, [&] { core->expire_session(); });
    auto out = start(e);
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    CHECK(out->ec == errc::node_not_found_after_retries);
    CHECK_FALSE(out->lease.valid());
    CHECK(out->seen.empty());
    CHECK(core->count(Op::create) == 1);
  }
  SECTION("the directory answers no-node: our node is deleted and a new one made") {
    // The pipelined listing not showing our node proves nothing (the create may have been retried after
    // it): the engine lists again. The second no-node means our node is gone.
    core->fail_nth(Op::get_children, 1, zk_errc::no_node);
    core->fail_nth(Op::get_children, 2, zk_errc::no_node);
    auto out = start(e);
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    REQUIRE(out->lease.valid());
    CHECK(core->count(Op::create) == 2);
    core->settle();
    CHECK(kids() == std::vector<std::string>{out->lease.node_name()});
  }
}

TEST_CASE_METHOD(Fixture,
                 "engine: on_waiting is told once the watch on the node ahead is set, not on a grant at once",
                 "[engine]") {
  auto e = engine();
  std::vector<std::string> waiting;
  std::size_t watches_when_told = 0;
  zkr::detail::AcquireOptions o;
  o.on_waiting = [&](const std::string& node) {
    waiting.push_back(node);
    watches_when_told = core->watch_count();
  };
  SECTION("a waiter: told after its get_data with the watch returned") {
    const auto pred = other();
    auto out = start(e, o);
    REQUIRE(core->run_until([&] { return waiting.size() == 1; }));
    INFO(core->describe_log());
    CHECK_FALSE(out->done());
    CHECK(watches_when_told == 1);
    CHECK(core->watch_count(pred) == 1);
    core->erase(pred);
    REQUIRE(wait(*out));
    REQUIRE(out->lease.valid());
    CHECK(waiting == std::vector<std::string>{out->lease.node_path()});
  }
  SECTION("the watched node is gone before the watch is set: not told for it") {
    const auto pred = other();
    core->before_next(Op::get_data, [&] { core->erase(pred); });
    auto out = start(e, o);
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    REQUIRE(out->lease.valid());
    CHECK(waiting.empty());
  }
  SECTION("granted at once: never told") {
    auto out = start(e, o);
    REQUIRE(wait(*out));
    REQUIRE(out->lease.valid());
    core->settle();
    CHECK(waiting.empty());
  }
}

TEST_CASE_METHOD(Fixture, "engine: on_queued is told every node the attempt makes, before the grant",
                 "[engine]") {
  auto e = engine();
  std::vector<std::string> told;
  zkr::detail::AcquireOptions o;
  o.on_queued = [&](const std::string& node) { told.push_back(node); };
  SECTION("one node") {
    auto out = start(e, o);
    REQUIRE(wait(*out));
    REQUIRE(out->lease.valid());
    REQUIRE(told.size() == 1);
    CHECK(told[0] == out->lease.node_path());
  }
  SECTION("the node is made again after its session expired: told again, with the new path") {
    core->before_next(Op::get_children, [&] { core->expire_session(); });
    auto out = start(e, o);
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    REQUIRE(out->lease.valid());
    REQUIRE(told.size() == 2);
    CHECK(told[0] != told[1]);
    CHECK(told[1] == out->lease.node_path());
  }
  SECTION("a failed create tells nothing") {
    core->fail_next(Op::create, zk_errc::no_auth);
    auto out = start(e, o);
    REQUIRE(wait(*out));
    CHECK(out->ec == zk_errc::no_auth);
    CHECK(told.empty());
  }
}

TEST_CASE_METHOD(Fixture, "engine: the predecessor is gone before get_data -> listed again at once",
                 "[engine][fault]") {
  auto e = engine();
  const auto pred = other();
  core->before_next(Op::get_data, [&] { core->erase(pred); });
  auto out = start(e);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  REQUIRE(out->lease.valid());
  REQUIRE(core->count_all() == 4);
  CHECK(core->requests()[2].op == Op::get_data);
  CHECK(core->requests()[2].result == zk_errc::no_node);
  CHECK(core->requests()[3].op == Op::get_children);
  CHECK(core->watch_count() == 0);
}

TEST_CASE_METHOD(Fixture, "engine: the watch overtakes the get_data reply -> listed again",
                 "[engine][fault]") {
  auto e = engine();
  const auto pred = other();
  core->after_next(Op::get_data, [&] { core->erase(pred); });  // the event is queued before the reply
  auto out = start(e);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  REQUIRE(out->lease.valid());
  REQUIRE(core->count_all() == 4);  // create, get_children, get_data (woken meanwhile), get_children
  CHECK(core->requests()[3].op == Op::get_children);
}

TEST_CASE_METHOD(Fixture, "engine: a data change of the predecessor is not a grant", "[engine]") {
  auto e = engine();
  const auto pred = other();
  auto out = start(e);
  REQUIRE(core->run_until([&] { return core->watch_count(pred) == 1; }));
  core->set(pred, "x");  // node_data_changed: the engine lists again and watches again
  REQUIRE(core->run_until([&] { return core->count(Op::get_data) == 2 && core->watch_count(pred) == 1; }));
  core->settle();
  CHECK_FALSE(out->done());
  CHECK(core->count(Op::get_children) == 2);
  core->erase(pred);
  REQUIRE(wait(*out));
  REQUIRE(out->lease.valid());
}

// ===========================================================================================================
// Cancellation and timeouts

TEST_CASE_METHOD(Fixture, "engine: cancellation at each step deletes our node before completing",
                 "[engine][cancel]") {
  auto e = engine();
  auto cancel = std::make_shared<zkr::detail::CancelState>();
  std::string pred;
  std::shared_ptr<Outcome> out;
  std::size_t expected_requests = 0;
  SECTION("before the create reply") {
    core->before_next(Op::create, [&] { cancel->request(); });
    out = start(e, {}, cancel);
    expected_requests = 3;  // create, the listing pipelined behind it, remove
  }
  SECTION("while listing") {
    core->before_next(Op::get_children, [&] { cancel->request(); });
    out = start(e, {}, cancel);
    expected_requests = 3;  // create, get_children, remove
  }
  SECTION("while get_data is in flight") {
    pred = other();
    core->before_next(Op::get_data, [&] { cancel->request(); });
    out = start(e, {}, cancel);
    expected_requests = 4;  // create, get_children, get_data, remove
  }
  SECTION("while waiting") {
    pred = other();
    out = start(e, {}, cancel);
    REQUIRE(core->run_until([&] { return core->watch_count(pred) == 1; }));
    core->settle();
    fire(cancel);
    expected_requests = 4;
  }
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  CHECK(out->ec == boost::asio::error::operation_aborted);
  CHECK_FALSE(out->lease.valid());
  CHECK(out->seen == (pred.empty() ? std::vector<std::string>{} : names({pred})));
  CHECK(out->watches_seen == 0);
  CHECK(core->count_all() == expected_requests);
  CHECK(core->count(Op::remove) == 1);
  if (!pred.empty()) core->erase(pred);
  core->run_for(20ms);
  CHECK(out->calls == 1);
}

TEST_CASE_METHOD(Fixture, "engine: cancellation during the retry sleep completes at once",
                 "[engine][cancel]") {
  auto e = engine();
  core->set_retry_policy(std::make_shared<zkr::RetryNTimes>(1, 10s));
  auto cancel = std::make_shared<zkr::detail::CancelState>();
  core->before_next(Op::get_children, [&] { erase_ours(dir); });
  const auto t0 = Clock::now();
  auto out = start(e, {}, cancel);
  REQUIRE(
      core->run_until([&] { return core->count(Op::get_children) == 2 && core->requests().back().applied; }));
  core->settle();
  fire(cancel);
  REQUIRE(wait(*out, 2s));
  INFO(core->describe_log());
  CHECK(Clock::now() - t0 < 5s);
  CHECK(out->ec == boost::asio::error::operation_aborted);
  CHECK(core->count(Op::create) == 1);
  CHECK(out->seen.empty());
}

TEST_CASE_METHOD(Fixture, "engine: cancelled before it starts -> operation_aborted, no request",
                 "[engine][cancel]") {
  auto e = engine();
  auto cancel = std::make_shared<zkr::detail::CancelState>();
  cancel->request();
  auto out = start(e, {}, cancel);
  REQUIRE(wait(*out));
  CHECK(out->ec == boost::asio::error::operation_aborted);
  CHECK(core->count_all() == 0);
}

TEST_CASE_METHOD(Fixture, "engine: timeout while waiting -> empty lease, no error, node deleted first",
                 "[engine][timeout]") {
  auto e = engine();
  const auto pred = other();
  zkr::detail::AcquireOptions o;
  o.deadline = Clock::now() + 100ms;
  const auto t0 = Clock::now();
  auto out = start(e, std::move(o));
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  CHECK(Clock::now() - t0 >= 100ms);
  CHECK_FALSE(out->ec);
  CHECK_FALSE(out->lease.valid());
  CHECK(out->seen == names({pred}));
  CHECK(out->watches_seen == 0);
  CHECK(core->count(Op::remove) == 1);
}

TEST_CASE_METHOD(Fixture, "engine: timeout 0 grants a free lock and gives up a held one without waiting",
                 "[engine][timeout]") {
  auto e = engine();
  zkr::detail::AcquireOptions o;
  o.deadline = Clock::now();
  SECTION("free: granted (Curator's acquire(0))") {
    auto out = start(e, std::move(o));
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    CHECK_FALSE(out->ec);
    CHECK(out->lease.valid());
    CHECK(core->count_all() == 2);
  }
  SECTION("held: no watch, our node deleted") {
    const auto pred = other();
    auto out = start(e, std::move(o));
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    CHECK_FALSE(out->ec);
    CHECK_FALSE(out->lease.valid());
    CHECK(out->seen == names({pred}));
    REQUIRE(core->count_all() == 3);
    CHECK(core->requests()[2].op == Op::remove);
  }
}

// ===========================================================================================================
// Sessions: the loss signal and CURATOR-604

TEST_CASE_METHOD(Fixture, "engine: the lease's loss signal follows the connection", "[engine][session]") {
  auto e = engine();
  auto out = start(e);
  REQUIRE(wait(*out));
  REQUIRE(out->lease.valid());
  std::vector<LeaseStatus> seen;
  out->lease.on_status_change([&](LeaseStatus s) { seen.push_back(s); });
  core->settle();
  CHECK(core->count(Op::exists, out->lease.node_path()) ==
        1);  // the node is watched from the first listener on

  core->suspend();
  core->settle();
  CHECK(out->lease.status() == LeaseStatus::maybe_lost);
  core->reconnect();
  core->settle();
  CHECK(out->lease.status() == LeaseStatus::held);
  suspend_read_only_reconnect(*core, out->lease);
  bool lost = false;
  out->lease.async_wait_lost([&](error_code ec, LeaseStatus s) { lost = !ec && s == LeaseStatus::lost; });
  core->expire_session();
  core->settle();
  CHECK(out->lease.status() == LeaseStatus::lost);
  CHECK(lost);
  CHECK(seen == std::vector<LeaseStatus>{LeaseStatus::maybe_lost, LeaseStatus::held, LeaseStatus::maybe_lost,
                                         LeaseStatus::held, LeaseStatus::lost});
  CHECK(core->state_listener_count() == 0);
}

// ===========================================================================================================
// The blocking release's contract (InterProcessLock::release): it returns once the delete is applied

namespace {

/// A lease held through the engine, and the blocking `release(ec)` of it run on a thread of its own (so not
/// the I/O thread: the delete leaves through `remove_from_caller`) while the test thread runs the context.
struct BlockingRelease : Fixture {
  std::shared_ptr<Outcome> out;
  std::string path;
  std::atomic<bool> returned{false};
  error_code ec = zkr::errc::closed;  // overwritten by the release

  BlockingRelease() {
    out = start(engine());
    REQUIRE(wait(*out));
    REQUIRE_FALSE(out->ec);
    path = out->lease.node_path();
    core->clear_log();
  }

  /// True when the release returned within the run's limit.
  bool release_on_a_thread() {
    std::thread releaser([this] {
      out->lease.release(ec);
      returned = true;
    });
    const bool finished = core->run_until([&] { return returned.load(); });
    releaser.join();
    return finished;
  }
};

}  // namespace

TEST_CASE_METHOD(BlockingRelease,
                 "release: a blocking release from another thread returns only after its delete is applied",
                 "[engine][release]") {
  // In the step that applies the delete, the releasing thread must still be waiting. A release that returned
  // once the delete was handed over would be seen here within microseconds; 200 ms is a wide margin.
  bool returned_before_applied = false;
  core->before_next(Op::remove, [&] {
    const auto until = std::chrono::steady_clock::now() + 200ms;
    while (!returned && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    returned_before_applied = returned;
  });
  REQUIRE(release_on_a_thread());
  // A release that returned early: its delete runs now.
  core->run_until([&] { return core->faults_consumed(); });
  INFO(core->describe_log());
  CHECK_FALSE(returned_before_applied);
  CHECK_FALSE(ec);
  CHECK(core->faults_consumed());
  CHECK(core->count_all() == 1);
  CHECK(core->count(Op::remove, path) == 1);
  CHECK_FALSE(core->has(path));
  CHECK(out->lease.status() == LeaseStatus::released);
}

TEST_CASE_METHOD(BlockingRelease,
                 "release: a blocking release whose delete is lost to a disconnection reports it, and the "
                 "delete goes on in the background",
                 "[engine][release]") {
  core->fail_next(Op::remove, zk_errc::connection_loss);
  REQUIRE(release_on_a_thread());
  CHECK(ec == zk_errc::connection_loss);
  CHECK_FALSE(out->lease.valid());
  // The guaranteed delete, kept in the background, removes the node.
  REQUIRE(core->run_until([&] { return !core->has(path); }));
  INFO(core->describe_log());
  CHECK(core->count(Op::remove, path) == 1);  // the foreground one; the background one is not counted
  CHECK(std::any_of(core->requests().begin(), core->requests().end(), [&](const fake::Request& r) {
    return r.background && r.op == Op::remove && r.path == path;
  }));
}

TEST_CASE_METHOD(Fixture, "engine: a lease whose node is deleted by someone else is lost",
                 "[engine][session]") {
  auto e = engine();
  auto out = start(e);
  REQUIRE(wait(*out));
  std::vector<LeaseStatus> seen;
  out->lease.on_status_change([&](LeaseStatus s) { seen.push_back(s); });
  core->settle();
  core->erase(out->lease.node_path());
  core->settle();
  CHECK(out->lease.status() == LeaseStatus::lost);
  CHECK(seen == std::vector<LeaseStatus>{LeaseStatus::lost});
}

TEST_CASE_METHOD(Fixture,
                 "engine: a loss watch whose exists failed is set again on reconnect, then hears the loss",
                 "[engine][session]") {
  auto e = engine();
  auto out = start(e);
  REQUIRE(wait(*out));
  const auto node = out->lease.node_path();
  core->fail_next(Op::exists, zk_errc::connection_loss, node);  // the connection goes as the watch is set
  std::vector<LeaseStatus> seen;
  out->lease.on_status_change([&](LeaseStatus s) { seen.push_back(s); });
  core->settle();
  REQUIRE(core->faults_consumed());
  CHECK(core->count(Op::exists, node) == 1);
  core->suspend();
  core->reconnect();
  core->settle();
  CHECK(core->count(Op::exists, node) == 2);  // set again, with the same session
  core->erase(node);
  core->settle();
  CHECK(out->lease.status() == LeaseStatus::lost);
  CHECK(seen == std::vector<LeaseStatus>{LeaseStatus::maybe_lost, LeaseStatus::held, LeaseStatus::lost});
}

TEST_CASE_METHOD(Fixture, "engine: a node of another session is never granted (CURATOR-604)",
                 "[engine][session]") {
  auto e = engine();
  const auto s0 = core->session_id();
  SECTION("the listing still shows the old session's node: a new node is made") {
    core->before_next(Op::get_children, [&] { core->expire_session(/*drop_ephemerals=*/false); });
    auto out = start(e);
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    REQUIRE(out->lease.valid());
    CHECK(out->lease.session_id() == core->session_id());
    CHECK(out->lease.session_id() != s0);
    CHECK(core->count(Op::create) == 2);
    core->settle();
    CHECK(kids() == std::vector<std::string>{out->lease.node_name()});  // the old node was deleted
  }
  SECTION("the same with RetryNTimes(0): an error, and the old node deleted before it completes") {
    core->set_retry_policy(std::make_shared<zkr::RetryNTimes>(0, 0ms));
    core->before_next(Op::get_children, [&] { core->expire_session(/*drop_ephemerals=*/false); });
    auto out = start(e);
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    CHECK(out->ec);
    CHECK_FALSE(out->lease.valid());
    CHECK(out->seen.empty());
  }
  SECTION("an adopted node of another session") {
    const auto stale = other();
    zkr::detail::AcquireOptions o;
    o.existing_node =
        zkr::detail::AcquireOptions::ExistingNode{stale, core->stat(stale)->czxid, FakeCore::other_session};
    auto out = start(e, std::move(o));
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    REQUIRE(out->lease.valid());
    CHECK(out->lease.node_path() != stale);
    CHECK(out->lease.session_id() == core->session_id());
    core->settle();
    CHECK_FALSE(core->has(stale));
  }
  SECTION("the predecessor's deletion arrives after the session changed: no shortcut grant") {
    const auto pred = other();
    auto out = start(e);
    REQUIRE(core->run_until([&] { return core->watch_count(pred) == 1; }));
    core->settle();
    core->erase(pred);                                // the watch event is queued ...
    core->expire_session(/*drop_ephemerals=*/false);  // ... and the session changes before it is handled
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    REQUIRE(out->lease.valid());
    CHECK(out->lease.session_id() == core->session_id());
    CHECK(core->count(Op::create) == 2);
  }
}

// ===========================================================================================================
// The node a driver describes (LockDriver::lock_node)

namespace {

/// The standard policy with the node of `spec` (Curator's testPersistentLock driver, as data).
struct SpecDriver : zkr::StandardLockDriver {
  zkr::LockNodeSpec spec;
  explicit SpecDriver(zkr::LockNodeSpec s) : spec(std::move(s)) {}
  zkr::LockNodeSpec lock_node(std::string_view) const override { return spec; }
};

std::shared_ptr<zkr::detail::LockInternals> spec_engine(const std::shared_ptr<FakeCore>& core,
                                                        zkr::LockNodeSpec spec) {
  return std::make_shared<zkr::detail::LockInternals>(core, dir, "lock-", 1,
                                                      std::make_shared<SpecDriver>(std::move(spec)));
}

zkr::LockNodeSpec persistent_spec() { return {.mode = zkr::LockNodeMode::persistent_sequential}; }

}  // namespace

TEST_CASE_METHOD(Fixture, "engine: the default node spec is the protected ephemeral-sequential node",
                 "[engine][spec]") {
  auto out = start(engine());
  REQUIRE(wait(*out));
  REQUIRE(out->lease.valid());
  CHECK(zkr::protected_names::is_protected_node(out->lease.node_name()));
  CHECK(core->stat(out->lease.node_path())->ephemeral_owner == core->session_id());
  CHECK(core->count_all() == 2);  // create + get_children, as ever
}

TEST_CASE_METHOD(Fixture, "engine: a persistent lock node outlives the session, and so does its grant",
                 "[engine][spec][session]") {
  auto e = spec_engine(core, persistent_spec());
  const auto s0 = core->session_id();
  auto out = start(e);
  REQUIRE(wait(*out));
  REQUIRE_FALSE(out->ec);
  REQUIRE(out->lease.valid());
  const auto node = out->lease.node_path();
  CHECK(zkr::protected_names::is_protected_node(out->lease.node_name()));
  CHECK(core->stat(node)->ephemeral_owner == 0);
  CHECK(out->lease.fencing_token() == core->stat(node)->czxid);
  CHECK(out->lease.session_id() == s0);  // the session that made it
  CHECK(core->count_all() == 2);

  std::vector<LeaseStatus> seen;
  out->lease.on_status_change([&](LeaseStatus s) { seen.push_back(s); });
  core->settle();
  core->expire_session();
  core->settle();
  CHECK(core->has(node));
  // LOST: maybe lost (the node is not the session's); RECONNECTED: the node is there again, so held, and the
  // loss watch is set again in the new session.
  CHECK(out->lease.status() == LeaseStatus::held);
  CHECK(seen == std::vector<LeaseStatus>{LeaseStatus::maybe_lost, LeaseStatus::held});
  CHECK(core->watch_count(node) == 1);
  suspend_read_only_reconnect(*core, out->lease);

  SECTION("released: the node is deleted") {
    CHECK_FALSE(release(out->lease));
    core->settle();
    CHECK_FALSE(core->has(node));
  }
  SECTION("deleted by someone else: lost") {
    core->erase(node);
    core->settle();
    CHECK(out->lease.status() == LeaseStatus::lost);
  }
}

TEST_CASE_METHOD(Fixture, "engine: a persistent node deleted while its session was gone is a lost grant",
                 "[engine][spec][session]") {
  auto e = spec_engine(core, persistent_spec());
  auto out = start(e);
  REQUIRE(wait(*out));
  REQUIRE(out->lease.valid());
  const auto node = out->lease.node_path();
  // Nobody listens, so nothing watches the node: the next connection looks.
  core->erase(node);
  core->expire_session();
  core->settle();
  CHECK(out->lease.status() == LeaseStatus::lost);
}

TEST_CASE_METHOD(Fixture, "engine: a persistent waiter keeps its node and its place across a session expiry",
                 "[engine][spec][session]") {
  auto e = spec_engine(core, persistent_spec());
  const auto holder = core->put(zkr::make_path(dir, "_c_10000000-0000-4000-8000-000000000000-lock-"),
                                zkr::CreateMode::persistent_sequential);
  auto out = start(e);
  REQUIRE(core->run_until([&] { return core->watch_count(holder) == 1; }));
  core->settle();
  core->expire_session();  // the watch ends with the session; the node stays
  core->settle();
  CHECK_FALSE(out->done());
  REQUIRE(kids().size() == 2);
  const auto ours = zkr::make_path(dir, kids()[1] == zkr::node_name(holder) ? kids()[0] : kids()[1]);
  CHECK(core->watch_count(holder) == 1);  // listed again in the new session, and watching again
  core->erase(holder);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  REQUIRE(out->lease.valid());
  CHECK(out->lease.node_path() == ours);
  CHECK(core->count(Op::create) == 1);
}

TEST_CASE_METHOD(Fixture, "engine: a timeout or an error deletes a persistent node as any other",
                 "[engine][spec]") {
  auto e = spec_engine(core, persistent_spec());
  other();
  zkr::detail::AcquireOptions o;
  o.deadline = Clock::now() + 50ms;
  auto out = start(e, std::move(o));
  REQUIRE(core->run_until([&] { return out->done(); }, 5s));
  CHECK_FALSE(out->ec);
  CHECK_FALSE(out->lease.valid());
  CHECK(out->seen.size() == 1);  // only the other contender, already when the acquire completed
}

TEST_CASE_METHOD(Fixture, "engine: an unprotected spec and the spec's data", "[engine][spec]") {
  auto e = spec_engine(core, {.protection = false, .data = std::string("from-driver")});
  auto out = start(e);
  REQUIRE(wait(*out));
  REQUIRE(out->lease.valid());
  CHECK(out->lease.node_name().rfind("lock-", 0) == 0);
  CHECK_FALSE(zkr::protected_names::is_protected_node(out->lease.node_name()));
  CHECK(*core->data(out->lease.node_path()) == "from-driver");
  CHECK(core->stat(out->lease.node_path())->ephemeral_owner == core->session_id());
  // The acquire's own data wins over the driver's.
  zkr::detail::AcquireOptions o;
  o.node_data = "from-acquire";
  auto second = start(e, std::move(o));
  core->settle();
  CHECK_FALSE(release(out->lease));
  REQUIRE(wait(*second));
  REQUIRE(second->lease.valid());
  CHECK(*core->data(second->lease.node_path()) == "from-acquire");
}

// ===========================================================================================================
// The semaphore (InterProcessSemaphoreV2's state machine)

TEST_CASE_METHOD(Fixture, "semaphore: uncontended acquire and release, request by request", "[semaphore]") {
  auto s = semaphore(2);
  auto out = sem_start(s, 1);
  REQUIRE(wait(*out));
  core->settle();
  INFO(core->describe_log());
  REQUIRE_FALSE(out->ec);
  REQUIRE(out->leases.size() == 1);
  REQUIRE(out->leases[0].valid());
  const std::vector<std::pair<Op, std::string>> expected = {{Op::create, sem_locks + "/lock-"},
                                                            {Op::get_children, sem_locks},
                                                            {Op::create, sem_leases + "/lease-"},
                                                            {Op::get_children, sem_leases}};
  REQUIRE(core->count_all() == expected.size() + 1);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    CHECK(core->requests()[i].op == expected[i].first);
    CHECK(core->requests()[i].path == expected[i].second);
  }
  CHECK(core->requests()[4].op == Op::remove);  // the internal mutex, held only while waiting for a slot
  CHECK(kids(sem_locks).empty());
  CHECK(kids(sem_leases) == std::vector<std::string>{out->leases[0].node_name()});
  CHECK(zkr::protected_names::normalize(out->leases[0].node_name()) == "lease-0000000000");
  CHECK(core->watch_count() == 0);

  core->clear_log();
  CHECK_FALSE(release(out->leases[0]));
  CHECK(core->count_all() == 1);
  CHECK(kids(sem_leases).empty());
}

TEST_CASE_METHOD(Fixture, "semaphore: granted while the lease count is at most max_leases", "[semaphore]") {
  auto s = semaphore(3);
  SECTION("2 held + ours = 3 <= 3: granted") {
    other(sem_leases, "lease-");
    other(sem_leases, "lease-");
    auto out = sem_start(s, 1);
    REQUIRE(wait(*out));
    REQUIRE(out->leases.size() == 1);
    CHECK(core->count(Op::get_children, sem_leases) == 1);
  }
  SECTION("3 held + ours = 4 > 3: waits holding the mutex, granted when one goes") {
    const auto first = other(sem_leases, "lease-");
    other(sem_leases, "lease-");
    other(sem_leases, "lease-");
    auto out = sem_start(s, 1);
    REQUIRE(core->run_until([&] { return core->watch_count(sem_leases) == 1; }));
    core->settle();
    CHECK_FALSE(out->done());
    CHECK(kids(sem_locks).size() == 1);  // the internal mutex is ours while we wait
    CHECK(kids(sem_leases).size() == 4);
    core->erase(first);
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    REQUIRE(out->leases.size() == 1);
    CHECK(core->count(Op::get_children, sem_leases) == 2);
    core->settle();
    CHECK(kids(sem_locks).empty());
  }
}

TEST_CASE_METHOD(Fixture, "semaphore: the children watch overtakes the listing reply -> listed again",
                 "[semaphore]") {
  auto s = semaphore(1);
  const auto held = other(sem_leases, "lease-");
  core->after_next(
      Op::get_children, [&] { core->erase(held); }, sem_leases);
  auto out = sem_start(s, 1);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  REQUIRE(out->leases.size() == 1);
  CHECK(core->count(Op::get_children, sem_leases) == 2);
}

TEST_CASE_METHOD(Fixture, "semaphore: our lease node missing -> lease and mutex returned, then retried",
                 "[semaphore][fault]") {
  auto s = semaphore(2);
  core->before_next(
      Op::get_children, [&] { erase_ours(sem_leases); }, sem_leases);
  SECTION("retries left: granted") {
    auto out = sem_start(s, 1);
    REQUIRE(wait(*out));
    core->settle();
    INFO(core->describe_log());
    REQUIRE_FALSE(out->ec);
    REQUIRE(out->leases.size() == 1);
    CHECK(core->count(Op::create, sem_leases) == 2);
    CHECK(core->count(Op::create, sem_locks) == 2);  // the mutex was given back and taken again
    CHECK(kids(sem_leases) == std::vector<std::string>{out->leases[0].node_name()});
    CHECK(kids(sem_locks).empty());
  }
  SECTION("RetryNTimes(0): node_not_found_after_retries and nothing left") {
    core->set_retry_policy(std::make_shared<zkr::RetryNTimes>(0, 0ms));
    auto out = sem_start(s, 1);
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    CHECK(out->ec == errc::node_not_found_after_retries);
    CHECK(out->leases.empty());
    CHECK(out->seen.empty());
    CHECK(out->seen2.empty());
  }
}

TEST_CASE_METHOD(Fixture,
                 "semaphore: a fault at each step -> that error, every node deleted before completing",
                 "[semaphore][fault]") {
  auto s = semaphore(2);
  const auto code = GENERATE(error_code(zk_errc::connection_loss), error_code(zk_errc::no_auth));
  CAPTURE(code.message());
  std::shared_ptr<Outcome> out;
  SECTION("mutex create") {
    core->fail_next(Op::create, code, sem_locks);
    out = sem_start(s, 1);
  }
  SECTION("mutex listing") {
    core->fail_next(Op::get_children, code, sem_locks);
    out = sem_start(s, 1);
  }
  SECTION("lease create") {
    core->fail_next(Op::create, code, sem_leases);
    out = sem_start(s, 1);
  }
  SECTION("lease listing") {
    core->fail_next(Op::get_children, code, sem_leases);
    out = sem_start(s, 1);
  }
  SECTION("second lease's create (qty 2): the first lease is returned") {
    core->fail_nth(Op::create, 2, code, sem_leases);
    out = sem_start(s, 2);
  }
  SECTION("second lease's mutex (qty 2)") {
    core->fail_nth(Op::get_children, 2, code, sem_locks);
    out = sem_start(s, 2);
  }
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  CHECK(out->ec == code);
  CHECK(out->leases.empty());
  CHECK(out->seen.empty());
  CHECK(out->seen2.empty());
  CHECK(out->watches_seen == 0);
}

TEST_CASE_METHOD(Fixture, "semaphore: giving the mutex back fails -> still granted, and the delete is kept",
                 "[semaphore][fault]") {
  auto s = semaphore(2);
  core->fail_next(Op::remove, zk_errc::connection_loss, sem_locks);
  auto out = sem_start(s, 1);
  REQUIRE(wait(*out));
  core->settle();
  INFO(core->describe_log());
  REQUIRE(out->leases.size() == 1);
  CHECK(kids(sem_locks).empty());
}

TEST_CASE_METHOD(Fixture, "semaphore: cancellation returns every lease already taken",
                 "[semaphore][cancel]") {
  auto s = semaphore(3);
  auto cancel = std::make_shared<zkr::detail::CancelState>();
  std::vector<std::string> foreign_leases, foreign_locks;
  std::shared_ptr<Outcome> out;
  SECTION("qty 3, cancelled while waiting for a slot after one lease") {
    foreign_leases = {other(sem_leases, "lease-"), other(sem_leases, "lease-")};
    out = sem_start(s, 3, std::nullopt, cancel);
    // the second lease waits: 4 > 3
    REQUIRE(core->run_until(
        [&] { return core->count(Op::create, sem_leases) == 2 && core->watch_count(sem_leases) == 1; }));
    core->settle();
    CHECK_FALSE(out->done());
    fire(cancel);
  }
  SECTION("qty 3, cancelled while waiting for the internal mutex after one lease") {
    // Another client queues on the mutex just before our second turn: we wait behind it.
    core->before_nth(
        Op::create, 2, [&] { foreign_locks.push_back(other(sem_locks, "lock-")); }, sem_locks);
    out = sem_start(s, 3, std::nullopt, cancel);
    REQUIRE(core->run_until([&] { return core->count(Op::get_data, sem_locks) == 1; }));
    core->settle();
    CHECK_FALSE(out->done());
    CHECK(kids(sem_leases).size() == 1);
    fire(cancel);
  }
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  CHECK(out->ec == boost::asio::error::operation_aborted);
  CHECK(out->leases.empty());
  std::vector<std::string> fl, fk;
  for (auto& p : foreign_leases) fl.push_back(name_of(p));
  for (auto& p : foreign_locks) fk.push_back(name_of(p));
  CHECK(out->seen == fl);   // only the other clients' leases were left when the completion ran
  CHECK(out->seen2 == fk);  // and only their mutex nodes
  CHECK(out->watches_seen == 0);
}

TEST_CASE_METHOD(Fixture, "semaphore: qty 2, the session expires after the first lease -> it is taken again",
                 "[semaphore][session]") {
  // 2 leases of others, max 3: our first lease is granted, the second waits. The session expires, which
  // deletes the first; the retried second finds a slot. The acquire must not return the first (its slot is
  // free for anyone now): it takes another and waits for it.
  auto s = semaphore(3);
  const auto f1 = other(sem_leases, "lease-");
  other(sem_leases, "lease-");
  auto out = sem_start(s, 2);
  REQUIRE(core->run_until(
      [&] { return core->count(Op::create, sem_leases) == 2 && core->watch_count(sem_leases) == 1; }));
  core->settle();
  REQUIRE_FALSE(out->done());
  core->expire_session();
  core->run_until([&] { return out->done() || core->count(Op::create, sem_leases) == 4; });
  core->settle();
  INFO(core->describe_log());
  REQUIRE_FALSE(out->done());  // 2 others + 2 of ours would be 4 > 3
  core->erase(f1);
  REQUIRE(wait(*out));
  REQUIRE_FALSE(out->ec);
  REQUIRE(out->leases.size() == 2);
  for (const auto& l : out->leases) {
    REQUIRE(core->stat(l.node_path()));
    CHECK(core->stat(l.node_path())->ephemeral_owner == core->session_id());
  }
  CHECK(kids(sem_leases).size() == 3);
}

TEST_CASE_METHOD(Fixture, "semaphore: a lease node of an earlier session is not granted",
                 "[semaphore][session]") {
  // The session expires between the lease's create and its listing, and the server has not deleted the old
  // nodes yet: the listing shows our node, but it belongs to the old session (CURATOR-604).
  auto s = semaphore(3);
  const auto old_session = core->session_id();
  core->before_next(
      Op::get_children, [&] { core->expire_session(/*drop_ephemerals=*/false); }, sem_leases);
  auto out = sem_start(s, 1);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  REQUIRE_FALSE(out->ec);
  REQUIRE(out->leases.size() == 1);
  CHECK(core->session_id() != old_session);
  REQUIRE(core->stat(out->leases[0].node_path()));
  CHECK(core->stat(out->leases[0].node_path())->ephemeral_owner == core->session_id());
  core->settle();
  CHECK(kids(sem_leases) == std::vector<std::string>{out->leases[0].node_name()});  // the old node deleted
}

TEST_CASE_METHOD(Fixture, "semaphore: timeouts", "[semaphore][timeout]") {
  auto s = semaphore(1);
  SECTION("timeout while waiting for a slot: no leases, no error, nothing of ours left") {
    const auto held = other(sem_leases, "lease-");
    const auto t0 = Clock::now();
    auto out = sem_start(s, 1, Clock::now() + 100ms);
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    CHECK(Clock::now() - t0 >= 100ms);
    CHECK_FALSE(out->ec);
    CHECK(out->leases.empty());
    CHECK(out->seen == names({held}));
    CHECK(out->seen2.empty());
  }
  SECTION("timeout 0 on a free semaphore: granted") {
    auto out = sem_start(s, 1, Clock::now());
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    CHECK_FALSE(out->ec);
    CHECK(out->leases.size() == 1);
  }
}

TEST_CASE_METHOD(Fixture, "semaphore: qty 0 is invalid_argument with no request", "[semaphore]") {
  auto s = semaphore(1);
  auto out = sem_start(s, 0);
  REQUIRE(wait(*out));
  CHECK(out->ec == errc::invalid_argument);
  CHECK(core->count_all() == 0);
}

// ===========================================================================================================
// The fake itself (so the tests above test the engine, not the fake)

TEST_CASE_METHOD(Fixture, "fake core: sequences, protection, owners, watches and fault rules", "[fake]") {
  const auto a = core->put("/d/x-", zkr::CreateMode::persistent_sequential);
  const auto b = core->put("/d/x-", zkr::CreateMode::persistent_sequential);
  CHECK(a == "/d/x-0000000000");
  CHECK(b == "/d/x-0000000001");
  core->erase(a);
  // As the 3.8 server: cversion counts creates and deletes, the sequence only creates.
  CHECK(core->stat("/d")->cversion == 3);
  CHECK(core->put("/d/x-", zkr::CreateMode::persistent_sequential) == "/d/x-0000000002");

  zkr::CreateResult r;
  error_code ec;
  zkr::CreateOptions o;
  o.mode = zkr::CreateMode::ephemeral_sequential;
  o.protection = true;
  o.parents_as_containers = true;
  int calls = 0;
  core->create("/p/q/n-", o, [&](error_code e, zkr::CreateResult res) {
    ec = e;
    r = std::move(res);
    ++calls;
  });
  CHECK(calls == 0);  // never inline
  core->settle();
  REQUIRE_FALSE(ec);
  CHECK(zkr::protected_names::is_protected_node(zkr::node_name(r.path)));
  CHECK(zkr::protected_names::normalize(zkr::node_name(r.path)) == "n-0000000000");
  CHECK(r.stat.ephemeral_owner == core->session_id());
  CHECK(r.stat.czxid > core->stat(b)->czxid);

  // One-shot data watch; remove_watch suppresses an event already queued.
  int fired = 0;
  core->get_data(
      r.path, [&](const zkr::WatchedEvent& ev) { fired += ev.type == zkr::EventType::node_data_changed; },
      [](error_code, zkr::NodeData) {});
  auto id2 = core->get_data(
      r.path, [&](const zkr::WatchedEvent&) { fired += 100; }, [](error_code, zkr::NodeData) {});
  core->settle();
  CHECK(core->watch_count(r.path) == 2);
  core->set(r.path, "1");
  core->remove_watch(id2);
  core->set(r.path, "2");
  core->settle();
  CHECK(fired == 1);

  // fail_nth counts matching requests only.
  core->fail_nth(Op::exists, 2, zk_errc::no_auth, "/d");
  std::vector<error_code> results;
  for (auto p : {"/d", "/p", "/d", "/d"})
    core->exists(p, nullptr, [&](error_code e, zkr::Stat) { results.push_back(e); });
  core->settle();
  CHECK(results == std::vector<error_code>{{}, {}, zk_errc::no_auth, {}});

  // Expiry drops this session's ephemerals only.
  core->expire_session();
  CHECK_FALSE(core->has(r.path));
  CHECK(core->has(b));
}

TEST_CASE_METHOD(Fixture,
                 "engine: a revocation watch whose read failed is armed again, and still hears a request",
                 "[engine][revocation]") {
  core->fail_next(Op::get_data, zk_errc::connection_loss);
  int asked = 0;
  zkr::detail::AcquireOptions o;
  o.revocable = true;
  o.on_revocation_requested = [&] { ++asked; };
  auto out = start(engine(), std::move(o));
  REQUIRE(wait(*out));
  REQUIRE(out->lease.valid());
  core->settle();
  REQUIRE(core->faults_consumed());                       // the watch's first read failed
  CHECK(core->watch_count(out->lease.node_path()) == 0);  // and left no watch: not revocable for now
  core->run_for(1500ms);                                  // the read is tried again a second later
  CHECK(core->count(Op::get_data) == 2);
  REQUIRE(core->watch_count(out->lease.node_path()) == 1);
  core->set(out->lease.node_path(), "__REVOKE__");
  core->settle();
  CHECK(asked == 1);
  CHECK_FALSE(release(out->lease));
}
