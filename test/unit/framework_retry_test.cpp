// Unit tests (no server) of the framework's retry loop (retry_loop.cpp) and of the namespace root made on
// first use (namespace_acl.cpp), over a fake session: every request of an operation is answered by the test,
// with a connection loss injected at each one in turn.

#include <catch2/catch.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fake_client.hpp"

namespace {

using namespace std::chrono_literals;
using fake::Call;
using fake::FakeClient;
using fake::Outcome;
using fake::RecordingPolicy;
using fake::SessionState;
namespace zk = fake::zk;
using zkr::client_errc;
using zkr::zk_errc;

/// A client whose retry policy is `policy`, recorded.
struct Recorded {
  std::shared_ptr<RecordingPolicy> policy;
  FakeClient client;
  explicit Recorded(zkr::RetryPolicyPtr inner, zkr::ClientConfig cfg = {})
      : policy(std::make_shared<RecordingPolicy>(std::move(inner))), client([&] {
          cfg.retry_policy = policy;
          return cfg;
        }()) {}
};

/// Loses every try of `get_data("/a")` to a connection loss until the policy gives up, and checks that each
/// retry was sent no sooner than the sleep the policy asked for after the try before it. Returns the tries.
std::vector<Call> lose_every_try(Recorded& r) {
  auto& c = r.client;
  auto out = c.get_data("/a");
  std::vector<Call> tries;
  for (std::size_t i = 0;; ++i) {
    tries.push_back(c.expect<zk::GetData>("/a"));
    REQUIRE(c.session().reply(tries.back(), zk_errc::connection_loss));
    const auto d = r.policy->wait_decision(i);
    REQUIRE(d);
    CHECK(d->retry_count == static_cast<int>(i));
    if (!d->sleep) break;
  }
  REQUIRE(out->wait());
  CHECK(out->ec() == zk_errc::connection_loss);
  const auto decisions = r.policy->decisions();
  REQUIRE(decisions.size() == tries.size());
  for (std::size_t i = 1; i < tries.size(); ++i) {
    const auto failed_at = c.session().delivered(tries[i - 1]);
    REQUIRE(failed_at);
    INFO("retry " << i << ": asked to sleep " << decisions[i - 1].sleep->count() << " ms");
    CHECK(tries[i].sent - *failed_at >= *decisions[i - 1].sleep);
    // The policy is told the time since the operation began: at least the sleeps so far.
    CHECK(decisions[i].elapsed >= decisions[i - 1].elapsed + *decisions[i - 1].sleep);
  }
  c.sync_io();
  CHECK(c.session().sent() == tries.size());  // nothing after the policy gave up
  return tries;
}

/// Connects, starts `get_data("/a")`, then drops the connection (the session connects again) and loses that
/// first try with it. Returns the operation and its lost try.
std::pair<std::shared_ptr<Outcome<zkr::NodeData>>, Call> lose_connection(
    FakeClient& c, zkr::detail::RequestOptions ro = {}) {
  c.connect();
  auto out = c.get_data("/a", ro);
  auto first = c.expect<zk::GetData>("/a");
  c.session().set_state(SessionState::connecting);
  REQUIRE(c.session().reply(first, zk_errc::connection_loss));
  return {out, first};
}

}  // namespace

