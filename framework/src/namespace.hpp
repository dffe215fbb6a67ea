#pragma once
// The client's namespace (a part of the client, see client.hpp): its paths in and out ("/ns" + path), and its
// root, made on first use and again should the server have deleted it (an empty container), one creation at a
// time, the operations meanwhile waiting for its result. I/O thread only, but for the paths.

#include <functional>
#include <string>
#include <string_view>
#include <vector>
#include <zkr/framework/detail/unique_function.hpp>
#include <zkr/framework/error.hpp>

namespace zkr::detail {

class Namespace {
 public:
  using Done = unique_function<void(error_code)>;
  /// `name` empty: no namespace. `make_root(k)` makes the root with its parents and calls `k(ec)` once.
  Namespace(const std::string& name, std::function<void(Done)> make_root)
      : prefix_(name.empty() ? std::string() : "/" + name), make_root_(std::move(make_root)) {}

  /// "/ns", or "" without a namespace.
  const std::string& prefix() const noexcept { return prefix_; }
  /// `path` (un-namespaced) as the server knows it.
  std::string fix(std::string_view path) const;
  /// A server's path without the namespace (unchanged when outside it).
  std::string unfix(std::string_view path) const;
  /// Whether a server's path is the root or under it (always, without a namespace).
  bool contains(std::string_view full_path) const noexcept;
  /// Whether `full_path` names a node right under the root (never without a namespace).
  bool under_root(const std::string& full_path) const;

  /// `k(ec)` once the root exists: at once when it is known to, else after its creation (shared by every
  /// operation that asks meanwhile).
  void ensure(Done k);
  /// A try found the root gone: the next `ensure` makes it again. True when it was known to exist (the first
  /// to find it gone: the caller says so in the log).
  bool root_gone() noexcept;
  /// The operations waiting for the root's creation (a closing client ends them).
  std::vector<Done> take_waiters() {
    auto out = std::move(waiters_);
    waiters_.clear();
    return out;
  }

 private:
  enum class Root { unknown, making, made };
  std::string prefix_;
  std::function<void(Done)> make_root_;
  Root root_ = Root::unknown;
  std::vector<Done> waiters_;
};

}  // namespace zkr::detail
