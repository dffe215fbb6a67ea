#include <spdlog/logger.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <functional>
#include <map>
#include <mutex>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/lease_core.hpp>
#include <zkr/recipes/inter_process_semaphore_v2.hpp>
#include <zkr/recipes/shared_count.hpp>

#include "acquire_op.hpp"

namespace asio = boost::asio;

namespace zkr {
namespace detail {

struct SemaphoreShared {
  std::shared_ptr<Core> core;
  std::string path;
  std::string leases_path;
  std::atomic<int> max_leases = 1;               // follows a SharedCount when made on one
  std::shared_ptr<detail::LockInternals> mutex;  // <path>/locks
  std::mutex mu;
  std::optional<std::string> node_data;
  /// The acquires in flight (under `mu`), woken on the I/O thread when the number of leases changes.
  std::map<std::uint64_t, std::function<void()>> wakers;
  std::uint64_t next_waker = 0;
};

std::shared_ptr<Core> semaphore_core(const std::shared_ptr<SemaphoreShared>& s) { return s->core; }

namespace {

/// Acquiring `qty` leases, one at a time (Curator's internalAcquire1Lease), on the I/O thread, on the acquire
/// scaffold (acquire_op.hpp).
struct SemAcquire : AcquireOp<SemAcquire, std::vector<Lease>> {
  /// What is in flight: nothing (waiting on the children watch, pausing, or between leases), the internal
  /// mutex's acquire, or a queue round (the lease's create + pipelined listing, or a listing alone).
  enum class Step : std::uint8_t { idle, taking_mutex, round, retry_pause };

  SemAcquire(std::shared_ptr<SemaphoreShared> sh, int n, std::optional<Clock::time_point> d,
             std::shared_ptr<CancelState> c, Done dn)
      : AcquireOp(sh->core, d, std::move(c), std::move(dn)), s(std::move(sh)), qty(n) {}
  ~SemAcquire() {
    std::lock_guard lk(s->mu);
    s->wakers.erase(waker);
  }

  std::shared_ptr<SemaphoreShared> s;
  int qty = 1;
  Step step = Step::idle;
  bool woken = false;  // the children watch fired while a request was in flight: look again after it
  std::shared_ptr<CancelState> mutex_cancel = std::make_shared<CancelState>();
  std::vector<Lease> got;
  Lease mutex_lease;
  QueuedNode lease_node;
  QueueRound round;
  error_code listing_ec;
  std::vector<std::string> listed;
  StopPtr create_stop;  // stops the lease create's retry loop (as the engine's create; see interrupt)
  RetryBudget retries;
  WatchId watch = 0;
  std::uint64_t waker = 0;  // our entry in `s->wakers`

  void begin() {
    arm();
    {
      std::lock_guard lk(s->mu);
      waker = ++s->next_waker;
      s->wakers.emplace(waker, [w = weak_from_this()] {
        if (auto a = w.lock()) a->on_max_leases_changed();
      });
    }
    next();
  }

  /// The number of leases changed (a semaphore on a SharedCount): look again if waiting for the listing.
  void on_max_leases_changed() {
    if (ended()) return;
    if (step != Step::idle) {
      woken = true;  // a listing in flight, or the mutex: look again after it
      return;
    }
    if (!watch) return;  // pausing, or between leases: the next listing reads the new number
    core->remove_watch(watch), watch = 0;
    check();
  }

  void interrupt() {
    if (ended()) return;
    if (step == Step::taking_mutex) {
      // The engine has the same deadline; only a cancellation needs passing on.
      if (cancelled()) mutex_cancel->request();
      return;
    }
    if (step == Step::round) {
      // A lease create still waiting for the connection is never sent (LockInternals::Attempt::interrupt).
      if (round.awaiting_create() && create_stop) create_stop->request();
      return;
    }
    // Past the deadline a missing node is still made again (missing_node): only a cancellation ends the
    // pause.
    if (step == Step::retry_pause && !cancelled()) return;
    cancel_pause();
    stop({});
  }

  void next() {
    // A session expiry while we waited for a later lease deleted the nodes of the leases already taken; the
    // slots they held may be someone else's now. Drop those (and any lease already lost) and take others, so
    // that a successful acquire holds `qty` leases of the current session.
    const auto sid = core->session_id();
    std::vector<Lease> stale;
    for (auto it = got.begin(); it != got.end();) {
      if (detail::access::state(*it)->still_grants(sid)) {
        ++it;
        continue;
      }
      stale.push_back(std::move(*it));  // not inside a predicate: erase_if's must not change the element
      it = got.erase(it);
    }
    if (!stale.empty()) {
      core->logger()->debug("semaphore: {} lease(s) of an earlier session or lost; taking others",
                            stale.size());
      give_back(*core, {}, std::move(stale));
    }
    if ((int)got.size() == qty) return complete({}, std::move(got));
    if (stopping()) return stop({});
    retries.restart();
    take_mutex();
  }