TEST_CASE("framework retry loop: each policy's sleeps separate the tries, and its limit ends them",
          "[framework][retry-loop]") {
  SECTION("ExponentialBackoffRetry: base times a random factor below 2^(k+1), 1 + max_retries tries") {
    Recorded r(std::make_shared<zkr::ExponentialBackoffRetry>(4ms, 3));
    r.client.connect();
    CHECK(lose_every_try(r).size() == 4);
    for (const auto& d : r.policy->decisions()) {
      if (!d.sleep) continue;
      CHECK(d.sleep->count() % 4 == 0);
      CHECK(*d.sleep >= 4ms);
      CHECK(*d.sleep < 4ms * (1 << (d.retry_count + 1)));
    }
  }
  SECTION("BoundedExponentialBackoffRetry: never above its bound") {
    Recorded r(std::make_shared<zkr::BoundedExponentialBackoffRetry>(4ms, 8ms, 3));
    r.client.connect();
    CHECK(lose_every_try(r).size() == 4);
    for (const auto& d : r.policy->decisions())
      if (d.sleep) CHECK((*d.sleep >= 4ms && *d.sleep <= 8ms));
  }
  SECTION("RetryNTimes: n retries, each after the fixed sleep") {
    Recorded r(std::make_shared<zkr::RetryNTimes>(2, 10ms));
    r.client.connect();
    CHECK(lose_every_try(r).size() == 3);
  }
  SECTION("RetryOneTime: one retry") {
    Recorded r(std::make_shared<zkr::RetryOneTime>(10ms));
    r.client.connect();
    CHECK(lose_every_try(r).size() == 2);
  }
  SECTION("RetryUntilElapsed: retries while less than its time has passed") {
    Recorded r(std::make_shared<zkr::RetryUntilElapsed>(40ms, 10ms));
    r.client.connect();
    CHECK(lose_every_try(r).size() >= 2);
    const auto d = r.policy->decisions();
    CHECK(d.back().elapsed >= 40ms);
    for (std::size_t i = 0; i + 1 < d.size(); ++i) CHECK(d[i].elapsed < 40ms);
  }
  SECTION("RetryForever: retries until a try succeeds") {
    Recorded r(std::make_shared<zkr::RetryForever>(2ms));
    auto& c = r.client;
    c.connect();
    auto out = c.get_data("/a");
    for (int i = 0; i < 6; ++i)
      REQUIRE(c.session().reply(c.expect<zk::GetData>("/a"), zk_errc::connection_loss));
    REQUIRE(c.session().reply(c.expect<zk::GetData>("/a"), fake::with_data("v")));
    REQUIRE(out->wait());
    CHECK_FALSE(out->ec());
    CHECK(out->value().data == "v");
    CHECK(r.policy->decisions().size() == 6);
  }
  SECTION("SessionFailedRetryPolicy: a session expiry is not retried, a connection loss is") {
    Recorded r(std::make_shared<zkr::SessionFailedRetryPolicy>(std::make_shared<zkr::RetryNTimes>(3, 1ms)));
    auto& c = r.client;
    c.connect();
    auto out = c.get_data("/a");
    REQUIRE(c.session().reply(c.expect<zk::GetData>("/a"), zk_errc::connection_loss));
    REQUIRE(c.session().reply(c.expect<zk::GetData>("/a"), zk_errc::session_expired));
    REQUIRE(out->wait());
    CHECK(out->ec() == zk_errc::session_expired);
    CHECK(r.policy->decisions().size() == 1);
    c.sync_io();
    CHECK(c.session().sent() == 2);
  }
}

TEST_CASE("framework retry loop: every request type is retried after a connection loss",
          "[framework][retry-loop]") {
  FakeClient c;
  c.connect();
  using Start = std::function<std::shared_ptr<Outcome<>>()>;
  auto void_op = [&](auto start) {
    auto out = std::make_shared<Outcome<>>();
    c.io([&c, out, start] {
      start(static_cast<zkr::detail::Core&>(c.core()),
            [out](zkr::error_code ec, auto&&...) { out->set(ec); });
    });
    return out;
  };
  struct Case {
    const char* name;
    std::string_view kind;
    Start start;
  };
  const std::vector<Case> cases = {
      {"create", "create",
       [&] { return void_op([](auto& core, auto cb) { core.create("/a", {}, std::move(cb)); }); }},
      {"delete", "delete",
       [&] {
         return void_op([](auto& core, auto cb) { core.remove("/a", -1, false, false, std::move(cb)); });
       }},
      {"exists", "exists",
       [&] { return void_op([](auto& core, auto cb) { core.exists("/a", nullptr, std::move(cb)); }); }},
      {"get_children", "get_children",
       [&] { return void_op([](auto& core, auto cb) { core.get_children("/a", nullptr, std::move(cb)); }); }},
      {"set_data", "set_data",
       [&] { return void_op([](auto& core, auto cb) { core.set_data("/a", "x", -1, std::move(cb)); }); }},
      {"multi", "multi",
       [&] {
         return void_op([](auto& core, auto cb) { core.multi({zkr::Op::remove("/a")}, std::move(cb)); });
       }},
      {"sync", "sync", [&] { return void_op([](auto& core, auto cb) { core.sync("/a", std::move(cb)); }); }},
  };
  for (const auto& k : cases) {
    INFO(k.name);
    auto out = k.start();
    auto first = c.next();
    CHECK(first.kind() == k.kind);
    CHECK(first.path() == "/a");
    REQUIRE(c.session().reply(first, zk_errc::connection_loss));
    auto second = c.next();
    CHECK(second.kind() == k.kind);
    REQUIRE(c.session().reply(second, zk_errc::ok));
    REQUIRE(out->wait());
    CHECK_FALSE(out->ec());
  }
}

