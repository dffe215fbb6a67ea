// Integration tests of the framework's edge paths: the namespace created while still connecting, completions
// when the client is destroyed, long created paths in a transaction, background clean-up that cannot succeed,
// a guaranteed recursive delete cut off half-way, start racing close, and a state listener removing itself.

#include <dirent.h>

#include <atomic>
#include <zkr/testing/testing_cluster.hpp>

#include "client_support.hpp"
#include "completion_styles.hpp"
#include "fault_proxy.hpp"

using namespace zkr;
using namespace zkr::itest;

namespace {

/// Stops `server`, then starts a client in namespace `ns` on it.
std::unique_ptr<CuratorFramework> start_while_down(zkr::testing::TestingServer& server, const std::string& ns,
                                                   std::chrono::milliseconds connection_timeout,
                                                   RetryPolicyPtr retry) {
  server.stop();
  auto c = test_builder(server.connect_string())
               .namespace_name(ns)
               .connection_timeout(connection_timeout)
               .retry_policy(std::move(retry))
               .build();
  c->start();
  return c;
}

}  // namespace

TEST_CASE("namespace: the first operation waits for the connection and retries the namespace creation",
          "[framework][namespace][edge]") {
  zkr::testing::TestingServer server;
  const auto ns = unique_path("ns-wait").substr(1);
  auto c = start_while_down(server, ns, 30s, std::make_shared<RetryNTimes>(20, Millis(200)));
  // Issued while connecting: the namespace is created once connected, under the operation's retry loop.
  auto made = c->async_create("/first", {}, asio::use_future);
  std::this_thread::sleep_for(500ms);
  server.start();
  const auto r = from_future(std::move(made), 30s);
  CHECK_FALSE(r.ec);
  CHECK(r.value.path == "/first");
  auto plain = started(test_builder(server.connect_string()));
  CHECK(plain->exists("/" + ns + "/first"));
}

TEST_CASE("namespace: a guaranteed delete as the first operation is kept when the namespace cannot be made",
          "[framework][namespace][guaranteed][edge]") {
  zkr::testing::TestingServer server;
  const auto ns = unique_path("ns-gdel").substr(1);
  auto c = start_while_down(server, ns, 1s, std::make_shared<RetryNTimes>(0, Millis(0)));
  const auto ec = thrown_by([&] { c->remove("/x", {.guaranteed = true}); });
  INFO(ec.message());
  CHECK((ec == client_errc::connection_timeout || is_retryable(ec)));
  CHECK(c->pending_guaranteed_deletes() == 1);
}

TEST_CASE("namespace: sync as the first operation makes the namespace, as every other operation does",
          "[framework][namespace][edge]") {
  auto& server = shared_server();
  const auto ns = unique_path("ns-sync").substr(1);
  auto c = started(test_builder(server.connect_string()).namespace_name(ns));
  auto plain = started(test_builder(server.connect_string()));
  REQUIRE_FALSE(plain->exists("/" + ns));
  c->sync("/");
  CHECK(plain->exists("/" + ns));
}

TEST_CASE("namespace: a container root that the server deleted once empty is made again for a create",
          "[framework][namespace][edge]") {
  auto& server = shared_server();
  const auto ns = unique_path("ns-reaped").substr(1);
  auto c = started(test_builder(server.connect_string()).namespace_name(ns));
  auto plain = started(test_builder(server.connect_string()));
  // The root is made as a container by the first operation; a child of it comes and goes, so the server's
  // container check (100 ms in the test server) deletes the empty root.
  c->create("/held", {.mode = CreateMode::ephemeral});
  REQUIRE(plain->exists("/" + ns));
  c->remove("/held");
  REQUIRE(eventually([&] { return !plain->exists("/" + ns); }, 20s));

  // A create right under the root, without creating parents: it used to fail with no_node from now on.
  SECTION("create") {
    const auto r = c->create("/again", {.data = "x"});
    CHECK(r.path == "/again");
    CHECK(plain->exists("/" + ns + "/again"));
  }
  SECTION("protected sequential create") {
    const auto r = c->create("/seq-", {.mode = CreateMode::ephemeral_sequential, .protection = true});
    CHECK(plain->exists("/" + ns + r.path));
  }
  SECTION("transaction") {
    const auto rs = c->multi({Op::create("/t1", "a"), Op::create("/t2", "b")});
    REQUIRE(rs.size() == 2);
    CHECK(plain->exists("/" + ns + "/t1"));
    CHECK(plain->exists("/" + ns + "/t2"));
  }
  // A missing parent below the root is still the caller's no_node, not a reason to make anything.
  SECTION("a missing parent deeper down stays no_node") {
    const auto ec = thrown_by([&] { c->create("/missing/child"); });
    CHECK(ec == zk_errc::no_node);
    CHECK_FALSE(plain->exists("/" + ns + "/missing"));
  }
}

TEST_CASE("life cycle: destroying the client runs every pending completion with closed",
          "[framework][lifecycle][edge]") {
  const auto port = zkr::testing::free_port();  // nothing listens: every operation waits for the connection
  constexpr int n = 200;
  std::atomic<int> ran{0}, with_closed{0};
  {
    auto c = test_builder("127.0.0.1:" + std::to_string(port)).connection_timeout(30s).build();
    c->start();
    for (int i = 0; i < n; ++i)
      c->async_exists("/x" + std::to_string(i), {}, [&](error_code ec, std::optional<Stat>) {
        std::this_thread::sleep_for(2ms);  // a handler that does some work: the queue takes a while to drain
        ++ran;
        if (ec == client_errc::closed) ++with_closed;
      });
    std::this_thread::sleep_for(100ms);
  }  // the destructor returns after the I/O thread has ended
  CHECK(ran == n);
  CHECK(with_closed == n);
}