  void take_mutex() {
    detail::AcquireOptions o;
    o.deadline = deadline;
    step = Step::taking_mutex;
    mutex_cancel = std::make_shared<CancelState>();
    s->mutex->attempt_lock(std::move(o), mutex_cancel, [self = shared_from_this()](error_code ec, Lease l) {
      self->step = Step::idle;
      if (self->ended()) return give_back(*self->core, {}, lease_list(std::move(l)));
      if (ec == asio::error::operation_aborted || (!ec && !l)) {
        if (!ec) self->mark_timed_out();
        return self->stop({});
      }
      if (ec) return self->stop(ec);
      self->mutex_lease = std::move(l);
      self->create_lease();
    });
  }

  void create_lease() {
    if (cancelled()) return stop({});
    CreateOptions co;
    co.mode = CreateMode::ephemeral_sequential;
    co.parents_as_containers = true;
    co.protection = true;
    {
      std::lock_guard lk(s->mu);
      co.data = s->node_data;
    }
    step = Step::round;
    round.start_create();
    create_stop = std::make_shared<StopSignal>();
    core->create(make_path(s->leases_path, InterProcessSemaphoreV2::lease_base_name), std::move(co),
                 [self = shared_from_this()](error_code ec, CreateResult r) {
                   if (!ec) {
                     self->lease_node.path = std::move(r.path);
                     self->lease_node.czxid = r.stat.czxid;
                     self->lease_node.session = r.stat.ephemeral_owner;
                   }
                   // Giving up with no lease node: the pipelined listing is not needed.
                   if (self->round.create_replied(ec) || (ec && self->stops_on_create_error(ec)))
                     self->round_done();
                 },
                 {.stop = create_stop});
    // The deadline passed while the internal mutex was being taken (a timeout stops only waits, so a free
    // semaphore is still granted past it): the create has gone out if the connection was up, but it must not
    // wait for the connection or be retried, which `interrupt` would have ruled had it come now.
    if (timed_out()) create_stop->request();
    // The listing goes out right behind the create, before its reply (the queue-node step, acquire_op.hpp).
    list_leases();
  }

  void check() {
    if (cancelled()) return stop({});
    step = Step::round;
    round.start_listing();
    list_leases();
  }

  void list_leases() {
    woken = false;
    auto self = shared_from_this();
    watch = core->get_children(
        s->leases_path,
        [self](const WatchedEvent&) {
          self->watch = 0;
          if (self->ended()) return;
          if (self->step != Step::idle) {
            self->woken = true;
            return;
          }
          self->check();
        },
        [self](error_code ec, Children c) {
          self->listing_ec = ec;
          self->listed = std::move(c.names);
          if (self->round.listing_replied()) self->round_done();
        });
  }

  void round_done() {
    step = Step::idle;
    if (ended()) return;
    const bool created = round.finish();
    // The leases' directory reaped by the server between the parents' create and ours: made again, deadline
    // or not (no wait; Curator's retry on a missing node).
    if (created && round.create_error() == zk_errc::no_node && !cancelled()) return missing_node();
    if (created && round.create_error())  // a timeout or cancel, not its error
      return stop(stopping() ? error_code{} : round.create_error());
    on_children(listing_ec, std::move(listed), created);
  }

  /// `pipelined`: the listing was sent before the create's reply; it counts only if it shows our lease.
  void on_children(error_code ec, std::vector<std::string> names, bool pipelined) {
    if (cancelled()) return stop({});
    if (ec && ec != zk_errc::no_node) return stop(ec);
    auto ours = node_name(lease_node.path);
    if (ec || std::find(names.begin(), names.end(), ours) == names.end()) {
      if (!pipelined) return missing_node();
      if (watch) core->remove_watch(watch), watch = 0;
      return check();  // the create was retried after the listing was sent: list again
    }
    if ((int)names.size() <= s->max_leases.load()) return got_one();
    if (out_of_time()) return stop({});
    if (std::exchange(woken, false)) return check();
    // wait for the children watch
  }