TEST_CASE("framework retry loop: a fault at each try, and the first try that succeeds ends the operation",
          "[framework][retry-loop]") {
  const int succeed_at = GENERATE(1, 2, 3, 4);  // RetryNTimes(3): four tries at most
  FakeClient c;
  c.connect();
  auto out = c.get_data("/a");
  for (int i = 1; i < succeed_at; ++i)
    REQUIRE(c.session().reply(c.expect<zk::GetData>("/a"), zk_errc::connection_loss));
  REQUIRE(c.session().reply(c.expect<zk::GetData>("/a"), fake::with_data("v")));
  REQUIRE(out->wait());
  CHECK_FALSE(out->ec());
  CHECK(out->value().data == "v");
  c.sync_io();
  CHECK(c.session().sent() == static_cast<std::size_t>(succeed_at));
}

TEST_CASE("framework retry loop: an error the policy does not retry ends the operation at once",
          "[framework][retry-loop]") {
  Recorded r(std::make_shared<zkr::RetryNTimes>(3, 1ms));
  auto& c = r.client;
  c.connect();
  const zk_errc code = GENERATE(zk_errc::no_node, zk_errc::no_auth, zk_errc::bad_version);
  auto out = c.get_data("/a");
  REQUIRE(c.session().reply(c.expect<zk::GetData>("/a"), code));
  REQUIRE(out->wait());
  CHECK(out->ec() == zkr::error_code(code));
  CHECK(r.policy->decisions().empty());
  c.sync_io();
  CHECK(c.session().sent() == 1);
}

TEST_CASE(
    "framework retry loop: a stop during the retry sleep ends the operation at once, with no further try",
    "[framework][retry-loop]") {
  Recorded r(std::make_shared<zkr::RetryNTimes>(3, 60s));
  auto& c = r.client;
  c.connect();
  auto stop = std::make_shared<zkr::detail::StopSignal>();
  auto out = c.get_data("/a", {.stop = stop});
  REQUIRE(c.session().reply(c.expect<zk::GetData>("/a"), zk_errc::connection_loss));
  REQUIRE(r.policy->wait_decision(0));  // the loop is now going to sleep for a minute
  c.stop(stop);
  REQUIRE(out->wait(10s));
  CHECK(out->ec() == boost::asio::error::operation_aborted);
  c.sync_io();
  CHECK(c.session().sent() == 1);
}

TEST_CASE("framework retry loop: a stop during the connection wait ends it at once, with no try",
          "[framework][retry-loop]") {
  zkr::ClientConfig cfg;
  cfg.connection_timeout = 60s;
  FakeClient c(cfg);
  auto stop = std::make_shared<zkr::detail::StopSignal>();
  SECTION("never connected") {
    auto out = c.get_data("/a", {.stop = stop});
    c.stop(stop);  // queued behind the start: the operation is waiting for the connection
    REQUIRE(out->wait(10s));
    CHECK(out->ec() == boost::asio::error::operation_aborted);
  }
  SECTION("stopped before it starts") {
    c.stop(stop);
    auto out = c.get_data("/a", {.stop = stop});
    REQUIRE(out->wait());
    CHECK(out->ec() == boost::asio::error::operation_aborted);
  }
  SECTION("disconnected after a lost try: the stop lands in the retry sleep or the connection wait") {
    auto [out, first] = lose_connection(c, {.stop = stop});
    c.sync_io();
    c.stop(stop);
    REQUIRE(out->wait(10s));
    CHECK(out->ec() == boost::asio::error::operation_aborted);
  }
  // Connecting afterwards sends nothing: the stopped operation is over.
  const auto before = c.session().sent();
  c.connect();
  c.sync_io();
  CHECK(c.session().sent() == before);
  CHECK(c.session().sent() <= 1);
}

