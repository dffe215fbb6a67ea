// Unit tests (no server) of the distributed atomic numbers' algorithm (`detail::AtomicEngine`) over FakeCore:
// another writer winning at each step (a retry, with its count in the stats), a fault at each step (the
// client's error reaches the caller and nothing half-written remains), the retry policy giving up, and the
// byte layout written.
#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <string>
#include <zkr/recipes/detail/atomic_engine.hpp>
#include <zkr/recipes/detail/number_codec.hpp>

#include "fake_core.hpp"

namespace {

using fake::FakeCore;
using fake::Op;
using zkr::errc;
using zkr::error_code;
using zkr::zk_errc;
using zkr::detail::AtomicOp;
using zkr::detail::AtomicOutcome;
using zkr::detail::encode_big_endian;

const std::string counter = "/atomic/n";

struct Run {
  std::shared_ptr<FakeCore> core = std::make_shared<FakeCore>();
  std::optional<std::pair<error_code, AtomicOutcome>> out;

  std::shared_ptr<zkr::detail::AtomicEngine> engine(zkr::RetryPolicyPtr retry) {
    return std::make_shared<zkr::detail::AtomicEngine>(core, counter, 8, std::move(retry), std::nullopt);
  }
  /// Runs `op` on the fake's I/O thread to its end.
  void run(const std::shared_ptr<zkr::detail::AtomicEngine>& e, AtomicOp op) {
    boost::asio::post(core->io_executor(), [this, e, op] {
      e->run(op, [this](error_code ec, AtomicOutcome o) { out.emplace(ec, o); });
    });
    REQUIRE(core->run_until([&] { return out.has_value(); }));
    core->settle();
  }
};

auto many_retries() { return std::make_shared<zkr::RetryNTimes>(10, zkr::Millis(0)); }

}  // namespace

TEST_CASE("atomic engine: another writer wins the versioned write: read again and retry", "[counters]") {
  Run r;
  r.core->put("/atomic");
  r.core->put(counter, zkr::CreateMode::persistent, 0, encode_big_endian(5, 8));
  auto e = r.engine(many_retries());
  r.core->before_next(Op::set_data, [&] { r.core->set(counter, encode_big_endian(100, 8)); });
  r.run(e, {AtomicOp::Kind::add, 1, 0});
  REQUIRE_FALSE(r.out->first);
  CHECK(r.out->second.succeeded);
  CHECK(r.out->second.pre == 100);
  CHECK(r.out->second.post == 101);
  CHECK(r.out->second.stats.optimistic_tries == 2);
  CHECK(r.core->data(counter) == encode_big_endian(101, 8));
}

TEST_CASE("atomic engine: a missing node is created, and another creator winning means a retry as a write",
          "[counters]") {
  Run r;
  auto e = r.engine(many_retries());
  SECTION("created by the first write, with its parents") {
    r.run(e, {AtomicOp::Kind::add, 3, 0});
    CHECK(r.out->second.succeeded);
    CHECK(r.core->data(counter) == encode_big_endian(3, 8));
  }
  SECTION("node exists: read again, then a versioned write") {
    r.core->before_next(Op::create, [&] {
      r.core->put("/atomic");
      r.core->put(counter, zkr::CreateMode::persistent, 0, encode_big_endian(40, 8));
    });
    r.run(e, {AtomicOp::Kind::add, 2, 0});
    CHECK(r.out->second.succeeded);
    CHECK(r.out->second.pre == 40);
    CHECK(r.core->data(counter) == encode_big_endian(42, 8));
  }
}

TEST_CASE("atomic engine: the policy gives up: not succeeded, nothing written", "[counters]") {
  Run r;
  r.core->put("/atomic");
  r.core->put(counter, zkr::CreateMode::persistent, 0, encode_big_endian(5, 8));
  auto e = r.engine(std::make_shared<zkr::RetryNTimes>(1, zkr::Millis(0)));
  int n = 0;
  r.core->before_nth(Op::set_data, 1, [&] { r.core->set(counter, encode_big_endian(++n, 8)); });
  r.core->before_nth(Op::set_data, 2, [&] { r.core->set(counter, encode_big_endian(++n, 8)); });
  r.run(e, {AtomicOp::Kind::add, 1, 0});
  REQUIRE_FALSE(r.out->first);
  CHECK_FALSE(r.out->second.succeeded);
  CHECK(r.out->second.post == 0);
  CHECK(r.out->second.stats.optimistic_tries == 2);
  CHECK(r.core->data(counter) == encode_big_endian(2, 8));  // the other writer's
}

TEST_CASE("atomic engine: a fault at each step reaches the caller", "[counters]") {
  const auto step = GENERATE(Op::get_data, Op::set_data);
  const auto fault = GENERATE(error_code(zk_errc::connection_loss), error_code(zk_errc::session_expired),
                              error_code(zk_errc::no_auth));
  Run r;
  r.core->put("/atomic");
  r.core->put(counter, zkr::CreateMode::persistent, 0, encode_big_endian(5, 8));
  auto e = r.engine(many_retries());
  r.core->fail_next(step, fault);
  r.run(e, {AtomicOp::Kind::add, 1, 0});
  CHECK(r.out->first == fault);
  CHECK_FALSE(r.out->second.succeeded);
  CHECK(r.core->data(counter) == encode_big_endian(5, 8));
}

TEST_CASE("atomic engine: data of the wrong size is corrupted_data, empty data is 0", "[counters]") {
  Run r;
  r.core->put("/atomic");
  auto e = r.engine(many_retries());
  SECTION("four bytes for a long") {
    r.core->put(counter, zkr::CreateMode::persistent, 0, encode_big_endian(5, 4));
    r.run(e, {AtomicOp::Kind::add, 1, 0});
    CHECK(r.out->first == errc::corrupted_data);
    CHECK(r.core->data(counter) == encode_big_endian(5, 4));
  }
  SECTION("empty") {
    r.core->put(counter, zkr::CreateMode::persistent, 0, "");
    r.run(e, {AtomicOp::Kind::get, 0, 0});
    CHECK(r.out->second.succeeded);
    CHECK(r.out->second.post == 0);
  }
}
