#pragma once
/// \file
/// `InterProcessSemaphoreV2`: Curator's counting semaphore with N leases, same algorithm and layout
/// (`<path>/locks` holds an internal mutex taken while waiting for a free slot; `<path>/leases` holds one
/// `_c_<uuid>-lease-<seq>` node per lease held). Every participant must use the same `max_leases`.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zkr/framework/detail/access.hpp>
#include <zkr/recipes/detail/lock_internals.hpp>
#include <zkr/recipes/detail/timeout.hpp>

namespace zkr {

class SharedCountReader;

namespace detail {
struct SemaphoreShared;
void semaphore_acquire(std::shared_ptr<SemaphoreShared> s, int qty,
                       std::optional<std::chrono::steady_clock::time_point> deadline,
                       std::shared_ptr<CancelState> cancel,
                       unique_function<void(error_code, std::vector<Lease>)> done);
std::shared_ptr<Core> semaphore_core(const std::shared_ptr<SemaphoreShared>& s);
/// The shared state of a semaphore over any `Core` (the constructor uses it; unit tests pass a fake core).
/// Errors as the constructor's: `invalid_path`, `invalid_argument` for max_leases < 1 (thrown as `Error`).
std::shared_ptr<SemaphoreShared> make_semaphore_shared(std::shared_ptr<Core> core, std::string path,
                                                       int max_leases);
}  // namespace detail

/// A semaphore of `max_leases` leases shared across processes. Leases are `Lease` objects owned by whoever
/// holds them (any thread may return one). Thread-safety: all members are thread-safe; the object may be
/// destroyed while asynchronous acquires are pending.
class InterProcessSemaphoreV2 {
 public:
  static constexpr std::string_view lock_parent = "locks";
  static constexpr std::string_view lease_parent = "leases";
  static constexpr std::string_view lease_base_name = "lease-";

  /// Errors: `invalid_path`, `invalid_argument` for max_leases < 1.
  InterProcessSemaphoreV2(CuratorFramework& client, std::string path, int max_leases);
  /// Curator's `InterProcessSemaphoreV2(client, path, SharedCountReader)`: the number of leases is `count`'s,
  /// read now (its seed if it is not started) and followed as it changes: a larger count wakes the waiters
  /// at once; a smaller one revokes no lease held (new acquires wait until the holders are below it). A count
  /// below 1 lets no one acquire. The count's path is independent of the semaphore's, and the semaphore does
  /// not start it. As in Curator, the listener stays with the count (it does nothing once the semaphore is
  /// gone). Errors: `invalid_path`, and `count`'s (`client_errc::corrupted_data`).
  InterProcessSemaphoreV2(CuratorFramework& client, std::string path, SharedCountReader& count);

  /// One lease, blocking.
  [[nodiscard]] Lease acquire();
  [[nodiscard]] Lease acquire(error_code& ec);
  /// `qty` leases, all or none (`invalid_argument` when qty < 1).
  [[nodiscard]] std::vector<Lease> acquire(int qty);
  [[nodiscard]] std::vector<Lease> acquire(int qty, error_code& ec);
  /// One lease within `timeout`; an empty Lease on timeout (Curator returns null).
  [[nodiscard]] Lease acquire(std::chrono::milliseconds timeout);
  [[nodiscard]] Lease acquire(std::chrono::milliseconds timeout, error_code& ec);
  /// `qty` leases within `timeout`, all or none: empty on timeout.
  [[nodiscard]] std::vector<Lease> acquire(int qty, std::chrono::milliseconds timeout);
  [[nodiscard]] std::vector<Lease> acquire(int qty, std::chrono::milliseconds timeout, error_code& ec);
  /// The timed forms for any duration, rounded up to whole milliseconds (a negative one is one try without
  /// waiting): `acquire(1s)`, `acquire(2, 500us)`.
  template <class Rep, class Period>
  [[nodiscard]] Lease acquire(std::chrono::duration<Rep, Period> timeout) {
    return acquire(detail::to_timeout(timeout));
  }
  template <class Rep, class Period>
  [[nodiscard]] Lease acquire(std::chrono::duration<Rep, Period> timeout, error_code& ec) {
    return acquire(detail::to_timeout(timeout), ec);
  }
  template <class Rep, class Period>
  [[nodiscard]] std::vector<Lease> acquire(int qty, std::chrono::duration<Rep, Period> timeout) {
    return acquire(qty, detail::to_timeout(timeout));
  }
  template <class Rep, class Period>
  [[nodiscard]] std::vector<Lease> acquire(int qty, std::chrono::duration<Rep, Period> timeout,
                                           error_code& ec) {
    return acquire(qty, detail::to_timeout(timeout), ec);
  }

  /// Returns one lease, quietly (errors are logged and left to the guaranteed delete).
  void return_lease(Lease lease) noexcept;
  /// Returns all of them.
  void return_all(std::vector<Lease> leases) noexcept;

