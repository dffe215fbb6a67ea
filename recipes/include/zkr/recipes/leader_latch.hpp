#pragma once
/// \file
/// `LeaderLatch`: Curator's leader latch, a long-lived "am I the leader?" flag, wire-compatible with
/// Curator 5.x (protected `EPHEMERAL_SEQUENTIAL` nodes `<path>/_c_<uuid>-latch-<seq>` under container
/// parents, sorted by the text after the last "latch-", the first one leads), built on the lock engine
/// (`LockInternals` with the lock name "latch-"). docs/leader-election.md describes it against Curator.

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/framework/detail/access.hpp>
#include <zkr/framework/detail/async.hpp>
#include <zkr/recipes/detail/timeout.hpp>
#include <zkr/recipes/lease.hpp>
#include <zkr/recipes/participant.hpp>

namespace zkr {

/// Curator's `LeaderLatchListener`: `is_leader` runs on every change of `has_leadership()` from false to
/// true, `not_leader` on every change from true to false. Either may be empty. By the time a call runs the
/// flag may have changed again; the call for that change follows.
struct LeaderLatchListener {
  std::function<void()> is_leader;
  std::function<void()> not_leader;
};

/// A leader latch: of all the latches started on one path, one at a time has leadership.
///
/// `start()` queues a node (in the background: it never blocks, and works before the client is connected);
/// the latch whose node is first leads until its node goes (close, session expiry, deletion by someone else).
/// A node kept through a disconnection keeps its place, as Curator 5.4 does: SUSPENDED clears the flag (the
/// session, and so the node, may be gone), RECONNECTED to the same session sets it again once the node is
/// read back as ours.
///
/// Beyond Curator 5.4 (and safe next to it on one path):
/// - leadership is claimed only on a node of the current session (Curator 5.7's CURATOR-696 fix): after a
///   session expiry the latch makes a new node and never leads on the dead session's one;
/// - the latch watches its own node once it leads: a leader whose node someone else deletes gives up the
///   flag and queues a new node (Curator's leader does not notice, §1.8 of the reference);
/// - the leadership carries the grant's extras: `fencing_token()` (the node's czxid, strictly larger for
/// every
///   later leader of the path) and `lease_status()` (maybe_lost on SUSPENDED, lost on expiry).
///
/// Thread-safety: every member is thread-safe. Listeners and the handlers of `async_await` run on the
/// client's completion executor (its I/O thread by default: do not block there); listeners never run under
/// the latch's lock, so they may call any member (`close()` included). A listener removed, or silenced by a
/// SILENT close, gets no call that was still pending; a call already running may still be running when
/// `remove_listener` or `close` returns. Lifetime: the destructor closes a started latch silently; after it,
/// only a listener call already running and the guaranteed delete of the node may still be under way.
class LeaderLatch {
 public:
  enum class State { latent, started, closed };
  /// Curator's `CloseMode`: whether `close()` tells the listeners that leadership ended.
  enum class CloseMode {
    silent,         ///< the listeners are dropped first: no `not_leader` (Curator's default)
    notify_leader,  ///< a leader's listeners get `not_leader`, then they are dropped
  };
  static constexpr std::string_view lock_name = "latch-";

  /// `latch_path` is validated by Curator's rules (`Error` with `client_errc::invalid_path`; a relative path
  /// is refused as Curator's constructor does). `id` becomes the node's data (UTF-8 text; "" gives 0 bytes).
  LeaderLatch(CuratorFramework& client, std::string latch_path, std::string id = {},
              CloseMode close_mode = CloseMode::silent);
  ~LeaderLatch();
  LeaderLatch(const LeaderLatch&) = delete;
  LeaderLatch& operator=(const LeaderLatch&) = delete;

  /// Joins the election (once). Errors: `client_errc::invalid_argument` when already started (Curator's
  /// "Cannot be started more than once"), `client_errc::closed` when closed.
  void start();
  void start(error_code& ec);

  /// Leaves the election: the node is deleted in the background (guaranteed delete; a create still in flight
  /// is cleaned up when its reply comes), `await` callers wake with `client_errc::closed`, and the flag goes
  /// false (with `not_leader` under `CloseMode::notify_leader`). Does not wait for the delete, as Curator's.
  /// Errors: `client_errc::not_started` when never started, `client_errc::closed` when already closed
  /// (Curator: "Already closed or has not been started").
  void close();
  void close(error_code& ec);
  void close(CloseMode mode);
  void close(CloseMode mode, error_code& ec);

