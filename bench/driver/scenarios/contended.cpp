// contended: K [8] sessions, one thread each using the blocking API (as Curator's driver), looping
// acquire/release on P until N [2000] handoffs are done in total; latency = acquire latency.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "../scenario.hpp"
#include "../sync.hpp"

namespace zkr_bench {

namespace {

using namespace std::chrono_literals;

Result run(Context& ctx) {
  const Options& a = ctx.options();
  const int k = std::max(1, or_default(a.clients, 8));
  const int n = or_default(a.ops, 2000);
  const int warm = or_default(a.warmup, 100);
  auto locks = ctx.mutexes_on_new_sessions(k);
  std::vector<std::vector<std::int64_t>> lats(static_cast<std::size_t>(k));
  std::atomic<long> warm_left{warm}, left{n};
  Countdown warm_done(k);
  std::mutex go_m;
  std::condition_variable go_cv;
  bool go = false;
  Failure failure;
  std::vector<std::thread> crew;
  for (int i = 0; i < k; ++i) {
    crew.emplace_back([&, i] {
      try {
        auto& m = *locks[std::size_t(i)];
        while (warm_left.fetch_sub(1) > 0) {
          m.acquire();
          m.release();
        }
        warm_done.count_down();
        {
          std::unique_lock lk(go_m);
          go_cv.wait(lk, [&] { return go; });
        }
        auto& lat = lats[std::size_t(i)];
        lat.reserve(std::size_t(n / k + 16));
        while (left.fetch_sub(1) > 0) {
          auto s = now_ns();
          m.acquire();
          lat.push_back(now_ns() - s);
          m.release();
        }
      } catch (const std::exception& e) {
        failure.set(e.what());
        warm_done.count_down();
      }
    });
  }
  auto dl = ctx.deadline();
  while (!warm_done.wait_for(100ms)) {
    if (auto f = failure.get()) ctx.fatal("worker failed: " + *f);
    if (Clock::now() > dl) ctx.fatal("warmup did not finish in time");
  }
  sample_threads();
  Result r;
  ctx.mark_start();
  {
    std::lock_guard lk(go_m);
    go = true;
  }
  go_cv.notify_all();
  for (auto& t : crew) t.join();  // the SIGALRM watchdog bounds this
  ctx.mark_end(r);
  if (auto f = failure.get()) ctx.fatal("worker failed: " + *f);
  r.ops = n;
  r.lat_ns = merge_sorted(lats);
  r.extra.emplace_back("sessions", k);
  r.extra.emplace_back("total_ops", n + warm);
  return r;
}

}  // namespace

Scenario contended_scenario() {
  return {"contended",
          "K [8] sessions, a thread each on the blocking API, looping acquire/release on P until N [2000] "
          "handoffs in total; latency = acquire",
          {"clients", "ops", "warmup", "lock-driver"},
          run};
}

}  // namespace zkr_bench
