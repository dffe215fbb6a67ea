#pragma once
/// \file
/// Path rules and helpers with Curator's exact semantics (`PathUtils`, `ZKPaths`, `ProtectedUtils`).
///
/// Every function here is pure (no I/O, no shared state) and safe to call from any thread, except
/// `protected_names::new_protected_id`, which uses a per-thread generator and is also safe from any thread.
/// Strings are UTF-8. Functions other than `path_error` do not validate their input (Curator's `ZKPaths`
/// would throw `IllegalArgumentException` on an invalid path); validate first where that matters.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace zkr {

/// Why `path` is invalid by Curator's `PathUtils.validatePath` rules, or nullopt when it is valid.
/// The path is UTF-8; it is checked as the UTF-16 code units Java would see (so any non-BMP character, a NUL,
/// control characters, `//`, `.`/`..` segments, a trailing `/` and a missing leading `/` are rejected).
/// Malformed UTF-8 is rejected too. The reason reads like Curator's, e.g. "empty node name specified @3".
///
/// The reasons are Curator's, with `@i` the index of the offending UTF-16 code unit (as Java reports it):
/// "Path length must be > 0", "Path must start with / character", "Path must not end with / character",
/// "null character not allowed @i", "empty node name specified @i", "relative paths not allowed @i" and
/// "invalid charater @i" (Curator's spelling). The rejected code units are, with exclusive bounds as in
/// Curator, 0x00<c<0x1F, 0x7F<c<0x9F, 0xD800<c<0xF8FF and 0xFFF0<c<0xFFFF; 0x1F, 0x7F, 0x9F, 0xF8FF, 0xFFF0
/// and 0xFFFF pass, and a non-BMP character fails on its low surrogate (index of the high surrogate + 1).
/// Malformed UTF-8 (truncated or stray sequences, overlong forms, encoded surrogates, code points above
/// U+10FFFF) yields "malformed UTF-8 @b" with `b` the *byte* offset of the bad sequence; it is checked first.
/// Never throws except `std::bad_alloc`.
std::optional<std::string> path_error(std::string_view path);

/// As `path_error(path + "1")` when `sequential` (a sequential create may end in `/`), else
/// `path_error(path)`. Indices in the reason refer to `path + "1"`.
std::optional<std::string> path_error(std::string_view path, bool sequential);

/// True when `path_error(path)` is nullopt.
inline bool is_valid_path(std::string_view path) { return !path_error(path).has_value(); }

/// `ZKPaths.makePath(parent, child)`: joins with exactly one `/`; an empty or "/" child yields the parent.
/// Exactly: a leading `/` is added to a non-empty parent lacking one and one trailing `/` is stripped from
/// it; one leading and one trailing `/` are stripped from the child; both empty (or "/") gives "/". E.g.
/// ("/a/", "/b/") → "/a/b", ("a", "b") → "/a/b", ("/", "a") → "/a", ("", "") → "/". Does not validate.
std::string make_path(std::string_view parent, std::string_view child);

/// The parent of a path ("/" for a top-level node, "/" for "/"), as `ZKPaths.getPathAndNode(path).getPath()`.
/// Inputs Curator would reject: a string with no `/` at all is treated as a top-level node (parent "/"); with
/// a trailing `/` the parent is what precedes it ("/a/b/" → "/a/b", where Curator's helper would say "/").
std::string parent_path(std::string_view path);
/// The last segment of a path ("" for "/"), as `ZKPaths.getNodeFromPath`. A string with no `/` is returned
/// whole.
std::string node_name(std::string_view path);
/// Splits "/a/b/c" into {"a","b","c"}; empty segments are omitted ("/" gives {}), as `ZKPaths.split`.
std::vector<std::string> split_path(std::string_view path);

/// Protected-mode names (`_c_<uuid>-`), Curator's `ProtectedUtils`.
namespace protected_names {
/// Curator's `PROTECTED_PREFIX`.
inline constexpr std::string_view prefix = "_c_";
/// Curator's `PROTECTED_SEPARATOR`, between the UUID and the node name.
inline constexpr char separator = '-';
/// Curator's `PROTECTED_PREFIX_WITH_UUID_LENGTH`: 3 + 36 + 1.
inline constexpr std::size_t prefix_with_uuid_length = 40;

/// A fresh lower-case random (v4) UUID in canonical 8-4-4-4-12 form (Java's `UUID.randomUUID().toString()`).
/// Uses a per-thread Boost.Uuid `random_generator` (OS entropy); thread-safe. Throws
/// `boost::uuids::entropy_error` if the operating system's entropy source fails.
std::string new_protected_id();
/// "_c_<id>-". `protected_id` is used verbatim.
std::string prefix_for(std::string_view protected_id);
/// `<parent>/_c_<id>-<last segment>` (`ProtectedUtils.toProtectedZNodePath`): only the last segment changes.
/// A path ending in `/` (a sequential create of "parent/") gives `<parent>/_c_<id>-`. Does not validate.
std::string to_protected_path(std::string_view path, std::string_view protected_id);
/// Curator's `isProtectedZNode`: longer than 40, starts with "_c_", '-' at 39, and a UUID in between.
/// "A UUID" means what `java.util.UUID.fromString` (JDK 9+) accepts, including its leniency: upper-case hex,
/// any positions of exactly four '-', fields with a '+' sign or of any length as long as each fits a signed
/// 64-bit value. Divergence: a name with non-ASCII bytes in the UUID window is never protected here (Java's
/// `Character.digit` would accept some non-ASCII Unicode digits).
bool is_protected_node(std::string_view name);
/// Strips the protected prefix (the first 40 characters) from a node name if `is_protected_node(name)`;
/// otherwise returns `name` unchanged. The result views `name`'s storage.
std::string_view normalize(std::string_view name);
}  // namespace protected_names

/// The 10-character sequence suffix of a sequential node name (Curator's `extractSequentialSuffix`), or the
/// whole name when it is shorter. Counts bytes, which equals Java's count for the ASCII digits ZooKeeper
/// appends. The result views `name`'s storage.
std::string_view sequential_suffix(std::string_view name);

}  // namespace zkr
