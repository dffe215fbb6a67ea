// Unit tests (no server) of the lock engine (`LockInternals::Attempt`) over FakeCore: round trips counted
// from the request log, the waits and wake-ups, the pre-watch. Faults: lock_engine_fault_test.cpp; sessions,
// the blocking release and the driver's node: lock_engine_session_test.cpp; the semaphore:
// semaphore_engine_test.cpp.

#include "lock_engine_fixture.hpp"

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
