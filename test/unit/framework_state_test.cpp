// Unit tests (no server) of the connection states (connection_states.hpp) in the whole client, over a fake
// session: the session's states become Curator's connection states as the client's listeners see them, with
// the simulated expiry while suspended, the session replaced after a loss, and the requests in flight at each
// change.

#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <vector>

#include "fake_client.hpp"

namespace {

using namespace std::chrono_literals;
using fake::FakeClient;
using fake::Outcome;
using fake::SessionState;
namespace zk = fake::zk;
using zkr::ConnectionState;
using zkr::zk_errc;
using States = std::vector<ConnectionState>;
using Clock = std::chrono::steady_clock;

constexpr auto connected = ConnectionState::connected;
constexpr auto suspended = ConnectionState::suspended;
constexpr auto reconnected = ConnectionState::reconnected;
constexpr auto lost = ConnectionState::lost;
constexpr auto read_only = ConnectionState::read_only;

}  // namespace

TEST_CASE("framework states: CONNECTED once, SUSPENDED on a disconnect, RECONNECTED with the same session",
          "[framework][states]") {
  FakeClient c;
  c.connect();
  CHECK(c.states().wait_for(1) == States{connected});
  const auto session = c.core().session_id();
  CHECK(session != 0);
  CHECK(session == c.session().current_session());

  c.session().set_state(SessionState::connecting);
  CHECK(c.states().wait_for(2) == States{connected, suspended});
  CHECK_FALSE(c.core().is_connected());

  c.connect();
  CHECK(c.states().wait_for(3) == States{connected, suspended, reconnected});
  CHECK(c.core().session_id() == session);
  CHECK(c.session().opens() == 1);
}

TEST_CASE("framework states: a disconnect before the first connection is not SUSPENDED",
          "[framework][states]") {
  FakeClient c;
  c.session().set_state(SessionState::connecting);
  c.connect();
  c.session().set_state(SessionState::connecting);
  CHECK(c.states().wait_for(2) == States{connected, suspended});
}

TEST_CASE(
    "framework states: a session expiry is LOST, then a new session, where the request in flight is retried",
    "[framework][states]") {
  FakeClient c;
  c.connect();
  const auto old_session = c.core().session_id();
  auto out = c.get_data("/a");
  auto in_flight = c.expect<zk::GetData>("/a");
  auto watched = std::make_shared<Outcome<zkr::EventType>>();
  c.io([&c, watched] {
    c.core().exists(
        "/w", [watched](const zkr::WatchedEvent& e) { watched->set({}, e.type); },
        [](zkr::error_code, zkr::Stat) {}, {});
  });
  REQUIRE(
      c.session().reply(c.expect<zk::Exists>("/w"), zk_errc::no_node));  // an exists watch stays on no-node

  c.session().set_state(SessionState::expired);
  CHECK(c.states().wait_for(2) == States{connected, lost});
  REQUIRE(watched->wait());
  CHECK(watched->value() == zkr::EventType::session_lost);
  CHECK(c.session().closes() == 1);
  CHECK(c.session().opens() == 2);
  CHECK_FALSE(c.session().reply(in_flight, zk_errc::ok));  // ended by the close of the old session
  CHECK(c.core().session_id() == 0);

  c.connect();
  CHECK(c.states().wait_for(3) == States{connected, lost, reconnected});
  CHECK(c.core().session_id() != 0);
  CHECK(c.core().session_id() != old_session);
  auto retried = c.expect<zk::GetData>("/a");
  CHECK(retried.session == c.core().session_id());
  REQUIRE(c.session().reply(retried, fake::with_data("v")));
  REQUIRE(out->wait());
  CHECK_FALSE(out->ec());
}

TEST_CASE(
    "framework states: a watching read in flight at a session expiry keeps its watch, which its retry sets "
    "in "
    "the new session",
    "[framework][states]") {
  // Its reader gets the read's result and a watch id that is alive: had the watch been given session_lost
  // with the old session and then been set again by the retry, its events would reach nobody, and a one-shot
  // cache holding that id would never read the node again (found by the cache fault checker).
  FakeClient c;
  c.connect();
  auto watched = std::make_shared<Outcome<zkr::EventType>>();
  auto out = std::make_shared<Outcome<zkr::NodeData>>();
  c.io([&c, watched, out] {
    c.core().get_data(
        "/a", [watched](const zkr::WatchedEvent& e) { watched->set({}, e.type); },
        [out](zkr::error_code ec, zkr::NodeData d) { out->set(ec, std::move(d)); }, {});
  });
  auto in_flight = c.expect<zk::GetData>("/a");
  const auto id = in_flight.as<zk::GetData>()->watch;
  CHECK(id != 0);
  c.session().set_state(SessionState::expired);
  CHECK(c.states().wait_for(2) == States{ConnectionState::connected, lost});
  c.connect();
  auto retried = c.expect<zk::GetData>("/a");
  CHECK(retried.session == c.core().session_id());
  CHECK(retried.as<zk::GetData>()->watch == id);
  REQUIRE(c.session().reply(retried, fake::with_data("v")));
  REQUIRE(out->wait());
  CHECK_FALSE(out->ec());
  c.sync_io();
  c.sync_io();
  CHECK_FALSE(watched->done());  // no session_lost: the watch was never set in the old session
  c.session().fire_watch(id, zkr::EventType::node_data_changed);
  REQUIRE(watched->wait());
  CHECK(watched->value() == zkr::EventType::node_data_changed);
}

