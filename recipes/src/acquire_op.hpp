#pragma once
// The scaffold every acquire state machine stands on (private to recipes/src): the engine's one attempt
// (lock_internals.cpp), the semaphore's acquire of `qty` leases (inter_process_semaphore_v2.cpp) and the
// multi-lock's batched acquire (multi_acquire.cpp).
//
//   AcquireOp     the operation: its deadline timer, cancellation as an input (its cause: the deadline or the
//                 caller), the hook that interrupts it, its retry pause, and "give back, then complete"
//   QueueRound    the queue-node step's round trip: the create (or transaction) that queues our node, joined
//                 to the listing(s) pipelined behind it (or a listing alone)
//   QueuedNode    our node in a queue, and the CURATOR-604 check (a node of an earlier session is never ours)
//   RetryBudget   "our node went missing: make a new one" under the client's retry policy
//   give_back     deletes nodes and releases leases, all sent at once, then goes on once every reply is in
//
// Each machine keeps its own state as an explicit step (an enum), not as flags.

#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <zkr/drivers/lock_driver.hpp>
#include <zkr/recipes/detail/lock_internals.hpp>

namespace zkr::detail {

/// Gives back what an operation holds: deletes `nodes` (one transaction, else a guaranteed delete each:
/// `remove_nodes`), then releases `leases` in the order given, every request sent now and in that order;
/// `then` (if any) runs once every reply is in (at once when there is nothing to give back). I/O thread.
void give_back(Core& core, std::vector<std::string> nodes, std::vector<Lease> leases,
               unique_function<void()> then = {});

/// One lease as a list, for `give_back` (a `Lease` cannot be copied out of an initializer list).
inline std::vector<Lease> lease_list(Lease l) {
  std::vector<Lease> v;
  v.push_back(std::move(l));
  return v;
}

/// Our node in a lock's queue (un-namespaced path), as its create reply (or the batch's) described it.
struct QueuedNode {
  std::string path;
  std::int64_t czxid = 0;
  /// The node's owner; for a persistent node, the session that made it.
  std::int64_t session = 0;
  LockNodeMode mode = LockNodeMode::ephemeral_sequential;

  bool empty() const noexcept { return path.empty(); }
  bool persistent() const noexcept { return mode == LockNodeMode::persistent_sequential; }
  /// CURATOR-604: whether the node is still the current session's to hold. An ephemeral node of an earlier
  /// session is gone or going (someone else may hold its place); a persistent node stays, and stays ours.
  bool of_live_session(const Core& core) const { return persistent() || core.session_id() == session; }
  /// Hands the path over, leaving none.
  std::string take_path() { return std::exchange(path, std::string()); }
};

/// The queue-node step's round trip. The create that queues our node is sent with the listing(s) right
/// behind it, before its reply: a session's requests are applied in order, so the listing already shows the
/// node (one round trip for both); a listing that does not show it (the core retried the create after the
/// listing was sent) is not trusted, and the caller lists again. A round may also be a listing alone.
class QueueRound {
 public:
  /// A create (or transaction) with `listings` listings pipelined behind it.
  void start_create(int listings = 1) {
    kind_ = Kind::created;
    create_ = Reply::awaited;
    create_ec_ = {};
    listings_left_ = listings;
  }
  /// Listings alone.
  void start_listing(int listings = 1) {
    kind_ = Kind::listed;
    create_ = Reply::none;
    listings_left_ = listings;
  }
  /// The create's reply arrived; true when the round's replies are all in.
  bool create_replied(error_code ec) {
    create_ec_ = ec;
    create_ = Reply::in;
    return listings_left_ == 0;
  }
  /// A listing's reply arrived; true when the round's replies are all in.
  bool listing_replied() { return --listings_left_ == 0 && create_ != Reply::awaited; }
  /// The create is sent (or waiting for the connection) and has not answered: a stop may still recall it.
  bool awaiting_create() const noexcept { return create_ == Reply::awaited; }
  const error_code& create_error() const noexcept { return create_ec_; }
  /// Ends the round: whether it began with a create (its listing counts only if it shows our node). A
  /// round already ended answers false.
  bool finish() { return std::exchange(kind_, Kind::none) == Kind::created; }

 private:
  enum class Kind : std::uint8_t { none, created, listed };
  enum class Reply : std::uint8_t { none, awaited, in };
  Kind kind_ = Kind::none;
  Reply create_ = Reply::none;
  int listings_left_ = 0;
  error_code create_ec_;
};

/// "Our node went missing: make a new one" (Curator's RETRY_DUE_TO_MISSING_NODE), paced by the client's
/// retry policy; one budget per node wanted.
class RetryBudget {
 public:
  using Clock = std::chrono::steady_clock;
  void restart() {
    retries_ = 0;
    start_ = Clock::now();
  }
  /// The pause before the next try, or nullopt when the policy allows none.
  std::optional<Millis> next(const Core& core) {
    const auto elapsed = std::chrono::duration_cast<Millis>(Clock::now() - start_);
    return core.retry_policy().allow_retry(retries_++, elapsed);
  }