  void got_one() {
    if (watch) core->remove_watch(watch), watch = 0;
    if (!lease_node.of_live_session(*core)) {
      // CURATOR-604 (as LockInternals::Attempt::grant): a node of an earlier session, not yet deleted by the
      // server, is never ours. Delete it, give the mutex back and make a new one.
      give_back(*core, {lease_node.take_path()}, lease_list(std::move(mutex_lease)));
      if (cancelled()) return stop({});
      return take_mutex();
    }
    got.push_back(make_lease(core, lease_node.take_path(), lease_node.czxid, lease_node.session));
    give_back(*core, {},
              lease_list(std::move(mutex_lease)));  // the mutex is held only while waiting for a slot
    next();
  }

  /// RETRY_DUE_TO_MISSING_NODE (CURATOR-315/335): return the lease and the mutex, then try again.
  void missing_node() {
    if (watch) core->remove_watch(watch), watch = 0;
    auto sleep = retries.next(*core);
    if (!sleep)
      return stop(client_errc::node_not_found_after_retries);  // deletes the lease and the mutex first
    std::vector<std::string> nodes;
    if (!lease_node.empty()) nodes.push_back(lease_node.take_path());
    give_back(*core, std::move(nodes), lease_list(std::move(mutex_lease)));
    step = Step::retry_pause;
    pause(*sleep, [](SemAcquire& a) {
      a.step = Step::idle;
      if (a.cancelled()) return a.stop({});
      a.take_mutex();
    });
  }

