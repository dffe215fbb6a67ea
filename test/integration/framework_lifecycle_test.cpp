// Integration tests of CuratorFramework's life cycle against a real ZooKeeper server: operations before
// start, after close and pending at close, an unreachable ensemble, blocking calls on the client's I/O
// thread, and the cancellation of asynchronous operations (also while disconnected).

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <thread>

#include "client_support.hpp"
#include "completion_styles.hpp"
#include "fault_proxy.hpp"
#include "recorders.hpp"
#include "twins.hpp"

using namespace zkr;
using namespace zkr::itest;

TEST_CASE("life cycle: operations before start and after close", "[framework][lifecycle]") {
  SECTION("never started") {
    auto c = test_builder(shared_server().connect_string()).build();
    CHECK_FALSE(c->is_started());
    CHECK_FALSE(c->is_connected());
    CHECK(c->session_id() == 0);
    CHECK_FALSE(c->block_until_connected(100ms));
    for (Twin t : all_twins)
      for (auto& [op, ec] : every_op(*c, t, "/x")) {
        INFO("op: " << op << " twin: " << twin_name(t));
        CHECK(ec == client_errc::not_started);
      }
    CHECK(c->pending_guaranteed_deletes() == 0);
    CHECK(thrown_by([&] { c->inject_session_expiration(); }) == client_errc::not_started);
  }
  SECTION("closed") {
    auto c = connect_shared();
    const auto root = unique_path("closed");
    c->create(root, {.mode = CreateMode::ephemeral});
    c->close();
    c->close();  // idempotent
    CHECK_FALSE(c->is_started());
    CHECK_FALSE(c->is_connected());
    CHECK(c->session_id() == 0);
    CHECK_FALSE(c->block_until_connected(100ms));
    for (Twin t : all_twins)
      for (auto& [op, ec] : every_op(*c, t, "/x")) {
        INFO("op: " << op << " twin: " << twin_name(t));
        CHECK(ec == client_errc::closed);
      }
    error_code ec;
    c->start(ec);
    CHECK(ec == client_errc::closed);
    CHECK(thrown_by([&] { c->start(); }) == client_errc::closed);
    CHECK(thrown_by([&] { c->inject_session_expiration(); }) == client_errc::closed);
    // The session is gone with its ephemeral node.
    auto plain = connect_shared();
    CHECK_FALSE(plain->exists(root));
  }
  SECTION("closed before ever starting") {
    auto c = test_builder(shared_server().connect_string()).build();
    c->close();
    error_code ec;
    c->start(ec);
    CHECK(ec == client_errc::closed);
    CHECK(op_create(*c, Twin::error_code, "/x").ec == client_errc::closed);
  }
  SECTION("start twice is harmless") {
    auto c = connect_shared();
    c->start();
    CHECK(c->is_started());
    CHECK(c->exists("/"));
  }
  SECTION("a moved-from client's replacement works; the destructor closes") {
    auto c = connect_shared();
    const auto root = unique_path("moved");
    CuratorFramework moved(std::move(*c));
    moved.create(root, {.mode = CreateMode::ephemeral});
    { CuratorFramework gone(std::move(moved)); }
    auto plain = connect_shared();
    CHECK(eventually([&] { return !plain->exists(root); }, 5s));
  }
}

TEST_CASE("life cycle: an operation pending at close completes with closed", "[framework][lifecycle]") {
  const auto port = zkr::testing::free_port();
  auto c = test_builder("127.0.0.1:" + std::to_string(port)).connection_timeout(30s).build();
  c->start();
  auto fut = c->async_create("/x", {}, asio::use_future);
  auto fut2 = c->async_exists("/x", {}, asio::use_future);
  std::this_thread::sleep_for(200ms);
  const auto t0 = Clock::now();
  c->close();
  CHECK(from_future(std::move(fut), 5s).ec == client_errc::closed);
  CHECK(from_future(std::move(fut2), 5s).ec == client_errc::closed);
  CHECK(ms_since(t0) < 5000);
}

