// GroupMember: an ephemeral PersistentNode per member and a PathChildrenCache of the group.

#include <zkr/framework/paths.hpp>
#include <zkr/recipes/nodes/group_member.hpp>

namespace zkr {

namespace {

/// `<membership_path>/<id>`, once `id` is known to be one valid node name.
std::string member_path(const std::string& membership_path, const std::string& id) {
  if (auto why = path_error(membership_path))
    throw Error(client_errc::invalid_path, "GroupMember: " + *why, membership_path);
  const auto path = make_path(membership_path, id);
  if (id.empty() || id == "." || id == ".." || id.find('/') != std::string::npos || path_error(path))
    throw Error(client_errc::invalid_path, "GroupMember: id '" + id + "' is not a valid node name",
                membership_path);
  return path;
}

}  // namespace

GroupMember::GroupMember(CuratorFramework& client, std::string membership_path, std::string this_id)
    : GroupMember(client, std::move(membership_path), std::move(this_id),
                  detail::access::core(client)->default_data()) {}

GroupMember::GroupMember(CuratorFramework& client, std::string membership_path, std::string this_id,
                         std::string payload)
    : id_(std::move(this_id)),
      node_(client, CreateMode::ephemeral, /*use_protection=*/false, member_path(membership_path, id_),
            std::move(payload)),
      cache_(client, std::move(membership_path)) {}

void GroupMember::start(error_code& ec) {
  node_.start(ec);
  if (!ec) cache_.start(PathChildrenCache::StartMode::normal, ec);
}
void GroupMember::start() {
  error_code ec;
  start(ec);
  throw_if(ec, "GroupMember::start", node_.base_path());
}

void GroupMember::set_this_data(std::string data, error_code& ec) { node_.set_data(std::move(data), ec); }
void GroupMember::set_this_data(std::string data) { node_.set_data(std::move(data)); }

void GroupMember::close(error_code& ec) {
  cache_.close();
  node_.close(ec);
}
void GroupMember::close() {
  cache_.close();
  node_.close();
}

std::map<std::string, std::string> GroupMember::get_current_members() const {
  std::map<std::string, std::string> members;
  for (auto& child : cache_.get_current_data()) members[id_from_path(child.path)] = std::move(child.data);
  if (node_.state() == PersistentNode::State::started) members[id_] = node_.get_data();
  return members;
}

std::string GroupMember::id_from_path(std::string_view path) { return node_name(path); }

}  // namespace zkr
