// The session's events as the client answers them: a connection, a reconnect attempt or a loss goes to the
// connection states (connection_states.hpp); a lost session (expired, or timed out while SUSPENDED) is
// replaced by a fresh one; an auth failure (or a TLS refusal) ends the client.

#include <spdlog/logger.h>

#include "core_impl.hpp"

namespace zkr::detail {

void CoreImpl::on_session_state(SessionState state) {
  if (state == SessionState::connected || state == SessionState::read_only) {
    states_.on_connected(session_->session_id(), session_->negotiated_timeout_ms(),
                         state == SessionState::read_only);
  } else if (state == SessionState::connecting) {
    states_.on_connecting();
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
  if (!states_.give_up(life_, ec)) return;
  opening_.cancel();
  pauses_.wake_all();  // sleeping retries end now, with the reason
  states_.fail_waits();
  states_.lost_after_earlier();
  fail_watches(true);
  end_session();  // pending requests complete with zk_errc::closing, which with_retry reports as the reason
}

void CoreImpl::handle_session_lost(const char* why) {
  log_->warn("session lost: {}", why);
  states_.on_lost();
  fail_watches(false);
  // A fresh handle, hence a fresh session (Curator's handle reset).
  end_session();
  if (!life_.closed()) open_session();
}

void CoreImpl::end_session() {
  session_->close();
  states_.on_session_closed();
}

}  // namespace zkr::detail
