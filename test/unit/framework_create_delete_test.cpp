// Unit tests (no server) of protected create (protected_create.cpp) and guaranteed delete
// (guaranteed_delete.cpp), over a fake session, with a connection loss injected at each request. The fake
// keeps no tree: "the create reached the server" is a create answered with connection loss whose node the
// test then shows in the parent's listing.

#include <catch2/catch.hpp>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>
#include <zkr/framework/paths.hpp>

#include "fake_client.hpp"

namespace {

using namespace std::chrono_literals;
using fake::Call;
using fake::FakeClient;
using fake::SessionState;
namespace zk = fake::zk;
using zkr::client_errc;
using zkr::zk_errc;

constexpr std::int64_t other_session = 0x7777;

zkr::CreateOptions protected_ephemeral() {
  zkr::CreateOptions o;
  o.mode = zkr::CreateMode::ephemeral_sequential;
  o.protection = true;
  return o;
}

zkr::ClientConfig with_retries(int n, std::chrono::milliseconds sleep = 1ms) {
  zkr::ClientConfig cfg;
  cfg.retry_policy = std::make_shared<zkr::RetryNTimes>(n, sleep);
  return cfg;
}

/// The first try of a protected create of "/p/lock-": its path carries the GUID ("/p/_c_<guid>-lock-").
Call first_protected_try(FakeClient& c) {
  auto create = c.next();
  REQUIRE(create.is<zk::Create>());
  const auto name = zkr::node_name(create.path());
  INFO(create.path());
  CHECK(zkr::parent_path(create.path()) == "/p");
  CHECK(zkr::protected_names::is_protected_node(name + "0000000001"));
  CHECK(name.substr(name.size() - 5) == "lock-");
  return create;
}

/// A guaranteed delete of "/a" whose one try (the policy allows no retry) is lost: returns the first try of
/// the background delete, in flight.
Call kept_delete(FakeClient& c) {
  auto out = c.remove("/a", true);
  REQUIRE(c.session().reply(c.expect<zk::Delete>("/a"), zk_errc::connection_loss));
  REQUIRE(out->wait());
  CHECK(out->ec() == zk_errc::connection_loss);
  return c.expect<zk::Delete>("/a");
}

}  // namespace

TEST_CASE(
    "framework protected create: lost after the server made the node, it is found by its GUID and adopted",
    "[framework][protected]") {
  const int lost_at = GENERATE(0, 1, 2);  // 0: only the create's reply; 1: the listing too; 2: the exists too
  FakeClient c(with_retries(5));
  c.connect();
  auto out = c.create("/p/lock-", protected_ephemeral());
  auto create = first_protected_try(c);
  const auto made = create.path() + "0000000007";  // what the server made before the connection dropped
  REQUIRE(c.session().reply(create, zk_errc::connection_loss));
  auto listing = [&] { return fake::with_children({"lock-0000000003", zkr::node_name(made)}); };
  if (lost_at == 1) REQUIRE(c.session().reply(c.expect<zk::GetChildren>("/p"), zk_errc::connection_loss));
  REQUIRE(c.session().reply(c.expect<zk::GetChildren>("/p"), listing()));
  if (lost_at == 2) {
    REQUIRE(c.session().reply(c.expect<zk::Exists>(made), zk_errc::connection_loss));
    REQUIRE(c.session().reply(c.expect<zk::GetChildren>("/p"), listing()));
  }
  auto stat = fake::ephemeral_stat(c.session().current_session());
  stat.czxid = 42;
  REQUIRE(c.session().reply(c.expect<zk::Exists>(made), fake::with_stat(stat)));
  REQUIRE(out->wait());
  CHECK_FALSE(out->ec());
  CHECK(out->value().path == made);
  CHECK(out->value().stat.czxid == 42);
  c.sync_io();
  CHECK(c.session().unanswered() == 0);  // no second create, nothing swept
  CHECK(c.core().pending_deletes() == 0);
}

