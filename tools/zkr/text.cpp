#include "text.hpp"

#include <cstdio>

namespace zkr::cli {

namespace {

/// The length of the well-formed UTF-8 sequence starting at `s[i]` (RFC 3629; the Unicode standard's table of
/// well-formed byte sequences), or 0 when it is malformed: a stray continuation byte, a lead byte C0, C1 or
/// F5-FF, a missing or bad continuation byte, an overlong form, a surrogate (U+D800-DFFF) or a code point
/// above U+10FFFF.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  auto at = [&](std::size_t k) -> unsigned {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0;
  };
  auto in = [](unsigned b, unsigned lo, unsigned hi) { return b >= lo && b <= hi; };
  const unsigned c = at(0);
  if (c < 0x80) return 1;
  if (in(c, 0xc2, 0xdf)) return in(at(1), 0x80, 0xbf) ? 2 : 0;
  if (c == 0xe0) return in(at(1), 0xa0, 0xbf) && in(at(2), 0x80, 0xbf) ? 3 : 0;  // no overlong
  if (c == 0xed) return in(at(1), 0x80, 0x9f) && in(at(2), 0x80, 0xbf) ? 3 : 0;  // no surrogate
  if (in(c, 0xe1, 0xef)) return in(at(1), 0x80, 0xbf) && in(at(2), 0x80, 0xbf) ? 3 : 0;
  if (c == 0xf0) return in(at(1), 0x90, 0xbf) && in(at(2), 0x80, 0xbf) && in(at(3), 0x80, 0xbf) ? 4 : 0;
  if (in(c, 0xf1, 0xf3))
    return in(at(1), 0x80, 0xbf) && in(at(2), 0x80, 0xbf) && in(at(3), 0x80, 0xbf) ? 4 : 0;
  if (c == 0xf4) return in(at(1), 0x80, 0x8f) && in(at(2), 0x80, 0xbf) && in(at(3), 0x80, 0xbf) ? 4 : 0;
  return 0;
}

}  // namespace

std::string json_escape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else if (c < 0x80) {
          out += static_cast<char>(c);
        } else {
          const std::size_t len = utf8_sequence_length(s, i);
          if (len > 0) {
            out.append(s.substr(i, len));
            i += len - 1;
          } else {
            out += "\\ufffd";
          }
        }
    }
  }
  return out;
}

std::string printable(std::string_view s, std::size_t max) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
    if (out.size() > max) {
      out.resize(max);
      out += "...";
      break;
    }
  }
  return out;
}

}  // namespace zkr::cli
