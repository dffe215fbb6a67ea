// Unit tests for the native transport's codec (framework/src/native): byte-exact frames for records whose
// layout zookeeper.jute fixes, round trips, and hostile input (truncated, oversized, out of step) answered
// with client_errc::malformed_reply.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "native/jute.hpp"
#include "native/records.hpp"
#include "native/watch_table.hpp"

namespace {

namespace native = zkr::detail::native;
namespace jute = zkr::detail::native::jute;
namespace zk = zkr::detail::zk;
using Bytes = jute::Bytes;

Bytes hex(const std::string& s) {
  Bytes out;
  for (std::size_t i = 0; i + 1 < s.size();) {
    if (s[i] == ' ') {
      ++i;
      continue;
    }
    out.push_back(static_cast<std::uint8_t>(std::stoi(s.substr(i, 2), nullptr, 16)));
    i += 2;
  }
  return out;
}

Bytes ascii(const std::string& s) { return Bytes(s.begin(), s.end()); }

Bytes cat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

// A Stat with every field distinct, and its 68 bytes.
Bytes stat_bytes() {
  Bytes b;
  jute::Writer w(b);
  w.i64(1);
  w.i64(2);
  w.i64(3);
  w.i64(4);
  w.i32(5);
  w.i32(6);
  w.i32(7);
  w.i64(8);
  w.i32(9);
  w.i32(10);
  w.i64(11);
  return b;
}

// The payload of a reply frame: ReplyHeader{xid, zxid, err} then `body`.
Bytes reply(std::int32_t xid, std::int64_t zxid, std::int32_t err, const Bytes& body) {
  Bytes b;
  jute::Writer w(b);
  w.i32(xid);
  w.i64(zxid);
  w.i32(err);
  b.insert(b.end(), body.begin(), body.end());
  return b;
}

}  // namespace

TEST_CASE("native codec: a new session's ConnectRequest is the 45-byte record plus its frame length",
          "[native]") {
  Bytes out;
  native::ConnectRequest r;
  r.timeout_ms = 30000;
  native::encode(out, r);
  // length 45 | protocolVersion 0 | lastZxidSeen 0 | timeOut 30000 | sessionId 0 | passwd: 16, 16 zeros |
  // readOnly false
  const Bytes expected =
      hex("0000002d 00000000 0000000000000000 00007530 0000000000000000 00000010 "
          "00000000000000000000000000000000 00");
  CHECK(out == expected);
}

TEST_CASE("native codec: ping, auth and close frames match zookeeper.jute byte for byte", "[native]") {
  Bytes out;
  native::encode_ping(out);
  CHECK(out == hex("00000008 fffffffe 0000000b"));

  out.clear();
  native::encode_auth(out, "digest", "u:p");
  CHECK(out == cat({hex("0000001d fffffffc 00000064 00000000 00000006"), ascii("digest"), hex("00000003"),
                    ascii("u:p")}));

  out.clear();
  native::encode_close(out, 7);
  CHECK(out == hex("00000008 00000007 fffffff5"));
}

TEST_CASE("native codec: requests carry the chroot and the opcode of their kind", "[native]") {
  Bytes out;
  native::encode_request(out, 1, zk::GetData{"/a", 42}, "");
  CHECK(out == cat({hex("0000000f 00000001 00000004 00000002"), ascii("/a"), hex("01")}));

  out.clear();
  native::encode_request(out, 2, zk::Delete{"/", 3}, "/app");
  CHECK(out == cat({hex("00000014 00000002 00000002 00000004"), ascii("/app"), hex("00000003")}));

  out.clear();
  zk::Create c;
  c.path = "/n";
  c.data = "x";
  c.acl = zkr::open_acl_unsafe();
  c.mode = zkr::CreateMode::ephemeral_sequential;
  native::encode_request(out, 3, c, "");
  // create2 (15): path, data, one ACL {31, world, anyone}, flags 3
  CHECK(out == cat({hex("00000032 00000003 0000000f 00000002"), ascii("/n"), hex("00000001"), ascii("x"),
                    hex("00000001 0000001f 00000005"), ascii("world"), hex("00000006"), ascii("anyone"),
                    hex("00000003")}));
}

