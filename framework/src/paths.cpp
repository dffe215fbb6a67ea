/// \file
/// Curator's path rules (`PathUtils.validatePath`), path helpers (`ZKPaths`) and protected names
/// (`ProtectedUtils`), ported with their exact semantics.

#include <boost/uuid/random_generator.hpp>
#include <boost/uuid/uuid.hpp>
#include <boost/uuid/uuid_io.hpp>
#include <cstdint>
#include <string>
#include <zkr/framework/paths.hpp>

namespace zkr {

namespace {

/// Decodes strict UTF-8 (no overlong forms, no encoded surrogates, nothing above U+10FFFF, no truncated or
/// stray sequences) into the UTF-16 code units Java's `String` would hold. On malformed input returns false
/// and sets `bad_offset` to the byte offset of the offending sequence.
bool decode_utf8_to_utf16(std::string_view in, std::u16string& out, std::size_t& bad_offset) {
  out.clear();
  out.reserve(in.size());
  std::size_t i = 0;
  const std::size_t n = in.size();
  while (i < n) {
    const auto b0 = static_cast<unsigned char>(in[i]);
    if (b0 < 0x80) {
      out.push_back(static_cast<char16_t>(b0));
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0;
    std::uint32_t min_cp = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) {  // 0xC0 and 0xC1 can only start overlong forms
      len = 2;
      cp = b0 & 0x1Fu;
      min_cp = 0x80;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      len = 3;
      cp = b0 & 0x0Fu;
      min_cp = 0x800;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      len = 4;
      cp = b0 & 0x07u;
      min_cp = 0x10000;
    } else {
      bad_offset = i;  // stray continuation byte or an invalid lead byte (0xC0, 0xC1, 0xF5..0xFF)
      return false;
    }
    if (n - i < len) {
      bad_offset = i;  // truncated sequence
      return false;
    }
    for (std::size_t k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(in[i + k]);
      if ((b & 0xC0u) != 0x80u) {
        bad_offset = i;
        return false;
      }
      cp = (cp << 6) | (b & 0x3Fu);
    }
    if (cp < min_cp || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      bad_offset = i;  // overlong, out of range, or an encoded surrogate (CESU-8 / WTF-8)
      return false;
    }
    if (cp >= 0x10000) {
      const std::uint32_t v = cp - 0x10000;
      out.push_back(static_cast<char16_t>(0xD800 + (v >> 10)));
      out.push_back(static_cast<char16_t>(0xDC00 + (v & 0x3FF)));
    } else {
      out.push_back(static_cast<char16_t>(cp));
    }
    i += len;
  }
  return true;
}

/// `PathUtils.validatePath` on UTF-16 code units, statement for statement.
std::optional<std::string> validate_utf16(const std::u16string& chars) {
  if (chars.empty()) return std::string("Path length must be > 0");
  if (chars[0] != u'/') return std::string("Path must start with / character");
  if (chars.size() == 1) return std::nullopt;  // the root
  if (chars.back() == u'/') return std::string("Path must not end with / character");

  const std::size_t n = chars.size();
  char16_t lastc = u'/';
  for (std::size_t i = 1; i < n; lastc = chars[i], ++i) {
    const char16_t c = chars[i];
    if (c == 0) {
      return "null character not allowed @" + std::to_string(i);
    } else if (c == u'/' && lastc == u'/') {
      return "empty node name specified @" + std::to_string(i);
    } else if (c == u'.' && lastc == u'.') {
      // i >= 2 here: chars[0] is '/', so lastc == '.' implies i - 1 >= 1.
      if (chars[i - 2] == u'/' && (i + 1 == n || chars[i + 1] == u'/')) {
        return "relative paths not allowed @" + std::to_string(i);
      }
    } else if (c == u'.') {
      if (chars[i - 1] == u'/' && (i + 1 == n || chars[i + 1] == u'/')) {
        return "relative paths not allowed @" + std::to_string(i);
      }
    } else if ((c > 0x0000 && c < 0x001F) || (c > 0x007F && c < 0x009F) || (c > 0xD800 && c < 0xF8FF) ||
               (c > 0xFFF0 && c < 0xFFFF)) {
      return "invalid charater @" + std::to_string(i);  // sic: Curator's spelling
    }
  }
  return std::nullopt;
}

/// Splits at the last '/', as `ZKPaths.getPathAndNode` does for valid paths. Inputs Curator would reject:
/// without any '/', the parent is "/" and the whole string is the node; with a trailing '/' (a sequential
/// create of "parent/"), the node is empty and the parent is what precedes the '/' (Curator's getPathAndNode
/// would answer "/", which would move the node to the root).
std::pair<std::string_view, std::string_view> path_and_node(std::string_view path) {
  const auto i = path.rfind('/');
  if (i == std::string_view::npos) return {"/", path};
  const std::string_view parent = i > 0 ? path.substr(0, i) : std::string_view("/");
  return {parent, path.substr(i + 1)};
}

bool is_hex_digit(char c) noexcept {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/// `Long.parseLong(s, 16)` acceptance: an optional sign, then at least one hex digit, and a value that fits a
/// signed 64-bit integer. Only '+' can occur here as a sign: '-' is the UUID separator.
bool java_parses_as_hex_long(std::string_view s) noexcept {
  if (s.empty()) return false;
  std::size_t pos = 0;
  if (s[0] == '+') {
    if (s.size() == 1) return false;
    pos = 1;
  }
  std::size_t significant = 0;
  char first_significant = '0';
  for (; pos < s.size(); ++pos) {
    const char c = s[pos];
    if (!is_hex_digit(c)) return false;
    if (significant == 0 && c == '0') continue;  // leading zeros never overflow
    if (significant == 0) first_significant = c;
    ++significant;
  }
  if (significant < 16) return true;
  if (significant > 16) return false;
  return first_significant >= '0' && first_significant <= '7';  // <= 0x7fffffffffffffff
}

/// `java.util.UUID.fromString` (JDK 9+) acceptance for an ASCII string: at most 36 characters, exactly four
/// '-', and five fields each accepted by `Long.parseLong(field, 16)`.
bool java_uuid_from_string_accepts(std::string_view s) noexcept {
  if (s.size() > 36) return false;
  std::size_t dashes[4];
  std::size_t found = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '-') {
      if (found == 4) return false;  // a fifth dash
      dashes[found++] = i;
    }
  }
  if (found != 4) return false;
  std::size_t begin = 0;
  for (std::size_t k = 0; k <= 4; ++k) {
    const std::size_t end = k < 4 ? dashes[k] : s.size();
    if (!java_parses_as_hex_long(s.substr(begin, end - begin))) return false;
    begin = end + 1;
  }
  return true;
}

}  // namespace

