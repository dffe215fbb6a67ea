// Unit tests (no server) of the retry loop's conditional writes (RequestOptions::conditional, retry_loop.cpp
// and conditional_write.cpp), over a fake session: a versioned set, a versioned delete and a create whose
// answer is lost with the connection (or with the session) are sent again only when a sync and a look at the
// node show them not applied; else they end with outcome_unknown. The policy bounds the looks, a stop ends
// the loop after one.

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "fake_client.hpp"

namespace {

using fake::FakeClient;
using fake::RecordingPolicy;
using fake::SessionState;
namespace zk = fake::zk;
using zkr::client_errc;
using zkr::zk_errc;

const zkr::detail::RequestOptions conditional_write{.conditional = true};

zkr::Stat at_version(int v) {
  zkr::Stat s;
  s.version = v;
  return s;
}

/// Loses `first`, the try in flight, with the connection; the session connects again.
void lose_try(FakeClient& c, const fake::Call& first) {
  c.session().set_state(SessionState::connecting);
  REQUIRE(c.session().reply(first, zk_errc::connection_loss));
  c.connect();
}

/// Answers the loop's look at `path`: the sync, then the exists with `exists`.
void answer_look(FakeClient& c, const std::string& path, zk::Reply exists) {
  REQUIRE(c.session().reply(c.expect<zk::Sync>(path), zk_errc::ok));
  REQUIRE(c.session().reply(c.expect<zk::Exists>(path), std::move(exists)));
}

}  // namespace

TEST_CASE("framework conditional write: a versioned set whose answer was lost goes again only if not applied",
          "[framework][retry-loop]") {
  FakeClient c;
  c.connect();
  auto out = c.set_data("/a", "v", 3, conditional_write);
  lose_try(c, c.expect<zk::SetData>("/a"));
  SECTION("still at the version expected: not applied, sent again") {
    answer_look(c, "/a", fake::with_stat(at_version(3)));
    REQUIRE(c.session().reply(c.expect<zk::SetData>("/a"), fake::with_stat(at_version(4))));
    REQUIRE(out->wait());
    CHECK_FALSE(out->ec());
    CHECK(out->value().version == 4);
  }
  SECTION("at another version: outcome unknown, nothing sent again") {
    answer_look(c, "/a", fake::with_stat(at_version(4)));
    REQUIRE(out->wait());
    CHECK(out->ec() == client_errc::outcome_unknown);
  }
  SECTION("gone: outcome unknown") {
    answer_look(c, "/a", fake::rc(zk_errc::no_node));
    REQUIRE(out->wait());
    CHECK(out->ec() == client_errc::outcome_unknown);
  }
  c.sync_io();
  CHECK(c.session().unanswered() == 0);
}

TEST_CASE("framework conditional write: a create goes again only while its node is missing",
          "[framework][retry-loop]") {
  FakeClient c;
  c.connect();
  zkr::CreateOptions o;
  o.data = "v";
  auto out = c.create("/a", o, conditional_write);
  lose_try(c, c.expect<zk::Create>("/a"));
  SECTION("missing: not applied, sent again") {
    answer_look(c, "/a", fake::rc(zk_errc::no_node));
    REQUIRE(c.session().reply(c.expect<zk::Create>("/a"), zk_errc::ok));
    REQUIRE(out->wait());
    CHECK_FALSE(out->ec());
    CHECK(out->value().path == "/a");
  }
  SECTION("there: outcome unknown (ours, or another client's)") {
    answer_look(c, "/a", fake::with_stat(at_version(0)));
    REQUIRE(out->wait());
    CHECK(out->ec() == client_errc::outcome_unknown);
  }
  c.sync_io();
  CHECK(c.session().unanswered() == 0);
}

TEST_CASE("framework conditional write: a versioned delete goes again only while the node is at its version",
          "[framework][retry-loop]") {
  FakeClient c;
  c.connect();
  auto out = c.remove_version("/a", 2, conditional_write);
  lose_try(c, c.expect<zk::Delete>("/a"));
  SECTION("at the version: sent again") {
    answer_look(c, "/a", fake::with_stat(at_version(2)));
    REQUIRE(c.session().reply(c.expect<zk::Delete>("/a"), zk_errc::ok));
    REQUIRE(out->wait());
    CHECK_FALSE(out->ec());
  }
  SECTION("gone: outcome unknown, not no_node") {
    answer_look(c, "/a", fake::rc(zk_errc::no_node));
    REQUIRE(out->wait());
    CHECK(out->ec() == client_errc::outcome_unknown);
  }
}