TEST_CASE("native codec: several requests append back to back, each framed", "[native]") {
  Bytes out;
  native::encode_request(out, 1, zk::Exists{"/a", 0}, "");
  const auto first = out.size();
  native::encode_request(out, 2, zk::Sync{"/a"}, "");
  zkr::error_code ec;
  CHECK(jute::frame_length(out, jute::max_buffer, ec) == static_cast<std::int64_t>(first - 4));
  const jute::ByteSpan rest(out.data() + first, out.size() - first);
  CHECK(jute::frame_length(rest, jute::max_buffer, ec) == static_cast<std::int64_t>(rest.size() - 4));
  CHECK_FALSE(ec);
}

TEST_CASE("native codec: a GetChildren reply decodes its names and Stat", "[native]") {
  Bytes body;
  jute::Writer w(body);
  w.strings({"a", "bc"});
  const Bytes frame = reply(5, 99, 0, cat({body, stat_bytes()}));
  jute::Reader in(frame);
  const auto h = native::decode_reply_header(in);
  CHECK(h.xid == 5);
  CHECK(h.zxid == 99);
  CHECK(h.err == 0);
  zk::Reply r;
  native::decode_reply(in, zk::GetChildren{"/p", 0}, r);
  REQUIRE_FALSE(in.error());
  CHECK(r.children == std::vector<std::string>{"a", "bc"});
  CHECK(r.stat.czxid == 1);
  CHECK(r.stat.version == 5);
  CHECK(r.stat.ephemeral_owner == 8);
  CHECK(r.stat.pzxid == 11);
  CHECK(in.at_end());
}

TEST_CASE("native codec: the ConnectResponse with and without the read-only byte", "[native]") {
  Bytes body;
  jute::Writer w(body);
  w.i32(0);
  w.i32(4000);
  w.i64(0x0102030405060708);
  w.buffer(std::string(16, 'p'));
  {
    jute::Reader in(body);
    const auto r = native::decode_connect_response(in);
    CHECK_FALSE(in.error());
    CHECK(r.timeout_ms == 4000);
    CHECK(r.session_id == 0x0102030405060708);
    CHECK(r.passwd == std::string(16, 'p'));
    CHECK_FALSE(r.read_only);
  }
  w.boolean(true);
  jute::Reader in(body);
  CHECK(native::decode_connect_response(in).read_only);
}

TEST_CASE("native codec: a watch notification decodes type, state and path", "[native]") {
  Bytes body;
  jute::Writer w(body);
  w.i32(3);
  w.i32(3);
  w.buffer("/app/x");
  const Bytes frame = reply(-1, -1, 0, body);
  jute::Reader in(frame);
  CHECK(native::decode_reply_header(in).xid == native::xid::notification);
  const auto e = native::decode_watcher_event(in);
  CHECK(e.type == 3);
  CHECK(native::without_chroot("/app", e.path) == "/x");
  CHECK(native::without_chroot("/app", "/app") == "/");
  CHECK(native::without_chroot("/app", "/apple") == "/apple");
  CHECK(native::with_chroot("/app", "/") == "/app");
}

TEST_CASE("native codec: a failed multi gives each op its code and the reply the first failure", "[native]") {
  const std::vector<zkr::Op> ops{zkr::Op::create("/a"), zkr::Op::check("/b", 3), zkr::Op::remove("/c")};
  Bytes out;
  native::encode_request(out, 9, zk::Multi{ops}, "");
  zkr::error_code ec;
  CHECK(jute::frame_length(out, jute::max_buffer, ec) == static_cast<std::int64_t>(out.size() - 4));

  Bytes body;
  jute::Writer w(body);
  for (int code : {0, -103, -2}) {
    w.i32(-1);
    w.boolean(false);
    w.i32(code);
    w.i32(code);
  }
  w.i32(-1);
  w.boolean(true);
  w.i32(-1);
  jute::Reader in(body);
  zk::Reply r;
  native::decode_reply(in, zk::Multi{ops}, r);
  REQUIRE_FALSE(in.error());
  REQUIRE(r.results.size() == 3);
  CHECK_FALSE(r.results[0].ec);
  CHECK(r.results[1].ec == zkr::zk_errc::bad_version);
  CHECK(r.results[2].ec == zkr::zk_errc::runtime_inconsistency);
  CHECK(r.ec == zkr::zk_errc::bad_version);
}