  /// The lease nodes as full paths (without the client's namespace), in queue order: the same form as
  /// `InterProcessMutex::participant_nodes`. (Curator's semaphore gives the bare names in the server's
  /// order.) None when the leases directory does not exist (never used, or its empty container reaped by the
  /// server), as for the mutex; Curator throws NoNodeException there.
  std::vector<std::string> participant_nodes() const;
  /// `participant_nodes`, asynchronously.
  /// Handler: `void(error_code, std::vector<std::string>)`. Executor: the handler's, else the client's
  /// completion executor. Cancellation: terminal, partial, total: completes at once with `operation_aborted`.
  /// Errors: as `participant_nodes`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code, std::vector<std::string>)> Token =
                default_completion_token_t>
  auto async_participant_nodes(Token&& token = {}) const {
    return detail::async_run<std::vector<std::string>>(
        detail::semaphore_core(shared_), {"participant_nodes", path(), detail::Cancellation::read},
        std::forward<Token>(token), [s = shared_](auto cb) mutable { participants_start(s, std::move(cb)); });
  }
  /// Data of the lease nodes created from now on.
  void set_node_data(std::optional<std::string> data);

  /// One lease, asynchronously (the twin of `acquire()`).
  /// Handler: `void(error_code, Lease)`. Executor: the handler's, else the client's completion executor.
  /// Cancellation: terminal and partial: this operation's nodes are deleted before it completes with
  /// `operation_aborted`. Errors: as `acquire`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code, Lease)> Token = default_completion_token_t>
  auto async_acquire(Token&& token = {}) {
    return async_acquire_one(std::nullopt, std::forward<Token>(token));
  }
  /// As `async_acquire(token)`, giving up after `timeout` (any duration), counted from when the operation
  /// starts: completes with no error and an empty Lease on timeout.
  template <class Rep, class Period,
            boost::asio::completion_token_for<void(error_code, Lease)> Token = default_completion_token_t>
  auto async_try_acquire_for(std::chrono::duration<Rep, Period> timeout, Token&& token = {}) {
    return async_acquire_one(detail::to_timeout(timeout), std::forward<Token>(token));
  }
  /// `qty` leases.
  /// Handler: `void(error_code, std::vector<Lease>)`. Executor: the handler's, else the client's completion
  /// executor. Cancellation: terminal and partial: this operation's nodes are deleted and the leases already
  /// taken given back before it completes with `operation_aborted`. Errors: as `acquire`. Thread-safety: any
  /// thread.
  template <boost::asio::completion_token_for<void(error_code, std::vector<Lease>)> Token =
                default_completion_token_t>
  auto async_acquire(int qty, Token&& token = {}) {
    return async_acquire_many(qty, std::nullopt, std::forward<Token>(token));
  }
  /// As `async_acquire(qty, token)`, giving up after `timeout` (any duration), counted from when the
  /// operation starts: completes with no error and no leases on timeout.
  template <class Rep, class Period,
            boost::asio::completion_token_for<void(error_code, std::vector<Lease>)> Token =
                default_completion_token_t>
  auto async_try_acquire_for(int qty, std::chrono::duration<Rep, Period> timeout, Token&& token = {}) {
    return async_acquire_many(qty, detail::to_timeout(timeout), std::forward<Token>(token));
  }

  /// The number of leases (the count's current value for a semaphore on a `SharedCountReader`).
  int max_leases() const noexcept;
  const std::string& path() const noexcept;

  friend struct detail::access;

 private:
  /// For recipes built on the semaphore (`detail::access::shared`).
  const std::shared_ptr<detail::SemaphoreShared>& shared() const noexcept { return shared_; }
  std::vector<Lease> acquire_impl(int qty, std::optional<std::chrono::milliseconds> timeout, error_code& ec);
  /// The asynchronous acquires; the deadline is computed when the operation starts.
  template <class Token>
  auto async_acquire_many(int qty, std::optional<std::chrono::milliseconds> timeout, Token&& token) {
    return detail::async_run<std::vector<Lease>>(
        detail::semaphore_core(shared_), {"acquire", path(), detail::Cancellation::cleanup},
        std::forward<Token>(token), [s = shared_, qty, timeout](auto done, auto cancel) mutable {
          detail::semaphore_acquire(s, qty, detail::deadline_after(timeout), std::move(cancel),
                                    std::move(done));
        });
  }
  template <class Token>
  auto async_acquire_one(std::optional<std::chrono::milliseconds> timeout, Token&& token) {
    return detail::async_run<Lease>(
        detail::semaphore_core(shared_), {"acquire", path(), detail::Cancellation::cleanup},
        std::forward<Token>(token), [s = shared_, timeout](auto done, auto cancel) mutable {
          detail::semaphore_acquire(s, 1, detail::deadline_after(timeout), std::move(cancel),
                                    [done = std::move(done)](error_code ec, std::vector<Lease> v) mutable {
                                      done(ec, v.empty() ? Lease() : std::move(v.front()));
                                    });
        });
  }
  static void participants_start(const std::shared_ptr<detail::SemaphoreShared>& s,
                                 detail::unique_function<void(error_code, std::vector<std::string>)> cb);
  std::shared_ptr<detail::SemaphoreShared> shared_;
};

}  // namespace zkr