TEST_CASE("an unreachable ensemble: operations fail within the connection timeout",
          "[framework][connection]") {
  const auto port = zkr::testing::free_port();  // nothing listens there
  auto c = test_builder("127.0.0.1:" + std::to_string(port)).connection_timeout(500ms).build();
  c->start();  // connecting happens in the background
  CHECK(c->is_started());
  CHECK_FALSE(c->block_until_connected(200ms));
  CHECK_FALSE(c->is_connected());
  for (Twin t : all_twins) {
    INFO("twin: " << twin_name(t));
    const auto t0 = Clock::now();
    auto r = op_create(*c, t, "/x");
    CHECK(r.ec == client_errc::connection_timeout);
    CHECK(ms_since(t0) < 500 + 2000);  // a bound for hang detection, not a speed test
  }
  const auto t1 = Clock::now();
  CHECK(op_multi(*c, Twin::error_code, {Op::check("/x", 0)}).ec == client_errc::connection_timeout);
  CHECK(op_sync(*c, Twin::error_code, "/x") == client_errc::connection_timeout);
  CHECK(ms_since(t1) < 2 * 500 + 2000);
  // A protected create that never got to send a try leaves nothing to look for (no background clean-up).
  CHECK(op_create(*c, Twin::error_code, "/x", {.protection = true}).ec == client_errc::connection_timeout);
  CHECK(c->pending_guaranteed_deletes() == 0);
  // A guaranteed delete that cannot connect is left to the background.
  CHECK(thrown_by([&] { c->remove("/x", {.guaranteed = true}); }) == client_errc::connection_timeout);
  CHECK(c->pending_guaranteed_deletes() == 1);
  const auto t0 = Clock::now();
  c->close();  // waits up to max_close_wait (1 s) for it, then gives up
  CHECK(ms_since(t0) >= 900);
  CHECK(ms_since(t0) < 1000 + 2000);
  CHECK(c->pending_guaranteed_deletes() == 0);
}

TEST_CASE("blocking calls on the client's I/O thread fail with would_deadlock", "[framework][threading]") {
  auto c = connect_shared();
  const auto root = unique_path("deadlock");
  c->create(root);

  // From a completion handler (by default on the client's I/O thread).
  auto from_handler = with_callback<int>([&](auto done) {
    c->async_exists(root, {}, [&c, root, done = std::move(done)](error_code ec, std::optional<Stat>) mutable {
      error_code inner;
      c->exists(root, {}, inner);
      const auto thrown = thrown_by([&] { c->get_data(root); });
      done(ec,
           (inner == client_errc::would_deadlock ? 1 : 0) + (thrown == client_errc::would_deadlock ? 2 : 0));
    });
  });
  CHECK_FALSE(from_handler.ec);
  CHECK(from_handler.value == 3);

  // From a watcher.
  auto from_watcher = std::make_shared<std::promise<error_code>>();
  c->exists(root + "/w", [&c, from_watcher](const WatchedEvent& e) {
    error_code inner;
    c->create(e.path + "-2", {}, inner);
    from_watcher->set_value(inner);
  });
  c->create(root + "/w");
  auto f = from_watcher->get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  CHECK(f.get() == client_errc::would_deadlock);

  // From a connection-state listener.
  auto from_listener = std::make_shared<std::promise<error_code>>();
  auto lc = test_builder(shared_server().connect_string()).build();
  lc->add_connection_state_listener([&lc, from_listener, root](ConnectionState s) {
    if (s != ConnectionState::connected) return;
    error_code inner;
    lc->sync(root, inner);
    from_listener->set_value(inner);
  });
  lc->start();
  auto lf = from_listener->get_future();
  REQUIRE(lf.wait_for(10s) == std::future_status::ready);
  CHECK(lf.get() == client_errc::would_deadlock);

  // close() from a handler does not deadlock (it closes at once, without waiting for anything).
  auto closer = started(test_builder(shared_server().connect_string()));
  auto closed_in_handler = with_callback<int>([&](auto done) {
    closer->async_sync(root, [&closer, done = std::move(done)](error_code ec) mutable {
      closer->close();
      done(ec, closer->is_started() ? 1 : 0);
    });
  });
  CHECK_FALSE(closed_in_handler.ec);
  CHECK(closed_in_handler.value == 0);
  CHECK(op_sync(*closer, Twin::error_code, root) == client_errc::closed);

  // With handlers on an executor of the application's own, blocking in a handler is allowed.
  asio::io_context app;
  auto guard = asio::make_work_guard(app);
  std::thread app_thread([&] { app.run(); });
  auto ac = started(test_builder(shared_server().connect_string()).executor(app.get_executor()));
  auto own = with_callback<int>([&](auto done) {
    ac->async_exists(
        root, {},
        [&ac, &app_thread, root, done = std::move(done)](error_code ec, std::optional<Stat>) mutable {
          const bool on_app_thread = std::this_thread::get_id() == app_thread.get_id();
          error_code inner;
          ac->get_data(root, {}, inner);
          done(ec ? ec : inner, on_app_thread ? 1 : 0);
        });
  });
  CHECK_FALSE(own.ec);
  CHECK(own.value == 1);
  ac->close();
  guard.reset();
  app_thread.join();
}

