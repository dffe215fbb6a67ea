#include <spdlog/logger.h>

#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/callback_guard.hpp>
#include <zkr/recipes/shared_value.hpp>

#include "listener_list.hpp"

namespace zkr {

/// The value's state. Members marked "I/O" are touched on the client's I/O thread only; the rest under `mu`.
/// Held by `shared_ptr` so that callbacks in flight outlive the `SharedValue` object.
struct SharedValue::Impl : std::enable_shared_from_this<SharedValue::Impl> {
  std::shared_ptr<detail::Core> core;
  const std::string path;
  const std::string seed;
  detail::ListenerList<SharedValueListener> listeners;

  // I/O
  std::uint64_t state_listener = 0;
  detail::Epoch watches;  // only the latest watch re-reads: an older one (set before a reconnect) is ignored

  // under mu
  mutable std::mutex mu;
  State state = State::latent;
  VersionedValue<std::string> current;
  std::int64_t mzxid = -1;  // of `current`; reads only move forward

  Impl(std::shared_ptr<detail::Core> c, std::string p, std::string s)
      : core(std::move(c)),
        path(std::move(p)),
        seed(std::move(s)),
        listeners(core->logger(), "SharedValue " + path) {
    if (auto why = path_error(path)) throw Error(client_errc::invalid_path, "SharedValue " + *why, path);
    current.value = seed;
  }

  bool started() const {
    std::lock_guard lk(mu);
    return state == State::started;
  }
  /// `client_errc::not_started` or `client_errc::closed` unless started.
  error_code check_started() const {
    std::lock_guard lk(mu);
    if (state == State::latent) return client_errc::not_started;
    if (state == State::closed) return client_errc::closed;
    return {};
  }

  VersionedValue<std::string> versioned_value_now() const {
    std::lock_guard lk(mu);
    return current;
  }

  /// Takes a read (or our own write) if it is newer than the local value; tells the listeners if it was.
  void update(const std::string& data, const Stat& stat) {
    {
      std::lock_guard lk(mu);
      if (state != State::started || stat.mzxid <= mzxid) return;
      mzxid = stat.mzxid;
      current = {stat.version, data};
    }
    listeners.post_each([data](SharedValueListener& l) {
      if (l.value_has_changed) l.value_has_changed(data);
    });
  }

  // ---- I/O thread ----------------------------------------------------------------------------------------

  /// Reads the node with a data watch; the watch reads it again. `done` (optional) gets the read's outcome.
  void read(detail::VoidCallback done) {
    auto g = detail::CallbackGuard<Impl>::weak(shared_from_this(), &Impl::watches);
    core->get_data(
        path,
        [g](const WatchedEvent& ev) {
          auto self = g.get();
          if (self && ev.type != EventType::session_lost && self->started()) self->read({});
        },
        [w = weak_from_this(), done = std::move(done)](error_code ec, NodeData d) mutable {
          auto self = w.lock();
          if (self && !ec) self->update(d.data, d.stat);
          if (ec && self && !done)
            self->core->logger()->warn("SharedValue {}: read failed: {}", self->path, ec.message());
          if (done) done(ec);
        });
  }

  void on_state(ConnectionState s) {
    if (!started()) return;
    listeners.post_each([s](SharedValueListener& l) {
      if (l.state_changed) l.state_changed(s);
    });
    if (is_connected(s)) read({});  // CURATOR-311: a change missed while disconnected
  }