  /// Timeout, cancellation or error: give everything back (the lease being made, the leases already taken,
  /// the internal mutex), every delete answered, then complete.
  void stop(error_code ec) {
    if (ended()) return;
    if (watch) core->remove_watch(watch), watch = 0;
    std::vector<std::string> nodes;
    if (!lease_node.empty()) nodes.push_back(lease_node.take_path());
    auto leases = std::move(got);
    got.clear();
    leases.push_back(std::move(mutex_lease));
    stop_giving_back(ec, std::move(nodes), std::move(leases));
  }
};

}  // namespace

void semaphore_acquire(std::shared_ptr<SemaphoreShared> s, int qty,
                       std::optional<std::chrono::steady_clock::time_point> deadline,
                       std::shared_ptr<CancelState> cancel,
                       unique_function<void(error_code, std::vector<Lease>)> done) {
  if (qty < 1) {
    return boost::asio::post(s->core->io_executor(),
                             [done = std::move(done)]() mutable { done(client_errc::invalid_argument, {}); });
  }
  auto a = std::make_shared<SemAcquire>(std::move(s), qty, deadline, std::move(cancel), std::move(done));
  a->begin();
}

}  // namespace detail

namespace detail {

std::shared_ptr<SemaphoreShared> make_semaphore_shared(std::shared_ptr<Core> core, std::string path,
                                                       int max_leases) {
  if (auto why = path_error(path)) throw Error(client_errc::invalid_path, "semaphore " + *why, path);
  if (max_leases < 1) throw Error(client_errc::invalid_argument, "semaphore max_leases must be >= 1", path);
  auto s = std::make_shared<SemaphoreShared>();
  s->core = std::move(core);
  s->path = path;
  s->leases_path = make_path(path, InterProcessSemaphoreV2::lease_parent);
  s->max_leases = max_leases;
  s->mutex = std::make_shared<detail::LockInternals>(
      s->core, make_path(path, InterProcessSemaphoreV2::lock_parent), "lock-", 1, default_mutex_driver());
  return s;
}

}  // namespace detail

InterProcessSemaphoreV2::InterProcessSemaphoreV2(CuratorFramework& client, std::string path, int max_leases)
    : shared_(detail::make_semaphore_shared(detail::access::core(client), std::move(path), max_leases)) {}

InterProcessSemaphoreV2::InterProcessSemaphoreV2(CuratorFramework& client, std::string path,
                                                 SharedCountReader& count)
    : shared_(detail::make_semaphore_shared(detail::access::core(client), std::move(path), 1)) {
  shared_->max_leases = count.count();
  count.add_listener({[w = std::weak_ptr<detail::SemaphoreShared>(shared_)](std::int32_t n) {
                        auto s = w.lock();
                        if (!s) return;
                        s->max_leases = n;
                        boost::asio::post(s->core->io_executor(), [s] {
                          std::vector<std::function<void()>> wake;
                          {
                            std::lock_guard lk(s->mu);
                            for (auto& [id, f] : s->wakers) wake.push_back(f);
                          }
                          for (auto& f : wake) f();
                        });
                      },
                      {}});
}

int InterProcessSemaphoreV2::max_leases() const noexcept { return shared_->max_leases; }
const std::string& InterProcessSemaphoreV2::path() const noexcept { return shared_->path; }

void InterProcessSemaphoreV2::set_node_data(std::optional<std::string> data) {
  std::lock_guard lk(shared_->mu);
  shared_->node_data = std::move(data);
}

std::vector<Lease> InterProcessSemaphoreV2::acquire_impl(int qty,
                                                         std::optional<std::chrono::milliseconds> timeout,
                                                         error_code& ec) {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (timeout) deadline = std::chrono::steady_clock::now() + std::max(*timeout, std::chrono::milliseconds(0));
  return detail::run_blocking<std::vector<Lease>>(
      *shared_->core,
      [s = shared_, qty, deadline](detail::unique_function<void(error_code, std::vector<Lease>)> cb) mutable {
        detail::semaphore_acquire(s, qty, deadline, nullptr, std::move(cb));
      },
      ec);
}

Lease InterProcessSemaphoreV2::acquire(error_code& ec) {
  auto v = acquire_impl(1, std::nullopt, ec);
  return v.empty() ? Lease() : std::move(v.front());
}
Lease InterProcessSemaphoreV2::acquire() {
  error_code ec;
  auto l = acquire(ec);
  throw_if(ec, "acquire", path());
  return l;
}
std::vector<Lease> InterProcessSemaphoreV2::acquire(int qty, error_code& ec) {
  return acquire_impl(qty, std::nullopt, ec);
}
std::vector<Lease> InterProcessSemaphoreV2::acquire(int qty) {
  error_code ec;
  auto v = acquire(qty, ec);
  throw_if(ec, "acquire", path());
  return v;
}
Lease InterProcessSemaphoreV2::acquire(std::chrono::milliseconds timeout, error_code& ec) {
  auto v = acquire_impl(1, timeout, ec);
  return v.empty() ? Lease() : std::move(v.front());
}
Lease InterProcessSemaphoreV2::acquire(std::chrono::milliseconds timeout) {
  error_code ec;
  auto l = acquire(timeout, ec);
  throw_if(ec, "acquire", path());
  return l;
}
std::vector<Lease> InterProcessSemaphoreV2::acquire(int qty, std::chrono::milliseconds timeout,
                                                    error_code& ec) {
  return acquire_impl(qty, timeout, ec);
}
std::vector<Lease> InterProcessSemaphoreV2::acquire(int qty, std::chrono::milliseconds timeout) {
  error_code ec;
  auto v = acquire(qty, timeout, ec);
  throw_if(ec, "acquire", path());
  return v;
}

void InterProcessSemaphoreV2::return_lease(Lease lease) noexcept {
  error_code ec;
  if (lease) lease.release(ec);
  if (ec) shared_->core->logger()->warn("returning lease {} failed: {}", lease.node_path(), ec.message());
}
void InterProcessSemaphoreV2::return_all(std::vector<Lease> leases) noexcept {
  for (auto& l : leases) return_lease(std::move(l));
}

void InterProcessSemaphoreV2::participants_start(
    const std::shared_ptr<detail::SemaphoreShared>& s,
    detail::unique_function<void(error_code, std::vector<std::string>)> cb) {
  // A missing leases directory (never used, or its empty container reaped by the server) has no participants,
  // as for the mutex; Curator throws NoNodeException here.
  // Full paths in queue order, as the mutex's (Curator's semaphore gives bare names in the server's order).
  s->core->get_children(
      s->leases_path, nullptr, [dir = s->leases_path, cb = std::move(cb)](error_code ec, Children c) mutable {
        if (ec == zk_errc::no_node) return cb({}, {});
        if (ec) return cb(ec, {});
        StandardLockDriver().sort_children(c.names, InterProcessSemaphoreV2::lease_base_name);
        std::vector<std::string> paths;
        paths.reserve(c.names.size());
        for (const auto& name : c.names) paths.push_back(make_path(dir, name));
        cb({}, std::move(paths));
      });
}

std::vector<std::string> InterProcessSemaphoreV2::participant_nodes() const {
  error_code ec;
  auto r = detail::run_blocking<std::vector<std::string>>(
      *shared_->core,
      [s = shared_](detail::unique_function<void(error_code, std::vector<std::string>)> cb) {
        participants_start(s, std::move(cb));
      },
      ec);
  throw_if(ec, "participant_nodes", path());
  return r;
}

}  // namespace zkr