TEST_CASE("multi: a created path longer than 1024 bytes comes back whole", "[framework][multi][edge]") {
  const auto ns = unique_path("ns-long").substr(1);
  auto c = started(test_builder(shared_server().connect_string()).namespace_name(ns));
  const auto root = unique_path("long");
  c->create(root);
  const auto plain = root + "/" + std::string(1500, 'p');
  const auto seq = root + "/" + std::string(1500, 's') + "-";
  const auto r = c->multi({Op::create(plain, ""), Op::create(seq, "", CreateMode::persistent_sequential)});
  REQUIRE(r.size() == 2);
  CHECK(r[0].path == plain);
  CHECK(r[1].path.size() == seq.size() + 10);
  CHECK(r[1].path.rfind(seq, 0) == 0);
  CHECK(c->exists(r[1].path));
}

TEST_CASE("protected create: the background clean-up gives up on an error retrying cannot fix",
          "[framework][protected][edge]") {
  FaultProxy proxy(shared_server().port());
  auto c = started(test_builder(proxy.connect_string())
                       .retry_policy(std::make_shared<RetryNTimes>(0, Millis(0)))
                       .max_close_wait(10s));
  const auto root = unique_path("noauth-cleanup");
  // Anyone may create under the parent, nobody may list it: the clean-up's listing fails with no_auth.
  c->create(root, {.acl = AclList{Acl{perms::all & ~perms::read, Id{"world", "anyone"}}}});
  proxy.arm_cut_on_create("/_c_", /*forward=*/true, 300ms);
  error_code ec;
  c->create(root + "/p-", {.mode = CreateMode::persistent_sequential, .protection = true}, ec);
  REQUIRE(proxy.wait_fired(0ms));
  CHECK(is_connection_loss(ec));
  REQUIRE(c->block_until_connected(10s));
  CHECK(eventually([&] { return c->pending_guaranteed_deletes() == 0; }, 5s));
  const auto t0 = Clock::now();
  c->close();
  CHECK(ms_since(t0) < 5000);  // close does not wait max_close_wait for it
}

TEST_CASE("guaranteed delete: deleting_children cut off below the top keeps the top path",
          "[framework][guaranteed][edge]") {
  FaultProxy proxy(shared_server().port());
  auto c = started(test_builder(proxy.connect_string())
                       .connection_timeout(1s)
                       .retry_policy(std::make_shared<RetryNTimes>(0, Millis(0))));
  auto admin = connect_shared();
  const auto root = unique_path("gdeep");
  constexpr std::size_t n = 400;
  admin->create(root);
  std::vector<Op> ops;
  for (std::size_t i = 0; i < n; ++i) ops.push_back(Op::create(root + "/c" + std::to_string(i), ""));
  admin->multi(ops);
  auto gone = c->async_remove(root, {.guaranteed = true, .deleting_children = true}, asio::use_future);
  // Cut the connection once the recursion is under way (some children deleted, not all).
  REQUIRE(eventually([&] { return admin->get_children(root).size() < n; }, 20s));
  proxy.set_refuse(true);
  proxy.drop_connections();
  const auto ec = from_void_future(std::move(gone), 20s);
  INFO(ec.message());
  REQUIRE(ec);
  CHECK((ec == client_errc::connection_timeout || is_retryable(ec)));
  // The top path is kept. Its background delete removes the node only, so it succeeds once the children are
  // gone: delete them while the client is cut off.
  CHECK(c->pending_guaranteed_deletes() >= 1);
  for (const auto& child : admin->get_children(root)) admin->remove(root + "/" + child, {.quietly = true});
  proxy.set_refuse(false);
  CHECK(eventually([&] { return !admin->exists(root); }, 15s));
  CHECK(eventually([&] { return c->pending_guaranteed_deletes() == 0; }, 15s));
}

TEST_CASE("life cycle: start racing close leaves no handle open", "[framework][lifecycle][edge]") {
  const auto open_fds = [] {
    int n = 0;
    if (DIR* d = ::opendir("/proc/self/fd")) {
      while (::readdir(d)) ++n;
      ::closedir(d);
    }
    return n;
  };
  const auto cs = shared_server().connect_string();
  {
    auto warm = started(test_builder(cs));  // the server, the logger and the C client are set up
  }
  const int before = open_fds();
  for (int i = 0; i < 100; ++i) {
    auto c = test_builder(cs).build();
    std::atomic<bool> go{false};
    std::thread starter([&] {
      go = true;
      error_code ec;
      c->start(ec);
    });
    while (!go) std::this_thread::yield();
    c->close();
    starter.join();
    c.reset();
  }
  std::this_thread::sleep_for(200ms);
  CHECK(open_fds() <= before);
}

TEST_CASE("connection state: an internal listener may remove itself while it runs",
          "[framework][connection_state][edge]") {
  auto c = connect_shared();
  auto core = zkr::detail::access::core(*c);
  std::uint64_t id = 0;
  std::string seen;
  std::promise<void> added;
  boost::asio::post(core->io_executor(), [&] {
    // The closure owns a heap string: read after the listener's removal, it must still be intact.
    id = core->add_state_listener([&, marker = std::string(64, 'm')](ConnectionState) {
      core->remove_state_listener(id);
      seen = marker;
    });
    added.set_value();
  });
  added.get_future().wait();
  c->inject_session_expiration();
  REQUIRE(c->block_until_connected(10s));
  std::promise<void> drained;  // the I/O thread has run what was queued before
  boost::asio::post(core->io_executor(), [&] { drained.set_value(); });
  REQUIRE(drained.get_future().wait_for(10s) == std::future_status::ready);
  CHECK(seen == std::string(64, 'm'));
}