TEST_CASE("native codec: a multi reply with more results than ops is malformed", "[native]") {
  const std::vector<zkr::Op> ops{zkr::Op::remove("/c")};
  Bytes body;
  jute::Writer w(body);
  for (int i = 0; i < 2; ++i) {
    w.i32(2);
    w.boolean(false);
    w.i32(0);
  }
  w.i32(-1);
  w.boolean(true);
  w.i32(-1);
  jute::Reader in(body);
  zk::Reply r;
  native::decode_reply(in, zk::Multi{ops}, r);
  CHECK(in.error() == zkr::client_errc::malformed_reply);
}

TEST_CASE("native codec: every truncation of a reply is malformed, never a crash", "[native]") {
  Bytes body;
  jute::Writer w(body);
  w.buffer("data");
  const Bytes full = cat({body, stat_bytes()});
  for (std::size_t n = 0; n < full.size(); ++n) {
    jute::Reader in(jute::ByteSpan(full.data(), n));
    zk::Reply r;
    native::decode_reply(in, zk::GetData{"/a", 0}, r);
    CHECK(in.error() == zkr::client_errc::malformed_reply);
  }
}

TEST_CASE("native codec: oversized and negative lengths are refused without allocating them", "[native]") {
  SECTION("a string longer than jute.maxbuffer") {
    Bytes b;
    jute::Writer(b).i32(jute::max_buffer + 1);
    b.resize(b.size() + 16);
    jute::Reader in(b);
    CHECK(in.buffer().empty());
    CHECK(in.error() == zkr::client_errc::malformed_reply);
  }
  SECTION("a vector count the bytes cannot hold") {
    Bytes b;
    jute::Writer(b).i32(0x7fffffff);
    jute::Reader in(b);
    CHECK(in.strings().empty());
    CHECK(in.error() == zkr::client_errc::malformed_reply);
  }
  SECTION("a length below -1") {
    Bytes b;
    jute::Writer(b).i32(-2);
    jute::Reader in(b);
    (void)in.buffer();
    CHECK(in.error() == zkr::client_errc::malformed_reply);
  }
  SECTION("a null buffer reads as empty") {
    Bytes b;
    jute::Writer(b).i32(-1);
    jute::Reader in(b);
    CHECK(in.buffer().empty());
    CHECK_FALSE(in.error());
  }
  SECTION("a frame over the cap, or negative") {
    zkr::error_code ec;
    CHECK(jute::frame_length(hex("00100000"), jute::max_buffer, ec) == -1);
    CHECK(ec == zkr::client_errc::malformed_reply);
    ec = {};
    CHECK(jute::frame_length(hex("ffffffff"), jute::max_buffer, ec) == -1);
    CHECK(ec == zkr::client_errc::malformed_reply);
    ec = {};
    CHECK(jute::frame_length(hex("0000"), jute::max_buffer, ec) == -1);
    CHECK_FALSE(ec);
  }
}

