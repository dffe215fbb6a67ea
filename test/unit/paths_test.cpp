// Unit tests for framework/paths: Curator's PathUtils.validatePath, ZKPaths and ProtectedUtils semantics.

#include <algorithm>
#include <catch2/catch.hpp>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
#include <zkr/framework/paths.hpp>

namespace {

using zkr::path_error;

std::optional<std::string> err(std::string_view p) { return path_error(p); }
std::optional<std::string> none() { return std::nullopt; }
std::optional<std::string> reason(std::string s) { return s; }

/// Matches ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$ (lower-case, version 4,
/// RFC 4122 variant). Hand-written: GCC 12's <regex> trips -Wmaybe-uninitialized under sanitizers.
bool is_lower_v4_uuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return s[14] == '4' && (s[19] == '8' || s[19] == '9' || s[19] == 'a' || s[19] == 'b');
}

}  // namespace

TEST_CASE("path_error: structural rules and Curator's messages", "[paths]") {
  CHECK(err("") == reason("Path length must be > 0"));
  CHECK(err("a") == reason("Path must start with / character"));
  CHECK(err("a/") == reason("Path must start with / character"));  // the start check comes first
  CHECK(err(" /a") == reason("Path must start with / character"));
  CHECK(err("/") == none());
  CHECK(err("/a/") == reason("Path must not end with / character"));
  CHECK(err("//") == reason("Path must not end with / character"));  // the end check precedes "//"
  CHECK(err("/a//") == reason("Path must not end with / character"));
  CHECK(err("//a") == reason("empty node name specified @1"));
  CHECK(err("/a//b") == reason("empty node name specified @3"));
  CHECK(err("/a/b//c") == reason("empty node name specified @5"));
  CHECK(err("/a///b") == reason("empty node name specified @3"));  // the first error wins
}

TEST_CASE("path_error: relative segments", "[paths]") {
  CHECK(err("/.") == reason("relative paths not allowed @1"));
  CHECK(err("/..") == reason("relative paths not allowed @2"));
  CHECK(err("/./a") == reason("relative paths not allowed @1"));
  CHECK(err("/../a") == reason("relative paths not allowed @2"));
  CHECK(err("/a/.") == reason("relative paths not allowed @3"));
  CHECK(err("/a/..") == reason("relative paths not allowed @4"));
  CHECK(err("/a/./b") == reason("relative paths not allowed @3"));
  CHECK(err("/a/../b") == reason("relative paths not allowed @4"));
  // Dots that are not a whole "." or ".." segment are fine.
  for (const char* ok : {"/...", "/a.", "/.a", "/a..", "/..a", "/a/.../b", "/a.b", "/.a/b", "/a/..b",
                         "/a/b..", "/.../...", "/.hidden", "/a/.b./c"}) {
    INFO(ok);
    CHECK(err(ok) == none());
  }
}

TEST_CASE("path_error: NUL", "[paths]") {
  using namespace std::string_view_literals;
  CHECK(err("/\0"sv) == reason("null character not allowed @1"));
  CHECK(err("/a\0b"sv) == reason("null character not allowed @2"));
  CHECK(err("/ab/\0"sv) == reason("null character not allowed @4"));
  CHECK(err("\0/a"sv) == reason("Path must start with / character"));
  CHECK(err("/a\0/"sv) == reason("Path must not end with / character"));
}