TEST_CASE("framework protected create: lost before the server made the node, it is created again",
          "[framework][protected]") {
  const int lost_at =
      GENERATE(0, 1, 2);  // 0: only the first create; 1: the listing too; 2: the second create
  FakeClient c(with_retries(5));
  c.connect();
  auto out = c.create("/p/lock-", protected_ephemeral());
  auto create = first_protected_try(c);
  REQUIRE(c.session().reply(create, zk_errc::connection_loss));
  if (lost_at == 1) REQUIRE(c.session().reply(c.expect<zk::GetChildren>("/p"), zk_errc::connection_loss));
  REQUIRE(c.session().reply(c.expect<zk::GetChildren>("/p"), fake::with_children({"lock-0000000003"})));
  if (lost_at == 2) {
    REQUIRE(c.session().reply(c.expect<zk::Create>(create.path()), zk_errc::connection_loss));
    // The parent went meanwhile: no node of ours either.
    REQUIRE(c.session().reply(c.expect<zk::GetChildren>("/p"), zk_errc::no_node));
  }
  // The same protected name again, so that a later look still finds it.
  auto again = c.expect<zk::Create>(create.path());
  zk::Reply made = fake::rc(zk_errc::ok);
  made.path = create.path() + "0000000008";
  REQUIRE(c.session().reply(again, made));
  REQUIRE(out->wait());
  CHECK_FALSE(out->ec());
  CHECK(out->value().path == made.path);
  c.sync_io();
  CHECK(c.session().unanswered() == 0);
}

TEST_CASE("framework protected create: an ephemeral node of an earlier session is deleted, not adopted",
          "[framework][protected]") {
  FakeClient c(with_retries(5));
  c.connect();
  auto out = c.create("/p/lock-", protected_ephemeral());
  auto create = first_protected_try(c);
  const auto stale = create.path() + "0000000007";
  REQUIRE(c.session().reply(create, zk_errc::connection_loss));
  REQUIRE(c.session().reply(c.expect<zk::GetChildren>("/p"), fake::with_children({zkr::node_name(stale)})));
  REQUIRE(
      c.session().reply(c.expect<zk::Exists>(stale), fake::with_stat(fake::ephemeral_stat(other_session))));
  auto del = c.expect<zk::Delete>(stale);  // in the background, guaranteed
  auto again = c.expect<zk::Create>(create.path());
  zk::Reply made = fake::rc(zk_errc::ok);
  made.path = create.path() + "0000000008";
  REQUIRE(c.session().reply(again, made));
  REQUIRE(out->wait());
  CHECK(out->value().path == made.path);
  CHECK(c.core().pending_deletes() == 1);
  REQUIRE(c.session().reply(del, zk_errc::ok));
  c.sync_io();
  CHECK(c.core().pending_deletes() == 0);
}

TEST_CASE("framework protected create: failed for good after an unknown outcome, its node is swept up",
          "[framework][protected]") {
  // How the create fails: its policy gives up after a connection loss, or its caller stops it during the
  // sleep that follows one.
  const bool stopped = GENERATE(false, true);
  // The sweep's own requests: each answered at once, or lost once first and retried in the background.
  const bool lose = GENERATE(false, true);
  FakeClient c(stopped ? with_retries(3, 60s) : with_retries(0));
  c.connect();
  auto stop = std::make_shared<zkr::detail::StopSignal>();
  auto out = c.create("/p/lock-", protected_ephemeral(), {.stop = stop});
  auto create = first_protected_try(c);
  REQUIRE(c.session().reply(create, zk_errc::connection_loss));
  if (stopped) {
    c.sync_io();  // the loop sleeps now
    c.stop(stop);
  }
  REQUIRE(out->wait(10s));
  CHECK(out->ec() == (stopped ? zkr::error_code(boost::asio::error::operation_aborted)
                              : zkr::error_code(zk_errc::connection_loss)));
  const auto orphan = create.path() + "0000000007";
  // The sweep: a listing of the parent, then a guaranteed delete of each node with our GUID.
  if (lose) REQUIRE(c.session().reply(c.expect<zk::GetChildren>("/p"), zk_errc::connection_loss));
  REQUIRE(c.session().reply(c.expect<zk::GetChildren>("/p"),
                            fake::with_children({"lock-0000000003", zkr::node_name(orphan)})));
  if (lose) REQUIRE(c.session().reply(c.expect<zk::Delete>(orphan), zk_errc::connection_loss));
  c.sync_io();  // the count moves inside the handler that sends the delete
  CHECK(c.core().pending_deletes() == 1);
  REQUIRE(c.session().reply(c.expect<zk::Delete>(orphan), zk_errc::ok));
  c.sync_io();
  CHECK(c.core().pending_deletes() == 0);
  CHECK(c.session().unanswered() == 0);
}

// ---------------------------------------------------------------------------------------------------------
// Guaranteed delete

