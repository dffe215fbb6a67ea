#include <algorithm>
#include <boost/asio/post.hpp>
#include <mutex>
#include <vector>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/callback_guard.hpp>
#include <zkr/recipes/detail/lease_core.hpp>
#include <zkr/recipes/lease.hpp>

namespace zkr {

std::string_view to_string(LeaseStatus s) noexcept {
  switch (s) {
    case LeaseStatus::held:
      return "held";
    case LeaseStatus::maybe_lost:
      return "maybe_lost";
    case LeaseStatus::lost:
      return "lost";
    case LeaseStatus::released:
      return "released";
  }
  return "unknown";
}

namespace detail {

LeaseCore::LeaseCore(std::shared_ptr<Core> c, std::string p, std::int64_t token, std::int64_t sid, bool pers)
    : core(std::move(c)), path(std::move(p)), czxid(token), session(sid), persistent(pers) {}

void LeaseCore::start_monitoring() {
  const auto guard = CallbackGuard<LeaseCore>::weak(shared_from_this());
  state_listener = core->add_state_listener([guard](ConnectionState s) {
    auto self = guard.get();
    if (!self) return;
    if (self->persistent) {
      // The node is not the session's: a session's end is no loss, and any new session may confirm the node.
      if (s == ConnectionState::suspended || s == ConnectionState::lost)
        self->set_status(LeaseStatus::maybe_lost);
      else
        self->confirm_node(s == ConnectionState::read_only);
      return;
    }
    switch (s) {
      case ConnectionState::suspended:
        self->set_status(LeaseStatus::maybe_lost);
        break;
      case ConnectionState::lost:
        self->set_status(LeaseStatus::lost);
        break;
      case ConnectionState::connected:
      case ConnectionState::reconnected:
      case ConnectionState::read_only:
        if (self->core->session_id() != self->session)
          self->set_status(LeaseStatus::lost);  // CURATOR-604: a new session never owns the old node
        else if (s == ConnectionState::read_only)
          // A read-only server is cut off from its quorum: the quorum hears nothing of our session and may
          // expire it, deleting the node and granting the lock to someone else.
          self->set_status(LeaseStatus::maybe_lost);
        else
          self->set_status(LeaseStatus::held);
        if (self->watch_wanted && s != ConnectionState::read_only)
          self->watch_node();  // if its exists failed
        break;
    }
  });
}

void LeaseCore::set_status(LeaseStatus s) {
  LeaseStatus old = status.load();
  if (old == s || old == LeaseStatus::released || old == LeaseStatus::lost) return;
  status = s;
  if (s == LeaseStatus::lost || s == LeaseStatus::released) stop_monitoring();
  std::vector<std::function<void(LeaseStatus)>> ls;
  {
    std::lock_guard lk(mu);
    ls = listeners;
  }
  auto ex = core->completion_executor();
  for (auto& l : ls) boost::asio::post(ex, [l, s] { l(s); });
  if (s == LeaseStatus::lost || s == LeaseStatus::released) {
    auto waiters = std::move(lost_waiters);
    lost_waiters.clear();
    for (auto& [id, w] : waiters) w({}, s);
  }
}

void LeaseCore::stop_monitoring() {
  if (state_listener) core->remove_state_listener(state_listener);
  state_listener = 0;
  if (node_watch) core->remove_watch(node_watch);
  node_watch = 0;
  watch_wanted = false;
}

void LeaseCore::confirm_node(bool read_only) {
  if (status == LeaseStatus::lost || status == LeaseStatus::released) return;
  const auto guard = CallbackGuard<LeaseCore>::weak(shared_from_this());
  core->exists(path, {},
               [guard, read_only](error_code ec, Stat) {
                 auto self = guard.get();
                 if (!self || self->released) return;
                 if (ec == zk_errc::no_node) return self->set_status(LeaseStatus::lost);
                 if (ec || !self->core->is_connected()) return;  // unknown: the next connection looks again
                 self->set_status(read_only ? LeaseStatus::maybe_lost : LeaseStatus::held);
               },
               {});
  // The session that set the watch may be gone with its watches (their events said session_lost, or are still
  // on their way): set a new one, whose generation makes the old one's late event count for nothing.
  if (!watch_wanted || read_only) return;
  if (node_watch) core->remove_watch(node_watch), node_watch = 0;
  watch_node();
}

void LeaseCore::watch_node() {
  if (node_watch || status == LeaseStatus::lost || status == LeaseStatus::released) return;
  watch_wanted = true;
  const auto guard = CallbackGuard<LeaseCore>::weak(shared_from_this());
  // Not an earlier watch's (an ended session's) late event: only the latest watch's counts.
  const auto latest = CallbackGuard<LeaseCore>::weak(shared_from_this(), &LeaseCore::node_watches);
  const auto id = core->exists(
      path,
      [latest](const WatchedEvent& ev) {
        auto self = latest.get();
        if (!self) return;
        self->node_watch = 0;
        // Our own release deletes the node: that is no loss. (A release from the caller's thread marks the
        // lease released before its delete leaves; its I/O-thread bookkeeping may run after this event.)
        if (self->released) return;
        // A persistent node outlives the session whose end removed the watch: the next connection sets it
        // again.
        if (ev.type == EventType::session_lost && self->persistent) return;
        if (ev.type == EventType::node_deleted || ev.type == EventType::session_lost)
          self->set_status(LeaseStatus::lost);
        else
          self->watch_node();  // data changed (e.g. a revocation request): keep watching
      },
      [guard](error_code ec, Stat) {
        auto self = guard.get();
        if (!self) return;
        if (ec == zk_errc::no_node) return self->set_status(LeaseStatus::lost);
        if (!ec) return;
        // No watch was set (the connection went, or the request gave up): forget it, so that the next
        // CONNECTED / RECONNECTED of this session sets it again instead of leaving the loss unheard.
        if (!self->node_watch) {
          self->watch_failed_inline = true;  // before `exists` returned its id
          return;
        }
        self->core->remove_watch(self->node_watch);
        self->node_watch = 0;
      },
      {});
  if (watch_failed_inline) {
    watch_failed_inline = false;
    core->remove_watch(id);
    return;
  }
  if (status == LeaseStatus::lost || status == LeaseStatus::released) return core->remove_watch(id);
  node_watch = id;
}

void LeaseCore::release(VoidCallback cb) {
  if (released) return cb(client_errc::not_acquired);
  released = true;
  set_status(LeaseStatus::released);
  stop_monitoring();
  // The session and its ephemeral node are gone with the client; a persistent node is left behind.
  if (!core->is_open()) return cb(persistent ? error_code(client_errc::closed) : error_code{});
  core->remove(path, -1, /*guaranteed=*/true, /*quietly=*/true, std::move(cb));
}

bool LeaseCore::release_from_caller(VoidCallback& cb) {
  return detail::release_from_caller({shared_from_this()}, cb);
}

bool release_from_caller(const std::vector<std::shared_ptr<LeaseCore>>& leases, VoidCallback& cb) {
  if (leases.empty()) return false;
  auto& core = leases.front()->core;
  if (core->running_in_io_thread() || !core->is_open()) return false;
  // Claim the leases not yet released; one released elsewhere is left to that release.
  std::vector<std::shared_ptr<LeaseCore>> mine;
  std::vector<std::string> paths;
  for (const auto& l : leases) {
    bool expected = false;
    if (!l->released.compare_exchange_strong(expected, true)) continue;
    mine.push_back(l);
    paths.push_back(l->path);
  }
  if (mine.empty()) return false;  // `release` reports it
  if (!core->remove_from_caller(std::move(paths), cb)) {
    for (auto& l : mine) l->released = false;
    return false;
  }
  // The deletes are on their way; the rest of `release` belongs to the I/O thread.
  boost::asio::post(core->io_executor(), [mine = std::move(mine)] {
    for (auto& l : mine) {
      l->set_status(LeaseStatus::released);
      l->stop_monitoring();
    }
  });
  return true;
}

}  // namespace detail

Lease::Lease() noexcept = default;
Lease::Lease(std::shared_ptr<detail::LeaseCore> core) noexcept : core_(std::move(core)) {}
Lease::Lease(Lease&&) noexcept = default;
Lease& Lease::operator=(Lease&& o) noexcept {
  if (this != &o) {
    if (core_) {
      auto c = std::move(core_);
      auto io = c->core->io_executor();
      boost::asio::post(io, [c] { c->release([](error_code) {}); });
    }
    core_ = std::move(o.core_);
  }
  return *this;
}
Lease::~Lease() {
  if (!core_) return;
  try {
    auto c = std::move(core_);
    // As a blocking release, the delete leaves from this thread when it can (not waiting for it).
    detail::VoidCallback ignore([](error_code) {});
    // A lease already released (a MultiLease releases its leases together) has nothing to post.
    if (c->released || c->release_from_caller(ignore)) return;
    auto io = c->core->io_executor();
    boost::asio::post(io, [c] {
      if (!c->released) c->release([](error_code) {});
    });
  } catch (...) {
    // never throw from a destructor; the session's end removes an ephemeral node anyway
  }
}

bool Lease::valid() const noexcept { return core_ && !core_->released; }
const std::string& Lease::node_path() const noexcept {
  static const std::string empty;
  return core_ ? core_->path : empty;
}
std::string Lease::node_name() const { return core_ ? zkr::node_name(core_->path) : std::string(); }
std::int64_t Lease::fencing_token() const noexcept { return core_ ? core_->czxid : 0; }
std::int64_t Lease::session_id() const noexcept { return core_ ? core_->session : 0; }
LeaseStatus Lease::status() const noexcept {
  if (!core_) return LeaseStatus::released;
  const auto s = core_->status.load();
  // A closed client ended the session, and an ephemeral node with it; nothing else tells a lease that nobody
  // watches. A persistent node may still be there: nobody can tell through this client.
  if ((s == LeaseStatus::held || s == LeaseStatus::maybe_lost) && !core_->core->is_open())
    return core_->persistent ? LeaseStatus::maybe_lost : LeaseStatus::lost;
  return s;
}

void Lease::on_status_change(std::function<void(LeaseStatus)> listener) {
  if (!core_) return;
  {
    std::lock_guard lk(core_->mu);
    core_->listeners.push_back(std::move(listener));
  }
  auto c = core_;
  boost::asio::post(c->core->io_executor(), [c] { c->watch_node(); });
}

std::shared_ptr<detail::Core> Lease::core_of() const {
  if (!core_) throw Error(client_errc::not_acquired, "lease", "");
  return core_->core;
}

std::shared_ptr<detail::Core> Lease::async_core() const noexcept { return core_ ? core_->core : nullptr; }

detail::OpInfo Lease::info(std::string_view operation, detail::Cancellation cancellation) const {
  if (!core_) return {operation, std::string(), cancellation, client_errc::not_acquired};
  return {operation, core_->path, cancellation};
}

void Lease::release_start(const std::shared_ptr<detail::LeaseCore>& c, detail::VoidCallback cb) {
  if (!c) return cb(client_errc::not_acquired);
  c->release(std::move(cb));
}

bool Lease::release_here(const std::shared_ptr<detail::LeaseCore>& c, detail::VoidCallback& cb) {
  return c && c->release_from_caller(cb);
}

std::uint64_t Lease::wait_lost_start(const std::shared_ptr<detail::LeaseCore>& c,
                                     detail::unique_function<void(error_code, LeaseStatus)> cb) {
  auto s = c->status.load();
  if (s == LeaseStatus::lost || s == LeaseStatus::released) {
    cb({}, s);
    return 0;
  }
  const auto id = ++c->next_lost_waiter;
  c->lost_waiters.emplace(id, std::move(cb));
  c->watch_node();
  return id;
}

void Lease::forget_lost_waiter(const std::shared_ptr<detail::LeaseCore>& c, std::uint64_t id) {
  if (id) c->lost_waiters.erase(id);
}

void Lease::multi_while_held_start(std::vector<std::shared_ptr<detail::LeaseCore>> grants,
                                   std::vector<Op> ops,
                                   detail::unique_function<void(error_code, std::vector<OpResult>)> cb,
                                   detail::StopPtr stop) {
  if (grants.empty()) return cb(client_errc::not_acquired, {});
  for (const auto& g : grants) {
    if (!g || g->released) return cb(client_errc::not_acquired, {});
    if (g->core != grants.front()->core)
      return cb(client_errc::invalid_argument, {});  // one transaction, one client
  }
  for (const auto& g : grants)
    if (g->status == LeaseStatus::lost) return cb(client_errc::lock_lost, {});
  const std::size_t checks = grants.size();
  std::vector<Op> all;
  all.reserve(checks + ops.size());
  for (const auto& g : grants) all.push_back(Op::check(g->path, -1));  // -1: it exists, in any version
  for (auto& op : ops) all.push_back(std::move(op));
  grants.front()->core->multi(
      std::move(all),
      [checks, cb = std::move(cb)](error_code ec, std::vector<OpResult> results) mutable {
        const auto end = results.begin() + static_cast<std::ptrdiff_t>(std::min(checks, results.size()));
        // The node is gone: the grant was lost (its session expired, or someone deleted it).
        if (std::any_of(results.begin(), end, [](const OpResult& r) { return r.ec == zk_errc::no_node; }))
          ec = client_errc::lock_lost;
        results.erase(results.begin(), end);
        cb(ec, std::move(results));
      },
      {.stop = std::move(stop)});
}

void Lease::data_start(const std::shared_ptr<detail::LeaseCore>& c,
                       detail::unique_function<void(error_code, std::string)> cb, detail::StopPtr stop) {
  if (!c || c->released) return cb(client_errc::not_acquired, {});
  c->core->get_data(c->path, nullptr,
                    [cb = std::move(cb)](error_code ec, NodeData d) mutable { cb(ec, std::move(d.data)); },
                    {.stop = std::move(stop)});
}

std::string Lease::data(error_code& ec) const {
  if (!core_) {
    ec = client_errc::not_acquired;
    return {};
  }
  return detail::run_blocking<std::string>(
      *core_->core,
      [&](detail::unique_function<void(error_code, std::string)> cb) { data_start(core_, std::move(cb)); },
      ec);
}
std::string Lease::data() const {
  error_code ec;
  auto r = data(ec);
  throw_if(ec, "get_data", core_ ? core_->path : std::string());
  return r;
}

std::vector<OpResult> Lease::multi_while_held(std::vector<Op> ops, error_code& ec) const {
  if (!core_) {
    ec = client_errc::not_acquired;
    return {};
  }
  return detail::run_blocking<std::vector<OpResult>>(
      *core_->core,
      [&](detail::unique_function<void(error_code, std::vector<OpResult>)> cb) {
        multi_while_held_start({core_}, std::move(ops), std::move(cb));
      },
      ec);
}
std::vector<OpResult> Lease::multi_while_held(std::vector<Op> ops) const {
  error_code ec;
  auto r = multi_while_held(std::move(ops), ec);
  throw_if(ec, "multi_while_held", core_ ? core_->path : std::string());
  return r;
}

void Lease::release(error_code& ec) {
  if (!core_) {
    ec = client_errc::not_acquired;
    return;
  }
  if (core_->core->running_in_io_thread()) {
    // In a listener or a completion handler a release cannot wait for its delete without blocking the thread
    // that would complete it. It starts the guaranteed delete and returns, as the destructor does; refusing
    // would leave the node, and everyone else behind it, until the session ends.
    auto c = std::move(core_);
    if (c->released) {
      ec = client_errc::not_acquired;
      return;
    }
    ec = {};
    c->release([](error_code) {});
    return;
  }
  auto c = std::move(core_);
  // The delete leaves from this thread when it can, so the next waiter's grant does not wait for this
  // client's I/O thread to wake (docs/benchmark-targets.md, finding 9).
  detail::run_blocking_void_from_caller(
      *c->core, [&c](detail::VoidCallback& cb) { return release_here(c, cb); },
      [c](detail::VoidCallback cb) { c->release(std::move(cb)); }, ec);
}
void Lease::release() {
  std::string path = node_path();
  error_code ec;
  release(ec);
  throw_if(ec, "release", path);
}

}  // namespace zkr