TEST_CASE("path_error: invalid code units with Curator's exclusive bounds", "[paths]") {
  struct Case {
    const char* utf8;
    bool valid;
    const char* what;
  };
  // "/" + one character: every boundary of 0x00<c<0x1F, 0x7F<c<0x9F, 0xD800<c<0xF8FF, 0xFFF0<c<0xFFFF.
  const Case cases[] = {
      {"/\x01", false, "U+0001"},
      {"/\x09", false, "U+0009 tab"},
      {"/\x0a", false, "U+000A newline"},
      {"/\x1e", false, "U+001E"},
      {"/\x1f", true, "U+001F (exclusive bound)"},
      {"/\x20", true, "space"},
      {"/\x7e", true, "~"},
      {"/\x7f", true, "U+007F (exclusive bound)"},
      {"/\xc2\x80", false, "U+0080"},
      {"/\xc2\x90", false, "U+0090"},
      {"/\xc2\x9e", false, "U+009E"},
      {"/\xc2\x9f", true, "U+009F (exclusive bound)"},
      {"/\xc2\xa0", true, "U+00A0"},
      {"/\xc3\xa9", true, "U+00E9"},
      {"/\xed\x9f\xbf", true, "U+D7FF"},
      {"/\xee\x80\x80", false, "U+E000 private use"},
      {"/\xef\xa3\xbe", false, "U+F8FE"},
      {"/\xef\xa3\xbf", true, "U+F8FF (exclusive bound)"},
      {"/\xef\xa4\x80", true, "U+F900"},
      {"/\xef\xbf\xaf", true, "U+FFEF"},
      {"/\xef\xbf\xb0", true, "U+FFF0 (exclusive bound)"},
      {"/\xef\xbf\xb1", false, "U+FFF1"},
      {"/\xef\xbf\xbd", false, "U+FFFD replacement character"},
      {"/\xef\xbf\xbe", false, "U+FFFE"},
      {"/\xef\xbf\xbf", true, "U+FFFF (exclusive bound)"},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    if (c.valid) {
      CHECK(err(c.utf8) == none());
      CHECK(zkr::is_valid_path(c.utf8));
    } else {
      CHECK(err(c.utf8) == reason("invalid charater @1"));
      CHECK_FALSE(zkr::is_valid_path(c.utf8));
    }
  }
}

TEST_CASE("path_error: non-BMP characters fail on a surrogate", "[paths]") {
  // U+10000 is D800 DC00: 0xD800 itself passes (exclusive bound), the low surrogate DC00 fails @2.
  CHECK(err("/\xf0\x90\x80\x80") == reason("invalid charater @2"));
  // U+103FF is D800 DFFF: same.
  CHECK(err("/\xf0\x90\x8f\xbf") == reason("invalid charater @2"));
  // U+10400 is D801 DC00: the high surrogate D801 is already in range.
  CHECK(err("/\xf0\x90\x90\x80") == reason("invalid charater @1"));
  // U+1F600 (emoji), U+10FFFF.
  CHECK(err("/\xf0\x9f\x98\x80") == reason("invalid charater @1"));
  CHECK(err("/a/\xf4\x8f\xbf\xbf") == reason("invalid charater @3"));
}

TEST_CASE("path_error: indices count UTF-16 code units, not bytes", "[paths]") {
  // U+00E9 is 2 bytes but 1 unit; U+20AC is 3 bytes but 1 unit.
  CHECK(err("/\xc3\xa9\x01") == reason("invalid charater @2"));
  CHECK(err("/\xe2\x82\xac/\x01") == reason("invalid charater @3"));
  CHECK(err("/\xe2\x82\xac//a") == reason("empty node name specified @3"));
  CHECK(err("/\xe2\x82\xac\xe2\x82\xac/..") == reason("relative paths not allowed @5"));
}

