#pragma once
/// \file
/// Value types of the framework layer: node metadata, ACLs, create modes, watch events and transactions.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>
#include <zkr/framework/error.hpp>

namespace zkr {

/// A znode's metadata (ZooKeeper's `Stat`).
struct Stat {
  std::int64_t czxid = 0;  ///< zxid of the create; the fencing token of a lock node
  std::int64_t mzxid = 0;
  std::int64_t ctime = 0;  ///< milliseconds since the epoch
  std::int64_t mtime = 0;
  std::int32_t version = 0;
  std::int32_t cversion = 0;
  std::int32_t aversion = 0;
  std::int64_t ephemeral_owner = 0;  ///< session id of the owner of an ephemeral node, else 0
  std::int32_t data_length = 0;
  std::int32_t num_children = 0;
  std::int64_t pzxid = 0;
};

/// ACL permission bits.
namespace perms {
inline constexpr int read = 1, write = 2, create = 4, remove = 8, admin = 16, all = 31;
}

/// An identity: scheme ("world", "ip", "digest", "auth", ...) and id.
struct Id {
  std::string scheme;
  std::string id;
  friend bool operator==(const Id&, const Id&) = default;
};

/// One access-control entry.
struct Acl {
  int perms = perms::all;
  Id id;
  friend bool operator==(const Acl&, const Acl&) = default;
};

using AclList = std::vector<Acl>;

/// `world:anyone` with every permission (ZooKeeper's OPEN_ACL_UNSAFE).
AclList open_acl_unsafe();
/// Every permission for the authenticated creator (CREATOR_ALL_ACL).
AclList creator_all_acl();
/// `world:anyone` may read (READ_ACL_UNSAFE).
AclList read_acl_unsafe();

/// How a node is created.
enum class CreateMode {
  persistent,
  ephemeral,
  persistent_sequential,
  ephemeral_sequential,
  container,
  persistent_with_ttl,
  persistent_sequential_with_ttl,
};

/// True for the ephemeral modes.
constexpr bool is_ephemeral(CreateMode m) noexcept {
  return m == CreateMode::ephemeral || m == CreateMode::ephemeral_sequential;
}
/// True for the sequential modes.
constexpr bool is_sequential(CreateMode m) noexcept {
  return m == CreateMode::persistent_sequential || m == CreateMode::ephemeral_sequential ||
         m == CreateMode::persistent_sequential_with_ttl;
}

/// Options of a create (Curator's create builder).
struct CreateOptions {
  CreateMode mode = CreateMode::persistent;
  /// `creatingParentsIfNeeded()`: missing ancestors are created first.
  bool creating_parents = false;
  /// `creatingParentContainersIfNeeded()`: missing ancestors are created as containers (implies
  /// creating_parents).
  bool parents_as_containers = false;
  /// `withProtection()`: the last segment gets `_c_<uuid>-` and the create survives a connection loss.
  bool protection = false;
  /// An explicit ACL for the node (else the client's ACL provider decides).
  std::optional<AclList> acl;
  /// Time to live of a TTL node (modes *_with_ttl).
  std::chrono::milliseconds ttl{0};
  /// The node's data; nullopt means the client's default data.
  std::optional<std::string> data;
};

/// The result of a create: the created path (with the sequence number, without the namespace) and its Stat.
struct CreateResult {
  std::string path;
  Stat stat;
};

/// The kind of a watch notification.
enum class EventType {
  node_created = 1,
  node_deleted = 2,
  node_data_changed = 3,
  node_children_changed = 4,
  /// The watch will never fire: the session that set it is gone (expired or the client closed).
  session_lost = -1,
};

/// The kinds of watch ZooKeeper 3.6+ keeps until removed (`addWatch`; the values are the wire's).
enum class AddWatchMode {
  /// Data and children events of the node itself (no `node_children_changed` for descendants' data).
  persistent = 0,
  /// Created, deleted and data-changed events of the node and of every descendant; no children events.
  persistent_recursive = 1,
};

/// A watch notification: of a one-shot watch, or of a persistent one (where `path` may be a descendant's).
struct WatchedEvent {
  EventType type{};
  std::string path;  ///< the node the event is about, without the namespace
};

/// Data and metadata of a node.
struct NodeData {
  std::string data;
  Stat stat;
};

/// A node's access-control list and metadata (Curator's `getACL()` with `storingStatIn`). `stat.aversion`
/// is the ACL's version, the one `set_acl` compares against.
struct AclResult {
  AclList acl;
  Stat stat;
};

/// Children of a node (names, unsorted as the server returns them) and the parent's Stat.
struct Children {
  std::vector<std::string> names;
  Stat stat;
};

/// One operation of a transaction (`multi`).
struct Op {
  enum class Kind { create, remove, set_data, check } kind = Kind::check;
  std::string path;
  std::string data;
  int version = -1;
  CreateMode mode = CreateMode::persistent;
  std::optional<AclList> acl;

  static Op create(std::string path, std::string data = {}, CreateMode mode = CreateMode::persistent) {
    Op o;
    o.kind = Kind::create;
    o.path = std::move(path);
    o.data = std::move(data);
    o.mode = mode;
    return o;
  }
  static Op remove(std::string path, int version = -1) {
    Op o;
    o.kind = Kind::remove;
    o.path = std::move(path);
    o.version = version;
    return o;
  }
  static Op set_data(std::string path, std::string data, int version = -1) {
    Op o;
    o.kind = Kind::set_data;
    o.path = std::move(path);
    o.data = std::move(data);
    o.version = version;
    return o;
  }
  static Op check(std::string path, int version) {
    Op o;
    o.kind = Kind::check;
    o.path = std::move(path);
    o.version = version;
    return o;
  }
};

/// The result of one operation of a transaction.
struct OpResult {
  error_code ec;
  std::string path;  ///< for a create: the created path (without the namespace)
  Stat stat;         ///< for set_data
};

/// One read of a `multi_read` (ZooKeeper 3.6+'s multiRead): a node's data or its children.
struct ReadOp {
  enum class Kind { get_data, get_children } kind = Kind::get_data;
  std::string path;

  static ReadOp get_data(std::string path) { return {Kind::get_data, std::move(path)}; }
  static ReadOp get_children(std::string path) { return {Kind::get_children, std::move(path)}; }
};

/// The result of one read of a `multi_read`. Each read succeeds or fails on its own (`ec`: `no_node`,
/// `no_auth`, ...); the others are unaffected.
struct ReadResult {
  error_code ec;
  std::string data;                   ///< get_data
  std::vector<std::string> children;  ///< get_children: names, unsorted as the server returns them
  Stat stat;                          ///< get_data, get_children
};

/// One identity the server holds for a session (ZooKeeper 3.7+'s whoAmI): the scheme and the id within it,
/// such as {"ip", "127.0.0.1"}, {"digest", "user"} or {"x509", "CN=client"}.
struct ClientIdentity {
  std::string scheme;
  std::string id;
  friend bool operator==(const ClientIdentity&, const ClientIdentity&) = default;
};

/// The largest node data the server accepts by default (jute.maxbuffer is 1 MiB, part of it framing).
inline constexpr std::size_t default_max_data_size = 1024 * 1024 - 1024;

}  // namespace zkr