  void start_failed(error_code ec, detail::VoidCallback cb) {
    {
      std::lock_guard lk(mu);
      if (state == State::started) state = State::latent;
    }
    core->remove_state_listener(std::exchange(state_listener, 0));
    cb(ec);
  }
};

SharedValue::SharedValue(CuratorFramework& client, std::string path, std::string seed)
    : SharedValue(detail::access::core(client), std::move(path), std::move(seed)) {}

SharedValue::SharedValue(std::shared_ptr<detail::Core> core, std::string path, std::string seed)
    : impl_(std::make_shared<Impl>(std::move(core), std::move(path), std::move(seed))) {}

SharedValue::~SharedValue() { close(); }

std::shared_ptr<detail::Core> SharedValue::core() const { return impl_->core; }
const std::string& SharedValue::path() const noexcept { return impl_->path; }

SharedValue::State SharedValue::state() const {
  std::lock_guard lk(impl_->mu);
  return impl_->state;
}

void SharedValue::start_op(const std::shared_ptr<Impl>& impl, detail::VoidCallback cb) {
  {
    std::lock_guard lk(impl->mu);
    if (impl->state == State::started) return cb(client_errc::invalid_argument);
    if (impl->state == State::closed) return cb(client_errc::closed);
    impl->state = State::started;
  }
  impl->state_listener = impl->core->add_state_listener([w = impl->weak_from_this()](ConnectionState s) {
    if (auto self = w.lock()) self->on_state(s);
  });
  CreateOptions o;
  o.mode = CreateMode::persistent;
  o.parents_as_containers = true;  // persistent parents when the client says so (`use_container_parents`)
  o.data = impl->seed;
  impl->core->create(impl->path, o, [impl, cb = std::move(cb)](error_code ec, CreateResult) mutable {
    if (ec && ec != zk_errc::node_exists) return impl->start_failed(ec, std::move(cb));
    impl->read([impl, cb = std::move(cb)](error_code ec) mutable {
      if (ec) return impl->start_failed(ec, std::move(cb));
      cb(impl->check_started());  // `client_errc::closed` when closed meanwhile
    });
  });
}

void SharedValue::start() {
  error_code ec;
  start(ec);
  throw_if(ec, "SharedValue::start", path());
}

void SharedValue::start(error_code& ec) {
  detail::run_blocking_void(
      *impl_->core, [i = impl_](detail::VoidCallback cb) { start_op(i, std::move(cb)); }, ec);
}

void SharedValue::close() noexcept {
  {
    std::lock_guard lk(impl_->mu);
    if (impl_->state == State::closed) return;
    impl_->state = State::closed;
  }
  impl_->listeners.close();
  boost::asio::post(impl_->core->io_executor(), [i = impl_] {
    i->watches.advance();
    i->core->remove_state_listener(std::exchange(i->state_listener, 0));
  });
}

std::string SharedValue::value() const {
  std::lock_guard lk(impl_->mu);
  return impl_->current.value;
}

VersionedValue<std::string> SharedValue::versioned_value() const { return impl_->versioned_value_now(); }

void SharedValue::set_op(const std::shared_ptr<Impl>& impl, std::string v, detail::VoidCallback cb) {
  if (auto ec = impl->check_started()) return cb(ec);
  impl->core->set_data(impl->path, v, -1, [impl, v, cb = std::move(cb)](error_code ec, Stat st) mutable {
    if (!ec) impl->update(v, st);
    cb(ec);
  });
}

void SharedValue::set_value(std::string v) {
  error_code ec;
  set_value(std::move(v), ec);
  throw_if(ec, "SharedValue::set_value", path());
}

void SharedValue::set_value(std::string v, error_code& ec) {
  detail::run_blocking_void(
      *impl_->core,
      [i = impl_, v = std::move(v)](detail::VoidCallback cb) mutable {
        set_op(i, std::move(v), std::move(cb));
      },
      ec);
}

void SharedValue::try_set_op(const std::shared_ptr<Impl>& impl, VersionedValue<std::string> previous,
                             std::string v, detail::unique_function<void(error_code, bool)> cb) {
  if (auto ec = impl->check_started()) return cb(ec, false);
  if (impl->versioned_value_now() != previous) return cb({}, false);
  // A conditional write: an answer lost with the connection is followed by a look at the node, never by a
  // blind retry that would meet our own write as someone else's (a false "not set").
  impl->core->set_data(impl->path, v, previous.version,
                       [impl, v, cb = std::move(cb)](error_code ec, Stat st) mutable {
                         if (!ec) {
                           impl->update(v, st);
                           return cb({}, true);
                         }
                         if (ec != zk_errc::bad_version && ec != client_errc::outcome_unknown)
                           return cb(ec, false);
                         // Someone wrote first (or, outcome unknown, we may have): read it, so that the
                         // caller retries with the new version.
                         const error_code result = ec == zk_errc::bad_version ? error_code{} : ec;
                         impl->read([result, cb = std::move(cb)](error_code) mutable { cb(result, false); });
                       },
                       {.conditional = true});
}

bool SharedValue::try_set_value(const VersionedValue<std::string>& previous, std::string v) {
  error_code ec;
  const bool ok = try_set_value(previous, std::move(v), ec);
  throw_if(ec, "SharedValue::try_set_value", path());
  return ok;
}

bool SharedValue::try_set_value(const VersionedValue<std::string>& previous, std::string v, error_code& ec) {
  return detail::run_blocking<bool>(
      *impl_->core,
      [i = impl_, p = previous,
       v = std::move(v)](detail::unique_function<void(error_code, bool)> cb) mutable {
        try_set_op(i, std::move(p), std::move(v), std::move(cb));
      },
      ec);
}

std::uint64_t SharedValue::add_listener(SharedValueListener listener) {
  return add_listener(std::move(listener), impl_->core->completion_executor());
}

std::uint64_t SharedValue::add_listener(SharedValueListener listener, boost::asio::any_io_executor executor) {
  return impl_->listeners.add(std::move(listener), std::move(executor));
}

void SharedValue::remove_listener(std::uint64_t id) { impl_->listeners.remove(id); }

}  // namespace zkr
