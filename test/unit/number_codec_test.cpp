// The byte layout of the counters (recipes/detail/number_codec.hpp): big-endian two's complement of 4 and 8
// bytes, as Java's ByteBuffer writes them; the wrap-around of Java's int and long arithmetic; sizes refused.
#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <string>
#include <zkr/recipes/detail/number_codec.hpp>

using namespace zkr::detail;

namespace {
std::string raw(std::initializer_list<int> b) {
  std::string s;
  for (int c : b) s.push_back(static_cast<char>(c));
  return s;
}
}  // namespace

TEST_CASE("number codec: big-endian encoding of 4 and 8 bytes", "[counters]") {
  CHECK(encode_big_endian(7, 4) == raw({0, 0, 0, 7}));
  CHECK(encode_big_endian(1000, 4) == raw({0, 0, 3, 0xe8}));
  CHECK(encode_big_endian(-2, 4) == raw({0xff, 0xff, 0xff, 0xfe}));
  CHECK(encode_big_endian(std::numeric_limits<std::int32_t>::min(), 4) == raw({0x80, 0, 0, 0}));
  CHECK(encode_big_endian(1LL << 40, 8) == raw({0, 0, 1, 0, 0, 0, 0, 0}));
  CHECK(encode_big_endian(-1, 8) == raw({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}));
  CHECK(encode_big_endian(std::numeric_limits<std::int64_t>::min(), 8) == raw({0x80, 0, 0, 0, 0, 0, 0, 0}));
}

TEST_CASE("number codec: decoding round-trips and refuses other sizes", "[counters]") {
  for (std::int64_t v :
       std::initializer_list<std::int64_t>{0, 1, -1, 255, 256, -129, 2147483647, -2147483648LL})
    CHECK(decode_big_endian(encode_big_endian(v, 4), 4) == v);
  for (std::int64_t v : std::initializer_list<std::int64_t>{0, -1, std::int64_t{1} << 40,
                                                            std::numeric_limits<std::int64_t>::max(),
                                                            std::numeric_limits<std::int64_t>::min()})
    CHECK(decode_big_endian(encode_big_endian(v, 8), 8) == v);
  CHECK_FALSE(decode_big_endian("", 4));
  CHECK_FALSE(decode_big_endian("abc", 4));
  CHECK_FALSE(decode_big_endian("abcde", 4));
  CHECK_FALSE(decode_big_endian(encode_big_endian(5, 8), 4));  // a Long's node read as an Integer
  CHECK_FALSE(decode_big_endian(encode_big_endian(5, 4), 8));
  CHECK_FALSE(decode_big_endian("123456789", 9));
}

TEST_CASE("number codec: arithmetic wraps as Java's int and long", "[counters]") {
  constexpr auto imax = std::numeric_limits<std::int32_t>::max();
  constexpr auto imin = std::numeric_limits<std::int32_t>::min();
  constexpr auto lmax = std::numeric_limits<std::int64_t>::max();
  constexpr auto lmin = std::numeric_limits<std::int64_t>::min();
  STATIC_REQUIRE(add_wrapping(imax, 1, 4) == imin);
  STATIC_REQUIRE(add_wrapping(imin, -1, 4) == imax);
  STATIC_REQUIRE(add_wrapping(lmax, 1, 8) == lmin);
  STATIC_REQUIRE(add_wrapping(-5, 3, 4) == -2);
  STATIC_REQUIRE(wrap_to_width(0xffffffffULL, 4) == -1);
  STATIC_REQUIRE(wrap_to_width(0x100000005ULL, 4) == 5);
}
