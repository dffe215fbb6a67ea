#pragma once
/// \file
/// `LeaderSelector`: Curator's leader selector, "run this task while leader", on an `InterProcessMutex`
/// (nodes
/// `<path>/_c_<uuid>-lock-<seq>`, the participant id as their data), wire-compatible with Curator 5.x.
/// docs/leader-election.md describes it against Curator.

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>
#include <zkr/framework/connection_state.hpp>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/recipes/inter_process_mutex.hpp>
#include <zkr/recipes/lease.hpp>
#include <zkr/recipes/participant.hpp>

namespace zkr {

/// Thrown by `LeaderSelectorListener::state_changed` to end the current leadership (Curator's
/// `CancelLeadershipException`): the selector then asks `take_leadership` to stop (its stop token) and
/// withdraws an acquire in progress. Honoured only when thrown from `state_changed`.
class CancelLeadershipException : public std::runtime_error {
 public:
  CancelLeadershipException() : std::runtime_error("leadership cancelled") {}
  using std::runtime_error::runtime_error;
};

/// One term of leadership, as `take_leadership` receives it: the stop request (Curator's thread interrupt)
/// and the grant behind it, with its fencing token and loss signal. Valid during the call only.
class Leadership {
 public:
  Leadership(std::stop_token stop, const Lease& lease) noexcept : stop_(std::move(stop)), lease_(lease) {}
  /// Requested by `interrupt_leadership()`, `close()`, or a `CancelLeadershipException` from `state_changed`.
  /// `take_leadership` must then return promptly: the next election waits for it.
  const std::stop_token& stop_token() const noexcept { return stop_; }
  bool stop_requested() const noexcept { return stop_.stop_requested(); }
  /// The grant: our lock node (its path, czxid and session), `status()` and `on_status_change`.
  const Lease& lease() const noexcept { return lease_; }
  /// Our node's czxid: strictly larger for every later leader of the path.
  std::int64_t fencing_token() const noexcept { return lease_.fencing_token(); }
  /// The loss signal: held, maybe_lost (SUSPENDED, READ_ONLY), lost (expiry, node deleted).
  LeaseStatus status() const noexcept { return lease_.status(); }

 private:
  std::stop_token stop_;
  const Lease& lease_;
};

/// Curator's `LeaderSelectorListener`: `take_leadership` runs (on the selector's own thread) while this
/// selector leads; returning from it, normally or by an exception, gives leadership up (the node is deleted).
/// `state_changed` gets the client's connection states (on the client's executor) and may throw
/// `CancelLeadershipException`. The selector itself reacts to no connection state: a listener that ignores
/// SUSPENDED and LOST keeps leading on a session that may be gone. Derive from
/// `LeaderSelectorListenerAdapter`, which gives leadership up on those states, unless you have a reason not
/// to.
class LeaderSelectorListener {
 public:
  virtual ~LeaderSelectorListener() = default;
  virtual void take_leadership(CuratorFramework& client, Leadership& leadership) = 0;
  virtual void state_changed(CuratorFramework& client, ConnectionState new_state) = 0;
};

/// Curator's `LeaderSelectorListenerAdapter`: `state_changed` throws `CancelLeadershipException` on the error
/// states of its policy (default `StandardConnectionStateErrorPolicy`: SUSPENDED and LOST; with
/// `SessionConnectionStateErrorPolicy` LOST only).
class LeaderSelectorListenerAdapter : public LeaderSelectorListener {
 public:
  explicit LeaderSelectorListenerAdapter(std::shared_ptr<const ConnectionStateErrorPolicy> policy = nullptr);
  void state_changed(CuratorFramework& client, ConnectionState new_state) override;

 private:
  std::shared_ptr<const ConnectionStateErrorPolicy> policy_;
};

/// A leader selector: of all the selectors on one path, one at a time runs its listener's `take_leadership`.
/// Fair: leadership passes in queue order (FIFO), and with `auto_requeue()` each selector joins the tail
/// again after its term.
///
/// Threads: `take_leadership` runs on a thread the selector owns (Curator's single-thread executor), never
/// twice at once. Blocking members may be called from any thread but the client's I/O thread.
///
/// Beyond Curator: the term carries the grant (`Leadership`: fencing token and loss signal), and the
/// request to stop is a `std::stop_token` instead of a thread interrupt. Requeue follows Curator 5.6
/// (CURATOR-518/671 fixed: once `has_leadership()` was seen going false, `requeue()` succeeds).
///
/// Thread-safety: every member is thread-safe. Lifetime: the destructor closes a started selector.
class LeaderSelector {
 public:
  enum class State { latent, started, closed };

