#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <mutex>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/lease_core.hpp>
#include <zkr/recipes/inter_process_semaphore_v2.hpp>

namespace asio = boost::asio;

namespace zkr {
namespace detail {

struct SemaphoreShared {
  std::shared_ptr<Core> core;
  std::string path;
  std::string leases_path;
  int max_leases = 1;
  std::shared_ptr<detail::LockInternals> mutex;  // <path>/locks
  std::mutex mu;
  std::optional<std::string> node_data;
};

std::shared_ptr<Core> semaphore_core(const std::shared_ptr<SemaphoreShared>& s) { return s->core; }

namespace {

void release_quietly(Lease& lease) {
  if (auto& st = detail::access::state(lease); st && !st->released) st->release([](error_code) {});
  lease = Lease();
}

/// Acquiring `qty` leases, one at a time (Curator's internalAcquire1Lease), on the I/O thread.
struct SemAcquire : std::enable_shared_from_this<SemAcquire> {
  using Clock = std::chrono::steady_clock;
  std::shared_ptr<SemaphoreShared> s;
  int qty = 1;
  std::optional<Clock::time_point> deadline;
  std::shared_ptr<CancelState> cancel;
  std::shared_ptr<CancelState> mutex_cancel = std::make_shared<CancelState>();
  unique_function<void(error_code, std::vector<Lease>)> done;
  std::vector<Lease> got;
  Lease mutex_lease;
  std::string lease_path;
  std::int64_t czxid = 0, session = 0;
  WatchId watch = 0;
  bool in_flight = false, woken = false, finished = false, timed_out = false, in_mutex = false;
  bool create_pending = false, pipelined_pending = false;  // the lease's create and the listing behind it
  error_code create_ec, pipelined_ec;
  std::vector<std::string> pipelined_children;
  StopPtr create_stop;  // stops the lease create's retry loop (as the engine's create; see interrupt)
  int retries = 0;
  int pending_deletes = 0;  // stop(): deletes not yet answered
  error_code stop_ec;
  Clock::time_point start = Clock::now();
  std::unique_ptr<asio::steady_timer> deadline_timer, retry_timer;

  bool stopping() const { return timed_out || cancel->requested(); }

  void begin() {
    cancel->on_request([self = shared_from_this()] { self->interrupt(); });
    if (deadline) {
      deadline_timer = std::make_unique<asio::steady_timer>(s->core->io_executor(), *deadline);
      deadline_timer->async_wait([self = shared_from_this()](error_code ec) {
        if (ec || self->finished) return;
        self->timed_out = true;
        self->interrupt();
      });
    }
    next();
  }

  void interrupt() {
    if (finished) return;
    if (in_mutex) {
      // The engine has the same deadline; only a cancellation needs passing on.
      if (cancel->requested()) mutex_cancel->request();
      return;
    }
    if (in_flight) {
      // A lease create still waiting for the connection is never sent (LockInternals::Attempt::interrupt).
      if (create_pending && create_stop) create_stop->request();
      return;
    }
    if (retry_timer) retry_timer->cancel();
    stop({});
  }

  void next() {
    // A session expiry while we waited for a later lease deleted the nodes of the leases already taken; the
    // slots they held may be someone else's now. Drop those (and any lease already lost) and take others, so
    // that a successful acquire holds `qty` leases of the current session.
    const auto sid = s->core->session_id();
    std::size_t stale = 0;
    for (auto it = got.begin(); it != got.end();) {
      if (detail::access::state(*it)->still_grants(sid)) {
        ++it;
        continue;
      }
      release_quietly(*it);  // not inside a predicate: erase_if's must not change the element
      it = got.erase(it);
      ++stale;
    }
    if (stale)
      s->core->logger()->debug("semaphore: {} lease(s) of an earlier session or lost; taking others", stale);
    if ((int)got.size() == qty) return finish({});
    if (stopping()) return stop({});
    retries = 0;
    start = Clock::now();
    take_mutex();
  }

