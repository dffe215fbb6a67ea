#pragma once
/// \file
/// `PersistentTtlNode`: Curator's node that lives while its owner touches it and goes a TTL after the owner
/// stops (closes or dies), wire-compatible with Curator 5.x: `<path>` is a container node holding the data,
/// `<path>/touch` a `persistent_with_ttl` node touched periodically. The server must run with
/// `zookeeper.extendedTypesEnabled=true`. docs/nodes.md has the layout and the guarantees.

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <zkr/recipes/nodes/persistent_node.hpp>

namespace zkr {

/// A node kept while this object is started, and removed by the server some time after it is closed or
/// its process dies: `<path>` is a `PersistentNode` in container mode (no protection) with the data, and
/// `<path>/<child_node_name>` a TTL node whose data is set every `ttl / touch_schedule_factor`. Once the
/// touches stop, the server deletes the TTL child when it has been untouched for `ttl`, then the empty
/// container (each at one of its container checks, `znode.container.checkIntervalMs`).
///
/// As Curator's: `<path>` is re-created like any `PersistentNode` (after a delete by someone else, with its
/// parents unless `use_parent_creation` is false), and the child at the next touch; touching the child does
/// not change `<path>`, so its watchers see nothing; `close()` deletes nothing. Beyond Curator 5.4: the child
/// is touched as soon as `<path>` is created (not one period later), so that a container whose owner died
/// early still gets reaped (Curator's #1260, fixed in 5.9), and `close()` deletes `<path>` when it has no
/// child yet (for the same reason). The default touch factor is 3 (Curator's is 2), so that one failed touch
/// does not let the child expire.
///
/// Errors of the constructors (`Error`): `client_errc::invalid_argument` for a TTL outside 1 ms .. 2^40-1 ms
/// or a factor below 1, `client_errc::invalid_path` for a bad path or child name. A server without extended
/// types makes the touches fail (`unimplemented`, logged); the container itself is still made.
///
/// Thread-safety and lifetime: as `PersistentNode`.
class PersistentTtlNode {
 public:
  static constexpr std::string_view default_child_node_name = "touch";
  static constexpr int default_touch_schedule_factor = 3;

  PersistentTtlNode(CuratorFramework& client, std::string path, std::chrono::milliseconds ttl,
                    std::string init_data, bool use_parent_creation = true);
  PersistentTtlNode(CuratorFramework& client, std::string path, std::chrono::milliseconds ttl,
                    std::string init_data, std::string child_node_name, int touch_schedule_factor,
                    bool use_parent_creation = true);
  ~PersistentTtlNode();
  PersistentTtlNode(const PersistentTtlNode&) = delete;
  PersistentTtlNode& operator=(const PersistentTtlNode&) = delete;

  /// As `PersistentNode::start`.
  void start();
  void start(error_code& ec);

  /// As `PersistentNode::wait_for_initial_create` (the container node).
  [[nodiscard]] bool wait_for_initial_create(std::chrono::milliseconds timeout) {
    return node_.wait_for_initial_create(timeout);
  }
  template <class Rep, class Period>
  [[nodiscard]] bool wait_for_initial_create(std::chrono::duration<Rep, Period> timeout) {
    return node_.wait_for_initial_create(timeout);
  }
  /// As `PersistentNode::async_wait_for_initial_create`.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_wait_for_initial_create(Token&& token = {}) {
    return node_.async_wait_for_initial_create(std::forward<Token>(token));
  }

  /// Stops touching (idempotent); deletes `<path>` only when it has no child yet (see the class comment).
  /// Blocks until that is done (not on the client's I/O thread, where it does not wait).
  void close();
  void close(error_code& ec);
  /// `close`, asynchronously. Handler: `void(error_code)`. Cancellation: terminal, partial, total:
  /// completes at once with `operation_aborted`; the close goes on. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_close(Token&& token = {}) {
    return detail::async_run<>(node_.core(), {"PersistentTtlNode::close", path(), detail::Cancellation::read},
                               std::forward<Token>(token),
                               [i = impl_](auto cb) mutable { close_start(i, std::move(cb)); });
  }

  /// As `PersistentNode::set_data` (the container node's bytes).
  void set_data(std::string data) { node_.set_data(std::move(data)); }
  void set_data(std::string data, error_code& ec) { node_.set_data(std::move(data), ec); }
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_set_data(std::string data, Token&& token = {}) {
    return node_.async_set_data(std::move(data), std::forward<Token>(token));
  }
  std::string get_data() const { return node_.get_data(); }

  const std::string& path() const noexcept { return node_.base_path(); }
  /// `<path>/<child_node_name>`.
  const std::string& child_path() const noexcept;
  std::chrono::milliseconds ttl() const noexcept;
  PersistentNode::State state() const { return node_.state(); }

  struct Impl;

 private:
  static void close_start(const std::shared_ptr<Impl>& impl, detail::VoidCallback cb);
  std::shared_ptr<Impl> impl_;
  PersistentNode node_;
};

}  // namespace zkr