std::optional<std::string> path_error(std::string_view path) {
  std::u16string units;
  std::size_t bad = 0;
  if (!decode_utf8_to_utf16(path, units, bad)) return "malformed UTF-8 @" + std::to_string(bad);
  return validate_utf16(units);
}

std::optional<std::string> path_error(std::string_view path, bool sequential) {
  if (!sequential) return path_error(path);
  std::string with_suffix;
  with_suffix.reserve(path.size() + 1);
  with_suffix.append(path);
  with_suffix.push_back('1');
  return path_error(with_suffix);
}

std::string make_path(std::string_view parent, std::string_view child) {
  std::string path;
  path.reserve(parent.size() + child.size() + 2);
  if (!parent.empty()) {
    if (parent.front() != '/') path.push_back('/');
    if (parent.back() == '/') {
      path.append(parent.substr(0, parent.size() - 1));
    } else {
      path.append(parent);
    }
  }
  if (child.empty() || child == "/") {
    if (path.empty()) path.push_back('/');
    return path;
  }
  path.push_back('/');
  if (child.front() == '/') child.remove_prefix(1);
  if (!child.empty() && child.back() == '/') child.remove_suffix(1);
  path.append(child);
  return path;
}

std::string parent_path(std::string_view path) { return std::string(path_and_node(path).first); }

std::string node_name(std::string_view path) { return std::string(path_and_node(path).second); }

std::vector<std::string> split_path(std::string_view path) {
  std::vector<std::string> parts;
  std::size_t begin = 0;
  while (begin <= path.size()) {
    auto end = path.find('/', begin);
    if (end == std::string_view::npos) end = path.size();
    if (end > begin) parts.emplace_back(path.substr(begin, end - begin));
    begin = end + 1;
  }
  return parts;
}

namespace protected_names {

std::string new_protected_id() {
  // random_generator is not thread-safe and is costly to seed: one per thread.
  thread_local boost::uuids::random_generator generator;
  return boost::uuids::to_string(generator());  // lower-case, 8-4-4-4-12
}

std::string prefix_for(std::string_view protected_id) {
  std::string out;
  out.reserve(prefix.size() + protected_id.size() + 1);
  out.append(prefix);
  out.append(protected_id);
  out.push_back(separator);
  return out;
}

std::string to_protected_path(std::string_view path, std::string_view protected_id) {
  const auto [parent, node] = path_and_node(path);
  std::string name = prefix_for(protected_id);
  name.append(node);
  return make_path(parent, name);
}

bool is_protected_node(std::string_view name) {
  if (name.size() <= prefix_with_uuid_length) return false;
  if (name.substr(0, prefix.size()) != prefix) return false;
  if (name[prefix_with_uuid_length - 1] != separator) return false;
  const std::string_view id = name.substr(prefix.size(), prefix_with_uuid_length - 1 - prefix.size());
  for (const char c : id) {
    // Byte offsets equal Java's UTF-16 offsets only for ASCII; see the header.
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return java_uuid_from_string_accepts(id);
}

std::string_view normalize(std::string_view name) {
  return is_protected_node(name) ? name.substr(prefix_with_uuid_length) : name;
}

}  // namespace protected_names

std::string_view sequential_suffix(std::string_view name) {
  constexpr std::size_t digits = 10;
  return name.size() > digits ? name.substr(name.size() - digits) : name;
}

}  // namespace zkr
