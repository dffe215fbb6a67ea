// The connection-state machine: the session's events become Curator's connection states (CONNECTED,
// SUSPENDED, RECONNECTED, LOST, READ_ONLY), with the simulated session expiry while disconnected, the session
// replaced after a loss, the auth failure (or TLS refusal) that ends the client; the listeners of those
// states; and the waits for the connection that the retry loop and block_until_connected use.

#include <spdlog/logger.h>

#include "core_impl.hpp"

namespace zkr::detail {

void CoreImpl::on_session_state(SessionState state) {
  if (state == SessionState::connected || state == SessionState::read_only) {
    session_id_ = session_->session_id();
    negotiated_timeout_ms_ = session_->negotiated_timeout_ms();
    suspended_timer_.cancel();
    {
      std::lock_guard lk(state_mu_);
      connected_ = true;
    }
    state_cv_.notify_all();
    was_connected_ = true;
    if (state == SessionState::read_only)
      emit(ConnectionState::read_only);
    else if (!ever_connected_) {
      ever_connected_ = true;
      emit(ConnectionState::connected);
    } else
      emit(ConnectionState::reconnected);
    auto waiters = std::move(conn_waiters_);
    conn_waiters_.clear();
    for (auto& [id, w] : waiters) {
      if (w.timer) w.timer->cancel();
      post([k = std::move(w.k)]() mutable { k(true); });
    }
  } else if (state == SessionState::connecting) {
    connected_ = false;
    // As Curator, a read-only connection counts: its loss is SUSPENDED, then LOST.
    if (was_connected_ && last_state_ != ConnectionState::suspended && last_state_ != ConnectionState::lost) {
      emit(ConnectionState::suspended);
      const auto pct = std::clamp(cfg_.simulated_session_expiration_percent, 1, 100);
      suspended_timer_.expires_after(std::chrono::milliseconds(negotiated_timeout_ms_.load()) * pct / 100);
      suspended_timer_.async_wait([this](error_code ec) {
        if (ec || connected_ || life_.closed()) return;
        if (last_state_ == ConnectionState::suspended)
          handle_session_lost("the session timeout elapsed while disconnected");
      });
    }
  } else if (state == SessionState::expired) {
    handle_session_lost("session expired");
  } else if (state == SessionState::auth_failed) {
    handle_auth_failed();
  }
}

// As ZooKeeper's Java client, which closes for good on AuthFailed: pending and new requests fail with
// auth_failed and are not retried (Curator gets AuthFailedException).
void CoreImpl::handle_auth_failed() {
  if (life_.ended() || !session_->is_open()) return;
  give_up(zk_errc::auth_failed, "ZooKeeper authentication failed: the server refused the auth info");
}

// Curator reports no state for giving up; we report LOST after an earlier state, as the session is given up
// and recipes holding locks must learn so. A TLS refusal ends the client the same way (session_opening.cpp).
void CoreImpl::give_up(error_code ec, const std::string& why) {
  if (life_.ended()) return;
  log_->error("{}; the client stops connecting and its operations fail with: {}", why, ec.message());
  {
    std::lock_guard lk(state_mu_);
    if (!life_.give_up(ec)) return;
    connected_ = false;
  }
  state_cv_.notify_all();
  session_id_ = 0;
  suspended_timer_.cancel();
  opening_.cancel();
  pauses_.wake_all();  // sleeping retries end now, with the reason
  fail_connection_waiters();
  if (last_state_ && last_state_ != ConnectionState::lost) emit(ConnectionState::lost);
  fail_watches(true);
  end_session();  // pending requests complete with zk_errc::closing, which with_retry reports as the reason
}

void CoreImpl::fail_connection_waiters() {
  auto waiters = std::move(conn_waiters_);
  conn_waiters_.clear();
  for (auto& [id, w] : waiters) {
    if (w.timer) w.timer->cancel();
    post([k = std::move(w.k)]() mutable { k(false); });
  }
}

void CoreImpl::handle_session_lost(const char* why) {
  log_->warn("session lost: {}", why);
  connected_ = false;
  session_id_ = 0;
  emit(ConnectionState::lost);
  fail_watches(false);
  // A fresh handle, hence a fresh session (Curator's handle reset).
  end_session();
  if (!life_.closed()) open_session();
}

void CoreImpl::end_session() {
  session_->close();
  connected_ = false;
}

void CoreImpl::emit(ConnectionState s) {
  if (last_state_ == s) return;
  last_state_ = s;
  if (log_->should_log(spdlog::level::info)) log_->info("connection state: {}", to_string(s));
  std::vector<std::uint64_t> ids;
  for (auto& [id, cb] : state_listeners_) ids.push_back(id);
  for (auto id : ids) {
    auto it = state_listeners_.find(id);
    if (it == state_listeners_.end()) continue;
    const auto cb = it->second;  // kept alive should the listener remove itself
    (*cb)(s);
  }
  asio::post(listener_strand_, [self = shared_from_this(), s] {
    std::vector<ConnectionStateListener> ls;
    {
      std::lock_guard lk(self->pub_mu_);
      for (auto& [id, l] : self->public_listeners_) ls.push_back(l);
    }
    for (auto& l : ls) {
      try {
        l(s);
      } catch (const std::exception& e) {
        self->log_->error("connection state listener threw: {}", e.what());
      }
    }
  });
}

std::uint64_t CoreImpl::add_state_listener(StateCallback cb) {
  auto id = next_listener_id_++;
  state_listeners_.emplace(id, std::make_shared<StateCallback>(std::move(cb)));
  return id;
}
void CoreImpl::remove_state_listener(std::uint64_t id) { state_listeners_.erase(id); }

std::uint64_t CoreImpl::add_public_listener(ConnectionStateListener l) {
  std::lock_guard lk(pub_mu_);
  auto id = next_public_id_++;
  public_listeners_.emplace(id, std::move(l));
  return id;
}
void CoreImpl::remove_public_listener(std::uint64_t id) {
  std::lock_guard lk(pub_mu_);
  public_listeners_.erase(id);
}

std::uint64_t CoreImpl::when_connected(std::chrono::milliseconds timeout, unique_function<void(bool)> k) {
  if (connected_ || life_.ended()) {
    post([k = std::move(k), ok = !life_.ended()]() mutable { k(ok); });
    return 0;
  }
  auto id = next_waiter_id_++;
  auto& w = conn_waiters_[id];
  w.k = std::move(k);
  w.timer = std::make_unique<asio::steady_timer>(rt_->ioc, timeout);
  w.timer->async_wait([this, id](error_code ec) {
    if (ec) return;
    auto it = conn_waiters_.find(id);
    if (it == conn_waiters_.end()) return;
    auto k = std::move(it->second.k);
    conn_waiters_.erase(it);
    k(false);
  });
  return id;
}

void CoreImpl::cancel_wait(std::uint64_t id) {
  auto it = conn_waiters_.find(id);
  if (it == conn_waiters_.end()) return;
  auto k = std::move(it->second.k);
  conn_waiters_.erase(it);  // its timer is destroyed with it, so its handler finds no waiter
  k(false);
}

}  // namespace zkr::detail
