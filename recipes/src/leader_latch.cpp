#include <spdlog/logger.h>

#include <atomic>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <zkr/recipes/detail/callback_guard.hpp>
#include <zkr/recipes/detail/lease_core.hpp>
#include <zkr/recipes/detail/lock_internals.hpp>
#include <zkr/recipes/leader_latch.hpp>

#include "listener_list.hpp"
#include "retry_pause.hpp"
#include "start_once.hpp"

namespace asio = boost::asio;

namespace zkr {

/// The latch's state. Members marked "I/O" are touched on the client's I/O thread only; the rest under `mu`.
/// Held by `shared_ptr` so that callbacks in flight outlive the `LeaderLatch` object.
struct LeaderLatch::Impl : std::enable_shared_from_this<LeaderLatch::Impl> {
  /// Drops the listeners; `silence` also drops their calls already posted.
  void drop_listeners(bool silence) { listeners.close(silence); }

  std::shared_ptr<detail::Core> core;
  std::shared_ptr<detail::LockInternals> engine;
  const std::string id;
  const CloseMode close_mode;

  // I/O
  std::shared_ptr<detail::CancelState> attempt;  // the acquire in flight, if any
  Lease lease;                                   // our granted node, if any
  std::uint64_t state_listener = 0;
  bool need_attempt = false;  // an acquire failed; start one again once connected
  detail::Epoch claims;       // a claim's read counts only while it is the latest
  std::optional<asio::steady_timer> retry_timer;

  // under mu
  mutable std::mutex mu;
  std::condition_variable cv;
  State state = State::latent;
  bool leader = false;
  std::string our_path;
  std::string last_path_is_leader;
  std::int64_t token = 0;
  std::shared_ptr<detail::LeaseCore> granted;             // `lease`'s state, for `lease_status()`
  std::map<std::uint64_t, detail::VoidCallback> waiters;  // completed on the I/O thread
  std::uint64_t next_waiter = 0;

  detail::ListenerList<LeaderLatchListener> listeners;  // locked itself

  Impl(std::shared_ptr<detail::Core> c, std::string path, std::string id_, CloseMode mode)
      : core(std::move(c)),
        engine(std::make_shared<detail::LockInternals>(core, std::move(path), std::string(lock_name), 1,
                                                       nullptr)),
        id(std::move(id_)),
        close_mode(mode),
        listeners(core->logger(), "LeaderLatch") {}

  /// The hold of the latch's callbacks: they do not keep it alive.
  detail::CallbackGuard<Impl> guard() { return detail::CallbackGuard<Impl>::weak(shared_from_this()); }

  bool started() const {
    std::lock_guard lk(mu);
    return state == State::started;
  }

  /// Changes the flag; runs the listeners of the change (posted) and, on a gain, completes the waiters (I/O
  /// thread for a gain). A gain is refused once the latch is not started.
  void set_leadership(bool v) {
    std::map<std::uint64_t, detail::VoidCallback> woken;
    {
      std::lock_guard lk(mu);
      if (leader == v || (v && state != State::started)) return;
      leader = v;
      if (!v) token = 0;
      listeners.post_each([v](const LeaderLatchListener& l) {
        if (auto& f = v ? l.is_leader : l.not_leader) f();
      });
      if (v) woken = std::exchange(waiters, {});
    }
    cv.notify_all();
    for (auto& [i, w] : woken) w({});
  }

  // ---- I/O thread ----------------------------------------------------------------------------------------

  void begin() {
    if (!started()) return;
    state_listener = core->add_state_listener([g = guard()](ConnectionState s) {
      if (auto self = g.get()) self->on_state(s);
    });
    acquire();
  }

  /// Queues a node (the engine: protected create, listing, watch on the predecessor) unless one is queued or
  /// held already.
  void acquire() {
    if (!started() || attempt || lease) return;
    need_attempt = false;
    auto cancel = std::make_shared<detail::CancelState>();
    attempt = cancel;
    detail::AcquireOptions o;
    o.node_data = id;  // never the client's default data: Curator's latch writes the id, "" as 0 bytes
    o.on_queued = [g = guard()](const std::string& path) {
      if (auto self = g.get()) {
        std::lock_guard lk(self->mu);
        if (self->state == State::started) self->our_path = path;
      }
    };
    engine->attempt_lock(std::move(o), cancel, [g = guard(), cancel](error_code ec, Lease l) mutable {
      auto self = g.get();
      if (!self) return;  // `l`, if any, is released by its destructor
      self->on_attempt_done(cancel, ec, std::move(l));
    });
  }

  void on_attempt_done(const std::shared_ptr<detail::CancelState>& cancel, error_code ec, Lease l) {
    if (attempt == cancel) attempt.reset();
    if (cancel->requested() || !started()) return;  // closed: the engine deleted its node; `l` goes too
    if (ec || !l) return retry_later(ec);
    lease = std::move(l);
    {
      std::lock_guard lk(mu);
      our_path = lease.node_path();
      granted = detail::access::state(lease);
    }
    // The loss signal, and a watch on our node (deletion by someone else). Handled back on the I/O thread
    // from the lease's current status (not the value passed), so that statuses are never seen out of order.
    lease.on_status_change([g = guard(), lc = std::weak_ptr(detail::access::state(lease))](LeaseStatus) {
      auto self = g.get();
      if (!self) return;
      asio::post(self->core->io_executor(), [self, lc] { self->on_lease_status(lc.lock()); });
    });
    if (lease.status() == LeaseStatus::held) claim();
  }