// ---------------------------------------------------------------------------------------------------------
// cancellation of framework operations

TEST_CASE("cancellation: an async framework operation completes at once with operation_aborted",
          "[framework][cancel]") {
  zkr::testing::TestingServer server;  // paused below: not the shared one
  auto c = started(test_builder(server.connect_string()).session_timeout(30s));
  auto admin = started(test_builder(server.connect_string()));
  const std::string root = "/cancel";
  c->create(root);
  const auto cversion_before = c->exists(root)->cversion;

  server.pause();  // requests now wait in the server's socket buffer
  {
    asio::cancellation_signal sig;
    auto f = c->async_get_data(root, {}, asio::bind_cancellation_slot(sig.slot(), asio::use_future));
    CHECK(f.wait_for(200ms) == std::future_status::timeout);  // it really waits
    sig.emit(asio::cancellation_type::terminal);
    CHECK(from_future(std::move(f), 2s).ec == asio::error::operation_aborted);
  }
  {
    // A cancelled create that the server applies after all: the client deletes the node it made.
    asio::cancellation_signal sig;
    std::promise<error_code> p;
    int calls = 0;
    c->async_create(root + "/made", {},
                    asio::bind_cancellation_slot(sig.slot(), [&](error_code ec, CreateResult) {
                      ++calls;
                      p.set_value(ec);
                    }));
    std::this_thread::sleep_for(100ms);
    sig.emit(asio::cancellation_type::terminal);
    auto f = p.get_future();
    REQUIRE(f.wait_for(2s) == std::future_status::ready);
    CHECK(f.get() == asio::error::operation_aborted);
    server.resume();
    // The server applied the create (the parent's cversion counts it) and then the deletion.
    CHECK(eventually([&] { return admin->exists(root)->cversion >= cversion_before + 2; }, 10s));
    CHECK_FALSE(admin->exists(root + "/made"));
    sig.emit(asio::cancellation_type::terminal);  // a late emit after completion is harmless
    std::this_thread::sleep_for(100ms);
    CHECK(calls == 1);
  }
  {
    // A cancelled read whose reply comes after all leaves no watch behind: its watcher never runs.
    server.pause();
    asio::cancellation_signal sig;
    EventRecorder cancelled_watch;
    auto f = c->async_get_data(root, cancelled_watch.watcher(),
                               asio::bind_cancellation_slot(sig.slot(), asio::use_future));
    std::this_thread::sleep_for(100ms);
    sig.emit(asio::cancellation_type::terminal);
    CHECK(from_future(std::move(f), 2s).ec == asio::error::operation_aborted);
    server.resume();
    c->sync(root);                   // the cancelled read's reply has come
    admin->set_data(root, "first");  // a watch left by the cancelled read would fire here
    EventRecorder marker;
    REQUIRE(c->exists(root, marker.watcher()));
    admin->set_data(root, "second");
    REQUIRE(
        marker.wait_count(1, 10s));  // the session's events arrive in order: "first" would have come before
    CHECK(cancelled_watch.size() == 0);
  }
  // An operation with a slot bound but never cancelled completes normally, and the client is fine.
  asio::cancellation_signal sig;
  auto f = c->async_create(root + "/kept", {.data = std::string("x")},
                           asio::bind_cancellation_slot(sig.slot(), asio::use_future));
  const auto r = from_future(std::move(f), 10s);
  REQUIRE_FALSE(r.ec);
  CHECK(r.value.path == root + "/kept");
  CHECK(c->get_data(root + "/kept").data == "x");
}

