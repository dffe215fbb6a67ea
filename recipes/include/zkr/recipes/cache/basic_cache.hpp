#pragma once
/// \file
/// `BasicCache`: what the four cache classes (`CuratorCache`, `TreeCache`, `PathChildrenCache`, `NodeCache`)
/// share: close, waiting for the first load, the listener ids, the size. docs/caches.md has the semantics.

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/framework/detail/access.hpp>
#include <zkr/framework/detail/async.hpp>
#include <zkr/recipes/detail/timeout.hpp>

namespace zkr {

namespace detail {
class CacheCore;
}

/// The common part of every cache: one engine that keeps a tree of `ChildData` in step with the server
/// (docs/caches.md). Never writes to ZooKeeper.
///
/// Thread-safety: every member is thread-safe. Listeners run on the client's completion executor (its I/O
/// thread by default: do not block there) or on the executor given, one call at a time per listener, in the
/// order of the changes. A removed listener gets no call still pending; after `close()` no call runs.
/// Lifetime: the destructor closes the cache; the engine's watches are removed on the client's I/O thread.
class BasicCache {
 public:
  BasicCache(BasicCache&&) noexcept = default;
  BasicCache& operator=(BasicCache&&) noexcept = default;
  ~BasicCache();

  /// Stops the cache (idempotent): its watches are removed, listeners dropped, waiters woken with
  /// `client_errc::closed`; the contents are cleared unless the cache keeps them (CuratorCache's
  /// `do_not_clear_on_close`). Synchronous: when it returns no listener call of this cache starts, and none
  /// is running, but the one that called it (from within a listener it does not wait for itself) and others
  /// blocked in `close()`. On the client's I/O thread (a listener on the default executor; any handler
  /// there) it does not wait for listeners running on other executors, which may be waiting for that
  /// thread: there only "none starts" holds. The destructor closes, so it waits the same way.
  void close();

  /// Blocks until the first load is complete. Errors: `client_errc::not_started`, `client_errc::closed`,
  /// `client_errc::would_deadlock` (called on the client's I/O thread).
  void await_initialized();
  void await_initialized(error_code& ec);
  /// Waits at most `timeout`; true once initialized, false on timeout or when not started or closed.
  [[nodiscard]] bool await_initialized(std::chrono::milliseconds timeout);
  template <class Rep, class Period>
  [[nodiscard]] bool await_initialized(std::chrono::duration<Rep, Period> timeout) {
    return await_initialized(detail::to_timeout(timeout));
  }
  /// `await_initialized`, asynchronously; at once (posted) when already initialized. Handler:
  /// `void(error_code)`. Executor: the handler's, else the client's completion executor. Cancellation:
  /// terminal, partial, total: completes at once with `operation_aborted` and withdraws the wait; the cache
  /// is untouched. Errors: as `await_initialized`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_await_initialized(Token&& token = {}) {
    auto id = std::make_shared<std::uint64_t>(0);
    return detail::async_run<>(
        core(), {"cache::await_initialized", path(), detail::Cancellation::read}, std::forward<Token>(token),
        [i = impl_, id](auto cb) mutable { *id = await_start(i, std::move(cb)); }, detail::NoAbandon{},
        [i = impl_, id] { forget_waiter(i, *id); });
  }

  /// Removes a listener by the id its `add_listener` returned; its calls still pending are dropped.
  void remove_listener(std::uint64_t id);

  /// Nodes cached now.
  std::size_t size() const;
  /// The cache's root path.
  const std::string& path() const noexcept;
  /// Whether the cache follows the tree with one persistent recursive watch (ZooKeeper 3.6+ transport)
  /// rather than one-shot watches per node. Known once started.
  bool uses_persistent_watch() const;
  /// Watches the cache holds on the server now: one-shot ones per node and the root's exists watch, or the
  /// one persistent watch for the whole tree. For tests and diagnostics.
  std::size_t watch_count() const;

  friend struct detail::access;

 protected:
  explicit BasicCache(std::shared_ptr<detail::CacheCore> impl);
  std::shared_ptr<detail::Core> core() const;
  static std::uint64_t await_start(const std::shared_ptr<detail::CacheCore>& impl, detail::VoidCallback cb);
  static void forget_waiter(const std::shared_ptr<detail::CacheCore>& impl, std::uint64_t id);

  /// What a cache class's rebuild reads again, on the engine: the whole tree, one node (`node`), or the tree
  /// after dropping the cached nodes below the root.
  enum class Reread { tree, node, cleared_tree };
  /// The blocking form: not_started, closed and would_deadlock (on the client's I/O thread) before anything
  /// is read, then the first read error.
  void reread(Reread what, const std::string& node, error_code& ec);
  /// The asynchronous form (`Cancellation::read`: an aborted wait leaves the reads to finish, harmless);
  /// `refuse`: an error found before starting (a bad path).
  template <class Token>
  auto async_reread(std::string_view operation, Reread what, std::string node, error_code refuse,
                    Token&& token) {
    return detail::async_run<>(
        core(), {operation, node.empty() ? path() : node, detail::Cancellation::read, refuse},
        std::forward<Token>(token),
        [i = impl_, what, node](auto cb) mutable { reread_start(i, what, node, std::move(cb)); });
  }
  static void reread_start(const std::shared_ptr<detail::CacheCore>& impl, Reread what,
                           const std::string& node, detail::VoidCallback cb);
  std::shared_ptr<detail::CacheCore> impl_;
};

}  // namespace zkr
