// ZooKeeper's records in and out of bytes (see records.hpp). Field orders are zookeeper.jute's (3.8).

#include "records.hpp"

#include <algorithm>
#include <type_traits>

namespace zkr::detail::native {
namespace {

constexpr std::size_t kStatSize = 68;

void header(jute::Writer& w, std::int32_t xid, OpCode op) {
  w.i32(xid);
  w.i32(static_cast<std::int32_t>(op));
}

void encode_acl(jute::Writer& w, const AclList& acl) {
  w.i32(static_cast<std::int32_t>(acl.size()));
  for (const auto& a : acl) {
    w.i32(a.perms);
    w.buffer(a.id.scheme);
    w.buffer(a.id.id);
  }
}

AclList decode_acl(jute::Reader& in) {
  const std::size_t n = in.count(12);  // perms and two string lengths
  AclList acl;
  acl.reserve(n);
  for (std::size_t i = 0; i < n && !in.error(); ++i) {
    Acl a;
    a.perms = in.i32();
    a.id.scheme = in.buffer();
    a.id.id = in.buffer();
    acl.push_back(std::move(a));
  }
  return acl;
}

bool is_ttl(CreateMode m) noexcept {
  return m == CreateMode::persistent_with_ttl || m == CreateMode::persistent_sequential_with_ttl;
}

// CreateRequest / CreateTTLRequest: the create flags are CreateMode's values in its declaration order.
OpCode encode_create(jute::Writer& w, std::string_view path, std::string_view data, const AclList& acl,
                     CreateMode mode, std::int64_t ttl_ms, bool in_multi) {
  w.buffer(path);
  w.buffer(data);
  encode_acl(w, acl);
  w.i32(static_cast<std::int32_t>(mode));
  if (is_ttl(mode)) {
    w.i64(ttl_ms);
    return OpCode::create_ttl;
  }
  if (mode == CreateMode::container) return OpCode::create_container;
  return in_multi ? OpCode::create : OpCode::create2;
}

// A multi's ops: each a MultiHeader{type, done, err} and its record, then the end marker.
void encode_multi(jute::Writer& w, const std::vector<Op>& ops, std::string_view chroot) {
  for (const auto& op : ops) {
    jute::Bytes record;
    jute::Writer rw(record);
    const auto full = with_chroot(chroot, op.path);
    OpCode type = OpCode::check;
    switch (op.kind) {
      case Op::Kind::create:
        // The seam resolves every op's ACL (session.hpp); none would be refused by the server (INVALIDACL).
        type = encode_create(rw, full, op.data, op.acl ? *op.acl : AclList{}, op.mode, 0, true);
        break;
      case Op::Kind::remove:
        type = OpCode::remove;
        rw.buffer(full);
        rw.i32(op.version);
        break;
      case Op::Kind::set_data:
        type = OpCode::set_data;
        rw.buffer(full);
        rw.buffer(op.data);
        rw.i32(op.version);
        break;
      case Op::Kind::check:
        type = OpCode::check;
        rw.buffer(full);
        rw.i32(op.version);
        break;
    }
    w.i32(static_cast<std::int32_t>(type));
    w.boolean(false);
    w.i32(-1);
    w.raw(record);
  }
  w.i32(-1);
  w.boolean(true);
  w.i32(-1);
}

// The rest of a single-path request's record, after its path.
template <class R>
OpCode encode_after_path(jute::Writer& w, const R& r) {
  if constexpr (std::is_same_v<R, zk::Delete>) {
    w.i32(r.version);
    return OpCode::remove;
  } else if constexpr (std::is_same_v<R, zk::Exists>) {
    w.boolean(r.watch != 0);
    return OpCode::exists;
  } else if constexpr (std::is_same_v<R, zk::GetData>) {
    w.boolean(r.watch != 0);
    return OpCode::get_data;
  } else if constexpr (std::is_same_v<R, zk::GetChildren>) {
    w.boolean(r.watch != 0);
    return OpCode::get_children2;
  } else if constexpr (std::is_same_v<R, zk::SetData>) {
    w.buffer(r.data);
    w.i32(r.version);
    return OpCode::set_data;
  } else if constexpr (std::is_same_v<R, zk::Sync>) {
    return OpCode::sync;
  } else if constexpr (std::is_same_v<R, zk::GetAcl>) {
    return OpCode::get_acl;
  } else if constexpr (std::is_same_v<R, zk::SetAcl>) {
    encode_acl(w, r.acl);
    w.i32(r.version);
    return OpCode::set_acl;
  } else if constexpr (std::is_same_v<R, zk::AddWatch>) {
    w.i32(static_cast<std::int32_t>(r.mode));
    return OpCode::add_watch;
  } else if constexpr (std::is_same_v<R, zk::GetEphemerals>) {
    return OpCode::get_ephemerals;
  } else if constexpr (std::is_same_v<R, zk::GetAllChildrenNumber>) {
    return OpCode::get_all_children_number;
  } else {
    static_assert(std::is_same_v<R, zk::RemoveWatches>);
    // Watcher types: children 1, data 2, any 3 (a persistent watch: any, the only type 3.8 removes it by).
    w.i32(r.kind == zk::WatchKind::children ? 1 : r.kind == zk::WatchKind::data ? 2 : 3);
    return OpCode::remove_watches;
  }
}

// A multiRead's ops: each a MultiHeader and a GetDataRequest or GetChildrenRequest without a watch.
void encode_multi_read(jute::Writer& w, const std::vector<ReadOp>& ops, std::string_view chroot) {
  for (const auto& op : ops) {
    const bool data = op.kind == ReadOp::Kind::get_data;
    w.i32(static_cast<std::int32_t>(data ? OpCode::get_data : OpCode::get_children));
    w.boolean(false);
    w.i32(-1);
    w.buffer(with_chroot(chroot, op.path));
    w.boolean(false);
  }
  w.i32(-1);
  w.boolean(true);
  w.i32(-1);
}

void decode_multi_read(jute::Reader& in, const std::vector<ReadOp>& ops, zk::Reply& reply) {
  for (;;) {
    const std::int32_t type = in.i32();
    const bool done = in.boolean();
    (void)in.i32();  // the header's err: an error result carries it again
    if (in.error() || done) break;
    const auto i = reply.reads.size();
    if (i >= ops.size()) return in.fail();
    ReadResult r;
    const bool data = ops[i].kind == ReadOp::Kind::get_data;
    if (type == static_cast<std::int32_t>(OpCode::error)) {
      r.ec = zk_error(in.i32());
    } else if (data && type == static_cast<std::int32_t>(OpCode::get_data)) {
      r.data = in.buffer();
      r.stat = decode_stat(in);
    } else if (!data && type == static_cast<std::int32_t>(OpCode::get_children)) {
      r.children = in.strings();  // GetChildrenResponse: no Stat
    } else {
      return in.fail();  // a result that does not answer its op
    }
    reply.reads.push_back(std::move(r));
  }
  if (!in.error() && reply.reads.size() != ops.size()) in.fail();
}

std::vector<ClientIdentity> decode_identities(jute::Reader& in) {
  const std::size_t n = in.count(8);  // two string lengths
  std::vector<ClientIdentity> out;
  out.reserve(n);
  for (std::size_t i = 0; i < n && !in.error(); ++i) {
    ClientIdentity c;
    c.scheme = in.buffer();
    c.id = in.buffer();
    out.push_back(std::move(c));
  }
  return out;
}

void decode_multi(jute::Reader& in, const std::vector<Op>& ops, zk::Reply& reply) {
  std::int32_t first_error = 0;
  for (;;) {
    const std::int32_t type = in.i32();
    const bool done = in.boolean();
    const std::int32_t err = in.i32();
    if (in.error() || done) break;
    // More results than ops, or a result that does not answer its op: out of step with our request.
    if (reply.results.size() >= ops.size()) return in.fail();
    OpResult r;
    switch (static_cast<OpCode>(type)) {
      case OpCode::error: {
        const std::int32_t code = in.i32();
        r.ec = zk_error(code);
        if (code != 0 && first_error == 0) first_error = code;
        break;
      }
      case OpCode::create:
        r.path = in.buffer();
        break;
      case OpCode::create2:
        r.path = in.buffer();
        r.stat = decode_stat(in);
        break;
      case OpCode::set_data:
        r.stat = decode_stat(in);
        break;
      case OpCode::remove:
      case OpCode::check:
        break;
      default:
        return in.fail();
    }
    (void)err;
    reply.results.push_back(std::move(r));
  }
  if (!in.error() && reply.results.size() != ops.size()) return in.fail();
  if (first_error != 0) set_result(reply, first_error);
}

}  // namespace

void set_result(zk::Reply& reply, std::int32_t err) noexcept { reply.ec = zk_error(err); }

std::string with_chroot(std::string_view chroot, std::string_view path) {
  if (chroot.empty()) return std::string(path);
  if (path == "/") return std::string(chroot);
  std::string s(chroot);
  s += path;
  return s;
}

std::string without_chroot(std::string_view chroot, std::string_view path) {
  if (chroot.empty() || !path.starts_with(chroot)) return std::string(path);
  if (path.size() == chroot.size()) return "/";
  if (path[chroot.size()] != '/') return std::string(path);
  return std::string(path.substr(chroot.size()));
}

void encode(jute::Bytes& out, const ConnectRequest& r) {
  jute::Writer w(out);
  const auto at = w.begin_frame();
  w.i32(r.protocol_version);
  w.i64(r.last_zxid_seen);
  w.i32(r.timeout_ms);
  w.i64(r.session_id);
  w.buffer(r.passwd);
  w.boolean(r.read_only);
  w.end_frame(at);
}

void encode_ping(jute::Bytes& out) {
  jute::Writer w(out);
  const auto at = w.begin_frame();
  header(w, xid::ping, OpCode::ping);
  w.end_frame(at);
}

void encode_auth(jute::Bytes& out, std::string_view scheme, std::string_view auth) {
  jute::Writer w(out);
  const auto at = w.begin_frame();
  header(w, xid::auth, OpCode::auth);
  w.i32(0);
  w.buffer(scheme);
  w.buffer(auth);
  w.end_frame(at);
}

void encode_sasl(jute::Bytes& out, std::int32_t xid, std::string_view token) {
  jute::Writer w(out);
  const auto at = w.begin_frame();
  header(w, xid, OpCode::sasl);
  w.buffer(token);
  w.end_frame(at);
}

std::string decode_sasl_response(jute::Reader& in) { return in.buffer(); }

void encode_close(jute::Bytes& out, std::int32_t xid) {
  jute::Writer w(out);
  const auto at = w.begin_frame();
  header(w, xid, OpCode::close_session);
  w.end_frame(at);
}

std::vector<SetWatches> split_set_watches(const SetWatches& all, std::size_t max_path_bytes) {
  using List = std::vector<std::string> SetWatches::*;
  static constexpr List lists[] = {&SetWatches::data, &SetWatches::exist, &SetWatches::child,
                                   &SetWatches::persistent, &SetWatches::persistent_recursive};
  std::vector<SetWatches> out;
  std::size_t bytes = max_path_bytes;  // full: the first path opens a batch
  for (List list : lists)
    for (const auto& path : all.*list) {
      if (bytes >= max_path_bytes) {
        out.emplace_back().relative_zxid = all.relative_zxid;
        bytes = 0;
      }
      (out.back().*list).push_back(path);
      bytes += path.size();
    }
  return out;
}

void encode_set_watches(jute::Bytes& out, std::int32_t xid, const SetWatches& s) {
  jute::Writer w(out);
  const auto at = w.begin_frame();
  const bool v2 = !s.persistent.empty() || !s.persistent_recursive.empty();
  header(w, xid, v2 ? OpCode::set_watches2 : OpCode::set_watches);
  w.i64(s.relative_zxid);
  w.strings(s.data);
  w.strings(s.exist);
  w.strings(s.child);
  if (v2) {
    w.strings(s.persistent);
    w.strings(s.persistent_recursive);
  }
  w.end_frame(at);
}

void encode_request(jute::Bytes& out, std::int32_t xid, const zk::Request& request, std::string_view chroot) {
  jute::Writer w(out);
  const auto at = w.begin_frame();
  w.i32(xid);
  const auto type_at = out.size();
  w.i32(0);  // the opcode, known once the record is written
  const OpCode op = std::visit(
      [&](const auto& r) -> OpCode {
        using R = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<R, zk::Multi>) {
          encode_multi(w, r.ops, chroot);
          return OpCode::multi;
        } else if constexpr (std::is_same_v<R, zk::MultiRead>) {
          encode_multi_read(w, r.ops, chroot);
          return OpCode::multi_read;
        } else if constexpr (std::is_same_v<R, zk::WhoAmI>) {
          return OpCode::who_am_i;  // no record
        } else {
          const auto path = with_chroot(chroot, r.path);
          if constexpr (std::is_same_v<R, zk::Create>) {
            return encode_create(w, path, r.data, r.acl, r.mode, r.ttl_ms, false);
          } else {
            w.buffer(path);
            return encode_after_path(w, r);
          }
        }
      },
      request);
  jute::Bytes type;
  jute::Writer(type).i32(static_cast<std::int32_t>(op));
  std::copy(type.begin(), type.end(), out.begin() + static_cast<std::ptrdiff_t>(type_at));
  w.end_frame(at);
}