TEST_CASE("framework guaranteed delete: a retryable failure is kept and retried in the background until done",
          "[framework][guaranteed]") {
  // zk_errc::closing: the handle was closed under the request (a session replaced), which the loop counts as
  // expiry.
  const zk_errc code = GENERATE(zk_errc::connection_loss, zk_errc::operation_timeout, zk_errc::session_moved,
                                zk_errc::session_expired, zk_errc::closing);
  FakeClient c(with_retries(1));
  c.connect();
  auto out = c.remove("/a", true);
  REQUIRE(c.session().reply(c.expect<zk::Delete>("/a"), code));
  REQUIRE(c.session().reply(c.expect<zk::Delete>("/a"), code));  // the policy's one retry
  REQUIRE(out->wait());
  CHECK(out->ec() ==
        (code == zk_errc::closing ? zkr::error_code(zk_errc::session_expired) : zkr::error_code(code)));
  // The caller has its error; the delete goes on in the background, each failure followed by a pause.
  CHECK(c.core().pending_deletes() == 1);
  auto bg1 = c.expect<zk::Delete>("/a");
  REQUIRE(c.session().reply(bg1, code));
  auto bg2 = c.expect<zk::Delete>("/a");
  CHECK(bg2.sent - *c.session().delivered(bg1) >= 50ms);
  CHECK(c.core().pending_deletes() == 1);
  REQUIRE(c.session().reply(bg2, zk_errc::ok));
  c.sync_io();
  CHECK(c.core().pending_deletes() == 0);
  CHECK(c.session().unanswered() == 0);
}

TEST_CASE("framework guaranteed delete: no connection within the timeout keeps it until the client connects",
          "[framework][guaranteed][protected]") {
  zkr::ClientConfig cfg;
  cfg.connection_timeout = 30ms;
  FakeClient c(cfg);
  auto out = c.remove("/a", true);
  // A protected create that never sent a try has nothing to sweep up.
  auto created = c.create("/p/lock-", protected_ephemeral());
  REQUIRE(out->wait());
  REQUIRE(created->wait());
  CHECK(out->ec() == client_errc::connection_timeout);
  CHECK(created->ec() == client_errc::connection_timeout);
  CHECK(c.core().pending_deletes() == 1);
  c.connect();
  REQUIRE(c.session().reply(c.expect<zk::Delete>("/a"), zk_errc::ok));
  c.sync_io();
  CHECK(c.core().pending_deletes() == 0);
  CHECK(c.session().sent() == 1);
}

TEST_CASE("framework guaranteed delete: the background delete ends on success, no node, or an error for good",
          "[framework][guaranteed]") {
  const zk_errc code = GENERATE(zk_errc::ok, zk_errc::no_node, zk_errc::not_empty, zk_errc::no_auth);
  FakeClient c(with_retries(0));
  c.connect();
  REQUIRE(c.session().reply(kept_delete(c), code));
  c.sync_io();
  CHECK(c.core().pending_deletes() == 0);
  CHECK(c.session().sent() == 2);  // not tried again
}

TEST_CASE("framework guaranteed delete: what is not kept", "[framework][guaranteed]") {
  FakeClient c(with_retries(0));
  c.connect();
  SECTION("an error retrying cannot fix") {
    auto out = c.remove("/a", true);
    REQUIRE(c.session().reply(c.expect<zk::Delete>("/a"), zk_errc::no_auth));
    REQUIRE(out->wait());
    CHECK(out->ec() == zk_errc::no_auth);
  }
  SECTION("no node, quietly: a success") {
    auto out = c.remove("/a", true, true);
    REQUIRE(c.session().reply(c.expect<zk::Delete>("/a"), zk_errc::no_node));
    REQUIRE(out->wait());
    CHECK_FALSE(out->ec());
  }
  SECTION("a delete without the guarantee") {
    auto out = c.remove("/a", false);
    REQUIRE(c.session().reply(c.expect<zk::Delete>("/a"), zk_errc::connection_loss));
    REQUIRE(out->wait());
    CHECK(out->ec() == zk_errc::connection_loss);
  }
  c.sync_io();
  CHECK(c.core().pending_deletes() == 0);
  CHECK(c.session().sent() == 1);
}