  /// An acquire failed (retry policy exhausted while disconnected, say): try again once connected.
  void retry_later(error_code ec) {
    if (ec == client_errc::closed) return;  // the client is closed: nothing will ever connect again
    core->logger()->warn("LeaderLatch {}: queueing failed ({}); will try again", engine->base_path(),
                         ec.message());
    need_attempt = true;
    if (!core->is_connected()) return;  // on_state starts it
    if (!retry_timer) retry_timer.emplace(core->io_executor());
    retry_timer->expires_after(detail::failure_retry_pause);
    retry_timer->async_wait([g = guard()](error_code e) {
      auto self = g.get();
      if (!e && self && self->need_attempt) self->acquire();
    });
  }

  void on_state(ConnectionState s) {
    if ((s == ConnectionState::connected || s == ConnectionState::reconnected) && need_attempt) acquire();
  }

  void on_lease_status(const std::shared_ptr<detail::LeaseCore>& lc) {
    if (!lc || !lease || detail::access::state(lease) != lc || !started()) return;
    switch (lease.status()) {
      case LeaseStatus::held:
        return claim();  // RECONNECTED to the same session
      case LeaseStatus::maybe_lost:
        return set_leadership(false);  // SUSPENDED: the node may be gone
      case LeaseStatus::lost:
        return requeue_new_node();  // expiry, or our node was deleted
      case LeaseStatus::released:
        return;
    }
  }

  /// Our node is gone or not ours: not leader, and a new node at the tail (Curator's reset).
  void requeue_new_node() {
    set_leadership(false);
    lease = Lease();  // a guaranteed delete of whatever is left
    {
      std::lock_guard lk(mu);
      our_path.clear();
      granted.reset();
    }
    acquire();
  }

  /// Our node was first: claim leadership once it is read back as a node of the current session (Curator
  /// 5.7's owner check, CURATOR-696). A failed read leaves the flag as it is; the loss signal brings us back.
  void claim() {
    auto lc = detail::access::state(lease);
    auto g = detail::CallbackGuard<Impl>::strong(shared_from_this(), &Impl::claims);  // the latest claim's
    core->get_data(lease.node_path(), nullptr, [g, lc](error_code ec, NodeData d) {
      auto self = g.get();
      if (!self || !self->lease || detail::access::state(self->lease) != lc || !self->started()) return;
      if (self->lease.status() != LeaseStatus::held) return;
      if (ec == zk_errc::no_node || (!ec && d.stat.ephemeral_owner != self->core->session_id()))
        return self->requeue_new_node();
      if (ec) return;
      {
        std::lock_guard lk(self->mu);
        self->last_path_is_leader = self->lease.node_path();
        self->token = self->lease.fencing_token();
      }
      self->set_leadership(true);
      if (self->lease.status() != LeaseStatus::held) self->set_leadership(false);  // changed meanwhile
    });
  }

