#pragma once
/// \file
/// The byte layout of the numbers the counter recipes store, as Curator writes them (Java's
/// `ByteBuffer.putInt` / `putLong`): `width` bytes (4 or 8), big-endian two's complement. Pure functions over
/// bytes, so they are tested (and fuzzed) without a server. Not API.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace zkr::detail {

/// `v` reduced to a `width`-byte two's-complement number (the wrap-around of Java's `int` or `long`
/// arithmetic), sign-extended back to 64 bits. `width` is 4 or 8.
constexpr std::int64_t wrap_to_width(std::uint64_t v, std::size_t width) noexcept {
  if (width >= 8) return static_cast<std::int64_t>(v);
  const unsigned bits = static_cast<unsigned>(width) * 8;
  const std::uint64_t mask = (std::uint64_t{1} << bits) - 1;
  const std::uint64_t sign = std::uint64_t{1} << (bits - 1);
  v &= mask;
  return static_cast<std::int64_t>((v ^ sign) - sign);  // sign extension without a signed overflow
}

/// `a + b` with the wrap-around of a `width`-byte number.
constexpr std::int64_t add_wrapping(std::int64_t a, std::int64_t b, std::size_t width) noexcept {
  return wrap_to_width(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b), width);
}

/// The low `width` bytes of `v`, most significant first.
inline std::string encode_big_endian(std::int64_t v, std::size_t width) {
  std::string out(width, '\0');
  auto u = static_cast<std::uint64_t>(v);
  for (std::size_t i = width; i-- > 0;) {
    out[i] = static_cast<char>(static_cast<unsigned char>(u & 0xff));
    u >>= 8;
  }
  return out;
}

/// The number in `bytes`, which must be exactly `width` long (else nullopt: data someone else wrote).
inline std::optional<std::int64_t> decode_big_endian(std::string_view bytes, std::size_t width) {
  if (bytes.size() != width || width == 0 || width > 8) return std::nullopt;
  std::uint64_t u = 0;
  for (unsigned char c : bytes) u = (u << 8) | c;
  return wrap_to_width(u, width);
}

}  // namespace zkr::detail
