// async (zkrecipes only; issue 26): K [1] sessions, one mutex each on P, every one looping async_acquire /
// async_release, the next acquire started from the release's handler (so on the handler executor), until
// N [2000] pairs are done in total; latency = pair (acquire started to release handler run). K=1: the
// uncontended case of the async API; K=8: contended handoffs of the async API.

#include <algorithm>
#include <atomic>
#include <functional>

#include "../scenario.hpp"
#include "../sync.hpp"

namespace zkr_bench {

namespace {

using namespace std::chrono_literals;

/// The loops until `n` pairs are done in total; pair latencies go to `lat` (by session) when given.
void async_loops(Context& ctx, const std::vector<std::unique_ptr<zkr::InterProcessMutex>>& locks, long n,
                 std::vector<std::vector<std::int64_t>>* lat) {
  std::atomic<long> left{n};
  Countdown done(long(locks.size()));
  Failure failure;
  std::vector<std::function<void()>> step(locks.size());
  for (std::size_t i = 0; i < locks.size(); ++i) {
    step[i] = [&, i] {
      if (left.fetch_sub(1) <= 0) return done.count_down();
      const auto s = now_ns();
      locks[i]->async_acquire([&, i, s](zkr::error_code ec, zkr::Lease lease) {
        if (ec || !lease) {
          failure.set("async_acquire: " + (ec ? ec.message() : std::string("no lease")));
          return done.count_down();
        }
        lease.async_release([&, i, s](zkr::error_code rec) {
          if (rec) {
            failure.set("async_release: " + rec.message());
            return done.count_down();
          }
          if (lat) (*lat)[i].push_back(now_ns() - s);
          step[i]();
        });
      });
    };
  }
  for (auto& f : step) f();
  auto dl = ctx.deadline();
  while (!done.wait_for(100ms)) {
    if (auto f = failure.get()) ctx.fatal(*f);
    if (Clock::now() > dl) ctx.fatal("the async loops did not finish in time");
  }
  if (auto f = failure.get()) ctx.fatal(*f);
}

Result run(Context& ctx) {
  const Options& a = ctx.options();
  const int k = std::max(1, or_default(a.clients, 1));
  const int n = or_default(a.ops, 2000);
  const int warm = or_default(a.warmup, 100);
  auto locks = ctx.mutexes_on_new_sessions(k);
  async_loops(ctx, locks, warm, nullptr);
  std::vector<std::vector<std::int64_t>> lats(static_cast<std::size_t>(k));
  for (auto& l : lats) l.reserve(std::size_t(n / k + 16));
  Result r;
  ctx.mark_start();
  async_loops(ctx, locks, n, &lats);
  ctx.mark_end(r);
  r.ops = n;
  r.lat_ns = merge_sorted(lats);
  r.extra.emplace_back("sessions", k);
  r.extra.emplace_back("total_ops", n + warm);
  return r;
}

}  // namespace

Scenario async_scenario() {
  return {
      "async",
      "(zkrecipes only) K [1] sessions looping async_acquire / async_release on P until N [2000] pairs in "
      "total; latency = pair",
      {"clients", "ops", "warmup", "lock-driver"},
      run};
}

}  // namespace zkr_bench