TEST_CASE("framework retry loop: no connection within the connection timeout fails with connection_timeout",
          "[framework][retry-loop]") {
  zkr::ClientConfig cfg;
  cfg.connection_timeout = 100ms;
  FakeClient c(cfg);
  SECTION("never connected: no request is sent") {
    const auto begin = std::chrono::steady_clock::now();
    auto out = c.get_data("/a");
    REQUIRE(out->wait());
    CHECK(out->ec() == client_errc::connection_timeout);
    CHECK(out->at() - begin >= 100ms);
    CHECK(c.session().sent() == 0);
  }
  SECTION("the connection drops after a lost try and does not come back") {
    auto [out, first] = lose_connection(c);
    REQUIRE(out->wait());
    CHECK(out->ec() == client_errc::connection_timeout);
    CHECK(out->at() - *c.session().delivered(first) >= 100ms);
    CHECK(c.session().sent() == 1);
  }
  SECTION("the connection comes back within the timeout: the retry is sent") {
    auto [out, first] = lose_connection(c);
    c.sync_io();
    CHECK_FALSE(c.core().is_connected());
    c.connect();
    REQUIRE(c.session().reply(c.expect<zk::GetData>("/a"), fake::with_data("v")));
    REQUIRE(out->wait());
    CHECK_FALSE(out->ec());
  }
}

// ---------------------------------------------------------------------------------------------------------
// The namespace

namespace {

zkr::ClientConfig in_namespace(bool containers = true) {
  zkr::ClientConfig cfg;
  cfg.namespace_name = "ns";
  cfg.use_container_parents = containers;
  return cfg;
}

/// Answers the creation of "/ns": it does not exist, then its create succeeds. Checks the create's mode.
void make_root(FakeClient& c, zkr::CreateMode mode = zkr::CreateMode::container) {
  REQUIRE(c.session().reply(c.expect<zk::Exists>("/ns"), zk_errc::no_node));
  auto create = c.expect<zk::Create>("/ns");
  CHECK(create.as<zk::Create>()->mode == mode);
  REQUIRE(c.session().reply(create, zk_errc::ok));
}

}  // namespace

TEST_CASE("framework namespace: the root is made on first use, once", "[framework][namespace]") {
  const bool containers = GENERATE(true, false);
  FakeClient c(in_namespace(containers));
  c.connect();
  c.sync_io();
  CHECK(c.session().sent() == 0);  // nothing is made before an operation needs it
  auto out = c.get_data("/a");
  make_root(c, containers ? zkr::CreateMode::container : zkr::CreateMode::persistent);
  REQUIRE(c.session().reply(c.expect<zk::GetData>("/ns/a"), fake::with_data("v")));
  REQUIRE(out->wait());
  CHECK_FALSE(out->ec());
  // Made once: the next operation goes straight to its request.
  auto again = c.get_data("/b");
  REQUIRE(c.session().reply(c.expect<zk::GetData>("/ns/b"), fake::with_data("w")));
  REQUIRE(again->wait());
  CHECK_FALSE(again->ec());
}

TEST_CASE("framework namespace: a root that exists already is not created", "[framework][namespace]") {
  FakeClient c(in_namespace());
  c.connect();
  auto out = c.get_data("/a");
  REQUIRE(c.session().reply(c.expect<zk::Exists>("/ns"), fake::with_stat({})));
  REQUIRE(c.session().reply(c.expect<zk::GetData>("/ns/a"), fake::with_data("v")));
  REQUIRE(out->wait());
  CHECK_FALSE(out->ec());
}

TEST_CASE("framework namespace: a connection loss at each request of the root's creation is retried",
          "[framework][namespace]") {
  const int lost_at = GENERATE(0, 1, 2);  // the exists, the create, the operation's own request
  FakeClient c(in_namespace());
  c.connect();
  auto out = c.get_data("/a");
  const std::vector<Call> first = {c.expect<zk::Exists>("/ns")};
  if (lost_at == 0) {
    REQUIRE(c.session().reply(first[0], zk_errc::connection_loss));
    make_root(c);
  } else {
    REQUIRE(c.session().reply(first[0], zk_errc::no_node));
    auto create = c.expect<zk::Create>("/ns");
    if (lost_at == 1) {
      REQUIRE(c.session().reply(create, zk_errc::connection_loss));
      // The create may have been applied: the retry looks again, and finds the root this time.
      REQUIRE(c.session().reply(c.expect<zk::Exists>("/ns"), fake::with_stat({})));
    } else {
      REQUIRE(c.session().reply(create, zk_errc::ok));
      // The root is made: the retry is the operation's request alone.
      REQUIRE(c.session().reply(c.expect<zk::GetData>("/ns/a"), zk_errc::connection_loss));
    }
  }
  REQUIRE(c.session().reply(c.expect<zk::GetData>("/ns/a"), fake::with_data("v")));
  REQUIRE(out->wait());
  CHECK_FALSE(out->ec());
  CHECK(out->value().data == "v");
}