TEST_CASE("path_error: malformed UTF-8 is rejected with its byte offset", "[paths]") {
  using namespace std::string_view_literals;
  CHECK(err("/\x80") == reason("malformed UTF-8 @1"));              // stray continuation byte
  CHECK(err("/ab\xbf") == reason("malformed UTF-8 @3"));            // stray continuation byte
  CHECK(err("/\xc3") == reason("malformed UTF-8 @1"));              // truncated 2-byte sequence
  CHECK(err("/\xc3(") == reason("malformed UTF-8 @1"));             // bad continuation
  CHECK(err("/a\xe2\x82") == reason("malformed UTF-8 @2"));         // truncated 3-byte sequence
  CHECK(err("/\xe2\x82(") == reason("malformed UTF-8 @1"));         // bad continuation
  CHECK(err("/\xf0\x9f\x98") == reason("malformed UTF-8 @1"));      // truncated 4-byte sequence
  CHECK(err("/\xc0\xaf") == reason("malformed UTF-8 @1"));          // overlong '/'
  CHECK(err("/\xc1\xbf") == reason("malformed UTF-8 @1"));          // overlong
  CHECK(err("/\xe0\x80\xaf") == reason("malformed UTF-8 @1"));      // overlong '/'
  CHECK(err("/\xe0\x9f\xbf") == reason("malformed UTF-8 @1"));      // overlong U+07FF
  CHECK(err("/\xf0\x8f\xbf\xbf") == reason("malformed UTF-8 @1"));  // overlong U+FFFF
  CHECK(err("/\xc0\x80") == reason("malformed UTF-8 @1"));          // modified-UTF-8 NUL
  CHECK(err("/\xed\xa0\x80") == reason("malformed UTF-8 @1"));      // encoded surrogate U+D800
  CHECK(err("/\xed\xbf\xbf") == reason("malformed UTF-8 @1"));      // encoded surrogate U+DFFF
  CHECK(err("/\xf4\x90\x80\x80") == reason("malformed UTF-8 @1"));  // U+110000
  CHECK(err("/\xf5\x80\x80\x80") == reason("malformed UTF-8 @1"));  // invalid lead byte
  CHECK(err("/\xfe") == reason("malformed UTF-8 @1"));
  CHECK(err("/\xff") == reason("malformed UTF-8 @1"));
  // The encoding is checked before the structural rules.
  CHECK(err("\x80") == reason("malformed UTF-8 @0"));
  CHECK(err("\x80/") == reason("malformed UTF-8 @0"));
  CHECK(err("/a/\xff/") == reason("malformed UTF-8 @3"));
  // The same bytes, well formed, pass.
  CHECK(err("/\xc3\xa9/\xe2\x82\xac/x") == none());
}

TEST_CASE("path_error: valid paths", "[paths]") {
  for (const char* ok :
       {"/", "/a", "/a/b", "/a/b/c", "/zookeeper", "/zookeeper/quota", "/a b", "/a-b_c:d",
        "/locks/foo/_c_53345f98-9423-4e0c-a7b5-9f819e3ec2e1-lock-0000000007", "/\x1f\x7f",
        "/\xe4\xb8\xad\xe6\x96\x87", "/lock-", "/a/lock-2147483647", "/a/lock--2147483648"}) {
    INFO(ok);
    CHECK(err(ok) == none());
    CHECK(zkr::is_valid_path(ok));
  }
}

TEST_CASE("path_error: sequential validates path + \"1\"", "[paths]") {
  CHECK(path_error("/a/", true) == none());
  CHECK(path_error("/a/", false) == reason("Path must not end with / character"));
  CHECK(path_error("/", true) == none());
  CHECK(path_error("/lock-", true) == none());
  CHECK(path_error("", true) == reason("Path must start with / character"));  // "1"
  CHECK(path_error("", false) == reason("Path length must be > 0"));
  CHECK(path_error("/a//", true) == reason("empty node name specified @3"));
  CHECK(path_error("/a/.", true) == none());  // "/a/.1"
  CHECK(path_error("/a/.", false) == reason("relative paths not allowed @3"));
  CHECK(path_error("/a/..", true) == none());  // "/a/..1"
  CHECK(path_error("/\x01/", true) == reason("invalid charater @1"));
  CHECK(path_error("/a/\xc3", true) == reason("malformed UTF-8 @3"));
}