TEST_CASE("framework states: suspended for the session timeout (or its configured share) is LOST",
          "[framework][states]") {
  const int percent = GENERATE(100, 50);
  zkr::ClientConfig cfg;
  cfg.simulated_session_expiration_percent = percent;
  FakeClient c(cfg);
  c.session().set_negotiated_timeout(120ms);
  c.connect();
  CHECK(c.core().session_timeout() == 120ms);
  const auto begin = Clock::now();
  c.session().set_state(SessionState::connecting);
  CHECK(c.states().wait_for(3) == States{connected, suspended, lost});
  CHECK(c.states().at(2) - begin >= 120ms * percent / 100);
  // The session is given up: the handle is replaced, as after an expiry.
  CHECK(c.session().closes() == 1);
  CHECK(c.session().opens() == 2);
  c.connect();
  CHECK(c.states().wait_for(4) == States{connected, suspended, lost, reconnected});
}

TEST_CASE("framework states: reconnected in time, the suspension's clock stops, and the next one has its own",
          "[framework][states]") {
  FakeClient c;
  c.session().set_negotiated_timeout(100ms);
  c.connect();
  c.session().set_state(SessionState::connecting);
  c.connect();
  CHECK(c.states().wait_for(3) == States{connected, suspended, reconnected});
  const auto second = Clock::now();
  c.session().set_state(SessionState::connecting);
  CHECK(c.states().wait_for(5) == States{connected, suspended, reconnected, suspended, lost});
  // Had the first suspension's timer survived the reconnect, LOST would have come before this.
  CHECK(c.states().at(4) - second >= 100ms);
  CHECK(c.session().opens() == 2);
}

TEST_CASE("framework states: READ_ONLY, and a read-only connection's loss is SUSPENDED",
          "[framework][states]") {
  zkr::ClientConfig cfg;
  cfg.can_be_read_only = true;
  FakeClient c(cfg);
  SECTION("read-only first: the first read-write connection is then CONNECTED (as Curator)") {
    c.connect(SessionState::read_only);
    CHECK(c.states().wait_for(1) == States{read_only});
    c.session().set_state(SessionState::connecting);
    c.connect();
    c.session().set_state(SessionState::connecting);
    c.connect();
    CHECK(c.states().wait_for(5) == States{read_only, suspended, connected, suspended, reconnected});
  }
  SECTION("read-write first") {
    c.connect();
    c.session().set_state(SessionState::connecting);
    c.connect(SessionState::read_only);
    c.session().set_state(SessionState::connecting);
    CHECK(c.states().wait_for(4) == States{connected, suspended, read_only, suspended});
  }
  CHECK(c.session().opens() == 1);
}

TEST_CASE("framework states: an auth failure is LOST for good, and requests fail with auth_failed",
          "[framework][states]") {
  FakeClient c;
  c.connect();
  auto out = c.get_data("/a");
  c.expect<zk::GetData>("/a");
  c.session().set_state(SessionState::auth_failed);
  CHECK(c.states().wait_for(2) == States{connected, lost});
  REQUIRE(out->wait());
  CHECK(out->ec() == zk_errc::auth_failed);
  auto later = c.get_data("/b");
  REQUIRE(later->wait());
  CHECK(later->ec() == zk_errc::auth_failed);
  CHECK_FALSE(c.core().block_until_connected(10ms));
  CHECK(c.session().opens() == 1);  // no new session
  CHECK(c.session().sent() == 1);
}

TEST_CASE("framework states: a watch event reaches its watcher once", "[framework][states]") {
  FakeClient c;
  c.connect();
  auto watched = std::make_shared<Outcome<zkr::WatchedEvent>>();
  auto read = std::make_shared<Outcome<zkr::NodeData>>();
  c.io([&c, watched, read] {
    c.core().get_data(
        "/a", [watched](const zkr::WatchedEvent& e) { watched->set({}, e); },
        [read](zkr::error_code ec, zkr::NodeData d) { read->set(ec, std::move(d)); }, {});
  });
  auto call = c.expect<zk::GetData>("/a");
  REQUIRE(call.watch() != 0);
  REQUIRE(c.session().reply(call, fake::with_data("v")));
  REQUIRE(read->wait());
  c.session().fire_watch(call.watch(), zkr::EventType::node_deleted);
  c.session().fire_watch(call.watch(), zkr::EventType::node_deleted);
  REQUIRE(watched->wait());
  c.sync_io();
  CHECK(watched->calls() == 1);
  CHECK(watched->value().type == zkr::EventType::node_deleted);
  CHECK(watched->value().path == "/a");
}
