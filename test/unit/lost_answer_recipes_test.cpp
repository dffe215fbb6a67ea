// Unit tests (no server) of the recipes' conditional writes over the real retry loop (a client engine over a
// fake session, fake_client.hpp): the distributed atomic number's versioned write and SharedValue's
// compare-and-set (SharedCount::try_set_count's), with their answer lost with the connection after the write
// was applied or before. Applied once at most; the caller hears success, a true "not applied", or
// outcome_unknown, never a "not set" for a write that was.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <zkr/framework/detail/access.hpp>
#include <zkr/recipes/detail/atomic_engine.hpp>
#include <zkr/recipes/detail/number_codec.hpp>
#include <zkr/recipes/shared_value.hpp>

#include "fake_client.hpp"

namespace {

using namespace std::chrono_literals;
using fake::FakeClient;
using fake::Outcome;
using fake::SessionState;
namespace zk = fake::zk;
using zkr::client_errc;
using zkr::zk_errc;

/// The one node the test's server holds.
struct ServedNode {
  std::string path;
  int version = 3;
  std::string data;
};

zkr::Stat served_stat(int v) {
  zkr::Stat s;
  s.version = v;
  s.mzxid = 100 + v;
  return s;
}

/// Answers the client's requests as a server holding `n` would, until `done()`; the first versioned set is
/// lost with the connection (which comes back), after it was applied when `applied`.
template <class Done>
void serve(FakeClient& c, ServedNode& n, bool applied, Done done) {
  bool lost = false;
  while (!done()) {
    auto call = c.session().next(20ms);
    if (!call) continue;
    INFO("got " << call->kind() << " " << call->path());
    REQUIRE(call->path() == n.path);
    if (const auto* s = call->as<zk::SetData>()) {
      const bool matches = s->version == -1 || s->version == n.version;
      const bool apply = matches && (lost || applied);
      if (apply) {
        ++n.version;
        n.data = s->data;
      }
      if (!lost) {
        lost = true;
        c.session().set_state(SessionState::connecting);
        REQUIRE(c.session().reply(*call, zk_errc::connection_loss));
        c.connect();
      } else {
        REQUIRE(c.session().reply(
            *call, matches ? fake::with_stat(served_stat(n.version)) : fake::rc(zk_errc::bad_version)));
      }
    } else if (call->is<zk::GetData>()) {
      REQUIRE(c.session().reply(*call, fake::with_data(n.data, served_stat(n.version))));
    } else if (call->is<zk::Exists>()) {
      REQUIRE(c.session().reply(*call, fake::with_stat(served_stat(n.version))));
    } else if (call->is<zk::Sync>()) {
      REQUIRE(c.session().reply(*call, zk_errc::ok));
    } else if (call->is<zk::Create>()) {
      REQUIRE(c.session().reply(*call, zk_errc::node_exists));
    } else {
      FAIL("unexpected request");
    }
  }
}

std::string long_bytes(std::int64_t v) { return zkr::detail::encode_big_endian(v, 8); }

}  // namespace

TEST_CASE("lost answer: a distributed atomic add over the real retry loop is applied once",
          "[counters][retry-loop]") {
  const bool applied = GENERATE(true, false);
  INFO("applied: " << applied);
  FakeClient c;
  c.connect();
  ServedNode n{"/atomic/n", 3, long_bytes(5)};
  auto out = std::make_shared<Outcome<zkr::detail::AtomicOutcome>>();
  {
    auto e = std::make_shared<zkr::detail::AtomicEngine>(
        c.shared_core(), n.path, 8, std::make_shared<zkr::RetryNTimes>(10, zkr::Millis(0)), std::nullopt);
    c.io([e, out] {
      e->run({zkr::detail::AtomicOp::Kind::add, {}, {}, 1},
             [out](zkr::error_code ec, zkr::detail::AtomicOutcome o) { out->set(ec, std::move(o)); });
    });
    serve(c, n, applied, [&] { return out->done(); });
  }
  CHECK(n.data == long_bytes(6));
  CHECK(n.version == 4);
  if (applied) {
    CHECK(out->ec() == client_errc::outcome_unknown);
    CHECK_FALSE(out->value().succeeded);
  } else {
    REQUIRE_FALSE(out->ec());
    CHECK(out->value().succeeded);
    CHECK(out->value().post == long_bytes(6));
  }
}

TEST_CASE("lost answer: SharedValue's compare-and-set is never a false not-set", "[shared][retry-loop]") {
  const bool applied = GENERATE(true, false);
  INFO("applied: " << applied);
  FakeClient c;
  c.connect();
  ServedNode n{"/shared", 3, "old"};
  auto value =
      zkr::detail::access::make_unique<zkr::SharedValue>(c.shared_core(), n.path, std::string("seed"));
  auto started = std::make_shared<Outcome<>>();
  value->async_start([started](zkr::error_code ec) { started->set(ec); });
  serve(c, n, false, [&] { return started->done(); });
  REQUIRE_FALSE(started->ec());
  const auto previous = value->versioned_value();
  REQUIRE(previous.version == 3);

  auto out = std::make_shared<Outcome<bool>>();
  value->async_try_set_value(previous, "new", [out](zkr::error_code ec, bool set) { out->set(ec, set); });
  serve(c, n, applied, [&] { return out->done(); });
  CHECK(n.data == "new");
  CHECK(n.version == 4);
  if (applied) {
    CHECK(out->ec() == client_errc::outcome_unknown);
  } else {
    REQUIRE_FALSE(out->ec());
    CHECK(out->value());
  }
  c.sync_io();
  value->close();
}
