// increments: K [8] sessions, one thread each, looping increment() on one DistributedAtomicLong at P until
// N [2000] increments are done in total; latency = one increment, its retries included. --mode optimistic:
// RetryNTimes(1000, 1 ms); --mode promoted: one optimistic try, then PromotedToLock on P-lock under that
// same policy. At the end the counter must equal warmup + N (no increment lost or applied twice).

#include <algorithm>
#include <atomic>
#include <zkr/recipes/distributed_atomic_number.hpp>

#include "../crew.hpp"
#include "../scenario.hpp"

namespace zkr_bench {

namespace {

/// The retry policy of both modes and both libraries (CuratorBench's CounterScenario uses the same).
zkr::RetryPolicyPtr quick_retries() { return std::make_shared<zkr::RetryNTimes>(1000, zkr::Millis(1)); }

std::unique_ptr<zkr::DistributedAtomicLong> counter(zkr::CuratorFramework& c, const std::string& path,
                                                    bool promoted) {
  if (!promoted) return std::make_unique<zkr::DistributedAtomicLong>(c, path, quick_retries());
  return std::make_unique<zkr::DistributedAtomicLong>(
      c, path, std::make_shared<zkr::RetryNTimes>(0, zkr::Millis(0)),
      zkr::PromotedToLock{path + "-lock", std::nullopt, quick_retries()});
}

/// One increment; throws when the policies gave up (the run fails: the counter's check would too).
zkr::AtomicStats increment(zkr::DistributedAtomicLong& c) {
  auto v = c.increment();
  if (!v.succeeded) throw std::runtime_error("increment gave up after its retries");
  return v.stats;
}

Result run(Context& ctx) {
  const Options& a = ctx.options();
  const int k = std::max(1, or_default(a.clients, 8));
  const int n = or_default(a.ops, 2000);
  const int warm = or_default(a.warmup, 100);
  const bool promoted = a.mode == "promoted";
  std::vector<std::unique_ptr<zkr::DistributedAtomicLong>> counters;
  for (int i = 0; i < k; ++i) counters.push_back(counter(ctx.new_session(), a.path, promoted));
  const std::int64_t start_value = counters[0]->get().post_value;
  std::vector<std::vector<std::int64_t>> lats(static_cast<std::size_t>(k));
  for (auto& lat : lats) lat.reserve(std::size_t(n / k + 16));
  std::atomic<long> optimistic_tries{0}, promoted_tries{0};
  Result r;
  run_crew(
      ctx, r, k, warm, n, [&](int i) { increment(*counters[std::size_t(i)]); },
      [&](int i) {
        auto s = now_ns();
        auto stats = increment(*counters[std::size_t(i)]);
        lats[std::size_t(i)].push_back(now_ns() - s);
        optimistic_tries += stats.optimistic_tries;
        promoted_tries += stats.promoted_lock_tries;
      });
  const std::int64_t final_value = counters[0]->get().post_value;
  if (final_value - start_value != std::int64_t(warm) + n)
    ctx.fatal("counter went from " + std::to_string(start_value) + " to " + std::to_string(final_value) +
              " after " + std::to_string(warm + n) + " increments");
  r.ops = n;
  r.lat_ns = merge_sorted(lats);
  r.extra.emplace_back("sessions", k);
  r.extra.emplace_back("total_ops", n + warm);
  r.extra.emplace_back("mode", a.mode);
  r.extra.emplace_back("optimistic_tries_per_op", n > 0 ? double(optimistic_tries) / n : 0.0);
  r.extra.emplace_back("promoted_tries_per_op", n > 0 ? double(promoted_tries) / n : 0.0);
  r.extra.emplace_back("counter_checked", final_value - start_value);
  return r;
}

}  // namespace

Scenario increments_scenario() {
  return {
      "increments",
      "K [8] sessions, a thread each, looping increment() on one DistributedAtomicLong at P until N [2000] "
      "in total (--mode optimistic|promoted); latency = one increment; the counter is checked at the end",
      {"clients", "ops", "warmup", "mode"},
      run};
}

}  // namespace zkr_bench
