// The client's namespace (see namespace.hpp).

#include "namespace.hpp"

#include <zkr/framework/paths.hpp>

namespace zkr::detail {

std::string Namespace::fix(std::string_view path) const {
  if (prefix_.empty()) return std::string(path);
  if (path == "/") return prefix_;
  return prefix_ + std::string(path);
}

bool Namespace::contains(std::string_view full_path) const noexcept {
  return prefix_.empty() || (full_path.starts_with(prefix_) &&
                             (full_path.size() == prefix_.size() || full_path[prefix_.size()] == '/'));
}

std::string Namespace::unfix(std::string_view path) const {
  if (prefix_.empty() || !contains(path)) return std::string(path);
  auto rest = path.substr(prefix_.size());
  return rest.empty() ? "/" : std::string(rest);
}

bool Namespace::under_root(const std::string& full_path) const {
  return !prefix_.empty() && parent_path(full_path) == prefix_;
}

// One creation at a time: the tries of other operations meanwhile wait for its result.
void Namespace::ensure(Done k) {
  if (root_ == Root::made) return k({});
  waiters_.push_back(std::move(k));
  if (root_ == Root::making) return;
  root_ = Root::making;
  make_root_([this](error_code ec) {
    root_ = ec ? Root::unknown : Root::made;
    auto ws = std::move(waiters_);
    waiters_.clear();
    for (auto& w : ws) w(ec);
  });
}

bool Namespace::root_gone() noexcept {
  if (root_ != Root::made) return false;
  root_ = Root::unknown;
  return true;
}

}  // namespace zkr::detail
