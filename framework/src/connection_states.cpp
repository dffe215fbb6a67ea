// The connection states (connection_states.hpp): the transitions, the listeners of both kinds, the waits.

#include "connection_states.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <exception>
#include <utility>
#include <vector>

namespace zkr::detail {

namespace asio = boost::asio;

ConnectionStates::ConnectionStates(Uses uses, std::chrono::milliseconds session_timeout,
                                   unique_function<void()> timed_out)
    : uses_(std::move(uses)),
      timed_out_(std::move(timed_out)),
      negotiated_timeout_ms_(static_cast<int>(session_timeout.count())),
      suspended_timer_(uses_.ioc),
      public_(std::make_shared<PublicListeners>()),
      listener_strand_(asio::make_strand(uses_.listener_executor)) {
  public_->log = uses_.log;
}

void ConnectionStates::on_connected(std::int64_t session_id, int timeout_ms, bool read_only) {
  session_id_ = session_id;
  negotiated_timeout_ms_ = timeout_ms;
  suspended_timer_.cancel();
  {
    std::lock_guard lk(mu_);
    connected_ = true;
  }
  cv_.notify_all();
  was_connected_ = true;
  if (read_only)
    emit(ConnectionState::read_only);
  else if (!ever_connected_) {
    ever_connected_ = true;
    emit(ConnectionState::connected);
  } else
    emit(ConnectionState::reconnected);
  end_waits(true);
}

void ConnectionStates::on_connecting() {
  connected_ = false;
  // As Curator, a read-only connection counts: its loss is SUSPENDED, then LOST.
  if (!was_connected_ || last_state_ == ConnectionState::suspended || last_state_ == ConnectionState::lost)
    return;
  emit(ConnectionState::suspended);
  const auto pct = std::clamp(uses_.expiration_percent, 1, 100);
  suspended_timer_.expires_after(session_timeout() * pct / 100);
  suspended_timer_.async_wait([this](error_code ec) {
    if (ec || connected_ || uses_.life.closed()) return;
    if (last_state_ == ConnectionState::suspended) timed_out_();
  });
}

void ConnectionStates::on_lost() {
  connected_ = false;
  session_id_ = 0;
  emit(ConnectionState::lost);
}

bool ConnectionStates::give_up(Lifecycle& life, error_code why) {
  {
    std::lock_guard lk(mu_);
    if (!life.give_up(why)) return false;
    connected_ = false;
  }
  cv_.notify_all();
  session_id_ = 0;
  suspended_timer_.cancel();
  return true;
}

void ConnectionStates::lost_after_earlier() {
  if (last_state_ && last_state_ != ConnectionState::lost) emit(ConnectionState::lost);
}

void ConnectionStates::closed() {
  suspended_timer_.cancel();
  session_id_ = 0;
  wake_blocking_waits();
}

void ConnectionStates::fail_waits() { end_waits(false); }

void ConnectionStates::end_waits(bool ok) {
  auto waiters = std::move(waiters_);
  waiters_.clear();
  for (auto& [id, w] : waiters) {
    if (w.timer) w.timer->cancel();
    asio::post(uses_.ioc, [k = std::move(w.k), ok]() mutable { k(ok); });
  }
}

void ConnectionStates::wake_blocking_waits() {
  { std::lock_guard lk(mu_); }
  cv_.notify_all();
}

bool ConnectionStates::wait_connected(std::chrono::milliseconds timeout) {
  std::unique_lock lk(mu_);
  return cv_.wait_for(lk, timeout, [&] { return connected_.load() || uses_.life.ended(); }) && connected_;
}

void ConnectionStates::emit(ConnectionState s) {
  if (last_state_ == s) return;
  last_state_ = s;
  if (uses_.log->should_log(spdlog::level::info)) uses_.log->info("connection state: {}", to_string(s));
  std::vector<std::uint64_t> ids;
  for (auto& [id, cb] : listeners_) ids.push_back(id);
  for (auto id : ids) {
    auto it = listeners_.find(id);
    if (it == listeners_.end()) continue;
    const auto cb = it->second;  // kept alive should the listener remove itself
    (*cb)(s);
  }
  asio::post(listener_strand_, [pub = public_, s] {
    std::vector<ConnectionStateListener> ls;
    {
      std::lock_guard lk(pub->mu);
      for (auto& [id, l] : pub->listeners) ls.push_back(l);
    }
    for (auto& l : ls) {
      try {
        l(s);
      } catch (const std::exception& e) {
        pub->log->error("connection state listener threw: {}", e.what());
      }
    }
  });
}

std::uint64_t ConnectionStates::add_listener(StateCallback cb) {
  auto id = next_listener_id_++;
  listeners_.emplace(id, std::make_shared<StateCallback>(std::move(cb)));
  return id;
}

void ConnectionStates::remove_listener(std::uint64_t id) { listeners_.erase(id); }

std::uint64_t ConnectionStates::add_public_listener(ConnectionStateListener l) {
  std::lock_guard lk(public_->mu);
  auto id = public_->next_id++;
  public_->listeners.emplace(id, std::move(l));
  return id;
}

void ConnectionStates::remove_public_listener(std::uint64_t id) {
  std::lock_guard lk(public_->mu);
  public_->listeners.erase(id);
}

std::uint64_t ConnectionStates::when_connected(std::chrono::milliseconds timeout,
                                               unique_function<void(bool)> k) {
  if (connected_ || uses_.life.ended()) {
    asio::post(uses_.ioc, [k = std::move(k), ok = !uses_.life.ended()]() mutable { k(ok); });
    return 0;
  }
  auto id = next_waiter_id_++;
  auto& w = waiters_[id];
  w.k = std::move(k);
  w.timer = std::make_unique<asio::steady_timer>(uses_.ioc, timeout);
  w.timer->async_wait([this, id](error_code ec) {
    if (ec) return;
    auto it = waiters_.find(id);
    if (it == waiters_.end()) return;
    auto k = std::move(it->second.k);
    waiters_.erase(it);
    k(false);
  });
  return id;
}

void ConnectionStates::cancel_wait(std::uint64_t id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return;
  auto k = std::move(it->second.k);
  waiters_.erase(it);  // its timer is destroyed with it, so its handler finds no waiter
  k(false);
}

}  // namespace zkr::detail
