// CacheCore: state, listeners and initialized-waiters of every cache (see detail/cache_core.hpp).

#include <spdlog/logger.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <vector>
#include <zkr/framework/detail/async.hpp>
#include <zkr/recipes/detail/cache_core.hpp>

namespace zkr::detail {

namespace {
/// The caches whose listener this thread is running now (innermost last): close() does not wait for those.
thread_local std::vector<const CacheCore*> running_here;
}  // namespace

CacheCore::CacheCore(std::shared_ptr<Core> core, TreeSyncOptions options)
    : core_(std::move(core)), sync_(std::make_shared<TreeSync>(core_, std::move(options), SyncSink{})) {}

CacheCore::~CacheCore() {
  // The engine's callbacks hold it weakly: closing it removes its watches and its state listener.
  boost::asio::post(core_->io_executor(), [s = sync_] { s->close(); });
}

CacheCore::State CacheCore::state() const {
  std::lock_guard lk(mu_);
  return state_;
}

error_code CacheCore::start(bool quiet_initial_load) {
  {
    std::lock_guard lk(mu_);
    if (state_ == State::closed) return client_errc::closed;
    if (state_ == State::started) return client_errc::invalid_argument;
    state_ = State::started;
    quiet_ = quiet_initial_load;
  }
  sync_->set_sink([weak = weak_from_this()](SyncEvent ev) {
    if (auto self = weak.lock()) self->on_event(std::move(ev));
  });
  boost::asio::post(core_->io_executor(), [s = sync_, weak = weak_from_this()] {
    auto self = weak.lock();
    if (self && self->state() == State::started) s->start();
  });
  return {};
}

void CacheCore::close() {
  std::map<std::uint64_t, VoidCallback> woken;
  bool engine_running = false;
  {
    std::lock_guard lk(mu_);
    if (state_ != State::closed) {
      engine_running = state_ == State::started;
      state_ = State::closed;
      for (auto& [id, l] : listeners_) *l.active = false;
      listeners_.clear();
      woken = std::exchange(waiters_, {});
    }
  }
  cv_.notify_all();
  if (engine_running)
    boost::asio::post(core_->io_executor(), [s = sync_, woken = std::move(woken)]() mutable {
      s->close();
      for (auto& [id, w] : woken) w(client_errc::closed);
    });
  wait_for_listeners();
}

void CacheCore::wait_for_listeners() {
  // Not on the client's I/O thread: a listener on another executor may be waiting for it (a blocking call).
  // The default executor's listeners run there, so none of those is running now but the ones up this stack.
  if (core_->running_in_io_thread()) return;
  const auto mine = static_cast<std::size_t>(std::count(running_here.begin(), running_here.end(), this));
  std::unique_lock lk(mu_);
  // A call blocked in close() is not waited for by another close(): two listeners closing at once go on.
  closing_inside_ += mine;
  cv_.notify_all();
  cv_.wait(lk, [&] { return running_ <= closing_inside_; });
  closing_inside_ -= mine;
}

bool CacheCore::enter_listener(const std::atomic<bool>& active) {
  {
    std::lock_guard lk(mu_);
    if (state_ == State::closed || !active) return false;
    ++running_;
  }
  running_here.push_back(this);
  return true;
}

void CacheCore::leave_listener() {
  running_here.pop_back();
  {
    std::lock_guard lk(mu_);
    --running_;
  }
  cv_.notify_all();
}

bool CacheCore::hidden() const {
  std::lock_guard lk(mu_);
  return state_ == State::closed && !sync_->options().keep_on_close;
}

std::uint64_t CacheCore::add_listener(Listener l, boost::asio::any_io_executor ex) {
  std::lock_guard lk(mu_);
  auto id = ++next_id_;
  if (state_ == State::closed) return id;
  listeners_.emplace(id, Entry{std::move(l), boost::asio::make_strand(std::move(ex)),
                               std::make_shared<std::atomic<bool>>(true)});
  return id;
}

void CacheCore::remove_listener(std::uint64_t id) {
  std::lock_guard lk(mu_);
  auto it = listeners_.find(id);
  if (it == listeners_.end()) return;
  *it->second.active = false;
  listeners_.erase(it);
}

void CacheCore::on_event(SyncEvent ev) {
  std::map<std::uint64_t, VoidCallback> woken;
  std::vector<Entry> targets;
  {
    std::lock_guard lk(mu_);
    if (state_ != State::started) return;
    const bool init = ev.kind == SyncEvent::Kind::initialized;
    if (init) {
      initialized_ = true;
      woken = std::exchange(waiters_, {});
    }
    const bool node_event = !init && ev.kind != SyncEvent::Kind::connection;
    if (!(node_event && quiet_ && !initialized_))
      for (auto& [id, l] : listeners_) targets.push_back(l);
  }
  if (!woken.empty() || ev.kind == SyncEvent::Kind::initialized) cv_.notify_all();
  if (!targets.empty()) {
    auto shared = std::make_shared<const SyncEvent>(std::move(ev));
    for (auto& t : targets)
      boost::asio::post(
          t.strand, [fn = t.fn, active = t.active, shared, log = core_->logger(), weak = weak_from_this()] {
            auto self = weak.lock();
            if (!self || !self->enter_listener(*active)) return;
            try {
              fn(*shared);
            } catch (const std::exception& e) {
              log->error("cache listener threw: {}", e.what());
            } catch (...) {
              log->error("cache listener threw");
            }
            self->leave_listener();
          });
  }
  for (auto& [id, w] : woken) w({});
}

bool CacheCore::await_initialized(std::optional<std::chrono::milliseconds> timeout, error_code& ec) {
  ec = {};
  if (core_->running_in_io_thread()) {
    ec = client_errc::would_deadlock;
    return false;
  }
  std::unique_lock lk(mu_);
  auto ready = [&] { return state_ != State::started || initialized_; };
  if (timeout)
    cv_.wait_for(lk, std::max(*timeout, std::chrono::milliseconds(0)), ready);
  else
    cv_.wait(lk, ready);
  if (state_ == State::latent) ec = client_errc::not_started;
  if (state_ == State::closed) ec = client_errc::closed;
  return state_ == State::started && initialized_;
}

std::uint64_t CacheCore::await_start(VoidCallback cb) {
  std::unique_lock lk(mu_);
  if (state_ != State::started || initialized_) {
    const error_code ec = state_ == State::started  ? error_code{}
                          : state_ == State::latent ? make_error_code(client_errc::not_started)
                                                    : make_error_code(client_errc::closed);
    lk.unlock();
    cb(ec);
    return 0;
  }
  auto id = ++next_id_;
  waiters_.emplace(id, std::move(cb));
  return id;
}

void CacheCore::forget(std::uint64_t id) {
  std::lock_guard lk(mu_);
  waiters_.erase(id);
}

error_code CacheCore::not_running() const {
  switch (state()) {
    case State::latent:
      return client_errc::not_started;
    case State::closed:
      return client_errc::closed;
    case State::started:
      break;
  }
  return {};
}

void CacheCore::reread(const std::string& node, bool clear_first, VoidCallback done) {
  if (auto ec = not_running()) return done(ec);
  if (clear_first) sync_->clear();
  if (node.empty())
    sync_->rebuild(std::move(done));
  else
    sync_->rebuild_node(node, std::move(done));
}

void CacheCore::clear() {
  if (not_running()) return;
  if (core_->running_in_io_thread()) return sync_->clear();
  error_code ignored;  // would_deadlock only, and this is not the I/O thread
  run_blocking_void(
      *core_,
      [s = sync_](VoidCallback done) {
        s->clear();
        done({});
      },
      ignored);
}

bool CacheCore::clear_data_bytes(const std::string& path, std::int32_t if_version) {
  return !not_running() && sync_->clear_data_bytes(path, if_version);
}

std::optional<ChildData> CacheCore::get(const std::string& path) const {
  if (hidden()) return std::nullopt;
  return sync_->get(path);
}
std::size_t CacheCore::size() const { return hidden() ? 0 : sync_->size(); }
std::vector<ChildData> CacheCore::snapshot() const {
  if (hidden()) return {};
  return sync_->snapshot();
}
std::optional<std::vector<ChildData>> CacheCore::children_of(const std::string& path) const {
  if (hidden()) return std::nullopt;
  return sync_->children_of(path);
}

}  // namespace zkr::detail
