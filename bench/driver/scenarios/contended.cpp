// contended: K [8] sessions, one thread each using the blocking API (as Curator's driver), looping
// acquire/release on P until N [2000] handoffs are done in total; latency = acquire latency.

#include <algorithm>

#include "../crew.hpp"
#include "../scenario.hpp"

namespace zkr_bench {

namespace {

Result run(Context& ctx) {
  const Options& a = ctx.options();
  const int k = std::max(1, or_default(a.clients, 8));
  const int n = or_default(a.ops, 2000);
  const int warm = or_default(a.warmup, 100);
  auto locks = ctx.mutexes_on_new_sessions(k);
  std::vector<std::vector<std::int64_t>> lats(static_cast<std::size_t>(k));
  for (auto& lat : lats) lat.reserve(std::size_t(n / k + 16));
  Result r;
  run_crew(
      ctx, r, k, warm, n,
      [&](int i) {
        auto& m = *locks[std::size_t(i)];
        m.acquire();
        m.release();
      },
      [&](int i) {
        auto& m = *locks[std::size_t(i)];
        auto s = now_ns();
        m.acquire();
        lats[std::size_t(i)].push_back(now_ns() - s);
        m.release();
      });
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