  /// Blocks until this latch leads. Errors: `client_errc::closed` when the latch is or becomes closed
  /// (Curator's EOFException), `client_errc::not_started` when it was never started. Never call it on the
  /// client's I/O thread (it would wait forever: `client_errc::would_deadlock`).
  void await();
  void await(error_code& ec);
  /// Waits at most `timeout` (any duration, rounded up to milliseconds); true when leading, false on timeout
  /// or when not started or closed (Curator's `await(time, unit)` never throws either).
  [[nodiscard]] bool await(std::chrono::milliseconds timeout);
  template <class Rep, class Period>
  [[nodiscard]] bool await(std::chrono::duration<Rep, Period> timeout) {
    return await(detail::to_timeout(timeout));
  }
  /// `await`, asynchronously, at once (posted) when already leading. Handler: `void(error_code)`. Executor:
  /// the handler's, else the client's completion executor. Cancellation: terminal, partial, total: completes
  /// at once with `operation_aborted` and withdraws the wait; the latch itself is untouched. Errors: as
  /// `await`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_await(Token&& token = {}) {
    auto id = std::make_shared<std::uint64_t>(0);
    return detail::async_run<>(
        core(), {"LeaderLatch::await", path(), detail::Cancellation::read}, std::forward<Token>(token),
        [i = impl_, id](auto cb) mutable { *id = await_start(i, std::move(cb)); }, detail::NoAbandon{},
        [i = impl_, id] { forget_waiter(i, *id); });
  }

  /// The local flag (Curator's `hasLeadership`): started, and our node was seen first and ours. No I/O.
  bool has_leadership() const;

  /// Adds a listener, called on the client's completion executor (or on `executor`); returns its id.
  /// `remove_listener` also drops its calls still pending.
  std::uint64_t add_listener(LeaderLatchListener listener);
  std::uint64_t add_listener(LeaderLatchListener listener, boost::asio::any_io_executor executor);
  void remove_listener(std::uint64_t id);

  /// Every contender in queue order, read from the server now (one listing and one read per node; nodes gone
  /// meanwhile are skipped, the first one read leads). A path that does not exist gives none. As in Curator
  /// the answer may disagree with `has_leadership()` (it is not a snapshot). Errors: the client's.
  std::vector<Participant> get_participants() const;
  std::vector<Participant> get_participants(error_code& ec) const;
  /// `get_participants`, asynchronously. Handler: `void(error_code, std::vector<Participant>)`. Executor: the
  /// handler's, else the client's completion executor. Cancellation: terminal, partial, total: completes at
  /// once with `operation_aborted`. Errors: as `get_participants`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code, std::vector<Participant>)> Token =
                default_completion_token_t>
  auto async_get_participants(Token&& token = {}) const {
    return detail::async_run<std::vector<Participant>>(
        core(), {"LeaderLatch::get_participants", path(), detail::Cancellation::read},
        std::forward<Token>(token),
        [e = engine()](auto cb) mutable { detail::read_participants(e, std::move(cb)); });
  }
  /// The first of `get_participants()`, or `Participant{}` ("", false) when there is none.
  Participant get_leader() const;
  Participant get_leader(error_code& ec) const;

  const std::string& id() const noexcept;
  State state() const;
  const std::string& path() const noexcept;
  /// Our current node (Curator's `getOurPath`), "" while none exists.
  std::string our_path() const;
  /// The node we held when leadership was last granted (Curator 5.3's `getLastPathIsLeader`), "" before.
  std::string last_path_is_leader() const;
  /// The current leadership's fencing token: our node's czxid while `has_leadership()` (0 otherwise). Larger
  /// for every later leader of the path, across sessions and re-created parents.
  std::int64_t fencing_token() const;
  /// The loss signal of our node since it was last granted (`LeaseStatus::released` when we hold no granted
  /// node): held, maybe_lost (SUSPENDED or READ_ONLY), lost (expiry, deletion; a new node is queued).
  LeaseStatus lease_status() const;

  struct Impl;
  friend struct detail::access;

 private:
  /// Over any `detail::Core` (unit tests drive the latch over a scripted fake core with injected faults,
  /// through `detail::access::make_unique`).
  LeaderLatch(std::shared_ptr<detail::Core> core, std::string latch_path, std::string id = {},
              CloseMode close_mode = CloseMode::silent);
  std::shared_ptr<detail::Core> core() const;
  std::shared_ptr<detail::LockInternals> engine() const;
  static std::uint64_t await_start(const std::shared_ptr<Impl>& impl, detail::VoidCallback cb);
  static void forget_waiter(const std::shared_ptr<Impl>& impl, std::uint64_t id);
  std::shared_ptr<Impl> impl_;
};

}  // namespace zkr
