// The client's namespace (paths in and out of it, its root made on first use and again should the server have
// deleted it as an empty container), the ACL of a new node, the gate every request passes (started, open,
// a valid path), and the creation of missing parents (mkdirs).

#include "core_impl.hpp"

namespace zkr {

AclList open_acl_unsafe() { return {Acl{perms::all, Id{"world", "anyone"}}}; }
AclList creator_all_acl() { return {Acl{perms::all, Id{"auth", ""}}}; }
AclList read_acl_unsafe() { return {Acl{perms::read, Id{"world", "anyone"}}}; }

}  // namespace zkr

namespace zkr::detail {

std::string CoreImpl::fix(std::string_view path) const {
  if (ns_prefix_.empty()) return std::string(path);
  if (path == "/") return ns_prefix_;
  return ns_prefix_ + std::string(path);
}

std::string CoreImpl::unfix(std::string_view path) const {
  if (ns_prefix_.empty()) return std::string(path);
  if (path.substr(0, ns_prefix_.size()) == ns_prefix_ &&
      (path.size() == ns_prefix_.size() || path[ns_prefix_.size()] == '/')) {
    auto rest = path.substr(ns_prefix_.size());
    return rest.empty() ? "/" : std::string(rest);
  }
  return std::string(path);
}

AclList CoreImpl::acl_for(const std::string& full_path, const std::optional<AclList>& explicit_acl) const {
  if (explicit_acl && !explicit_acl->empty()) return *explicit_acl;
  if (cfg_.acl_provider) {
    auto acl = cfg_.acl_provider(full_path);
    if (!acl.empty()) return acl;
  }
  return open_acl_unsafe();
}

error_code CoreImpl::gate(std::string_view path, bool sequential) const {
  if (closed_) return errc::closed;
  if (!started_) return errc::not_started;
  if (path_error(path, sequential)) return errc::invalid_path;
  return {};
}

std::shared_ptr<CoreImpl::Attempt> CoreImpl::in_namespace(std::shared_ptr<Attempt> attempt,
                                                          std::function<bool(int)> root_gone) {
  if (ns_prefix_.empty()) return attempt;
  return std::make_shared<Attempt>([this, attempt, root_gone](unique_function<void(int)> k) {
    ensure_namespace([this, attempt, root_gone, k = std::move(k)](int rc) mutable {
      if (rc != ZOK) return k(rc);
      if (!root_gone) return (*attempt)(std::move(k));
      (*attempt)([this, attempt, root_gone, k = std::move(k)](int rc) mutable {
        if (rc == ZOK || !root_gone(rc)) return k(rc);
        // Not ready: another operation found the root gone first; this one waits for it to be made again.
        if (ns_ready_)
          log_->info("namespace {} is gone (an empty container is deleted by the server): making it again",
                     ns_prefix_);
        ns_ready_ = false;
        ensure_namespace([attempt, k = std::move(k)](int rc) mutable {
          if (rc != ZOK) return k(rc);
          (*attempt)(std::move(k));
        });
      });
    });
  });
}

// One creation at a time: the tries of other operations meanwhile wait for its result.
void CoreImpl::ensure_namespace(unique_function<void(int)> k) {
  if (ns_ready_) return k(ZOK);
  ns_waiters_.push_back(std::move(k));
  if (ns_in_progress_) return;
  ns_in_progress_ = true;
  mkdirs(ns_prefix_, true, cfg_.use_container_parents, [this](int rc) {
    ns_in_progress_ = false;
    if (rc == ZOK) ns_ready_ = true;
    auto ws = std::move(ns_waiters_);
    ns_waiters_.clear();
    for (auto& w : ws) w(rc);
  });
}

void CoreImpl::mkdirs(std::string full_path, bool make_last, bool containers, unique_function<void(int)> k) {
  // Walk up with exists() to the deepest existing ancestor (no read access needed above it), then create
  // downwards, ignoring NodeExists (Curator's ZKPaths.mkdirs).
  auto todo = std::make_shared<std::vector<std::string>>();
  std::string p = make_last ? full_path : parent_path(full_path);
  while (!p.empty() && p != "/") {
    todo->push_back(p);
    p = parent_path(p);
  }
  std::reverse(todo->begin(), todo->end());  // top-down
  if (todo->empty()) return post_result(std::move(k), ZOK);
  mkdirs_probe(todo, todo->size(), containers, std::move(k));
}

void CoreImpl::mkdirs_probe(std::shared_ptr<std::vector<std::string>> todo, std::size_t n, bool containers,
                            unique_function<void(int)> k) {
  if (n == 0) return mkdirs_down(todo, 0, containers, std::move(k));
  auto path = (*todo)[n - 1];
  session_->submit(zk::Exists{path}, [this, todo, n, containers, k = std::move(k)](zk::Reply r) mutable {
    const int rc = r.rc;
    if (rc == ZOK) return mkdirs_down(todo, n, containers, std::move(k));
    if (rc == ZNONODE) return mkdirs_probe(todo, n - 1, containers, std::move(k));
    k(rc);
  });
}

void CoreImpl::mkdirs_down(std::shared_ptr<std::vector<std::string>> todo, std::size_t i, bool containers,
                           unique_function<void(int)> k) {
  if (i >= todo->size()) return k(ZOK);
  const auto& path = (*todo)[i];
  session_->submit(zk::Create{path, std::string(), acl_for(path, std::nullopt),
                              containers ? CreateMode::container : CreateMode::persistent},
                   [this, todo, i, containers, k = std::move(k)](zk::Reply r) mutable {
                     if (r.rc != ZOK && r.rc != ZNODEEXISTS) return k(r.rc);
                     mkdirs_down(todo, i + 1, containers, std::move(k));
                   });
}

}  // namespace zkr::detail
