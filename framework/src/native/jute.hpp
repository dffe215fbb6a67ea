#pragma once
// Jute, ZooKeeper's binary record encoding (zookeeper-jute's BinaryOutputArchive / BinaryInputArchive), as
// pure functions over bytes: big-endian int and long, one-byte booleans, length-prefixed buffers and strings
// (length -1 is null, read as empty), count-prefixed vectors. A `Writer` appends to a byte vector and frames
// (an int32 length before each frame); a `Reader` walks a span with a sticky error: the first short, negative
// or oversized length sets `client_errc::malformed_reply`, and every later read returns zero values. No read
// allocates more than the bytes it was given can hold.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>
#include <zkr/framework/error.hpp>

namespace zkr::detail::native::jute {

/// The server's `jute.maxbuffer` default (0xfffff): the longest frame the Java client accepts, and the cap
/// on every buffer or string length inside a record.
inline constexpr std::int32_t max_buffer = 0xfffff;

using Bytes = std::vector<std::uint8_t>;
using ByteSpan = std::span<const std::uint8_t>;

class Writer {
 public:
  explicit Writer(Bytes& out) : out_(out) {}
  void i32(std::int32_t v);
  void i64(std::int64_t v);
  void boolean(bool v) { out_.push_back(v ? 1 : 0); }
  /// A buffer or a ustring (same encoding): the length, then the bytes.
  void buffer(std::string_view v);
  void strings(const std::vector<std::string>& v);
  /// Bytes already encoded (a nested record).
  void raw(const Bytes& v) { out_.insert(out_.end(), v.begin(), v.end()); }
  /// Starts a frame (its length is patched in by `end_frame`); returns its position.
  std::size_t begin_frame();
  void end_frame(std::size_t at);

 private:
  Bytes& out_;
};

class Reader {
 public:
  explicit Reader(ByteSpan in) : in_(in) {}
  std::int32_t i32();
  std::int64_t i64();
  bool boolean();
  /// A buffer or a ustring; null (-1) reads as empty.
  std::string buffer();
  std::vector<std::string> strings();
  /// A vector's count: -1 (null) reads as 0; a count the remaining bytes cannot hold at `min_element`
  /// bytes each is malformed.
  std::size_t count(std::size_t min_element);
  std::size_t remaining() const noexcept { return in_.size() - pos_; }
  bool at_end() const noexcept { return pos_ == in_.size(); }
  const error_code& error() const noexcept { return ec_; }
  /// Marks the input malformed (a value out of its range, found by the caller).
  void fail() noexcept;

 private:
  bool take(std::size_t n) noexcept;
  ByteSpan in_;
  std::size_t pos_ = 0;
  error_code ec_;
};

/// The length of the frame at the start of `in` (its first four bytes): the frame is then complete once
/// `in` holds 4 + length bytes. `std::nullopt`-like -1 when fewer than 4 bytes are there; a negative length
/// or one over `max_frame` sets `ec` (`client_errc::malformed_reply`).
std::int64_t frame_length(ByteSpan in, std::int32_t max_frame, error_code& ec);

}  // namespace zkr::detail::native::jute