TEST_CASE("framework guaranteed delete: close gives pending deletes their wait, then drops them",
          "[framework][guaranteed]") {
  zkr::ClientConfig cfg = with_retries(0);
  SECTION("the delete completes while close waits: close returns without using all of its wait") {
    cfg.max_close_wait = 30s;
    FakeClient c(cfg);
    c.connect();
    auto bg = kept_delete(c);
    auto closing = std::async(std::launch::async, [&] { c.core().close(); });
    // Still in flight: close must not have ended the session under it.
    REQUIRE(c.session().reply(bg, zk_errc::ok));
    REQUIRE(closing.wait_for(10s) == std::future_status::ready);
    CHECK(c.core().pending_deletes() == 0);
    CHECK(c.session().closes() == 1);
  }
  SECTION("a delete still in flight when the wait ends is dropped") {
    cfg.max_close_wait = 100ms;
    FakeClient c(cfg);
    c.connect();
    auto bg = kept_delete(c);
    const auto begin = std::chrono::steady_clock::now();
    c.core().close();
    CHECK(std::chrono::steady_clock::now() - begin >= 100ms);
    CHECK(c.core().pending_deletes() == 0);
    CHECK_FALSE(c.session().reply(bg, zk_errc::ok));  // the session's close ended it (zk_errc::closing)
    CHECK(c.session().sent() == 2);
  }
  SECTION("a delete sleeping between tries is dropped") {
    cfg.max_close_wait = 0ms;
    FakeClient c(cfg);
    c.connect();
    REQUIRE(c.session().reply(kept_delete(c), zk_errc::connection_loss));  // now sleeping 50 ms
    c.sync_io();
    CHECK(c.core().pending_deletes() == 1);
    c.core().close();
    CHECK(c.core().pending_deletes() == 0);
    CHECK(c.session().sent() == 2);
  }
}

TEST_CASE(
    "framework guaranteed delete: a delete sent from the caller's thread and lost goes on as a guaranteed "
    "one",
    "[framework][guaranteed]") {
  FakeClient c(with_retries(0));
  c.connect();
  auto out = std::make_shared<fake::Outcome<>>();
  zkr::detail::VoidCallback cb = [out](zkr::error_code ec) { out->set(ec); };
  REQUIRE(c.core().remove_from_caller(std::vector<std::string>{"/a"}, cb));
  auto first = c.expect<zk::Delete>("/a");
  CHECK(first.from_caller);
  REQUIRE(c.session().reply(first, zk_errc::connection_loss));
  // The usual guaranteed, quiet remove: its own try, then the background.
  auto second = c.expect<zk::Delete>("/a");
  CHECK_FALSE(second.from_caller);
  REQUIRE(c.session().reply(second, zk_errc::connection_loss));
  REQUIRE(out->wait());
  CHECK(out->ec() == zk_errc::connection_loss);
  CHECK(c.core().pending_deletes() == 1);
  REQUIRE(c.session().reply(c.expect<zk::Delete>("/a"), zk_errc::no_node));
  c.sync_io();
  CHECK(c.core().pending_deletes() == 0);
}

TEST_CASE("framework guaranteed delete: a delete the caller's thread cannot send is handed back untouched",
          "[framework][guaranteed]") {
  FakeClient c;
  auto out = std::make_shared<fake::Outcome<>>();
  zkr::detail::VoidCallback cb = [out](zkr::error_code ec) { out->set(ec); };
  SECTION("not connected") {}
  SECTION("the session cannot send from this thread") {
    c.connect();
    c.session().accept_from_caller(false);
  }
  CHECK_FALSE(c.core().remove_from_caller(std::vector<std::string>{"/a"}, cb));
  REQUIRE(cb);
  cb({});
  CHECK(out->done());
  CHECK(c.session().sent() == 0);
}

TEST_CASE("framework delete with children: a node gone once its children are counts as deleted",
          "[framework][delete]") {
  // A container parent is reaped by the server when its last child goes, often before the client's own
  // delete of it arrives: the caller asked for the tree gone, and it is.
  FakeClient c(with_retries(0));
  c.connect();
  auto out = c.remove_tree("/c");
  REQUIRE(c.session().reply(c.expect<zk::GetChildren>("/c"), fake::with_children({"x"})));
  REQUIRE(c.session().reply(c.expect<zk::GetChildren>("/c/x"), fake::with_children({})));
  REQUIRE(c.session().reply(c.expect<zk::Delete>("/c/x"), zk_errc::ok));
  REQUIRE(c.session().reply(c.expect<zk::Delete>("/c"), zk_errc::no_node));
  REQUIRE(out->wait());
  CHECK(out->ec() == zkr::error_code{});

  // A node that is not there when the delete begins is still "no node" (unless quietly).
  auto missing = c.remove_tree("/m");
  REQUIRE(c.session().reply(c.expect<zk::GetChildren>("/m"), zk_errc::no_node));
  REQUIRE(missing->wait());
  CHECK(missing->ec() == zk_errc::no_node);
  // Any other refusal of the top delete is the caller's.
  auto versioned = c.remove_tree("/v");
  REQUIRE(c.session().reply(c.expect<zk::GetChildren>("/v"), fake::with_children({})));
  REQUIRE(c.session().reply(c.expect<zk::Delete>("/v"), zk_errc::not_empty));
  REQUIRE(versioned->wait());
  CHECK(versioned->ec() == zk_errc::not_empty);
}
