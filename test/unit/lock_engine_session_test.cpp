// Unit tests (no server) of the lock engine over FakeCore: the loss signal and CURATOR-604, the blocking
// release's contract, and the node a driver describes (persistent nodes, protection, data).

#include "lock_engine_fixture.hpp"

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
  error_code ec = zkr::client_errc::closed;  // overwritten by the release

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
