#include <spdlog/logger.h>

#include <boost/asio/post.hpp>
#include <zkr/framework/detail/async.hpp>
#include <zkr/recipes/detail/lock_internals.hpp>
#include <zkr/recipes/leader_selector.hpp>

#include "retry_pause.hpp"

namespace asio = boost::asio;

namespace zkr {

LeaderSelectorListenerAdapter::LeaderSelectorListenerAdapter(
    std::shared_ptr<const ConnectionStateErrorPolicy> policy)
    : policy_(policy ? std::move(policy) : std::make_shared<StandardConnectionStateErrorPolicy>()) {}

void LeaderSelectorListenerAdapter::state_changed(CuratorFramework&, ConnectionState new_state) {
  if (policy_->is_error_state(new_state)) throw CancelLeadershipException();
}

LeaderSelector::LeaderSelector(CuratorFramework& client, std::string leader_path,
                               std::shared_ptr<LeaderSelectorListener> listener)
    : client_(client),
      mutex_(client, std::move(leader_path)),
      listener_(std::move(listener)),
      target_(std::make_shared<Target>()) {
  if (!listener_) throw Error(client_errc::invalid_argument, "LeaderSelector (null listener)", mutex_.path());
  target_->self = this;
}

LeaderSelector::~LeaderSelector() {
  error_code ec;
  if (state() == State::started) close(ec);
  if (worker_.joinable()) {
    if (worker_.get_id() == std::this_thread::get_id())
      worker_.detach();  // destroyed from take_leadership: the thread ends after it, touching nothing
    else
      worker_.join();
  }
}

void LeaderSelector::set_id(std::string id) {
  std::lock_guard lk(mu_);
  id_ = std::move(id);
}
std::string LeaderSelector::id() const {
  std::lock_guard lk(mu_);
  return id_;
}
void LeaderSelector::auto_requeue() {
  std::lock_guard lk(mu_);
  auto_requeue_ = true;
}
LeaderSelector::State LeaderSelector::state() const {
  std::lock_guard lk(mu_);
  return state_;
}
bool LeaderSelector::has_leadership() const {
  std::lock_guard lk(mu_);
  return leader_;
}

void LeaderSelector::start(error_code& ec) {
  ec = {};
  {
    std::lock_guard lk(mu_);
    if (state_ != State::latent) {
      ec = state_ == State::closed ? make_error_code(client_errc::closed)
                                   : make_error_code(client_errc::invalid_argument);
      return;
    }
    state_ = State::started;
  }
  state_listener_ = client_.add_connection_state_listener([t = target_](ConnectionState s) {
    std::lock_guard lk(t->m);
    auto* self = t->self;
    if (!self) return;
    try {
      self->listener_->state_changed(self->client_, s);
    } catch (const CancelLeadershipException&) {
      self->cancel_election();
    } catch (const std::exception& e) {
      self->core()->logger()->error("LeaderSelector {}: state_changed threw: {}", self->path(), e.what());
    } catch (...) {
      self->core()->logger()->error("LeaderSelector {}: state_changed threw", self->path());
    }
  });
  worker_ = std::thread([this] { run(); });
  internal_requeue();
}
void LeaderSelector::start() {
  error_code ec;
  start(ec);
  throw_if(ec, "LeaderSelector::start", path());
}

bool LeaderSelector::internal_requeue() {
  {
    std::lock_guard lk(mu_);
    if (state_ != State::started || queued_) return false;
    queued_ = true;
  }
  cv_.notify_all();
  return true;
}

bool LeaderSelector::requeue(error_code& ec) {
  ec = {};
  {
    std::lock_guard lk(mu_);
    if (state_ != State::started) {
      ec = state_ == State::latent ? make_error_code(client_errc::not_started)
                                   : make_error_code(client_errc::closed);
      return false;
    }
  }
  return internal_requeue();
}
bool LeaderSelector::requeue() {
  error_code ec;
  bool r = requeue(ec);
  throw_if(ec, "LeaderSelector::requeue", path());
  return r;
}

void LeaderSelector::interrupt_leadership() {
  std::lock_guard lk(mu_);
  if (term_) term_->request_stop();
}

/// Curator 5.5's cancelElection: ends the term, or the acquire, whichever is under way; a term that has not
/// begun yet (granted, take_leadership not entered) never begins (testRaceAtStateChanged).
void LeaderSelector::cancel_election() {
  std::shared_ptr<detail::CancelState> acquiring;
  {
    std::lock_guard lk(mu_);
    election_cancelled_ = true;
    if (term_) term_->request_stop();
    acquiring = acquiring_;
  }
  if (acquiring) asio::post(core()->io_executor(), [acquiring] { acquiring->request(); });
}

void LeaderSelector::run() {
  for (;;) {
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return state_ != State::started || queued_; });
      if (state_ != State::started) return;
    }
    do_work();
  }
}