TEST_CASE("native codec: addWatch, getEphemerals, getAllChildrenNumber and whoAmI requests", "[native]") {
  Bytes out;
  native::encode_request(out, 1, zk::AddWatch{"/t", zkr::AddWatchMode::persistent_recursive, 7}, "/app");
  // addWatch (106): path under the chroot, mode 1
  CHECK(out == cat({hex("00000016 00000001 0000006a 00000006"), ascii("/app/t"), hex("00000001")}));
  out.clear();
  native::encode_request(out, 2, zk::GetEphemerals{"/"}, "");
  CHECK(out == cat({hex("0000000d 00000002 00000067 00000001"), ascii("/")}));
  out.clear();
  native::encode_request(out, 3, zk::GetAllChildrenNumber{"/a"}, "");
  CHECK(out == cat({hex("0000000e 00000003 00000068 00000002"), ascii("/a")}));
  out.clear();
  native::encode_request(out, 4, zk::WhoAmI{}, "/app");
  CHECK(out == hex("00000008 00000004 0000006b"));  // whoAmI (107): no record
  out.clear();
  // A persistent watch is removed by the type `any` (3), the only one a 3.8 server removes it by.
  native::encode_request(out, 5, zk::RemoveWatches{"/t", zk::WatchKind::persistent_recursive, 7}, "");
  CHECK(out == cat({hex("00000012 00000005 00000012 00000002"), ascii("/t"), hex("00000003")}));
}

TEST_CASE("native codec: the newer replies decode (whoAmI, getEphemerals, getAllChildrenNumber)",
          "[native]") {
  Bytes body;
  jute::Writer w(body);
  w.i32(2);
  w.buffer("ip");
  w.buffer("127.0.0.1");
  w.buffer("digest");
  w.buffer("alice");
  jute::Reader in(body);
  zk::Reply r;
  native::decode_reply(in, zk::WhoAmI{}, r);
  REQUIRE_FALSE(in.error());
  CHECK(r.identities == std::vector<zkr::ClientIdentity>{{"ip", "127.0.0.1"}, {"digest", "alice"}});

  Bytes eph;
  jute::Writer(eph).strings({"/app/e1", "/app/e2"});
  jute::Reader ein(eph);
  native::decode_reply(ein, zk::GetEphemerals{"/"}, r);
  CHECK(r.children == std::vector<std::string>{"/app/e1", "/app/e2"});

  Bytes n;
  jute::Writer(n).i32(41);
  jute::Reader nin(n);
  native::decode_reply(nin, zk::GetAllChildrenNumber{"/"}, r);
  CHECK(r.count == 41);

  // A count of identities the bytes cannot hold is malformed, never a huge allocation.
  Bytes lie;
  jute::Writer(lie).i32(1 << 30);
  jute::Reader lin(lie);
  native::decode_reply(lin, zk::WhoAmI{}, r);
  CHECK(lin.error() == zkr::client_errc::malformed_reply);
}

TEST_CASE(
    "native codec: a multiRead gives each read its own result, and a result of the wrong kind is malformed",
    "[native]") {
  const std::vector<zkr::ReadOp> ops{zkr::ReadOp::get_data("/a"), zkr::ReadOp::get_children("/b"),
                                     zkr::ReadOp::get_data("/c")};
  Bytes out;
  native::encode_request(out, 9, zk::MultiRead{ops}, "");
  zkr::error_code ec;
  CHECK(jute::frame_length(out, jute::max_buffer, ec) == static_cast<std::int64_t>(out.size() - 4));
  CHECK(out[11] == 22);  // multiRead

  Bytes body;
  jute::Writer w(body);
  w.i32(4);  // getData: data, Stat
  w.boolean(false);
  w.i32(0);
  w.buffer("x");
  w.raw(stat_bytes());
  w.i32(8);  // getChildren: names, no Stat
  w.boolean(false);
  w.i32(0);
  w.strings({"k"});
  w.i32(-1);  // an error result
  w.boolean(false);
  w.i32(-101);
  w.i32(-101);
  w.i32(-1);
  w.boolean(true);
  w.i32(-1);
  jute::Reader in(body);
  zk::Reply r;
  native::decode_reply(in, zk::MultiRead{ops}, r);
  REQUIRE_FALSE(in.error());
  REQUIRE(r.reads.size() == 3);
  CHECK(r.reads[0].data == "x");
  CHECK(r.reads[0].stat.version == 5);
  CHECK(r.reads[1].children == std::vector<std::string>{"k"});
  CHECK(r.reads[2].ec == zkr::zk_errc::no_node);
  CHECK_FALSE(r.ec);  // the request succeeded; one read failed

  // The second result answers a getChildren with getData's record: out of step with our request.
  Bytes wrong;
  jute::Writer ww(wrong);
  ww.i32(4);
  ww.boolean(false);
  ww.i32(0);
  ww.buffer("x");
  ww.raw(stat_bytes());
  ww.i32(4);
  ww.boolean(false);
  ww.i32(0);
  ww.buffer("y");
  ww.raw(stat_bytes());
  jute::Reader win(wrong);
  zk::Reply r2;
  native::decode_reply(win, zk::MultiRead{ops}, r2);
  CHECK(win.error() == zkr::client_errc::malformed_reply);
}

