// Unit tests (no server) of the distributed atomic values' and numbers' algorithm (`detail::AtomicEngine`)
// over FakeCore: another writer winning at each step (a retry, with its count in the stats), a fault at each
// step (the client's error reaches the caller and nothing half-written remains), the retry policy giving up,
// and the byte layout written; a byte value takes any bytes.
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
using zkr::client_errc;
using zkr::error_code;
using zkr::zk_errc;
using zkr::detail::AtomicOp;
using zkr::detail::AtomicOutcome;
using zkr::detail::encode_big_endian;

const std::string counter = "/atomic/n";

struct Run {
  std::shared_ptr<FakeCore> core = std::make_shared<FakeCore>();
  std::optional<std::pair<error_code, AtomicOutcome>> out;

  /// A long's engine (`width` 8), or a byte value's (0).
  std::shared_ptr<zkr::detail::AtomicEngine> engine(zkr::RetryPolicyPtr retry, std::size_t width = 8) {
    return std::make_shared<zkr::detail::AtomicEngine>(core, counter, width, std::move(retry), std::nullopt);
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

std::string num(std::int64_t v) { return encode_big_endian(v, 8); }
AtomicOp add(std::int64_t delta) { return {AtomicOp::Kind::add, {}, {}, delta}; }

auto many_retries() { return std::make_shared<zkr::RetryNTimes>(10, zkr::Millis(0)); }

}  // namespace

TEST_CASE("atomic engine: another writer wins the versioned write: read again and retry", "[counters]") {
  Run r;
  r.core->put("/atomic");
  r.core->put(counter, zkr::CreateMode::persistent, 0, encode_big_endian(5, 8));
  auto e = r.engine(many_retries());
  r.core->before_next(Op::set_data, [&] { r.core->set(counter, encode_big_endian(100, 8)); });
  r.run(e, add(1));
  REQUIRE_FALSE(r.out->first);
  CHECK(r.out->second.succeeded);
  CHECK(r.out->second.pre == num(100));
  CHECK(r.out->second.post == num(101));
  CHECK(r.out->second.stats.optimistic_tries == 2);
  CHECK(r.core->data(counter) == encode_big_endian(101, 8));
}

TEST_CASE("atomic engine: a missing node is created, and another creator winning means a retry as a write",
          "[counters]") {
  Run r;
  auto e = r.engine(many_retries());
  SECTION("created by the first write, with its parents") {
    r.run(e, add(3));
    CHECK(r.out->second.succeeded);
    CHECK(r.core->data(counter) == encode_big_endian(3, 8));
  }
  SECTION("node exists: read again, then a versioned write") {
    r.core->before_next(Op::create, [&] {
      r.core->put("/atomic");
      r.core->put(counter, zkr::CreateMode::persistent, 0, encode_big_endian(40, 8));
    });
    r.run(e, add(2));
    CHECK(r.out->second.succeeded);
    CHECK(r.out->second.pre == num(40));
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
  r.run(e, add(1));
  REQUIRE_FALSE(r.out->first);
  CHECK_FALSE(r.out->second.succeeded);
  CHECK(r.out->second.post.empty());
  CHECK(r.out->second.stats.optimistic_tries == 2);
  CHECK(r.core->data(counter) == encode_big_endian(2, 8));  // the other writer's
}

TEST_CASE("atomic engine: a fault at each step reaches the caller", "[counters]") {
  const auto step = GENERATE(Op::get_data, Op::set_data);
  const auto fault = GENERATE(error_code(zk_errc::connection_loss), error_code(zk_errc::session_expired),
                              error_code(zk_errc::no_auth));
  // A connection loss or an expiry of the write is not an end: the cases below.
  if (step == Op::set_data && zkr::is_retryable(fault)) return;
  Run r;
  r.core->put("/atomic");
  r.core->put(counter, zkr::CreateMode::persistent, 0, encode_big_endian(5, 8));
  auto e = r.engine(many_retries());
  r.core->fail_next(step, fault);
  r.run(e, add(1));
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
    r.run(e, add(1));
    CHECK(r.out->first == client_errc::corrupted_data);
    CHECK(r.core->data(counter) == encode_big_endian(5, 4));
  }
  SECTION("empty") {
    r.core->put(counter, zkr::CreateMode::persistent, 0, "");
    r.run(e, {AtomicOp::Kind::get});
    CHECK(r.out->second.succeeded);
    CHECK(r.out->second.post == num(0));
  }
}

TEST_CASE(
    "atomic engine: a byte value takes any bytes, compares them exactly, and reads a missing node as empty",
    "[counters]") {
  Run r;
  auto e = r.engine(many_retries(), 0);
  SECTION("missing: empty, succeeded, nothing created") {
    r.run(e, {AtomicOp::Kind::get});
    CHECK(r.out->second.succeeded);
    CHECK(r.out->second.post.empty());
    CHECK_FALSE(r.core->has(counter));
  }
  SECTION("try_set creates, then overwrites data of any size") {
    r.run(e, {AtomicOp::Kind::try_set, std::string("a\0b", 3)});
    CHECK(r.out->second.succeeded);
    CHECK(r.core->data(counter) == std::string("a\0b", 3));
    r.out.reset();
    r.run(e, {AtomicOp::Kind::try_set, "longer than eight bytes"});
    CHECK(r.out->second.pre == std::string("a\0b", 3));
    CHECK(r.out->second.post == "longer than eight bytes");
  }
  SECTION("compare_and_set: the same bytes write, other bytes (a prefix) do not") {
    r.core->put("/atomic");
    r.core->put(counter, zkr::CreateMode::persistent, 0, "abc");
    r.run(e, {AtomicOp::Kind::compare_and_set, "new", "ab"});
    CHECK_FALSE(r.out->second.succeeded);
    CHECK(r.out->second.pre == "abc");
    CHECK(r.core->data(counter) == "abc");
    r.out.reset();
    r.run(e, {AtomicOp::Kind::compare_and_set, "new", "abc"});
    CHECK(r.out->second.succeeded);
    CHECK(r.core->data(counter) == "new");
  }
}

TEST_CASE("atomic engine: a write whose answer is lost is never applied twice", "[counters]") {
  const bool applied = GENERATE(true, false);
  const bool missing = GENERATE(true, false);
  const auto lost = GENERATE(error_code(zk_errc::connection_loss), error_code(zk_errc::session_expired));
  INFO("applied: " << applied << ", node missing: " << missing << ", " << lost.message());
  Run r;
  if (!missing) {
    r.core->put("/atomic");
    r.core->put(counter, zkr::CreateMode::persistent, 0, num(5));
  }
  auto e = r.engine(many_retries());
  const auto op = missing ? Op::create : Op::set_data;
  if (applied) {
    r.core->fail_next_applied(op, lost);
  } else {
    r.core->fail_next(op, lost);
  }
  r.run(e, add(1));
  const auto expected = num(missing ? 1 : 6);
  CHECK(r.core->data(counter) == expected);  // applied once, whichever way it went
  if (applied) {
    // The node changed since the read: applied or not, the engine cannot tell, and says so.
    CHECK(r.out->first == client_errc::outcome_unknown);
    CHECK_FALSE(r.out->second.succeeded);
  } else {
    // Unchanged after a sync and a read: not applied, so written again.
    REQUIRE_FALSE(r.out->first);
    CHECK(r.out->second.succeeded);
    CHECK(r.out->second.post == expected);
    CHECK(r.core->count(Op::sync) == 1);
  }
}

TEST_CASE("atomic engine: a compare-and-set whose answer is lost is never applied twice", "[counters]") {
  Run r;
  r.core->put("/atomic");
  r.core->put(counter, zkr::CreateMode::persistent, 0, num(5));
  auto e = r.engine(many_retries());
  r.core->fail_next_applied(Op::set_data, zk_errc::connection_loss);
  r.run(e, {AtomicOp::Kind::compare_and_set, num(7), num(5)});
  CHECK(r.out->first == client_errc::outcome_unknown);
  CHECK(r.core->data(counter) == num(7));
}