  /// `leader_path` is validated (`Error` with `client_errc::invalid_path`). `listener` must not be null
  /// (`client_errc::invalid_argument`).
  LeaderSelector(CuratorFramework& client, std::string leader_path,
                 std::shared_ptr<LeaderSelectorListener> listener);
  ~LeaderSelector();
  LeaderSelector(const LeaderSelector&) = delete;
  LeaderSelector& operator=(const LeaderSelector&) = delete;

  /// The participant id: the data of the nodes created from now on (UTF-8). "" (the default): the client's
  /// default data, as Curator (the local address, unless the client was built with other default data).
  void set_id(std::string id);
  std::string id() const;

  /// From now on, every finished term (or failed attempt) queues another one.
  void auto_requeue();

  /// Joins the election (once): queues a first attempt. Errors: `client_errc::invalid_argument` when already
  /// started, `client_errc::closed` when closed.
  void start();
  void start(error_code& ec);

  /// Queues an attempt unless one is queued, waiting or leading; true when one was queued. Errors:
  /// `client_errc::not_started` / `client_errc::closed` (Curator's "close() has already been called").
  bool requeue();
  bool requeue(error_code& ec);

  /// From `take_leadership`'s start until just before our node is deleted (Curator's volatile flag).
  bool has_leadership() const;

  /// Asks a running `take_leadership` to stop (its stop token); nothing when not leading (Curator 5.5+).
  void interrupt_leadership();

  /// As `LeaderLatch::get_participants`, over the mutex's nodes.
  std::vector<Participant> get_participants() const;
  std::vector<Participant> get_participants(error_code& ec) const;
  /// `get_participants`, asynchronously, with `LeaderLatch::async_get_participants`'s contract.
  template <boost::asio::completion_token_for<void(error_code, std::vector<Participant>)> Token =
                default_completion_token_t>
  auto async_get_participants(Token&& token = {}) const {
    return detail::async_run<std::vector<Participant>>(
        detail::access::engine(mutex_)->core(),
        {"LeaderSelector::get_participants", path(), detail::Cancellation::read}, std::forward<Token>(token),
        [e = detail::access::engine(mutex_)](auto cb) mutable {
          detail::read_participants(e, std::move(cb));
        });
  }
  Participant get_leader() const;
  Participant get_leader(error_code& ec) const;

  /// Leaves the election: stops listening to connection states, asks a running `take_leadership` to stop,
  /// withdraws an acquire in progress (its node is deleted first), and returns once the selector's thread has
  /// finished (so after `take_leadership` returned and our node's delete was sent). Called from
  /// `take_leadership` itself it does not wait. Errors: `client_errc::not_started`, `client_errc::closed`.
  void close();
  void close(error_code& ec);

  State state() const;
  const std::string& path() const noexcept { return mutex_.path(); }

 private:
  /// The client's core (its logger, its I/O thread).
  const std::shared_ptr<detail::Core>& core() const { return detail::access::core(client_); }
  void run();
  void do_work();
  void cancel_election();
  bool internal_requeue();
  Lease acquire_cancellable(const std::shared_ptr<detail::CancelState>& cancel, error_code& ec);

  CuratorFramework& client_;
  InterProcessMutex mutex_;
  std::shared_ptr<LeaderSelectorListener> listener_;
  std::uint64_t state_listener_ = 0;
  std::thread worker_;
  /// What a connection-state listener call reaches; cleared (under `m`) by close.
  struct Target {
    std::mutex m;
    LeaderSelector* self = nullptr;
  };
  std::shared_ptr<Target> target_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  State state_ = State::latent;
  std::string id_;
  bool auto_requeue_ = false;
  bool queued_ = false;  // an attempt is queued, waiting or leading (5.6's ourTask != null)
  bool leader_ = false;
  bool election_cancelled_ = false;
  std::shared_ptr<detail::CancelState> acquiring_;  // the acquire in progress
  std::stop_source* term_ = nullptr;                // the running term
};

}  // namespace zkr
