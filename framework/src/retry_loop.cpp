// Retry loop (Curator's RetryLoop.callWithRetry): wait for the connection up to the connection timeout, try,
// and on a retryable code let the policy decide and sleep, on one of the client's pauses (pauses.hpp), which
// a close or a give-up ends at once. A conditional write (RequestOptions::conditional) whose try failed that
// way is not sent again blindly: each further round first runs its recheck, and the write follows only once
// that says the lost try was not applied.

#include <spdlog/logger.h>

#include "core_impl.hpp"

namespace zkr::detail {

struct CoreImpl::RetryState {
  std::shared_ptr<Attempt> attempt;
  Done done;
  Clock::time_point start = Clock::now();
  int retries = 0;
  bool retry = true;
  StopPtr stop;
  std::shared_ptr<Attempt> recheck;  // a conditional write's (null: none)
  bool unsure = false;               // the last try's answer was lost: recheck before sending again

  bool stopped() const noexcept { return stop && stop->requested(); }
  /// While the loop waits, a stop request runs `wake` (empty: the wait is over).
  void wake_on_stop(unique_function<void()> wake) {
    if (stop) stop->on_request(std::move(wake));
  }
};

void CoreImpl::with_retry(const RequestOptions& ro, std::shared_ptr<Attempt> attempt, Done done,
                          std::shared_ptr<Attempt> recheck) {
  auto st = std::make_shared<RetryState>();
  st->attempt = std::move(attempt);
  st->done = std::move(done);
  st->retry = ro.retry;
  st->stop = ro.stop;
  if (ro.conditional) st->recheck = std::move(recheck);
  auto run = std::make_shared<unique_function<void()>>();
  *run = [this, st, weak_run = std::weak_ptr(run)]() {
    auto self_run = weak_run.lock();
    if (life_.closed()) return st->done(client_errc::closed);
    if (life_.given_up()) return st->done(life_.reason());
    if (st->stopped()) return st->done(asio::error::operation_aborted);
    // A try's (or a recheck's) outcome.
    auto settle = [this, st, self_run](error_code ec) {
      // A request cut off by the client giving up (an auth failure, a TLS refusal), or refused after it,
      // fails with the reason.
      if (life_.given_up() && (ec == zk_errc::closing || ec == zk_errc::invalid_state || is_retryable(ec)))
        ec = life_.reason();
      // A request cut off because we replaced the handle after a session loss (not because the client
      // closed) failed with its session: retry it like an expiry. One cut off by the close: closed.
      const bool closed = life_.closed();
      if (ec == zk_errc::closing)
        ec = closed ? error_code(client_errc::closed) : error_code(zk_errc::session_expired);
      if (ec && st->retry && !closed && !st->stopped() && cfg_.retry_policy->allow_retry(ec)) {
        if (st->recheck) st->unsure = true;
        auto elapsed = std::chrono::duration_cast<Millis>(Clock::now() - st->start);
        if (auto sleep = cfg_.retry_policy->allow_retry(st->retries++, elapsed)) {
          if (log_->should_log(spdlog::level::debug))
            log_->debug("retrying after {} (retry {}, sleeping {} ms)", ec.message(), st->retries,
                        sleep->count());
          const auto pause = pauses_.after(*sleep, [st, self_run] {
            st->wake_on_stop({});
            (*self_run)();
          });
          st->wake_on_stop([this, pause] { pauses_.wake(pause); });
          return;
        }
      }
      st->done(ec);
    };
    auto go = [st, self_run, settle] {
      auto k = settle;
      if (!st->unsure) return (*st->attempt)(std::move(k));
      (*st->recheck)([st, self_run, k = std::move(k)](error_code ec) mutable {
        if (ec) return k(ec);
        st->unsure = false;  // not applied: the write goes again
        (*self_run)();
      });
    };
    if (states_.connected()) return go();
    auto wid = states_.when_connected(cfg_.connection_timeout, [this, st, go](bool ok) mutable {
      st->wake_on_stop({});
      if (life_.closed()) return st->done(client_errc::closed);
      if (life_.given_up()) return st->done(life_.reason());
      if (st->stopped()) return st->done(asio::error::operation_aborted);
      if (!ok) return st->done(client_errc::connection_timeout);
      go();
    });
    if (wid != 0) st->wake_on_stop([this, wid] { states_.cancel_wait(wid); });
  };
  (*run)();
}

}  // namespace zkr::detail