TEST_CASE(
    "native watch table: persistent watches stay, recursive ones hear descendants but no children events",
    "[native]") {
  using K = native::WatchTable::Kind;
  native::WatchTable t;
  t.add(K::persistent_recursive, "/t", 1);
  t.add(K::persistent, "/t/a", 2);
  t.add(K::data, "/t/a", 3);
  using E = zkr::EventType;
  auto sorted = [](std::vector<zkr::detail::WatchId> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  CHECK(sorted(t.fire(E::node_data_changed, "/t/a")) == std::vector<zkr::detail::WatchId>{1, 2, 3});
  CHECK(sorted(t.fire(E::node_data_changed, "/t/a")) == std::vector<zkr::detail::WatchId>{1, 2});  // 3 fired
  CHECK(t.fire(E::node_children_changed, "/t/a") == std::vector<zkr::detail::WatchId>{2});
  CHECK(t.fire(E::node_children_changed, "/t").empty());  // a 3.8 server may send it; recursive ignores it
  CHECK(t.fire(E::node_created, "/t/a/b/c") == std::vector<zkr::detail::WatchId>{1});
  CHECK(t.fire(E::node_created, "/tx").empty());  // not under /t
  native::SetWatches sw;
  t.list("/app", sw);
  CHECK(sw.persistent == std::vector<std::string>{"/app/t/a"});
  CHECK(sw.persistent_recursive == std::vector<std::string>{"/app/t"});
  Bytes frame;
  native::encode_set_watches(frame, 5, sw);
  CHECK(frame[11] == 105);  // SetWatches2 when persistent watches are kept
  const auto r = t.remove("/t", zk::WatchKind::persistent_recursive, 1);
  CHECK(r.found);
  CHECK_FALSE(r.others_left);
  CHECK(t.fire(E::node_created, "/t/z").empty());
}

TEST_CASE(
    "native codec: SetWatches goes in batches of at most 128 KiB of paths, persistent ones as SetWatches2",
    "[native]") {
  native::SetWatches all;
  all.relative_zxid = 77;
  const std::string long_path = "/" + std::string(999, 'p');  // 1000 bytes
  for (int i = 0; i < 200; ++i) all.data.push_back(long_path);
  all.child = {"/c"};
  all.persistent_recursive = {"/r"};
  const auto batches = native::split_set_watches(all);
  REQUIRE(batches.size() == 2);  // the 132nd path of 1000 bytes passes 128 KiB
  CHECK(batches[0].data.size() == 132);
  CHECK(batches[1].data.size() == 68);
  CHECK(batches[1].child == std::vector<std::string>{"/c"});
  CHECK(batches[1].persistent_recursive == std::vector<std::string>{"/r"});
  CHECK(batches[0].relative_zxid == 77);
  CHECK(batches[1].relative_zxid == 77);
  Bytes first, second;
  native::encode_set_watches(first, 1, batches[0]);
  native::encode_set_watches(second, 2, batches[1]);
  CHECK(first[11] == 101);   // SetWatches: no persistent watch in it
  CHECK(second[11] == 105);  // SetWatches2
  CHECK(first.size() < static_cast<std::size_t>(jute::max_buffer));
  CHECK(native::split_set_watches(native::SetWatches{}).empty());
}
