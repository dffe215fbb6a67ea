#pragma once
// ZooKeeper's records (zookeeper.jute, 3.8) and the seam's requests and replies in and out of them, as pure
// functions over bytes: the connect handshake, the request and reply headers, watch notifications, the
// session's own packets (ping, auth, SetWatches2, closeSession) and every `zk::Request`. Encoders append
// whole frames (length included) to a byte vector, so that several queued requests leave in one write;
// decoders read one frame's payload and report malformed input through the reader's error.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../session.hpp"
#include "jute.hpp"

namespace zkr::detail::native {

/// ZooKeeper's opcodes (ZooDefs.OpCode).
enum class OpCode : std::int32_t {
  error = -1,
  close_session = -11,
  create = 1,
  remove = 2,
  exists = 3,
  get_data = 4,
  set_data = 5,
  get_acl = 6,
  set_acl = 7,
  get_children = 8,
  sync = 9,
  ping = 11,
  get_children2 = 12,
  check = 13,
  multi = 14,
  create2 = 15,
  remove_watches = 18,
  create_container = 19,
  create_ttl = 21,
  multi_read = 22,
  auth = 100,
  set_watches = 101,
  sasl = 102,
  get_ephemerals = 103,
  get_all_children_number = 104,
  set_watches2 = 105,
  add_watch = 106,
  who_am_i = 107,
};

/// The xids the protocol reserves.
namespace xid {
inline constexpr std::int32_t notification = -1, ping = -2, auth = -4;
}

struct ConnectRequest {
  std::int32_t protocol_version = 0;
  std::int64_t last_zxid_seen = 0;
  std::int32_t timeout_ms = 0;
  std::int64_t session_id = 0;
  std::string passwd = std::string(16, '\0');
  bool read_only = false;  // after the record: not in zookeeper.jute, read by 3.4+ servers
};

struct ConnectResponse {
  std::int32_t protocol_version = 0;
  std::int32_t timeout_ms = 0;  // <= 0: the session expired (or the password was wrong)
  std::int64_t session_id = 0;
  std::string passwd;
  bool read_only = false;  // absent from old servers' replies: false
};

struct ReplyHeader {
  std::int32_t xid = 0;
  std::int64_t zxid = 0;
  std::int32_t err = 0;
};

struct WatcherEvent {
  std::int32_t type = 0;  // 1 created, 2 deleted, 3 data changed, 4 children changed
  std::int32_t state = 0;
  std::string path;
};

/// The watches to set again on a new connection (SetWatches2: the one-shot kinds and the persistent ones),
/// paths full (the chroot prepended).
struct SetWatches {
  std::int64_t relative_zxid = 0;
  std::vector<std::string> data, exist, child, persistent, persistent_recursive;
};

/// `all` in batches whose paths sum to at most `max_path_bytes` each (a batch's last path may overshoot, as
/// Java's client does; every batch has at least one path), lists in the order data, exist, child, persistent,
/// persistent recursive, each batch with `all`'s zxid. One huge SetWatches would break every reconnect
/// (ZOOKEEPER-706): the server refuses a frame over `jute.maxbuffer`. No batch for no paths.
std::vector<SetWatches> split_set_watches(const SetWatches& all, std::size_t max_path_bytes = 128 * 1024);

/// Prepends the connect string's chroot to a path ("/" is the chroot itself).
std::string with_chroot(std::string_view chroot, std::string_view path);
/// Strips the chroot from a path the server sent; a path outside it is returned unchanged.
std::string without_chroot(std::string_view chroot, std::string_view path);

// Frames out (each appends one whole frame).
void encode(jute::Bytes& out, const ConnectRequest& r);
void encode_ping(jute::Bytes& out);
void encode_auth(jute::Bytes& out, std::string_view scheme, std::string_view auth);
void encode_close(jute::Bytes& out, std::int32_t xid);
/// A SASL token (GetSASLRequest) with a normal xid.
void encode_sasl(jute::Bytes& out, std::int32_t xid, std::string_view token);
void encode_set_watches(jute::Bytes& out, std::int32_t xid, const SetWatches& w);
/// `request` as a frame with `xid`, its paths under `chroot`. A RemoveWatches is sent for its path and kind
/// (a persistent kind as `any`: a 3.8 server removes persistent watches by no other type).
void encode_request(jute::Bytes& out, std::int32_t xid, const zk::Request& request, std::string_view chroot);

// Payloads in (one frame's bytes after its length).
ConnectResponse decode_connect_response(jute::Reader& in);
ReplyHeader decode_reply_header(jute::Reader& in);
WatcherEvent decode_watcher_event(jute::Reader& in);
/// The server's SASL token (SetSASLResponse) after a reply header with err 0.
std::string decode_sasl_response(jute::Reader& in);
Stat decode_stat(jute::Reader& in);
/// The body of a successful (err 0) reply to `request` into `reply`; created paths and getEphemerals' paths
/// keep the chroot.
void decode_reply(jute::Reader& in, const zk::Request& request, zk::Reply& reply);

/// The seam's result for a reply's error code: the one place a wire code becomes the reply's result.
void set_result(zk::Reply& reply, std::int32_t err) noexcept;

}  // namespace zkr::detail::native