TEST_CASE("make_path: ZKPaths.makePath semantics", "[paths]") {
  struct Case {
    const char* parent;
    const char* child;
    const char* expected;
  };
  // Curator's TestZKPaths.testMakePath (null parent/child become ""), plus edge cases of one-slash stripping.
  const Case cases[] = {
      {"", "/", "/"},
      {"/", "", "/"},
      {"/", "/", "/"},
      {"", "", "/"},
      {"foo", "", "/foo"},
      {"foo", "/", "/foo"},
      {"/foo", "", "/foo"},
      {"/foo", "/", "/foo"},
      {"/foo/", "", "/foo"},
      {"", "bar", "/bar"},
      {"/", "bar", "/bar"},
      {"", "/bar", "/bar"},
      {"/", "/bar", "/bar"},
      {"foo", "bar", "/foo/bar"},
      {"/foo", "bar", "/foo/bar"},
      {"foo", "/bar", "/foo/bar"},
      {"/foo", "/bar", "/foo/bar"},
      {"/foo", "bar/", "/foo/bar"},
      {"/foo/", "/bar/", "/foo/bar"},
      {"foo/", "bar", "/foo/bar"},
      {"/foo", "bar/baz", "/foo/bar/baz"},
      {"/foo/bar", "baz", "/foo/bar/baz"},
      // Only one slash is stripped on each side.
      {"/foo", "//", "/foo/"},
      {"/foo", "//bar", "/foo//bar"},
      {"/foo", "bar//", "/foo/bar/"},
      {"/foo//", "bar", "/foo//bar"},
      {"//", "bar", "//bar"},
      {"/locks/foo", "_c_53345f98-9423-4e0c-a7b5-9f819e3ec2e1-lock-",
       "/locks/foo/_c_53345f98-9423-4e0c-a7b5-9f819e3ec2e1-lock-"},
  };
  for (const auto& c : cases) {
    INFO("parent=\"" << c.parent << "\" child=\"" << c.child << "\"");
    CHECK(zkr::make_path(c.parent, c.child) == c.expected);
  }
}

TEST_CASE("parent_path, node_name, split_path", "[paths]") {
  CHECK(zkr::parent_path("/one/two/three") == "/one/two");
  CHECK(zkr::node_name("/one/two/three") == "three");
  CHECK(zkr::parent_path("/one") == "/");
  CHECK(zkr::node_name("/one") == "one");
  CHECK(zkr::parent_path("/") == "/");
  CHECK(zkr::node_name("/") == "");
  CHECK(zkr::parent_path("/a/b/") == "/a/b");  // a sequential create of "/a/b/": the node is empty
  CHECK(zkr::node_name("/a/b/") == "");
  CHECK(zkr::node_name("abc") == "abc");  // no '/' at all: as a top-level node
  CHECK(zkr::parent_path("abc") == "/");

  CHECK(zkr::split_path("/") == std::vector<std::string>{});
  CHECK(zkr::split_path("") == std::vector<std::string>{});
  CHECK(zkr::split_path("/test") == std::vector<std::string>{"test"});
  CHECK(zkr::split_path("/test/one") == std::vector<std::string>{"test", "one"});
  CHECK(zkr::split_path("/test/one/two") == std::vector<std::string>{"test", "one", "two"});
  CHECK(zkr::split_path("//a//b/") == std::vector<std::string>{"a", "b"});  // empty parts omitted
}

TEST_CASE("protected ids are fresh lower-case v4 UUIDs", "[paths][protected]") {
  namespace pn = zkr::protected_names;
  // The checker itself.
  REQUIRE(is_lower_v4_uuid("53345f98-9423-4e0c-a7b5-9f819e3ec2e1"));
  REQUIRE_FALSE(is_lower_v4_uuid("53345F98-9423-4E0C-A7B5-9F819E3EC2E1"));  // upper case
  REQUIRE_FALSE(is_lower_v4_uuid("53345f98-9423-1e0c-a7b5-9f819e3ec2e1"));  // version 1
  REQUIRE_FALSE(is_lower_v4_uuid("53345f98-9423-4e0c-c7b5-9f819e3ec2e1"));  // not the RFC 4122 variant
  REQUIRE_FALSE(is_lower_v4_uuid("53345f98-9423-4e0c-a7b5-9f819e3ec2e"));   // short
  REQUIRE_FALSE(is_lower_v4_uuid("53345f989423-4e0c-a7b5-9f819e3ec2e1-"));  // dash misplaced
  std::set<std::string> seen;
  for (int i = 0; i < 2000; ++i) {
    const std::string id = pn::new_protected_id();
    REQUIRE(id.size() == 36);
    REQUIRE(is_lower_v4_uuid(id));
    REQUIRE(pn::is_protected_node(pn::prefix_for(id) + "x"));
    seen.insert(id);
  }
  CHECK(seen.size() == 2000);

  // From several threads at once (per-thread generators).
  std::mutex m;
  std::set<std::string> all;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      std::vector<std::string> mine;
      for (int i = 0; i < 500; ++i) mine.push_back(pn::new_protected_id());
      std::lock_guard<std::mutex> lock(m);
      all.insert(mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) t.join();
  CHECK(all.size() == 2000);
  for (const auto& id : all) CHECK(is_lower_v4_uuid(id));
}