TEST_CASE("framework: a cancelled operation is not tried again when the connection comes back",
          "[framework][cancel]") {
  FaultProxy proxy(shared_server().port());
  StateRecorder states;
  auto c = test_builder(proxy.connect_string())
               .session_timeout(30s)
               .connection_timeout(20s)
               .retry_policy(std::make_shared<RetryNTimes>(100, Millis(50)))
               .build();
  c->add_connection_state_listener(states.sink());
  c->start();
  REQUIRE(c->block_until_connected(10s));
  auto admin = connect_shared();
  const auto root = unique_path("cancel-retry");
  admin->create(root, {.data = std::string("old")});
  admin->create(root + "/existing");
  const auto before = *admin->exists(root);

  // 1. Operations waiting for the connection: cancelled, they are never sent.
  proxy.set_refuse(true);
  proxy.drop_connections();
  REQUIRE(states.wait_for(ConnectionState::suspended, 10s));
  asio::cancellation_signal s1, s2, s3, s4, s5;
  auto set = c->async_set_data(root, "new", -1, asio::bind_cancellation_slot(s1.slot(), asio::use_future));
  auto made = c->async_create(root + "/never", {}, asio::bind_cancellation_slot(s2.slot(), asio::use_future));
  auto gone =
      c->async_remove(root + "/existing", {}, asio::bind_cancellation_slot(s3.slot(), asio::use_future));
  auto txn = c->async_multi({Op::create(root + "/never-in-txn")},
                            asio::bind_cancellation_slot(s4.slot(), asio::use_future));
  EventRecorder watch;
  auto read =
      c->async_get_children(root, watch.watcher(), asio::bind_cancellation_slot(s5.slot(), asio::use_future));
  std::this_thread::sleep_for(200ms);
  CHECK(set.wait_for(0s) == std::future_status::timeout);  // they really wait
  for (auto* s : {&s1, &s2, &s3, &s4, &s5}) s->emit(asio::cancellation_type::terminal);
  CHECK(from_future(std::move(set), 2s).ec == asio::error::operation_aborted);
  CHECK(from_future(std::move(made), 2s).ec == asio::error::operation_aborted);
  CHECK(from_void_future(std::move(gone), 2s) == asio::error::operation_aborted);
  CHECK(from_future(std::move(txn), 2s).ec == asio::error::operation_aborted);
  CHECK(from_future(std::move(read), 2s).ec == asio::error::operation_aborted);

  // 2. A protected create whose first try reached the server but lost its reply: cancelled before the retry
  // could look for the node, the node is found and deleted in the background once connected again.
  proxy.set_refuse(false);
  REQUIRE(c->block_until_connected(10s));
  proxy.arm_cut_on_create("/_c_", /*forward=*/true, 300ms, /*refuse_after=*/true);
  asio::cancellation_signal s6;
  auto prot = c->async_create(root + "/p-", {.mode = CreateMode::ephemeral_sequential, .protection = true},
                              asio::bind_cancellation_slot(s6.slot(), asio::use_future));
  REQUIRE(proxy.wait_fired(10s));
  const auto prefix = protected_prefix_of(proxy.cut_path());
  REQUIRE(eventually([&] { return proxy.cut_done(); }, 5s));
  std::this_thread::sleep_for(200ms);  // the try has failed with the connection: the loop waits for it
  s6.emit(asio::cancellation_type::terminal);
  CHECK(from_future(std::move(prot), 2s).ec == asio::error::operation_aborted);
  CHECK(children_with_prefix(*admin, root, prefix).size() == 1);  // the server did apply the cut create

  // The connection comes back in the same session.
  const auto sid = c->session_id();
  proxy.set_refuse(false);
  REQUIRE(c->block_until_connected(10s));
  CHECK(c->session_id() == sid);
  CHECK(eventually([&] { return children_with_prefix(*admin, root, prefix).empty(); }, 10s));
  c->sync(root);
  std::this_thread::sleep_for(300ms);  // time for a retry that should not happen to reach the server
  const auto after = admin->get_data(root);
  CHECK(after.data == "old");
  CHECK(after.stat.version == before.version);
  CHECK(admin->exists(root + "/existing"));
  CHECK_FALSE(admin->exists(root + "/never"));
  CHECK_FALSE(admin->exists(root + "/never-in-txn"));
  // Children changed only by the protected node's create and delete.
  CHECK(admin->exists(root)->cversion == before.cversion + 2);
  admin->create(root + "/later");
  CHECK(watch.size() == 0);  // the cancelled read left no watch
  CHECK(c->pending_guaranteed_deletes() == 0);
}
