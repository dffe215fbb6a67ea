// The operations under the client's namespace (namespace.hpp: its paths, its root made on first use and again
// should the server have deleted it as an empty container), the ACL of a new node, the gate every request
// passes (started, open, a valid path), and the creation of missing directories (mkdirs, batched: several
// paths at once, for the framework's own parents and root and for the recipes' `make_dirs`).

#include <algorithm>

#include "core_impl.hpp"

namespace zkr {

AclList open_acl_unsafe() { return {Acl{perms::all, Id{"world", "anyone"}}}; }
AclList creator_all_acl() { return {Acl{perms::all, Id{"auth", ""}}}; }
AclList read_acl_unsafe() { return {Acl{perms::read, Id{"world", "anyone"}}}; }

}  // namespace zkr

namespace zkr::detail {

namespace {
/// The number of segments of an absolute path: "/a" 1, "/a/b" 2 (mkdirs creates by depth, parents first).
std::ptrdiff_t path_depth(const std::string& d) { return std::count(d.begin(), d.end(), '/'); }
}  // namespace

AclList CoreImpl::acl_for(const std::string& full_path, const std::optional<AclList>& explicit_acl) const {
  if (explicit_acl && !explicit_acl->empty()) return *explicit_acl;
  if (cfg_.acl_provider) {
    auto acl = cfg_.acl_provider(full_path);
    if (!acl.empty()) return acl;
  }
  return open_acl_unsafe();
}

error_code CoreImpl::gate(std::string_view path, bool sequential) const {
  if (auto ec = life_.gate()) return ec;
  if (path_error(path, sequential)) return client_errc::invalid_path;
  return {};
}

std::shared_ptr<CoreImpl::Attempt> CoreImpl::in_namespace(std::shared_ptr<Attempt> attempt,
                                                          std::function<bool(error_code)> root_gone) {
  if (ns_.prefix().empty()) return attempt;
  return std::make_shared<Attempt>([this, attempt, root_gone](Done k) {
    ns_.ensure([this, attempt, root_gone, k = std::move(k)](error_code ec) mutable {
      if (ec) return k(ec);
      if (!root_gone) return (*attempt)(std::move(k));
      (*attempt)([this, attempt, root_gone, k = std::move(k)](error_code ec) mutable {
        if (!ec || !root_gone(ec)) return k(ec);
        // Not ready: another operation found the root gone first; this one waits for it to be made again.
        if (ns_.root_gone())
          log_->info("namespace {} is gone (an empty container is deleted by the server): making it again",
                     ns_.prefix());
        ns_.ensure([attempt, k = std::move(k)](error_code ec) mutable {
          if (ec) return k(ec);
          (*attempt)(std::move(k));
        });
      });
    });
  });
}

struct CoreImpl::Mkdirs {
  std::vector<std::string> dirs;  // the round's directories; then the missing ones, by depth
  std::vector<char> missing;      // by `dirs`, after the exists round
  bool containers = false;
  StopPtr stop;
  Done k;
  std::size_t left = 0;  // replies outstanding in the current round
  error_code ec;         // the round's first failure
};

void CoreImpl::mkdirs(const std::vector<std::string>& dirs, bool containers, StopPtr stop, Done k) {
  // Every directory and ancestor once, by depth (parents first), then by name.
  std::set<std::string> all;
  for (const auto& d : dirs)
    for (std::string p = d; !p.empty() && p != "/"; p = parent_path(p))
      if (!all.insert(p).second) break;  // its ancestors are in already
  auto m = std::make_shared<Mkdirs>();
  m->dirs.assign(all.begin(), all.end());
  std::stable_sort(m->dirs.begin(), m->dirs.end(),
                   [](const std::string& a, const std::string& b) { return path_depth(a) < path_depth(b); });
  m->missing.assign(m->dirs.size(), 0);
  m->containers = containers;
  m->stop = std::move(stop);
  m->k = std::move(k);
  if (m->dirs.empty()) return post_result(std::move(m->k), error_code{});
  // Every exists at once, not walking up one at a time: one round trip whatever the depth.
  m->left = m->dirs.size();
  for (std::size_t i = 0; i < m->dirs.size(); ++i)
    session_->submit(zk::Exists{m->dirs[i]}, [this, m, i](zk::Reply r) {
      if (r.ec == zk_errc::no_node)
        m->missing[i] = 1;
      else if (r.ec && !m->ec)
        m->ec = r.ec;
      if (--m->left) return;
      std::vector<std::string> missing;
      for (std::size_t j = 0; j < m->dirs.size(); ++j)
        if (m->missing[j]) missing.push_back(std::move(m->dirs[j]));
      m->dirs = std::move(missing);  // still by depth
      mkdirs_create(m, 0);
    });
}

// Creates `m->dirs[from...]` of the smallest depth at once, then the next depth.
void CoreImpl::mkdirs_create(std::shared_ptr<Mkdirs> m, std::size_t from) {
  if (m->ec) return m->k(m->ec);
  if (from == m->dirs.size()) return m->k({});
  if (m->stop && m->stop->requested()) return m->k(asio::error::operation_aborted);
  std::size_t to = from;
  while (to < m->dirs.size() && path_depth(m->dirs[to]) == path_depth(m->dirs[from])) ++to;
  m->left = to - from;
  for (std::size_t i = from; i < to; ++i) {
    const auto& path = m->dirs[i];
    session_->submit(zk::Create{path, std::string(), acl_for(path, std::nullopt),
                                m->containers ? CreateMode::container : CreateMode::persistent},
                     [this, m, to](zk::Reply r) {
                       if (r.ec && r.ec != zk_errc::node_exists && !m->ec) m->ec = r.ec;
                       if (--m->left == 0) mkdirs_create(m, to);
                     });
  }
}

void CoreImpl::make_dirs(std::vector<std::string> paths, VoidCallback cb, RequestOptions ro) {
  auto full = std::make_shared<std::vector<std::string>>();
  for (const auto& p : paths) {
    if (auto ec = gate(p)) return post_result(std::move(cb), ec);
    full->push_back(ns_.fix(p));
  }
  auto attempt = std::make_shared<Attempt>([this, full, stop = ro.stop](Done k) {
    mkdirs(*full, cfg_.use_container_parents, stop, std::move(k));
  });
  with_retry(ro, in_namespace(std::move(attempt)), std::move(cb));
}

}  // namespace zkr::detail