ConnectResponse decode_connect_response(jute::Reader& in) {
  ConnectResponse r;
  r.protocol_version = in.i32();
  r.timeout_ms = in.i32();
  r.session_id = in.i64();
  r.passwd = in.buffer();
  if (!in.error() && !in.at_end()) r.read_only = in.boolean();
  return r;
}

ReplyHeader decode_reply_header(jute::Reader& in) {
  ReplyHeader h;
  h.xid = in.i32();
  h.zxid = in.i64();
  h.err = in.i32();
  return h;
}

WatcherEvent decode_watcher_event(jute::Reader& in) {
  WatcherEvent e;
  e.type = in.i32();
  e.state = in.i32();
  e.path = in.buffer();
  return e;
}

Stat decode_stat(jute::Reader& in) {
  Stat s;
  if (in.remaining() < kStatSize) {
    in.fail();
    return s;
  }
  s.czxid = in.i64();
  s.mzxid = in.i64();
  s.ctime = in.i64();
  s.mtime = in.i64();
  s.version = in.i32();
  s.cversion = in.i32();
  s.aversion = in.i32();
  s.ephemeral_owner = in.i64();
  s.data_length = in.i32();
  s.num_children = in.i32();
  s.pzxid = in.i64();
  return s;
}

void decode_reply(jute::Reader& in, const zk::Request& request, zk::Reply& reply) {
  std::visit(
      [&](const auto& r) {
        using R = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<R, zk::Create>) {
          reply.path = in.buffer();  // Create2Response (create2, createContainer, createTTL)
          reply.stat = decode_stat(in);
        } else if constexpr (std::is_same_v<R, zk::Exists> || std::is_same_v<R, zk::SetData> ||
                             std::is_same_v<R, zk::SetAcl>) {
          reply.stat = decode_stat(in);
        } else if constexpr (std::is_same_v<R, zk::GetData>) {
          reply.data = in.buffer();
          reply.stat = decode_stat(in);
        } else if constexpr (std::is_same_v<R, zk::GetChildren>) {
          reply.children = in.strings();
          reply.stat = decode_stat(in);
        } else if constexpr (std::is_same_v<R, zk::GetAcl>) {
          reply.acl = decode_acl(in);
          reply.stat = decode_stat(in);
        } else if constexpr (std::is_same_v<R, zk::Sync>) {
          reply.path = in.buffer();
        } else if constexpr (std::is_same_v<R, zk::Multi>) {
          decode_multi(in, r.ops, reply);
        } else if constexpr (std::is_same_v<R, zk::MultiRead>) {
          decode_multi_read(in, r.ops, reply);
        } else if constexpr (std::is_same_v<R, zk::GetEphemerals>) {
          reply.children = in.strings();
        } else if constexpr (std::is_same_v<R, zk::GetAllChildrenNumber>) {
          reply.count = in.i32();
        } else if constexpr (std::is_same_v<R, zk::WhoAmI>) {
          reply.identities = decode_identities(in);
        } else {
          // AddWatch's ErrorResponse repeats the header's err: nothing to read.
          static_assert(std::is_same_v<R, zk::Delete> || std::is_same_v<R, zk::RemoveWatches> ||
                        std::is_same_v<R, zk::AddWatch>);
        }
      },
      request);
}

}  // namespace zkr::detail::native
