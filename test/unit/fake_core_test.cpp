// Unit tests of FakeCore itself, so that the engine's tests test the engine, not the fake.

#include "lock_engine_fixture.hpp"

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