TEST_CASE("framework conditional write: an expiry between the try and the look", "[framework][retry-loop]") {
  const bool applied = GENERATE(true, false);
  FakeClient c;
  c.connect();
  const auto old_session = c.core().session_id();
  auto out = c.set_data("/a", "v", 3, conditional_write);
  auto first = c.expect<zk::SetData>("/a");
  c.session().set_state(SessionState::expired);  // the try ends with its session
  c.connect();
  REQUIRE(c.core().session_id() != old_session);
  answer_look(c, "/a", fake::with_stat(at_version(applied ? 4 : 3)));
  if (applied) {
    REQUIRE(out->wait());
    CHECK(out->ec() == client_errc::outcome_unknown);
  } else {
    auto again = c.expect<zk::SetData>("/a");
    CHECK(again.session == c.core().session_id());
    REQUIRE(c.session().reply(again, fake::with_stat(at_version(4))));
    REQUIRE(out->wait());
    CHECK_FALSE(out->ec());
  }
  CHECK_FALSE(c.session().reply(first, zk_errc::ok));  // ended by the old session's close
}

TEST_CASE("framework conditional write: a look that fails is looked again, under the policy, never written",
          "[framework][retry-loop]") {
  auto policy = std::make_shared<RecordingPolicy>(std::make_shared<zkr::RetryNTimes>(2, zkr::Millis(1)));
  zkr::ClientConfig cfg;
  cfg.retry_policy = policy;
  FakeClient c(cfg);
  c.connect();
  auto out = c.set_data("/a", "v", 3, conditional_write);
  lose_try(c, c.expect<zk::SetData>("/a"));  // retry 1
  lose_try(c, c.expect<zk::Sync>("/a"));     // retry 2
  SECTION("the policy allows another look") {
    answer_look(c, "/a", fake::with_stat(at_version(3)));
    REQUIRE(c.session().reply(c.expect<zk::SetData>("/a"), fake::with_stat(at_version(4))));
    REQUIRE(out->wait());
    CHECK_FALSE(out->ec());
  }
  SECTION("the policy gives up: the loss is the result") {
    REQUIRE(c.session().reply(c.expect<zk::Sync>("/a"), zk_errc::ok));
    REQUIRE(c.session().reply(c.expect<zk::Exists>("/a"), zk_errc::connection_loss));
    REQUIRE(out->wait());
    CHECK(out->ec() == zk_errc::connection_loss);
    c.sync_io();
    CHECK(c.session().sent() == 4);  // set, sync, sync, exists: nothing after the policy gave up
    CHECK(policy->decisions().size() == 3);
  }
}

TEST_CASE("framework conditional write: a stop during the look ends the write unsent",
          "[framework][retry-loop]") {
  FakeClient c;
  c.connect();
  auto stop = std::make_shared<zkr::detail::StopSignal>();
  auto out = c.set_data("/a", "v", 3, {.stop = stop, .conditional = true});
  lose_try(c, c.expect<zk::SetData>("/a"));
  auto sync = c.expect<zk::Sync>("/a");
  c.stop(stop);
  c.sync_io();
  REQUIRE(c.session().reply(sync, zk_errc::ok));
  // The look, once started, ends (its answer is not used): the write is not sent again.
  REQUIRE(c.session().reply(c.expect<zk::Exists>("/a"), fake::with_stat(at_version(3))));
  REQUIRE(out->wait());
  CHECK(out->ec() == boost::asio::error::operation_aborted);
  c.sync_io();
  CHECK(c.session().sent() == 3);
}

TEST_CASE("framework conditional write: without the mode, or unversioned, a lost write is sent again at once",
          "[framework][retry-loop]") {
  const bool versioned = GENERATE(true, false);
  FakeClient c;
  c.connect();
  auto out = versioned ? c.set_data("/a", "v", 3) : c.set_data("/a", "v", -1, conditional_write);
  lose_try(c, c.expect<zk::SetData>("/a"));
  REQUIRE(c.session().reply(c.expect<zk::SetData>("/a"), zk_errc::bad_version));  // Curator's behaviour
  REQUIRE(out->wait());
  CHECK(out->ec() == zk_errc::bad_version);
}