  void take_mutex() {
    detail::AcquireOptions o;
    o.deadline = deadline;
    in_mutex = true;
    mutex_cancel = std::make_shared<CancelState>();
    s->mutex->attempt_lock(std::move(o), mutex_cancel, [self = shared_from_this()](error_code ec, Lease l) {
      self->in_mutex = false;
      if (self->finished) return release_quietly(l);
      if (ec == asio::error::operation_aborted || (!ec && !l)) {
        if (!ec) self->timed_out = true;
        return self->stop({});
      }
      if (ec) return self->stop(ec);
      self->mutex_lease = std::move(l);
      self->create_lease();
    });
  }

  void create_lease() {
    if (cancel->requested()) return stop({});
    CreateOptions co;
    co.mode = CreateMode::ephemeral_sequential;
    co.parents_as_containers = true;
    co.protection = true;
    {
      std::lock_guard lk(s->mu);
      co.data = s->node_data;
    }
    in_flight = true;
    create_pending = true;
    create_ec = {};
    create_stop = std::make_shared<StopSignal>();
    s->core->create(make_path(s->leases_path, InterProcessSemaphoreV2::lease_base_name), std::move(co),
                    [self = shared_from_this()](error_code ec, CreateResult r) {
                      self->create_pending = false;
                      self->create_ec = ec;
                      if (!ec) {
                        self->lease_path = std::move(r.path);
                        self->czxid = r.stat.czxid;
                        self->session = r.stat.ephemeral_owner;
                      }
                      // Stopping with no lease node: the pipelined listing is not needed.
                      if (!self->pipelined_pending || (ec && self->stopping())) self->after_create();
                    },
                    {.stop = create_stop});
    // The deadline passed while the internal mutex was being taken (a timeout stops only waits, so a free
    // semaphore is still granted past it): the create has gone out if the connection was up, but it must not
    // wait for the connection or be retried, which `interrupt` would have ruled had it come now.
    if (timed_out) create_stop->request();
    // The listing goes out right behind the create, before its reply: the session's requests are applied in
    // order, so it already shows our lease (one round trip for both). Not trusted when it does not.
    list_leases(true);
  }

  void after_create() {
    in_flight = false;
    if (finished) return;
    if (create_ec) return stop(stopping() ? error_code{} : create_ec);  // a timeout or cancel, not its error
    on_children(pipelined_ec, std::move(pipelined_children), true);
  }

  void check() {
    if (cancel->requested()) return stop({});
    list_leases(false);
  }

  void list_leases(bool pipelined) {
    in_flight = true;
    woken = false;
    if (pipelined) pipelined_pending = true;
    auto self = shared_from_this();
    watch = s->core->get_children(
        s->leases_path,
        [self](const WatchedEvent&) {
          self->watch = 0;
          if (self->finished) return;
          if (self->in_flight) {
            self->woken = true;
            return;
          }
          self->check();
        },
        [self, pipelined](error_code ec, Children c) {
          if (pipelined) {
            self->pipelined_pending = false;
            self->pipelined_ec = ec;
            self->pipelined_children = std::move(c.names);
            if (!self->create_pending) self->after_create();
            return;
          }
          self->on_children(ec, std::move(c.names), false);
        });
  }

  /// `pipelined`: the listing was sent before the create's reply; it counts only if it shows our lease.
  void on_children(error_code ec, std::vector<std::string> names, bool pipelined) {
    in_flight = false;
    if (finished) return;
    if (cancel->requested()) return stop({});
    if (ec && ec != zk_errc::no_node) return stop(ec);
    auto ours = node_name(lease_path);
    if (ec || std::find(names.begin(), names.end(), ours) == names.end()) {
      if (!pipelined) return missing_node();
      if (watch) s->core->remove_watch(watch), watch = 0;
      return check();  // the create was retried after the listing was sent: list again
    }
    if ((int)names.size() <= s->max_leases) return got_one();
    if (timed_out || (deadline && Clock::now() >= *deadline)) {
      timed_out = true;
      return stop({});
    }
    if (std::exchange(woken, false)) return check();
    // wait for the children watch
  }