  /// After close: cancel the acquire (the engine deletes its node, even one whose create is in flight),
  /// release the node, stop listening.
  void shutdown() {
    if (attempt) attempt->request();
    attempt.reset();
    lease = Lease();
    {
      std::lock_guard lk(mu);
      granted.reset();
    }
    if (state_listener) core->remove_state_listener(state_listener);
    state_listener = 0;
    need_attempt = false;
    if (retry_timer) retry_timer->cancel();
    auto woken = [&] {
      std::lock_guard lk(mu);
      return std::exchange(waiters, {});
    }();
    for (auto& [i, w] : woken) w(client_errc::closed);
  }
};

LeaderLatch::LeaderLatch(CuratorFramework& client, std::string latch_path, std::string id,
                         CloseMode close_mode)
    : LeaderLatch(detail::access::core(client), std::move(latch_path), std::move(id), close_mode) {}

LeaderLatch::LeaderLatch(std::shared_ptr<detail::Core> core, std::string latch_path, std::string id,
                         CloseMode close_mode)
    : impl_(std::make_shared<Impl>(std::move(core), std::move(latch_path), std::move(id), close_mode)) {}

LeaderLatch::~LeaderLatch() {
  if (state() == State::started) {
    error_code ec;
    close(CloseMode::silent, ec);
  }
}

void LeaderLatch::start(error_code& ec) {
  ec = detail::start_once(impl_->mu, impl_->state);
  if (!ec) asio::post(impl_->core->io_executor(), [i = impl_] { i->begin(); });
}
void LeaderLatch::start() {
  error_code ec;
  start(ec);
  throw_if(ec, "LeaderLatch::start", path());
}

void LeaderLatch::close(CloseMode mode, error_code& ec) {
  ec = {};
  {
    std::lock_guard lk(impl_->mu);
    if (impl_->state != State::started) {
      ec = impl_->state == State::latent ? make_error_code(client_errc::not_started)
                                         : make_error_code(client_errc::closed);
      return;
    }
    impl_->state = State::closed;
    impl_->our_path.clear();
    if (mode == CloseMode::silent) impl_->drop_listeners(true);
  }
  impl_->set_leadership(false);
  {
    std::lock_guard lk(impl_->mu);
    impl_->drop_listeners(false);  // NOTIFY_LEADER: the not_leader just posted still runs
  }
  impl_->cv.notify_all();
  asio::post(impl_->core->io_executor(), [i = impl_] { i->shutdown(); });
}
void LeaderLatch::close(CloseMode mode) {
  error_code ec;
  close(mode, ec);
  throw_if(ec, "LeaderLatch::close", path());
}
void LeaderLatch::close(error_code& ec) { close(impl_->close_mode, ec); }
void LeaderLatch::close() { close(impl_->close_mode); }

void LeaderLatch::await(error_code& ec) {
  ec = {};
  if (impl_->core->running_in_io_thread()) {
    ec = client_errc::would_deadlock;
    return;
  }
  std::unique_lock lk(impl_->mu);
  impl_->cv.wait(lk, [&] { return impl_->state != State::started || impl_->leader; });
  if (impl_->state == State::latent) ec = client_errc::not_started;
  if (impl_->state == State::closed) ec = client_errc::closed;
}
void LeaderLatch::await() {
  error_code ec;
  await(ec);
  throw_if(ec, "LeaderLatch::await", path());
}
bool LeaderLatch::await(std::chrono::milliseconds timeout) {
  if (impl_->core->running_in_io_thread()) return has_leadership();
  std::unique_lock lk(impl_->mu);
  impl_->cv.wait_for(lk, std::max(timeout, std::chrono::milliseconds(0)),
                     [&] { return impl_->state != State::started || impl_->leader; });
  return impl_->state == State::started && impl_->leader;
}

std::uint64_t LeaderLatch::await_start(const std::shared_ptr<Impl>& impl, detail::VoidCallback cb) {
  std::unique_lock lk(impl->mu);
  if (impl->state != State::started || impl->leader) {
    auto ec = impl->state == State::started  ? error_code{}
              : impl->state == State::latent ? make_error_code(client_errc::not_started)
                                             : make_error_code(client_errc::closed);
    lk.unlock();
    cb(ec);
    return 0;
  }
  auto id = ++impl->next_waiter;
  impl->waiters.emplace(id, std::move(cb));
  return id;
}
void LeaderLatch::forget_waiter(const std::shared_ptr<Impl>& impl, std::uint64_t id) {
  std::lock_guard lk(impl->mu);
  impl->waiters.erase(id);
}

bool LeaderLatch::has_leadership() const {
  std::lock_guard lk(impl_->mu);
  return impl_->state == State::started && impl_->leader;
}

std::uint64_t LeaderLatch::add_listener(LeaderLatchListener listener) {
  return add_listener(std::move(listener), impl_->core->completion_executor());
}
std::uint64_t LeaderLatch::add_listener(LeaderLatchListener listener, boost::asio::any_io_executor executor) {
  return impl_->listeners.add(std::move(listener), std::move(executor));
}
void LeaderLatch::remove_listener(std::uint64_t id) { impl_->listeners.remove(id); }

std::vector<Participant> LeaderLatch::get_participants(error_code& ec) const {
  return detail::read_participants_blocking(impl_->engine, ec);
}
std::vector<Participant> LeaderLatch::get_participants() const {
  error_code ec;
  auto r = get_participants(ec);
  throw_if(ec, "LeaderLatch::get_participants", path());
  return r;
}
Participant LeaderLatch::get_leader(error_code& ec) const { return detail::leader_of(get_participants(ec)); }
Participant LeaderLatch::get_leader() const { return detail::leader_of(get_participants()); }

const std::string& LeaderLatch::id() const noexcept { return impl_->id; }
LeaderLatch::State LeaderLatch::state() const {
  std::lock_guard lk(impl_->mu);
  return impl_->state;
}
const std::string& LeaderLatch::path() const noexcept { return impl_->engine->base_path(); }
std::string LeaderLatch::our_path() const {
  std::lock_guard lk(impl_->mu);
  return impl_->our_path;
}
std::string LeaderLatch::last_path_is_leader() const {
  std::lock_guard lk(impl_->mu);
  return impl_->last_path_is_leader;
}
std::int64_t LeaderLatch::fencing_token() const {
  std::lock_guard lk(impl_->mu);
  return impl_->leader ? impl_->token : 0;
}
LeaseStatus LeaderLatch::lease_status() const {
  std::lock_guard lk(impl_->mu);
  return impl_->granted ? impl_->granted->status.load() : LeaseStatus::released;
}

std::shared_ptr<detail::Core> LeaderLatch::core() const { return impl_->core; }
std::shared_ptr<detail::LockInternals> LeaderLatch::engine() const { return impl_->engine; }

}  // namespace zkr
