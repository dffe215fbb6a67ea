// Unit tests (no server) of CachedAtomicLong and CachedAtomicInteger over FakeCore: one add per block, the
// values of a block handed out in order, concurrent calls sharing one add in flight, a failed add reaching
// every call waiting for it (and the next call trying again), another writer moving the number between
// blocks, a bad cache factor, and the wrap-around of a 4-byte number.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zkr/framework/detail/access.hpp>
#include <zkr/recipes/cached_atomic_number.hpp>
#include <zkr/recipes/detail/number_codec.hpp>

#include "fake_core.hpp"

namespace {

using fake::FakeCore;
using zkr::AtomicValue;
using zkr::CachedAtomicLong;
using zkr::DistributedAtomicLong;
using zkr::error_code;
using zkr::zk_errc;
using zkr::detail::encode_big_endian;

const std::string ids_counter = "/ids/n";

struct IdsFixture {
  std::shared_ptr<FakeCore> core = std::make_shared<FakeCore>();
  DistributedAtomicLong number = zkr::detail::access::make<DistributedAtomicLong>(
      std::shared_ptr<zkr::detail::Core>(core), ids_counter,
      std::make_shared<zkr::RetryNTimes>(10, zkr::Millis(0)), std::optional<zkr::PromotedToLock>{});

  IdsFixture() { core->put("/ids"); }
  ~IdsFixture() { core->shutdown(); }

  /// Starts `n` async_next calls at once; returns their outcomes once all completed.
  std::vector<std::pair<error_code, AtomicValue<std::int64_t>>> draw(CachedAtomicLong& c, int n) {
    std::vector<std::pair<error_code, AtomicValue<std::int64_t>>> out;
    for (int i = 0; i < n; ++i)
      c.async_next([&](error_code ec, AtomicValue<std::int64_t> v) { out.emplace_back(ec, v); });
    REQUIRE(core->run_until([&] { return out.size() == static_cast<std::size_t>(n); }));
    core->settle();
    return out;
  }
};

std::vector<std::int64_t> drawn_values(
    const std::vector<std::pair<error_code, AtomicValue<std::int64_t>>>& out) {
  std::vector<std::int64_t> v;
  for (auto& [ec, r] : out) {
    CHECK_FALSE(ec);
    CHECK(r.succeeded);
    CHECK(r.post_value == r.pre_value + 1);
    v.push_back(r.pre_value);
  }
  return v;
}

}  // namespace

TEST_CASE("cached atomic long: one add per block, the block's values in order", "[counters]") {
  IdsFixture f;
  f.core->put(ids_counter, zkr::CreateMode::persistent, 0, encode_big_endian(10, 8));
  CachedAtomicLong ids(f.number, 3);
  CHECK(drawn_values(f.draw(ids, 1)) == std::vector<std::int64_t>{10});
  CHECK(f.core->count(fake::Op::set_data, ids_counter) == 1);
  CHECK(f.core->data(ids_counter) == encode_big_endian(13, 8));  // the whole block is taken at once
  CHECK(drawn_values(f.draw(ids, 2)) == std::vector<std::int64_t>{11, 12});
  CHECK(f.core->count(fake::Op::set_data, ids_counter) == 1);
  CHECK(drawn_values(f.draw(ids, 1)) == std::vector<std::int64_t>{13});
  CHECK(f.core->count(fake::Op::set_data, ids_counter) == 2);
}

TEST_CASE("cached atomic long: concurrent calls share the add in flight, in the order they came",
          "[counters]") {
  IdsFixture f;
  CachedAtomicLong ids(f.number, 3);
  // Seven calls before any reply: three adds, one after the other, never two at once.
  CHECK(drawn_values(f.draw(ids, 7)) == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6});
  CHECK(f.core->data(ids_counter) == encode_big_endian(9, 8));
}

TEST_CASE("cached atomic long: another writer between blocks moves the next block", "[counters]") {
  IdsFixture f;
  CachedAtomicLong ids(f.number, 2);
  CHECK(drawn_values(f.draw(ids, 2)) == std::vector<std::int64_t>{0, 1});
  f.core->set(ids_counter, encode_big_endian(100, 8));
  CHECK(drawn_values(f.draw(ids, 2)) == std::vector<std::int64_t>{100, 101});
}

TEST_CASE("cached atomic long: a failed add reaches every call waiting for it, and the next call tries again",
          "[counters]") {
  IdsFixture f;
  f.core->put(ids_counter, zkr::CreateMode::persistent, 0, encode_big_endian(5, 8));
  CachedAtomicLong ids(f.number, 4);
  f.core->fail_next(fake::Op::set_data, zk_errc::no_auth, ids_counter);
  auto failed = f.draw(ids, 2);
  for (auto& [ec, r] : failed) {
    CHECK(ec == zk_errc::no_auth);
    CHECK_FALSE(r.succeeded);
  }
  CHECK(f.core->data(ids_counter) == encode_big_endian(5, 8));  // nothing taken
  CHECK(drawn_values(f.draw(ids, 1)) == std::vector<std::int64_t>{5});
}

TEST_CASE("cached atomic long: a cache factor below 1 is invalid_argument", "[counters]") {
  IdsFixture f;
  CHECK_THROWS_AS(CachedAtomicLong(f.number, 0), zkr::Error);
  error_code got;
  try {
    CachedAtomicLong bad(f.number, -3);
  } catch (const zkr::Error& e) {
    got = e.code();
  }
  CHECK(got == zkr::client_errc::invalid_argument);
}

TEST_CASE("cached atomic integer: the values wrap around as Java's int does", "[counters]") {
  IdsFixture f;
  f.core->put(ids_counter, zkr::CreateMode::persistent, 0, encode_big_endian(2147483646, 4));
  auto number = zkr::detail::access::make<zkr::DistributedAtomicInteger>(
      std::shared_ptr<zkr::detail::Core>(f.core), ids_counter,
      std::make_shared<zkr::RetryNTimes>(10, zkr::Millis(0)), std::optional<zkr::PromotedToLock>{});
  zkr::CachedAtomicInteger ids(number, 3);
  std::vector<std::int32_t> got;
  for (int i = 0; i < 3; ++i) {
    std::optional<AtomicValue<std::int32_t>> v;
    ids.async_next([&](error_code ec, AtomicValue<std::int32_t> r) {
      CHECK_FALSE(ec);
      v = r;
    });
    REQUIRE(f.core->run_until([&] { return v.has_value(); }));
    CHECK(v->succeeded);
    got.push_back(v->pre_value);
  }
  CHECK(got == std::vector<std::int32_t>{2147483646, 2147483647, -2147483648});
  CHECK(f.core->data(ids_counter) == encode_big_endian(-2147483647, 4));
}