TEST_CASE("protected prefix and paths", "[paths][protected]") {
  namespace pn = zkr::protected_names;
  CHECK(pn::prefix == "_c_");
  CHECK(pn::separator == '-');
  CHECK(pn::prefix_with_uuid_length == pn::prefix.size() + 36 + 1);

  const std::string id = "53345f98-9423-4e0c-a7b5-9f819e3ec2e1";
  const std::string prefix = pn::prefix_for(id);
  CHECK(prefix == "_c_53345f98-9423-4e0c-a7b5-9f819e3ec2e1-");
  CHECK(prefix.size() == 40);

  CHECK(pn::to_protected_path("/locks/foo/lock-", id) == "/locks/foo/" + prefix + "lock-");
  CHECK(pn::to_protected_path("/lock-", id) == "/" + prefix + "lock-");
  CHECK(pn::to_protected_path("/a/b/c", id) == "/a/b/" + prefix + "c");
  // Only the last segment changes, even when a parent segment looks protected or resembles the name.
  CHECK(pn::to_protected_path("/c/_c_x/c", id) == "/c/_c_x/" + prefix + "c");
  const std::string already = "/p/" + prefix + "lock-";
  CHECK(pn::to_protected_path(already, id) == "/p/" + prefix + prefix + "lock-");
  // A sequential create of "parent/".
  CHECK(pn::to_protected_path("/a/b/", id) == "/a/b/" + prefix);
  CHECK(pn::to_protected_path("/", id) == "/" + prefix);

  // Fresh ids produce valid paths whose node is protected once the server appends the sequence.
  for (int i = 0; i < 100; ++i) {
    const auto p = pn::to_protected_path("/locks/foo/lock-", pn::new_protected_id());
    CHECK(zkr::is_valid_path(p));
    CHECK(zkr::parent_path(p) == "/locks/foo");
    const auto node = zkr::node_name(p) + "0000000007";
    CHECK(pn::is_protected_node(node));
    CHECK(pn::normalize(node) == "lock-0000000007");
  }
}