Lease LeaderSelector::acquire_cancellable(const std::shared_ptr<detail::CancelState>& cancel,
                                          error_code& ec) {
  detail::AcquireOptions o;
  {
    std::lock_guard lk(mu_);
    if (!id_.empty()) o.node_data = id_;  // else the client's default data, as Curator
  }
  auto engine = detail::access::engine(mutex_);
  // The I/O thread ending without running the acquire (the client closed) completes it with `closed`.
  return detail::run_blocking<Lease>(
      *engine->core(),
      [engine, o = std::move(o), cancel](detail::unique_function<void(error_code, Lease)> done) mutable {
        engine->attempt_lock(std::move(o), cancel, std::move(done));
      },
      ec);
}

void LeaderSelector::do_work() {
  auto cancel = std::make_shared<detail::CancelState>();
  {
    std::lock_guard lk(mu_);
    if (state_ != State::started) return;
    election_cancelled_ = false;
    acquiring_ = cancel;
  }
  error_code ec;
  Lease lease = acquire_cancellable(cancel, ec);
  std::stop_source stop;
  bool enter = false;
  {
    std::lock_guard lk(mu_);
    acquiring_.reset();
    if (lease && !ec) {
      enter = state_ == State::started && !election_cancelled_;
      leader_ = enter;
      if (enter) term_ = &stop;
    }
  }
  if (enter) {
    Leadership leadership(stop.get_token(), lease);
    try {
      listener_->take_leadership(client_, leadership);
    } catch (const std::exception& e) {  // returning by an exception gives leadership up, as returning does
      core()->logger()->info("LeaderSelector {}: take_leadership threw: {}", path(), e.what());
    } catch (...) {
      core()->logger()->info("LeaderSelector {}: take_leadership threw", path());
    }
  } else if (ec && ec != asio::error::operation_aborted) {
    core()->logger()->warn("LeaderSelector {}: acquire failed: {}", path(), ec.message());
  }
  bool requeue_now = false;
  {
    std::lock_guard lk(mu_);
    leader_ = false;
    term_ = nullptr;
    queued_ = false;  // from here on `requeue()` succeeds (CURATOR-671)
    requeue_now = auto_requeue_ && state_ == State::started;
  }
  if (lease) {
    error_code rec;
    lease.release(rec);  // deletes our node: the next in line leads
    if (rec && rec != client_errc::not_acquired)
      core()->logger()->warn("LeaderSelector {}: releasing {} failed ({}); deleting in the background",
                             path(), lease.node_path(), rec.message());
  }
  if (!requeue_now || ec == client_errc::closed) return;
  if (ec && ec != asio::error::operation_aborted) {
    // An acquire that failed (retry policy exhausted while disconnected): pause before the next one.
    std::unique_lock lk(mu_);
    cv_.wait_for(lk, detail::failure_retry_pause, [&] { return state_ != State::started; });
  }
  internal_requeue();
}

void LeaderSelector::close(error_code& ec) {
  ec = {};
  {
    std::lock_guard lk(mu_);
    if (state_ != State::started) {
      ec = state_ == State::latent ? make_error_code(client_errc::not_started)
                                   : make_error_code(client_errc::closed);
      return;
    }
    state_ = State::closed;
  }
  client_.remove_connection_state_listener(state_listener_);
  {
    std::lock_guard lk(target_->m);  // waits for a state_changed call in progress
    target_->self = nullptr;
  }
  cancel_election();
  cv_.notify_all();
  // Not from take_leadership (our own thread), nor from the client's I/O thread, which the thread's release
  // needs: the destructor joins then.
  if (worker_.joinable() && worker_.get_id() != std::this_thread::get_id() && !core()->running_in_io_thread())
    worker_.join();
}
void LeaderSelector::close() {
  error_code ec;
  close(ec);
  throw_if(ec, "LeaderSelector::close", path());
}

std::vector<Participant> LeaderSelector::get_participants(error_code& ec) const {
  return detail::read_participants_blocking(detail::access::engine(mutex_), ec);
}
std::vector<Participant> LeaderSelector::get_participants() const {
  error_code ec;
  auto r = get_participants(ec);
  throw_if(ec, "LeaderSelector::get_participants", path());
  return r;
}
Participant LeaderSelector::get_leader(error_code& ec) const {
  return detail::leader_of(get_participants(ec));
}
Participant LeaderSelector::get_leader() const { return detail::leader_of(get_participants()); }

}  // namespace zkr
