#include <zkr/recipes/detail/lock_internals.hpp>
#include <zkr/recipes/revoker.hpp>

namespace zkr {

void Revoker::start(const std::shared_ptr<detail::Core>& core, std::string path, detail::VoidCallback cb) {
  core->set_data(
      std::move(path), std::string(revoke_message), -1,
      [cb = std::move(cb)](error_code ec, Stat) mutable { cb(ec == zk_errc::no_node ? error_code() : ec); });
}

void Revoker::attempt_revoke(CuratorFramework& client, const std::string& node_path, error_code& ec) {
  auto core = detail::access::core(client);
  detail::run_blocking_void(
      *core, [core, node_path](detail::VoidCallback cb) mutable { start(core, node_path, std::move(cb)); },
      ec);
}

void Revoker::attempt_revoke(CuratorFramework& client, const std::string& node_path) {
  error_code ec;
  attempt_revoke(client, node_path, ec);
  throw_if(ec, "attempt_revoke", node_path);
}

}  // namespace zkr