TEST_CASE("is_protected_node follows ProtectedUtils and java.util.UUID.fromString", "[paths][protected]") {
  namespace pn = zkr::protected_names;
  const std::string uuid = "53345f98-9423-4e0c-a7b5-9f819e3ec2e1";
  CHECK(pn::is_protected_node("_c_" + uuid + "-lock-0000000007"));
  CHECK(pn::is_protected_node("_c_" + uuid + "-x"));       // 41 characters
  CHECK_FALSE(pn::is_protected_node("_c_" + uuid + "-"));  // exactly 40: must be longer
  CHECK_FALSE(pn::is_protected_node("_c_" + uuid));
  CHECK_FALSE(pn::is_protected_node(""));
  CHECK_FALSE(pn::is_protected_node("lock-0000000007"));
  CHECK_FALSE(pn::is_protected_node("_C_" + uuid + "-x"));  // prefix is case-sensitive
  CHECK_FALSE(pn::is_protected_node("_c-" + uuid + "-x"));
  CHECK_FALSE(pn::is_protected_node("_c_" + uuid + "_x"));  // '-' required at 39
  CHECK_FALSE(pn::is_protected_node("x_c_" + uuid + "-x"));
  CHECK_FALSE(pn::is_protected_node("_c_53345f98-9423-4e0c-a7b5-9f819e3ec2eg-x"));  // 'g' is not hex
  CHECK_FALSE(pn::is_protected_node("_c_53345f98 9423-4e0c-a7b5-9f819e3ec2e1-x"));  // 3 dashes
  CHECK_FALSE(pn::is_protected_node("_c_53345f98-9423-4e0c-a7b5-9f819e3ec2-1-x"));  // 5 dashes
  // java.util.UUID.fromString is lenient and Curator inherits it:
  CHECK(pn::is_protected_node("_c_53345F98-9423-4E0C-A7B5-9F819E3EC2E1-x"));  // upper-case hex
  CHECK(pn::is_protected_node("_c_1-2-3-4-0000000000000000000000000000-x"));  // dashes anywhere, 4 of them
  CHECK(pn::is_protected_node("_c_+0000000-0000-0000-0000-000000000000-x"));  // '+' sign in a field
  CHECK_FALSE(pn::is_protected_node("_c_+-0-0-0-0000000000000000000000000000-x"));  // a lone sign
  CHECK(pn::is_protected_node("_c_1-0-0-0-0000000000000000000000000000-x"));        // (control for the above)
  CHECK_FALSE(pn::is_protected_node("_c_--0-0-000000000000000000000000000000-x"));  // an empty field
  // Each field must fit a signed 64-bit value (Long.parseLong), leading zeros aside.
  CHECK(pn::is_protected_node("_c_7fffffffffffffff-0-0-0-0000000000000-x"));
  CHECK_FALSE(pn::is_protected_node("_c_8000000000000000-0-0-0-0000000000000-x"));
  CHECK(pn::is_protected_node("_c_0-0-0-0-0000000000007fffffffffffffff-x"));
  CHECK_FALSE(pn::is_protected_node("_c_0-0-0-0-0000000000010000000000000000-x"));
  // Non-ASCII in the UUID window: not protected (documented divergence).
  CHECK_FALSE(pn::is_protected_node("_c_53345f98-9423-4e0c-a7b5-9f819e3ec2\xc3\xa9-x"));
}

TEST_CASE("normalize strips exactly the protected prefix", "[paths][protected]") {
  namespace pn = zkr::protected_names;
  const std::string uuid = "53345f98-9423-4e0c-a7b5-9f819e3ec2e1";
  CHECK(pn::normalize("_c_" + uuid + "-lock-0000000007") == "lock-0000000007");
  CHECK(pn::normalize("_c_" + uuid + "-_c_" + uuid + "-a") == "_c_" + uuid + "-a");  // only once
  CHECK(pn::normalize("lock-0000000007") == "lock-0000000007");
  CHECK(pn::normalize("_c_" + uuid + "-") == "_c_" + uuid + "-");  // not longer than 40
  CHECK(pn::normalize("_c_not-a-uuid-at-all-but-long-enough-x-lock-") ==
        "_c_not-a-uuid-at-all-but-long-enough-x-lock-");
}

TEST_CASE("sequential_suffix takes the last 10 characters", "[paths]") {
  CHECK(zkr::sequential_suffix("lock-0000000007") == "0000000007");
  CHECK(zkr::sequential_suffix("_c_53345f98-9423-4e0c-a7b5-9f819e3ec2e1-lock-0000000007") == "0000000007");
  CHECK(zkr::sequential_suffix("0000000007") == "0000000007");
  CHECK(zkr::sequential_suffix("short") == "short");
  CHECK(zkr::sequential_suffix("") == "");
  // After the 32-bit wrap the server appends 11 characters; Curator still takes 10.
  CHECK(zkr::sequential_suffix("lock--2147483648") == "2147483648");
}
