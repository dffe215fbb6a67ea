// Integration tests of guaranteed delete (Curator's FailedDeleteManager): a delete that fails for a
// connection reason is kept and retried in the background until it succeeds, the client closes, or it fails
// for good.

#include "client_support.hpp"
#include "twins.hpp"

using namespace zkr;
using namespace zkr::itest;

namespace {

/// A failure the guaranteed machinery keeps retrying: no connection within the connection timeout, or a
/// connection-level error.
bool failed_for_connection(const error_code& ec) {
  return ec == client_errc::connection_timeout || is_retryable(ec);
}

}  // namespace

TEST_CASE("guaranteed delete: with the server down it fails, is kept, and completes after the restart",
          "[framework][guaranteed]") {
  zkr::testing::TestingServer server;
  const auto ns = unique_path("gns").substr(1);
  auto c = started(test_builder(server.connect_string()).session_timeout(30s).connection_timeout(1s));
  auto nc = started(
      test_builder(server.connect_string()).session_timeout(30s).connection_timeout(1s).namespace_name(ns));
  const auto root = unique_path("guaranteed");
  c->create(root);
  for (Twin t : all_twins) c->create(root + "/" + twin_name(t));
  c->create(root + "/eph", {.mode = CreateMode::ephemeral});  // the session survives the restart
  c->create(root + "/versioned");
  c->set_data(root + "/versioned", "x");
  nc->create("/in-ns");

  server.stop();
  REQUIRE(eventually([&] { return !c->is_connected() && !nc->is_connected(); }, 5s));

  std::size_t expected = 0;
  for (Twin t : all_twins) {
    INFO("twin: " << twin_name(t));
    const auto t0 = Clock::now();
    const auto ec = op_remove(*c, t, root + "/" + twin_name(t), {.guaranteed = true});
    CHECK(failed_for_connection(ec));
    CHECK(ms_since(t0) < 1000 + 3000);
    CHECK(c->pending_guaranteed_deletes() == ++expected);
  }
  CHECK(failed_for_connection(thrown_by([&] { c->remove(root + "/eph", {.guaranteed = true}); })));
  ++expected;
  // The version is not kept: the background delete is unconditional, as Curator's.
  CHECK(failed_for_connection(
      thrown_by([&] { c->remove(root + "/versioned", {.version = 1, .guaranteed = true}); })));
  ++expected;
  CHECK(c->pending_guaranteed_deletes() == expected);
  // A namespaced client keeps the un-namespaced path and namespaces it once (CURATOR-264).
  CHECK(failed_for_connection(thrown_by([&] { nc->remove("/in-ns", {.guaranteed = true}); })));
  CHECK(nc->pending_guaranteed_deletes() == 1);
  // A plain delete is not kept.
  error_code ec;
  c->remove(root, {}, ec);
  CHECK(failed_for_connection(ec));
  CHECK(c->pending_guaranteed_deletes() == expected);

  server.start();
  CHECK(eventually([&] { return c->pending_guaranteed_deletes() == 0; }, 15s));
  CHECK(eventually([&] { return nc->pending_guaranteed_deletes() == 0; }, 15s));
  REQUIRE(c->block_until_connected(10s));
  auto plain = started(test_builder(server.connect_string()));
  for (Twin t : all_twins) CHECK_FALSE(plain->exists(root + "/" + twin_name(t)));
  CHECK_FALSE(plain->exists(root + "/eph"));
  CHECK_FALSE(plain->exists(root + "/versioned"));
  CHECK_FALSE(plain->exists("/" + ns + "/in-ns"));  // so the kept path was namespaced once, not twice
  CHECK(plain->exists(root));
}

TEST_CASE("guaranteed delete: deleting_children with the server down", "[framework][guaranteed]") {
  zkr::testing::TestingServer server;
  auto c = started(test_builder(server.connect_string()).session_timeout(30s).connection_timeout(1s));
  const auto root = unique_path("gchildren");
  c->create(root + "/a/b", {.creating_parents = true});
  server.stop();
  REQUIRE(eventually([&] { return !c->is_connected(); }, 5s));
  const auto ec = thrown_by([&] { c->remove(root, {.guaranteed = true, .deleting_children = true}); });
  CHECK(failed_for_connection(ec));
  // As in Curator, the path is kept for the background (which deletes the node only, so it can fail for good
  // on not_empty; here the node has children).
  CHECK(c->pending_guaranteed_deletes() == 1);
  server.start();
  CHECK(eventually([&] { return c->pending_guaranteed_deletes() == 0; }, 15s));
  // The background delete does not delete children: the node stays, and it gave up (not_empty is final).
  REQUIRE(c->block_until_connected(10s));
  CHECK(c->exists(root + "/a/b"));
}

TEST_CASE("guaranteed delete: failures that retrying cannot fix are not kept", "[framework][guaranteed]") {
  auto c = connect_shared();
  const auto root = unique_path("gfinal");
  c->create(root + "/child", {.creating_parents = true});
  CHECK(thrown_by([&] { c->remove(root + "/missing", {.guaranteed = true}); }) == zk_errc::no_node);
  CHECK(thrown_by([&] { c->remove(root, {.version = 7, .guaranteed = true}); }) == zk_errc::bad_version);
  CHECK(thrown_by([&] { c->remove(root, {.guaranteed = true}); }) == zk_errc::not_empty);
  CHECK(c->pending_guaranteed_deletes() == 0);
  c->remove(root, {.guaranteed = true, .deleting_children = true});
  CHECK_FALSE(c->exists(root));
  CHECK(c->pending_guaranteed_deletes() == 0);
}

TEST_CASE("guaranteed delete: close waits up to max_close_wait, then gives the delete up",
          "[framework][guaranteed]") {
  zkr::testing::TestingServer server;
  auto c = started(test_builder(server.connect_string())
                       .session_timeout(30s)
                       .connection_timeout(500ms)
                       .max_close_wait(1500ms));
  const auto root = unique_path("gclose");
  c->create(root);
  server.stop();
  REQUIRE(eventually([&] { return !c->is_connected(); }, 5s));
  CHECK(failed_for_connection(thrown_by([&] { c->remove(root, {.guaranteed = true}); })));
  REQUIRE(c->pending_guaranteed_deletes() == 1);
  const auto t0 = Clock::now();
  c->close();
  const auto took = ms_since(t0);
  CHECK(took >= 1400);
  CHECK(took < 1500 + 2500);
  CHECK(c->pending_guaranteed_deletes() == 0);
  server.start();
  auto plain = started(test_builder(server.connect_string()));
  std::this_thread::sleep_for(200ms);
  CHECK(plain->exists(root));  // nobody deleted it
}

TEST_CASE("guaranteed delete: a pending delete completes as soon as the server is back, before close",
          "[framework][guaranteed]") {
  zkr::testing::TestingServer server;
  auto c = started(test_builder(server.connect_string())
                       .session_timeout(30s)
                       .connection_timeout(500ms)
                       .max_close_wait(20s));
  const auto root = unique_path("gclose2");
  c->create(root);
  server.stop();
  REQUIRE(eventually([&] { return !c->is_connected(); }, 5s));
  CHECK(failed_for_connection(thrown_by([&] { c->remove(root, {.guaranteed = true}); })));
  REQUIRE(c->pending_guaranteed_deletes() == 1);
  std::thread restarter([&] { server.start(); });
  c->close();  // waits (up to 20 s) for the pending delete, which completes once the server is back
  restarter.join();
  CHECK(c->pending_guaranteed_deletes() == 0);
  auto plain = started(test_builder(server.connect_string()));
  CHECK_FALSE(plain->exists(root));
}
