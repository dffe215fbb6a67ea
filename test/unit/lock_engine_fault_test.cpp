// Unit tests (no server) of the lock engine over FakeCore: a fault at every step (generated from the request
// log of a clean run), faults with a meaning of their own (a lost reply, a node that vanished), cancellation
// and timeouts at each step.

#include "lock_engine_fixture.hpp"

// ===========================================================================================================
// Faults, step by step

namespace {

/// The engine's outcome after a failed step: that error with none of our nodes left at completion, or (a step
/// whose failure costs only an optimization: the pre-watch's read) granted with exactly our one node.
void check_engine_outcome(Fixture& f, const Run& run, error_code code, const fake::FaultStep&) {
  const auto& out = *run.out;
  const auto mine = ours(out.seen, run.others);
  if (out.ec) {
    CHECK(out.ec == code);
    CHECK_FALSE(out.lease.valid());
    CHECK(mine.empty());
  } else {
    REQUIRE(out.lease.valid());
    CHECK(mine == std::vector<std::string>{zkr::node_name(out.lease.node_path())});
  }
  CHECK(out.watches_seen == 0);
  f.core->settle();
  CHECK(ours(f.kids(), run.others) == mine);
}

const std::initializer_list<error_code> step_faults = {zk_errc::connection_loss, zk_errc::operation_timeout,
                                                       zk_errc::session_expired, zk_errc::no_auth};

}  // namespace

TEST_CASE("engine: a fault at every step of an uncontended acquire -> that error, nothing left",
          "[engine][fault]") {
  fake::for_each_failed_step<Fixture>(
      [](Fixture& f) {
        auto out = f.start(f.engine());
        f.wait(*out);
        return Run{out, {}};
      },
      step_faults, check_engine_outcome);
}

TEST_CASE("engine: a fault at every step of a wait and its grant -> that error, nothing left",
          "[engine][fault]") {
  const bool prewatch = GENERATE(false, true);
  CAPTURE(prewatch);
  fake::for_each_failed_step<Fixture>(
      [prewatch](Fixture& f) {
        // Two nodes ahead: a watch on the nearer, a pre-watch (PrewatchLockDriver) on the farther; they leave
        // in queue order, and the grant comes with the second deletion.
        const auto first = f.other();
        const auto second = f.other();
        auto out = f.start(prewatch ? f.prewatch_engine() : f.engine());
        f.core->settle();
        if (!out->done()) f.core->erase(first);
        f.core->settle();
        if (!out->done()) f.core->erase(second);
        f.wait(*out);
        return Run{out, {f.name_of(first), f.name_of(second)}};
      },
      step_faults, check_engine_outcome);
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
    CHECK(out->ec == client_errc::node_not_found_after_retries);
    CHECK(core->count(Op::create) == 1);
    CHECK(out->seen.empty());
  }
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
    CHECK(out->ec == client_errc::node_not_found_after_retries);
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
  // on_queued is posted to the completion executor when the node is made, before the grant is reported; the
  // engine reports to this fixture directly on the I/O thread, so the posted calls are run (settle) before
  // `told` is read: read earlier, a loaded machine could see none yet (and the late call wrote into a `told`
  // already destroyed).
  SECTION("one node") {
    auto out = start(e, o);
    REQUIRE(wait(*out));
    REQUIRE(out->lease.valid());
    core->settle();
    REQUIRE(told.size() == 1);
    CHECK(told[0] == out->lease.node_path());
  }
  SECTION("the node is made again after its session expired: told again, with the new path") {
    core->before_next(Op::get_children, [&] { core->expire_session(); });
    auto out = start(e, o);
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    REQUIRE(out->lease.valid());
    core->settle();
    REQUIRE(told.size() == 2);
    CHECK(told[0] != told[1]);
    CHECK(told[1] == out->lease.node_path());
  }
  SECTION("a failed create tells nothing") {
    core->fail_next(Op::create, zk_errc::no_auth);
    auto out = start(e, o);
    REQUIRE(wait(*out));
    CHECK(out->ec == zk_errc::no_auth);
    core->settle();
    CHECK(told.empty());
  }
  core->settle();  // no call left to write into `told` after it is gone
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
  SECTION("free, its create meets a reaped parent: created again and granted (a timeout stops only waits)") {
    // The server's container reaper deleted the lock's directory between the parents' create and ours.
    core->fail_next(Op::create, zk_errc::no_node);
    auto out = start(e, std::move(o));
    REQUIRE(wait(*out));
    INFO(core->describe_log());
    CHECK_FALSE(out->ec);
    CHECK(out->lease.valid());
    CHECK(core->count(Op::create) == 2);
    CHECK(kids().size() == 1);
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

TEST_CASE_METHOD(Fixture, "engine: a stop while the create meets an error no retry mends -> that error",
                 "[engine][cancel]") {
  // The stop (a cancel here; a timeout 0 the same) came before the create's reply, yet the client's refusal
  // (its auth info, or SASL, was rejected on a reconnect and it stopped connecting) is the outcome: reported
  // as a timeout, `zkr lock -w 0` would say "timed out" (exit 75) instead of "refused" (69). An error a retry
  // would mend stays the stop's.
  auto e = engine();
  auto cancel = std::make_shared<zkr::detail::CancelState>();
  const auto code = GENERATE(error_code(zk_errc::auth_failed), error_code(zk_errc::connection_loss));
  CAPTURE(code.message());
  core->before_next(Op::create, [&] { cancel->request(); });
  // A refused client's create never reaches the server; a lost reply's may have.
  if (code == zk_errc::auth_failed)
    core->fail_next(Op::create, code);
  else
    core->fail_next_applied(Op::create, code);
  auto out = start(e, {}, cancel);
  REQUIRE(wait(*out));
  INFO(core->describe_log());
  CHECK(out->ec == (code == zk_errc::auth_failed ? code : error_code(boost::asio::error::operation_aborted)));
  CHECK_FALSE(out->lease.valid());
  core->settle();
  CHECK(kids().empty());
}
