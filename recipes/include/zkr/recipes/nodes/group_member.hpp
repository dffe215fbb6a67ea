#pragma once
/// \file
/// `GroupMember`: Curator's group membership, wire-compatible with Curator 5.x: each member is an ephemeral
/// node `<membership path>/<id>` (no protection, no sequence, parents as containers) holding its data, kept
/// by a `PersistentNode`; the members are read through a `PathChildrenCache` of the membership path.

#include <map>
#include <string>
#include <string_view>
#include <zkr/recipes/cache/path_children_cache.hpp>
#include <zkr/recipes/nodes/persistent_node.hpp>

namespace zkr {

/// One member of a group: joins at `start()` (in the background), stays a member through lost connections
/// and session expiries (its node is made again), and leaves at `close()` (its node is deleted; a member
/// whose process dies leaves when its session ends). `get_current_members()` answers from the cache, with
/// no I/O: the members as last seen, this one always included (with its own data) while started.
///
/// The id must be unique in the group: two members with one id share one node (each adopts it), as in
/// Curator. Errors of the constructors (`Error`): `client_errc::invalid_path` for a bad membership path, or
/// an id that is not a valid node name (empty, ".", "..", containing '/', or a character ZooKeeper refuses).
///
/// Thread-safety: every member is thread-safe. Lifetime: the destructor leaves the group without waiting
/// for the delete.
class GroupMember {
 public:
  /// The member's data is the client's default data (Curator: the local address).
  GroupMember(CuratorFramework& client, std::string membership_path, std::string this_id);
  GroupMember(CuratorFramework& client, std::string membership_path, std::string this_id,
              std::string payload);

  /// Joins (once; in the background). Errors: `client_errc::invalid_argument` when already started,
  /// `client_errc::closed` when closed.
  void start();
  void start(error_code& ec);

  /// Changes this member's data (`PersistentNode::set_data`, with its errors).
  void set_this_data(std::string data);
  void set_this_data(std::string data, error_code& ec);
  /// `set_this_data`, asynchronously; as `PersistentNode::async_set_data`.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_set_this_data(std::string data, Token&& token = {}) {
    return node_.async_set_data(std::move(data), std::forward<Token>(token));
  }

  /// Leaves the group: the cache stops, the node is deleted (`PersistentNode::close`, idempotent).
  void close();
  void close(error_code& ec);
  /// `close`, asynchronously; as `PersistentNode::async_close`.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_close(Token&& token = {}) {
    cache_.close();
    return node_.async_close(std::forward<Token>(token));
  }

  /// Every member as last seen, id → data (Curator's `getCurrentMembers`); this member is included while
  /// started, with the data it has set.
  std::map<std::string, std::string> get_current_members() const;
  /// The id of a member's node path: its last segment (Curator's `idFromPath`).
  static std::string id_from_path(std::string_view path);

  const std::string& id() const noexcept { return id_; }
  const std::string& membership_path() const noexcept { return cache_.path(); }

 private:
  std::string id_;
  PersistentNode node_;
  PathChildrenCache cache_;
};

}  // namespace zkr
