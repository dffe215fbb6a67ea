// Retry loop (Curator's RetryLoop.callWithRetry): wait for the connection up to the connection timeout, try,
// and on a retryable code let the policy decide and sleep on a timer.
// Sleeping tries are registered (the sleepers) so that a close or an auth failure ends their sleep at once.

#include "core_impl.hpp"

namespace zkr::detail {

std::uint64_t CoreImpl::add_sleeper(asio::steady_timer* t) {
  auto id = next_sleeper_id_++;
  sleepers_[id] = t;
  return id;
}
void CoreImpl::remove_sleeper(std::uint64_t id) { sleepers_.erase(id); }

struct CoreImpl::RetryState {
  std::shared_ptr<Attempt> attempt;
  Done done;
  Clock::time_point start = Clock::now();
  int retries = 0;
  bool retry = true;
  StopPtr stop;
  std::unique_ptr<asio::steady_timer> timer;

  bool stopped() const noexcept { return stop && stop->requested(); }
  /// While the loop waits, a stop request runs `wake` (empty: the wait is over).
  void wake_on_stop(unique_function<void()> wake) {
    if (stop) stop->on_request(std::move(wake));
  }
};

void CoreImpl::with_retry(const RequestOptions& ro, std::shared_ptr<Attempt> attempt, Done done) {
  auto st = std::make_shared<RetryState>();
  st->attempt = std::move(attempt);
  st->done = std::move(done);
  st->retry = ro.retry;
  st->stop = ro.stop;
  auto run = std::make_shared<unique_function<void()>>();
  *run = [this, st, weak_run = std::weak_ptr(run)]() {
    auto self_run = weak_run.lock();
    if (closed_) return st->done(errc::closed);
    if (given_up_) return st->done(given_up_ec_);
    if (st->stopped()) return st->done(asio::error::operation_aborted);
    auto go = [this, st, self_run] {
      (*st->attempt)([this, st, self_run](error_code ec) {
        // A request cut off by the client giving up (an auth failure, a TLS refusal), or refused after it,
        // fails with the reason.
        if (given_up_ && !closed_ &&
            (ec == zk_errc::closing || ec == zk_errc::invalid_state || is_retryable(ec)))
          ec = given_up_ec_;
        // A request cut off because we replaced the handle after a session loss (not because the client
        // closed) failed with its session: retry it like an expiry. One cut off by the close: closed.
        if (ec == zk_errc::closing) ec = closed_ ? error_code(errc::closed) : error_code(zk_errc::session_expired);
        if (ec && st->retry && !closed_ && !st->stopped() && cfg_.retry_policy->allow_retry(ec)) {
          auto elapsed = std::chrono::duration_cast<Millis>(Clock::now() - st->start);
          if (auto sleep = cfg_.retry_policy->allow_retry(st->retries++, elapsed)) {
            if (log_->should_log(spdlog::level::debug))
              log_->debug("retrying after {} (retry {}, sleeping {} ms)", ec.message(), st->retries,
                          sleep->count());
            st->timer = std::make_unique<asio::steady_timer>(rt_->ioc, *sleep);
            auto sid = add_sleeper(st->timer.get());
            st->timer->async_wait([this, sid, st, self_run](error_code) {
              remove_sleeper(sid);
              st->wake_on_stop({});
              (*self_run)();
            });
            st->wake_on_stop([weak = std::weak_ptr(st)] {
              if (auto s = weak.lock(); s && s->timer) s->timer->cancel();
            });
            return;
          }
        }
        st->done(ec);
      });
    };
    if (connected_) return go();
    auto wid = when_connected(cfg_.connection_timeout, [this, st, go](bool ok) mutable {
      st->wake_on_stop({});
      if (closed_) return st->done(errc::closed);
      if (given_up_) return st->done(given_up_ec_);
      if (st->stopped()) return st->done(asio::error::operation_aborted);
      if (!ok) return st->done(errc::connection_timeout);
      go();
    });
    if (wid != 0) st->wake_on_stop([this, wid] { cancel_connection_wait(wid); });
  };
  (*run)();
}

}  // namespace zkr::detail
