// PersistentNode::Impl, keeping the node on the server (I/O thread): one round creates the node (or the
// same name again), adopts an existing one by writing our bytes to it, then reads it back with an exists
// watch; the watch, the connection states and a pause after a failure start the next round.

#include <spdlog/logger.h>

#include <boost/asio/post.hpp>
#include <zkr/framework/paths.hpp>

#include "../retry_pause.hpp"
#include "persistent_node_impl.hpp"

namespace asio = boost::asio;

namespace zkr {

namespace {

/// The mode of a re-creation: the same name, so without "sequential" (Curator's CURATOR-483 fix).
CreateMode without_sequence(CreateMode m) noexcept {
  switch (m) {
    case CreateMode::ephemeral_sequential:
      return CreateMode::ephemeral;
    case CreateMode::persistent_sequential:
      return CreateMode::persistent;
    case CreateMode::persistent_sequential_with_ttl:
      return CreateMode::persistent_with_ttl;
    default:
      return m;
  }
}

}  // namespace

bool is_transient_node_failure(const error_code& ec) noexcept {
  return is_retryable(ec) || is_connection_loss(ec) || ec == client_errc::connection_timeout ||
         ec == zk_errc::not_readonly || ec == zk_errc::closing;
}

PersistentNode::Impl::Impl(std::shared_ptr<detail::Core> c, CreateMode m, bool protection, std::string path,
                           std::string d, std::chrono::milliseconds ttl_, bool parents, Hooks h)
    : core(std::move(c)),
      mode(m),
      use_protection(protection),
      base_path(std::move(path)),
      ttl(ttl_),
      use_parent_creation(parents),
      hooks(std::move(h)),
      data(std::move(d)),
      listeners(core->logger(), "PersistentNode") {}

void PersistentNode::Impl::begin() {
  if (!is_started() || step != Step::idle) return;
  state_listener = core->add_state_listener([g = guard()](ConnectionState s) {
    if (auto self = g.get()) self->on_state(s);
  });
  round();
}

void PersistentNode::Impl::drop_watch() {
  watches.advance();  // an event of the dropped watch no longer counts
  if (watch_id != 0) core->remove_watch(watch_id);
  watch_id = 0;
}

void PersistentNode::Impl::round() {
  if (!is_started()) return;
  drop_watch();
  if (retry_timer) retry_timer->cancel();
  step = Step::creating;
  std::string path;
  CreateOptions o;
  std::uint64_t gen = 0;
  {
    std::lock_guard lk(mu);
    path = actual_path.empty() ? base_path : actual_path;
    o.mode = actual_path.empty() ? mode : without_sequence(mode);
    o.protection = use_protection && actual_path.empty();  // a known name carries its protection already
    o.data = data;
    gen = data_gen;
  }
  o.parents_as_containers = use_parent_creation;
  o.ttl = ttl;
  create_stop = std::make_shared<detail::StopSignal>();
  detail::RequestOptions ro;
  ro.stop = create_stop;
  core->create(
      path, std::move(o),
      [self = shared_from_this(), path, gen](error_code ec, CreateResult r) {
        self->on_create_reply(path, gen, ec, std::move(r));
      },
      std::move(ro));
}

void PersistentNode::Impl::on_create_reply(const std::string& tried, std::uint64_t gen, error_code ec,
                                           CreateResult r) {
  create_stop.reset();
  if (step == Step::closing) return close_after_create(tried, ec, r);
  if (step != Step::creating) return;
  if (!ec) return on_present(r.path, gen, /*created=*/true);
  const bool exact = tried != base_path || (!use_protection && !is_sequential(mode));
  if (ec == zk_errc::node_exists && exact) return adopt(tried);
  if (ec == zk_errc::no_node && !use_parent_creation) return wait_for_parent();
  on_failure(ec);
}

/// Curator's NODEEXISTS branch (CURATOR-154): the node is there already (ours after a reconnect, or made by
/// someone else): it becomes ours, with our bytes.
void PersistentNode::Impl::adopt(const std::string& path) {
  step = Step::adopting;
  adopting_path = path;
  std::string d;
  std::uint64_t gen = 0;
  {
    std::lock_guard lk(mu);
    d = data;
    gen = data_gen;
  }
  core->set_data(path, std::move(d), -1, [self = shared_from_this(), path, gen](error_code ec, Stat s) {
    if (self->step != Step::adopting) return;          // closed meanwhile: the close deletes `path`
    if (ec == zk_errc::no_node) return self->round();  // gone meanwhile: make it
    if (ec) return self->on_failure(ec);
    if (is_ephemeral(self->mode) != (s.ephemeral_owner != 0))
      self->core->logger()->warn(
          "PersistentNode {}: adopted an existing node whose kind differs from the mode", path);
    self->on_present(path, gen, /*created=*/false);
  });
}

void PersistentNode::Impl::on_present(const std::string& path, std::uint64_t gen, bool created) {
  bool first = false;
  {
    std::lock_guard lk(mu);
    actual_path = path;
    first = !initial_created;
    initial_created = true;
  }
  written_gen = std::max(written_gen, gen);
  failed_write_gen = 0;
  last_error = {};
  if (first) {
    cv.notify_all();
    wake_initial_waiters({});
  }
  complete_data_waiters(written_gen, {});
  if (created) notify_created(path);
  if (hooks.on_present) hooks.on_present();
  check();
}

void PersistentNode::Impl::check() {
  drop_watch();
  step = Step::checking;
  std::string path;
  {
    std::lock_guard lk(mu);
    path = actual_path;
  }
  auto g = detail::CallbackGuard<Impl>::weak(shared_from_this(), &Impl::watches);
  watch_id = core->exists(
      path,
      [g](const WatchedEvent& ev) {
        if (auto self = g.get()) self->on_watch(ev);
      },
      [self = shared_from_this()](error_code ec, Stat) {
        if (self->step != Step::checking) return;
        if (ec == zk_errc::no_node) return self->round();
        if (ec) return self->on_failure(ec);
        if (self->watch_id == 0) return self->check();  // the watch fired before this reply: read again
        self->step = Step::live;
        self->pump_writes();
      });
}

void PersistentNode::Impl::on_watch(const WatchedEvent& ev) {
  watch_id = 0;                    // one-shot: fired (or lost with its session)
  if (step != Step::live) return;  // `checking`: its reply sees the watch gone and reads again
  if (ev.type == EventType::node_deleted) return round();
  check();  // changed, or the session that held the watch is gone: watch again
}

void PersistentNode::Impl::on_state(ConnectionState s) {
  if (s != ConnectionState::connected && s != ConnectionState::reconnected) return;
  switch (step) {
    case Step::live:
      return check();  // read back: a new session has neither the watch nor (ephemeral) the node
    case Step::waiting:
      return round();
    case Step::waiting_parent:
      return wait_for_parent();
    default:
      return;
  }
}

void PersistentNode::Impl::on_failure(error_code ec) {
  if (!is_started()) return;
  if (is_transient_node_failure(ec) || ec == zk_errc::no_node) {
    step = Step::waiting;
    last_error = ec;
    complete_all_data_waiters(ec);
    core->logger()->warn("PersistentNode {}: {}; will try again", base_path, ec.message());
    if (!core->is_connected()) return;  // the next connected state starts the round
    if (!retry_timer) retry_timer.emplace(core->io_executor());
    retry_timer->expires_after(detail::failure_retry_pause);
    retry_timer->async_wait([g = guard()](error_code e) {
      auto self = g.get();
      if (!e && self && self->step == Step::waiting) self->round();
    });
    return;
  }
  step = Step::failed;
  {
    std::lock_guard lk(mu);
    failure = ec;
  }
  cv.notify_all();
  core->logger()->error("PersistentNode {}: stopped: {}", base_path, ec.message());
  wake_initial_waiters(ec);
  complete_all_data_waiters(ec);
}

/// Parent creation is off and the parent is missing: wait for someone to make it (never made here, the point
/// of CURATOR-590's switch), then create.
void PersistentNode::Impl::wait_for_parent() {
  drop_watch();
  step = Step::waiting_parent;
  last_error = zk_errc::no_node;
  complete_all_data_waiters(last_error);
  auto g = detail::CallbackGuard<Impl>::weak(shared_from_this(), &Impl::watches);
  watch_id = core->exists(
      parent_path(base_path),
      [g](const WatchedEvent& ev) {
        auto self = g.get();
        if (!self) return;
        self->watch_id = 0;
        if (self->step == Step::waiting_parent && ev.type == EventType::node_created) self->round();
      },
      [self = shared_from_this()](error_code ec, Stat) {
        if (self->step != Step::waiting_parent) return;
        if (!ec) return self->round();
        if (ec != zk_errc::no_node) self->on_failure(ec);
      });
}

void PersistentNode::Impl::pump_writes() {
  if (step != Step::live || write_in_flight) return;
  std::string d, path;
  std::uint64_t gen = 0;
  {
    std::lock_guard lk(mu);
    gen = data_gen;
    if (written_gen < gen) d = data;
    path = actual_path;
  }
  if (written_gen >= gen) return complete_data_waiters(written_gen, {});
  if (failed_write_gen == gen) return;
  write_in_flight = true;
  core->set_data(path, std::move(d), -1, [self = shared_from_this(), gen](error_code ec, Stat) {
    self->write_in_flight = false;
    if (self->step == Step::closing || self->step == Step::closed) return;
    if (!ec) {
      self->written_gen = std::max(self->written_gen, gen);
      self->complete_data_waiters(self->written_gen, {});
      return self->pump_writes();
    }
    if (ec == zk_errc::no_node) {  // gone: the re-creation writes the bytes
      if (self->step == Step::live) self->round();
      return;
    }
    self->complete_data_waiters(gen, ec);
    if (is_transient_node_failure(ec)) {  // written once the node is read back on a connection
      if (self->step == Step::live) self->check();
      return;
    }
    self->failed_write_gen = gen;  // not again until newer bytes or a re-creation
  });
}

void PersistentNode::Impl::complete_data_waiters(std::uint64_t up_to_gen, error_code ec) {
  std::vector<detail::VoidCallback> done;
  std::erase_if(data_waiters, [&](DataWaiter& w) {
    if (w.gen > up_to_gen) return false;
    done.push_back(std::move(w.cb));
    return true;
  });
  for (auto& cb : done) cb(ec);
}

void PersistentNode::Impl::complete_all_data_waiters(error_code ec) {
  auto all = std::exchange(data_waiters, {});
  for (auto& w : all) w.cb(ec);
}

void PersistentNode::Impl::wake_initial_waiters(error_code ec) {
  auto woken = std::exchange(initial_waiters, {});
  for (auto& [id, w] : woken) w(ec);
}

void PersistentNode::Impl::notify_created(const std::string& path) {
  listeners.post_each([path](const PersistentNodeListener& fn) { fn(path); });
}

}  // namespace zkr
