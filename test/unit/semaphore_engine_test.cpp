// Unit tests (no server) of the semaphore's state machine (`SemAcquire`) over FakeCore: round trips, waits,
// a fault at every step (generated from the request log of a clean run), sessions and timeouts.

#include "lock_engine_fixture.hpp"

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
    CHECK(out->ec == client_errc::node_not_found_after_retries);
    CHECK(out->leases.empty());
    CHECK(out->seen.empty());
    CHECK(out->seen2.empty());
  }
}

namespace {

/// The semaphore's outcome after a failed step: that error with none of our nodes left at completion (leases
/// nor internal mutex), or granted with exactly our leases; once settled, nothing of ours in the mutex.
void check_semaphore_outcome(Fixture& f, const Run& run, error_code code, std::size_t qty) {
  const auto& out = *run.out;
  const auto mine = ours(out.seen, run.others);
  if (out.ec) {
    CHECK(out.ec == code);
    CHECK(out.leases.empty());
    CHECK(mine.empty());
    CHECK(ours(out.seen2, run.others).empty());
  } else {
    REQUIRE(out.leases.size() == qty);
    std::vector<std::string> held;
    for (const auto& l : out.leases) held.push_back(zkr::node_name(l.node_path()));
    std::sort(held.begin(), held.end());
    CHECK(mine == held);
  }
  CHECK(out.watches_seen == 0);
  f.core->settle();
  CHECK(ours(f.kids(sem_locks), run.others).empty());
  CHECK(ours(f.kids(sem_leases), run.others) == mine);
}

}  // namespace

TEST_CASE("semaphore: a fault at every step of a two-lease acquire -> that error, every node deleted first",
          "[semaphore][fault]") {
  fake::for_each_failed_step<Fixture>(
      [](Fixture& f) {
        auto out = f.sem_start(f.semaphore(2), 2);
        f.wait(*out);
        return Run{out, {}};
      },
      {zk_errc::connection_loss, zk_errc::no_auth},
      [](Fixture& f, const Run& run, error_code code, const fake::FaultStep&) {
        check_semaphore_outcome(f, run, code, 2);
      },
      fake::unkept_delete);
}

TEST_CASE("semaphore: a fault at every step of a wait for a slot -> that error, every node deleted first",
          "[semaphore][fault]") {
  fake::for_each_failed_step<Fixture>(
      [](Fixture& f) {
        const auto holder = f.other(sem_leases, std::string(zkr::InterProcessSemaphoreV2::lease_base_name));
        auto out = f.sem_start(f.semaphore(1), 1);
        f.core->settle();
        if (!out->done()) f.core->erase(holder);
        f.wait(*out);
        return Run{out, {f.name_of(holder)}};
      },
      {zk_errc::connection_loss, zk_errc::no_auth},
      [](Fixture& f, const Run& run, error_code code, const fake::FaultStep&) {
        check_semaphore_outcome(f, run, code, 1);
      },
      fake::unkept_delete);
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
  SECTION("timeout 0, the lease's create meets a reaped directory: made again and granted") {
    // The server's container reaper took the leases' directory between the parents' create and ours.
    core->fail_next(Op::create, zk_errc::no_node, sem_leases);
    auto out = sem_start(s, 1, Clock::now());
    REQUIRE(wait(*out));
    core->settle();
    INFO(core->describe_log());
    CHECK_FALSE(out->ec);
    REQUIRE(out->leases.size() == 1);
    CHECK(core->count(Op::create, sem_leases) == 2);
    CHECK(kids(sem_leases) == std::vector<std::string>{out->leases[0].node_name()});
    CHECK(kids(sem_locks).empty());
  }
}

TEST_CASE_METHOD(Fixture, "semaphore: qty 0 is invalid_argument with no request", "[semaphore]") {
  auto s = semaphore(1);
  auto out = sem_start(s, 0);
  REQUIRE(wait(*out));
  CHECK(out->ec == client_errc::invalid_argument);
  CHECK(core->count_all() == 0);
}