 private:
  int retries_ = 0;
  Clock::time_point start_ = Clock::now();
};

/// An acquire operation on the client's I/O thread. `Derived` provides `interrupt()` (the caller cancelled,
/// or the deadline passed: stop at the next step) and may replace `on_deadline()`.
template <class Derived, class Result>
class AcquireOp : public std::enable_shared_from_this<Derived> {
 public:
  using Clock = std::chrono::steady_clock;
  using Done = unique_function<void(error_code, Result)>;

  AcquireOp(std::shared_ptr<Core> core, std::optional<Clock::time_point> deadline,
            std::shared_ptr<CancelState> cancel, Done done)
      : core(std::move(core)),
        deadline(deadline),
        cancel(cancel ? std::move(cancel) : std::make_shared<CancelState>()),
        done_(std::move(done)) {}

  /// The deadline passed (the timer's default): stop at the next step.
  void on_deadline() {
    mark_timed_out();
    self().interrupt();
  }

  const std::shared_ptr<Core> core;
  const std::optional<Clock::time_point> deadline;
  const std::shared_ptr<CancelState> cancel;

  // (Public: the machines' callbacks reach these through a `shared_ptr<Derived>`.)
  /// Hooks the cancellation and arms the deadline timer: each interrupts the operation while it runs.
  void arm() {
    cancel->on_request([s = this->shared_from_this()] { s->interrupt(); });
    if (!deadline) return;
    deadline_timer_ = std::make_unique<boost::asio::steady_timer>(core->io_executor(), *deadline);
    deadline_timer_->async_wait([s = this->shared_from_this()](error_code ec) {
      if (!ec && !s->ended()) s->on_deadline();
    });
  }

  // The stop's cause, an input read at each step. Cancellation stops at any step; the deadline only stops a
  // *wait*: requests in flight finish, and an answer that shows the lock free still grants it (Curator: an
  // acquire with a zero timeout succeeds on a free lock).
  bool cancelled() const { return cancel->requested(); }
  bool timed_out() const { return life_ == Life::timed_out; }
  bool stopping() const { return timed_out() || cancelled(); }
  /// A queue node's create failed with `ec` while its listing is still out: whether the operation stops
  /// without waiting for that listing. A missing directory (the server's container reaper took it) is made
  /// again even past the deadline, which stops only waits; the listing's reply then closes the round.
  bool stops_on_create_error(const error_code& ec) const {
    return cancelled() || (timed_out() && ec != zk_errc::no_node);
  }
  void mark_timed_out() {
    if (life_ == Life::running) life_ = Life::timed_out;
  }
  /// Where the operation would wait: whether its time is up (then it counts as timed out).
  bool out_of_time() {
    if (!timed_out() && deadline && Clock::now() >= *deadline) mark_timed_out();
    return timed_out();
  }
  bool ended() const { return life_ == Life::ended; }

  /// Ends the operation (no step runs after this) and gives the error it completes with: `ec`, or
  /// `operation_aborted` when a cancellation stopped it with no error of its own (a timeout: none).
  error_code end(error_code ec = {}) {
    if (!ec && cancelled() && life_ != Life::timed_out) ec = boost::asio::error::operation_aborted;
    life_ = Life::ended;
    return ec;
  }
  /// "Give my nodes back, then complete": ends the operation, gives back `nodes` and `leases`
  /// (`give_back`), then completes with the stop's error and an empty result.
  void stop_giving_back(error_code ec, std::vector<std::string> nodes, std::vector<Lease> leases = {}) {
    ec = end(ec);
    give_back(*core, std::move(nodes), std::move(leases),
              [s = this->shared_from_this(), ec] { s->complete(ec, Result()); });
  }
  /// Completes (once): the timer and the cancellation hook are disarmed first.
  void complete(error_code ec, Result r) {
    life_ = Life::ended;
    if (deadline_timer_) deadline_timer_->cancel();
    cancel->on_request({});
    auto d = std::move(done_);
    if (d) d(ec, std::move(r));
  }

  /// Sleeps `d` (the retry policy's pause), then runs `then(self)` unless the operation ended meanwhile.
  template <class Then>
  void pause(Millis d, Then then) {
    pause_timer_ = std::make_unique<boost::asio::steady_timer>(core->io_executor(), d);
    pause_timer_->async_wait([s = this->shared_from_this(), then = std::move(then)](error_code) mutable {
      if (!s->ended()) then(*s);
    });
  }
  /// Ends a pause early (its `then` runs only if the operation has not ended).
  void cancel_pause() {
    if (pause_timer_) pause_timer_->cancel();
  }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }

  enum class Life : std::uint8_t { running, timed_out, ended };
  Life life_ = Life::running;
  Done done_;
  std::unique_ptr<boost::asio::steady_timer> deadline_timer_;
  std::unique_ptr<boost::asio::steady_timer> pause_timer_;
};

}  // namespace zkr::detail