  void got_one() {
    if (watch) s->core->remove_watch(watch), watch = 0;
    if (s->core->session_id() != session) {
      // CURATOR-604 (as LockInternals::grant): a node of an earlier session, not yet deleted by the server,
      // is never ours. Delete it, give the mutex back and make a new one.
      s->core->remove(std::exchange(lease_path, std::string()), -1, true, true, [](error_code) {});
      release_quietly(mutex_lease);
      if (stopping()) return stop({});
      return take_mutex();
    }
    got.push_back(make_lease(s->core, std::move(lease_path), czxid, session));
    lease_path.clear();
    release_quietly(mutex_lease);  // the mutex is held only while waiting for a slot
    next();
  }

  /// RETRY_DUE_TO_MISSING_NODE (CURATOR-315/335): return the lease and the mutex, then try again.
  void missing_node() {
    if (watch) s->core->remove_watch(watch), watch = 0;
    auto elapsed = std::chrono::duration_cast<Millis>(Clock::now() - start);
    auto sleep = s->core->retry_policy().allow_retry(retries++, elapsed);
    if (!sleep) return stop(errc::node_not_found_after_retries);  // deletes the lease and the mutex first
    if (!lease_path.empty()) s->core->remove(lease_path, -1, true, true, [](error_code) {});
    lease_path.clear();
    release_quietly(mutex_lease);
    retry_timer = std::make_unique<asio::steady_timer>(s->core->io_executor(), *sleep);
    retry_timer->async_wait([self = shared_from_this()](error_code) {
      if (self->finished) return;
      if (self->stopping()) return self->stop({});
      self->take_mutex();
    });
  }

  /// Timeout, cancellation or error: give everything back (nodes first), then complete.
  void stop(error_code ec) {
    if (finished) return;
    finished = true;
    if (watch) s->core->remove_watch(watch), watch = 0;
    if (!ec && cancel->requested() && !timed_out) ec = asio::error::operation_aborted;
    stop_ec = ec;
    // Every delete is waited for: the leases already taken, the internal mutex and the lease being made are
    // all gone (or left to the guaranteed delete after a failure) before the operation completes.
    auto self = shared_from_this();
    pending_deletes = 1;
    auto give_back = [&](Lease& l) {
      if (auto st = detail::access::state(l); st && !st->released) {
        ++pending_deletes;
        st->release([self](error_code) { self->deleted(); });  // runs its callback exactly once
      }
      l = Lease();
    };
    for (auto& l : got) give_back(l);
    got.clear();
    give_back(mutex_lease);
    if (!lease_path.empty() && s->core->is_open()) {
      ++pending_deletes;
      s->core->remove(lease_path, -1, true, true, [self](error_code) { self->deleted(); });
    }
    lease_path.clear();
    deleted();
  }

  void deleted() {
    if (--pending_deletes > 0) return;
    if (deadline_timer) deadline_timer->cancel();
    cancel->on_request({});
    auto d = std::move(done);
    if (d) d(stop_ec, {});
  }

  void finish(error_code ec) {
    finished = true;
    if (deadline_timer) deadline_timer->cancel();
    cancel->on_request({});
    auto d = std::move(done);
    if (d) d(ec, std::move(got));
  }
};

}  // namespace

void semaphore_acquire(std::shared_ptr<SemaphoreShared> s, int qty,
                       std::optional<std::chrono::steady_clock::time_point> deadline,
                       std::shared_ptr<CancelState> cancel,
                       unique_function<void(error_code, std::vector<Lease>)> done) {
  if (qty < 1) {
    return boost::asio::post(s->core->io_executor(),
                             [done = std::move(done)]() mutable { done(errc::invalid_argument, {}); });
  }
  auto a = std::make_shared<SemAcquire>();
  a->s = std::move(s);
  a->qty = qty;
  a->deadline = deadline;
  a->cancel = cancel ? std::move(cancel) : std::make_shared<CancelState>();
  a->done = std::move(done);
  a->begin();
}

}  // namespace detail

namespace detail {

std::shared_ptr<SemaphoreShared> make_semaphore_shared(std::shared_ptr<Core> core, std::string path,
                                                       int max_leases) {
  if (auto why = path_error(path)) throw Error(errc::invalid_path, "semaphore " + *why, path);
  if (max_leases < 1) throw Error(errc::invalid_argument, "semaphore max_leases must be >= 1", path);
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