TEST_CASE("framework namespace: a root the server refuses fails the operation, and the next one tries again",
          "[framework][namespace]") {
  FakeClient c(in_namespace());
  c.connect();
  auto out = c.get_data("/a");
  REQUIRE(c.session().reply(c.expect<zk::Exists>("/ns"), zk_errc::no_node));
  REQUIRE(c.session().reply(c.expect<zk::Create>("/ns"), zk_errc::no_auth));
  REQUIRE(out->wait());
  CHECK(out->ec() == zk_errc::no_auth);
  auto again = c.get_data("/a");
  make_root(c);
  REQUIRE(c.session().reply(c.expect<zk::GetData>("/ns/a"), fake::with_data("v")));
  REQUIRE(again->wait());
  CHECK_FALSE(again->ec());
}

TEST_CASE("framework namespace: operations started together share one creation of the root",
          "[framework][namespace]") {
  FakeClient c(in_namespace());
  c.connect();
  auto a = c.get_data("/a");
  auto b = c.get_data("/b");
  make_root(c);
  auto first = c.next();
  auto second = c.next();
  CHECK(first.path() == "/ns/a");
  CHECK(second.path() == "/ns/b");
  REQUIRE(c.session().reply(first, fake::with_data("1")));
  REQUIRE(c.session().reply(second, fake::with_data("2")));
  REQUIRE(a->wait());
  REQUIRE(b->wait());
  CHECK(a->value().data == "1");
  CHECK(b->value().data == "2");
}

TEST_CASE("framework namespace: a create under a root the server deleted makes the root again, once",
          "[framework][namespace]") {
  FakeClient c(in_namespace());
  c.connect();
  auto first = c.create("/x", {});
  make_root(c);
  REQUIRE(c.session().reply(c.expect<zk::Create>("/ns/x"), zk_errc::ok));
  REQUIRE(first->wait());
  CHECK(first->value().path == "/x");
  // The root was an empty container, and the server deleted it: the creates right under it are refused.
  SECTION("one create") {
    auto second = c.create("/y", {});
    REQUIRE(c.session().reply(c.expect<zk::Create>("/ns/y"), zk_errc::no_node));
    make_root(c);
    REQUIRE(c.session().reply(c.expect<zk::Create>("/ns/y"), zk_errc::ok));
    REQUIRE(second->wait());
    CHECK_FALSE(second->ec());
    CHECK(second->value().path == "/y");
  }
  SECTION("two creates in flight together: both wait for the one new root") {
    auto a = c.create("/a", {});
    auto b = c.create("/b", {});
    auto create_a = c.expect<zk::Create>("/ns/a");
    auto create_b = c.expect<zk::Create>("/ns/b");
    REQUIRE(c.session().reply(create_a, zk_errc::no_node));
    REQUIRE(c.session().reply(create_b, zk_errc::no_node));
    make_root(c);
    {
      INFO("b completed with: " << b->ec().message());
      REQUIRE_FALSE(b->done());  // it waits for the root the other create is making
    }
    REQUIRE(c.session().reply(c.expect<zk::Create>("/ns/a"), zk_errc::ok));
    REQUIRE(c.session().reply(c.expect<zk::Create>("/ns/b"), zk_errc::ok));
    REQUIRE(a->wait());
    REQUIRE(b->wait());
    CHECK_FALSE(a->ec());
    CHECK_FALSE(b->ec());
  }
}

TEST_CASE("framework retry loop: close ends a retry sleep and a connection wait with closed",
          "[framework][retry-loop]") {
  zkr::ClientConfig cfg;
  cfg.retry_policy = std::make_shared<zkr::RetryNTimes>(3, 60s);
  cfg.connection_timeout = 60s;
  FakeClient c(cfg);
  c.connect();
  auto sleeping = c.get_data("/a");
  REQUIRE(c.session().reply(c.expect<zk::GetData>("/a"), zk_errc::connection_loss));
  c.session().set_state(SessionState::connecting);
  auto waiting = c.get_data("/b");
  c.sync_io();
  c.core().close();
  REQUIRE(sleeping->wait(10s));
  REQUIRE(waiting->wait(10s));
  CHECK(sleeping->ec() == client_errc::closed);
  CHECK(waiting->ec() == client_errc::closed);
  CHECK(c.session().sent() == 1);
}
