// Jute's primitives (see jute.hpp).

#include "jute.hpp"

namespace zkr::detail::native::jute {

void Writer::i32(std::int32_t v) {
  const auto u = static_cast<std::uint32_t>(v);
  for (int shift = 24; shift >= 0; shift -= 8) out_.push_back(static_cast<std::uint8_t>(u >> shift));
}

void Writer::i64(std::int64_t v) {
  const auto u = static_cast<std::uint64_t>(v);
  for (int shift = 56; shift >= 0; shift -= 8) out_.push_back(static_cast<std::uint8_t>(u >> shift));
}

void Writer::buffer(std::string_view v) {
  i32(static_cast<std::int32_t>(v.size()));
  out_.insert(out_.end(), v.begin(), v.end());
}

void Writer::strings(const std::vector<std::string>& v) {
  i32(static_cast<std::int32_t>(v.size()));
  for (const auto& s : v) buffer(s);
}

std::size_t Writer::begin_frame() {
  const std::size_t at = out_.size();
  out_.resize(at + 4);
  return at;
}

void Writer::end_frame(std::size_t at) {
  const auto len = static_cast<std::uint32_t>(out_.size() - at - 4);
  for (int i = 0; i < 4; ++i)
    out_[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(len >> (24 - 8 * i));
}

void Reader::fail() noexcept {
  if (!ec_) ec_ = client_errc::malformed_reply;
  pos_ = in_.size();
}

bool Reader::take(std::size_t n) noexcept {
  if (ec_) return false;
  if (remaining() < n) {
    fail();
    return false;
  }
  return true;
}

std::int32_t Reader::i32() {
  if (!take(4)) return 0;
  std::uint32_t u = 0;
  for (int i = 0; i < 4; ++i) u = (u << 8) | in_[pos_++];
  return static_cast<std::int32_t>(u);
}

std::int64_t Reader::i64() {
  if (!take(8)) return 0;
  std::uint64_t u = 0;
  for (int i = 0; i < 8; ++i) u = (u << 8) | in_[pos_++];
  return static_cast<std::int64_t>(u);
}

bool Reader::boolean() {
  if (!take(1)) return false;
  return in_[pos_++] != 0;
}

std::string Reader::buffer() {
  const std::int32_t len = i32();
  if (ec_ || len == -1) return {};
  if (len < 0 || len > max_buffer || !take(static_cast<std::size_t>(len))) {
    fail();
    return {};
  }
  std::string s(reinterpret_cast<const char*>(in_.data() + pos_), static_cast<std::size_t>(len));
  pos_ += static_cast<std::size_t>(len);
  return s;
}

std::size_t Reader::count(std::size_t min_element) {
  const std::int32_t n = i32();
  if (ec_ || n == -1) return 0;
  if (n < 0 || static_cast<std::size_t>(n) > remaining() / min_element) {
    fail();
    return 0;
  }
  return static_cast<std::size_t>(n);
}

std::vector<std::string> Reader::strings() {
  const std::size_t n = count(4);
  std::vector<std::string> v;
  v.reserve(n);
  for (std::size_t i = 0; i < n && !ec_; ++i) v.push_back(buffer());
  if (ec_) v.clear();
  return v;
}

std::int64_t frame_length(ByteSpan in, std::int32_t max_frame, error_code& ec) {
  if (in.size() < 4) return -1;
  Reader r(in.first(4));
  const std::int32_t len = r.i32();
  if (len < 0 || len > max_frame) {
    ec = client_errc::malformed_reply;
    return -1;
  }
  return len;
}

}  // namespace zkr::detail::native::jute
