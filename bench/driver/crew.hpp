#pragma once
// The K-worker loop that contended and increments share: K threads take warmup tickets, then wait for the
// start and take the N measured tickets; the measured part is timed (Context::mark_start / mark_end) from the
// start signal to the last worker's end.

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "context.hpp"
#include "sync.hpp"

namespace zkr_bench {

/// Runs `warm_one(i)` on worker i while the `warm` warmup tickets last; once every worker has warmed up, the
/// measured part: `measured_one(i)` while the `n` tickets last. A worker's exception ends the run
/// (Context::fatal), as does a warmup past the scenario's deadline. Fills `r`'s seconds and CPU time.
template <class Warm, class Measured>
void run_crew(Context& ctx, Result& r, int k, long warm, long n, Warm warm_one, Measured measured_one) {
  using namespace std::chrono_literals;
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
        while (warm_left.fetch_sub(1) > 0) warm_one(i);
        warm_done.count_down();
        {
          std::unique_lock lk(go_m);
          go_cv.wait(lk, [&] { return go; });
        }
        while (left.fetch_sub(1) > 0) measured_one(i);
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
  ctx.mark_start();
  {
    std::lock_guard lk(go_m);
    go = true;
  }
  go_cv.notify_all();
  for (auto& t : crew) t.join();  // the SIGALRM watchdog bounds this
  ctx.mark_end(r);
  if (auto f = failure.get()) ctx.fatal("worker failed: " + *f);
}

}  // namespace zkr_bench
