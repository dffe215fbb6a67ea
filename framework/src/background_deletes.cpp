// The background deletes (see background_deletes.hpp).

#include "background_deletes.hpp"

#include <algorithm>
#include <zkr/framework/paths.hpp>

namespace zkr::detail {

std::chrono::milliseconds BackgroundDeletes::pause(int attempt) noexcept {
  return std::chrono::milliseconds(std::min(1000, 50 << std::clamp(attempt, 0, 5)));
}

void BackgroundDeletes::end() {
  if (--pending_ != 0) return;
  { const std::lock_guard lk(mu_); }
  cv_.notify_all();
}

bool BackgroundDeletes::wait_idle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lk(mu_);
  cv_.wait_until(lk, deadline, [&] { return pending_ == 0 || waits_ended_; });
  return pending_ == 0;
}

void BackgroundDeletes::end_waits() {
  {
    const std::lock_guard lk(mu_);
    waits_ended_ = true;
  }
  cv_.notify_all();
}

void BackgroundDeletes::when_connected(unique_function<void()> go, unique_function<void()> retry) {
  if (uses_.connection.connected()) return go();
  uses_.connection.when_connected(uses_.connection_timeout,
                                  [go = std::move(go), retry = std::move(retry)](bool ok) mutable {
                                    if (ok) return go();
                                    retry();
                                  });
}

void BackgroundDeletes::again_later(int attempt, unique_function<void()> again) {
  if (uses_.life.ended()) return end();
  uses_.pauses.after(pause(attempt), [this, again = std::move(again)]() mutable {
    if (uses_.life.ended()) return end();
    again();
  });
}

void BackgroundDeletes::remove(std::string full_path) {
  if (uses_.life.ended()) {
    uses_.log.warn("client {} with a guaranteed delete of {} pending",
                   uses_.life.closed() ? "closed" : "failed authentication", full_path);
    return;
  }
  begin();
  remove_try(std::move(full_path), 0);
}

void BackgroundDeletes::remove_try(std::string full_path, int attempt) {
  auto later = [this, full_path, attempt] {
    again_later(attempt, [this, full_path, attempt] { remove_try(full_path, attempt + 1); });
  };
  auto go = [this, full_path, later] {
    uses_.session.submit(zk::Delete{full_path}, [this, full_path, later](zk::Reply r) {
      if (!r.ec || r.ec == zk_errc::no_node) return end();
      // zk_errc::closing: the session ended under the request (a handle replaced, or the client closing);
      // a request sent with no session at all gets the client's own answer (no_session_ec).
      if (is_retryable(r.ec) || r.ec == zk_errc::closing || uses_.life.ended()) return later();
      uses_.log.error("guaranteed delete of {} failed for good: {}", full_path, r.ec.message());
      end();
    });
  };
  when_connected(std::move(go), std::move(later));
}

void BackgroundDeletes::sweep(std::string parent_full, std::string prefix) {
  if (uses_.life.ended()) return;
  begin();
  sweep_try(std::move(parent_full), std::move(prefix), 0);
}

void BackgroundDeletes::sweep_try(std::string parent_full, std::string prefix, int attempt) {
  auto later = [this, parent_full, prefix, attempt] {
    again_later(attempt,
                [this, parent_full, prefix, attempt] { sweep_try(parent_full, prefix, attempt + 1); });
  };
  auto go = [this, parent_full, prefix, later] {
    uses_.session.submit(zk::GetChildren{parent_full}, [this, parent_full, prefix, later](zk::Reply r) {
      if (r.ec == zk_errc::no_node) return end();
      // As a delete: only what retrying can fix is retried (closing: the handle was replaced).
      if (r.ec && (is_retryable(r.ec) || r.ec == zk_errc::closing || uses_.life.ended())) return later();
      if (r.ec) {
        uses_.log.error("cannot look for the node of a failed protected create under {}: {}", parent_full,
                        r.ec.message());
        return end();
      }
      for (const auto& n : r.children)
        if (n.compare(0, prefix.size(), prefix) == 0) {
          const auto path = make_path(parent_full, n);
          uses_.log.info("deleting {} left by a failed protected create or transaction", path);
          remove(path);
        }
      end();
    });
  };
  when_connected(std::move(go), std::move(later));
}

}  // namespace zkr::detail
