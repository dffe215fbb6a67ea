// slow-handler (zkrecipes only; issue 26): one session, locks on P/slow and P/other. N [20] rounds: an
// async_acquire of P/slow whose handler sleeps 50 ms; while it sleeps, a blocking acquire of P/other is timed
// (latency), and in a second such window an async_acquire of P/other, from its start to its handler
// (extra.async_other_p50_us / _p99_us): what one slow handler costs the other locks of its client.

#include <algorithm>
#include <thread>

#include "../scenario.hpp"
#include "../sync.hpp"

namespace zkr_bench {

namespace {

using namespace std::chrono_literals;

Result run(Context& ctx) {
  const Options& a = ctx.options();
  const int n = std::max(1, or_default(a.ops, 20));
  const int warm = or_default(a.warmup, 2);
  auto& c = ctx.new_session();
  zkr::InterProcessMutex slow(c, a.path + "/slow"), other(c, a.path + "/other");
  std::vector<std::int64_t> blocking_lat, async_lat;
  Failure failure;
  auto check = [&](Countdown& d, const char* what) {
    if (!d.wait_for(ctx.deadline() - Clock::now())) ctx.fatal(std::string(what) + " timed out");
    if (auto f = failure.get()) ctx.fatal(*f);
  };
  // Starts P/slow's acquire, whose handler signals `sleeping`, sleeps 50 ms, then releases and signals
  // `done`.
  auto start_slow = [&](Countdown& sleeping, Countdown& done) {
    slow.async_acquire([&](zkr::error_code ec, zkr::Lease lease) {
      if (ec || !lease) failure.set("slow async_acquire: " + (ec ? ec.message() : std::string("no lease")));
      sleeping.count_down();
      std::this_thread::sleep_for(50ms);
      if (!lease) return done.count_down();
      lease.async_release([&](zkr::error_code) { done.count_down(); });
    });
  };
  Result r;
  for (int round = 0; round < warm + n; ++round) {
    if (round == warm) ctx.mark_start();
    {  // the blocking API on the other lock
      Countdown sleeping(1), done(1);
      start_slow(sleeping, done);
      check(sleeping, "slow handler");
      const auto s = now_ns();
      other.acquire();
      const auto d = now_ns() - s;
      other.release();
      if (round >= warm) blocking_lat.push_back(d);
      check(done, "slow release");
    }
    {  // the async API on the other lock
      Countdown sleeping(1), done(1), other_done(1);
      start_slow(sleeping, done);
      check(sleeping, "slow handler");
      const auto s = now_ns();
      other.async_acquire([&](zkr::error_code ec, zkr::Lease lease) {
        const auto d = now_ns() - s;
        if (ec || !lease)
          failure.set("other async_acquire: " + (ec ? ec.message() : std::string("no lease")));
        else if (round >= warm)
          async_lat.push_back(d);
        if (!lease) return other_done.count_down();
        lease.async_release([&](zkr::error_code) { other_done.count_down(); });
      });
      check(other_done, "other async acquire");
      check(done, "slow release");
    }
  }
  ctx.mark_end(r);
  std::sort(blocking_lat.begin(), blocking_lat.end());
  std::sort(async_lat.begin(), async_lat.end());
  r.ops = n;
  r.lat_ns = std::move(blocking_lat);
  r.extra.emplace_back("slow_handler_ms", 50);
  r.extra.emplace_back("async_other_p50_us", percentile_us(async_lat, 0.50));
  r.extra.emplace_back("async_other_p99_us", percentile_us(async_lat, 0.99));
  r.extra.emplace_back("sessions", 1);
  r.extra.emplace_back("total_ops", 4 * (n + warm));
  return r;
}

}  // namespace

Scenario slow_handler_scenario() {
  return {
      "slow-handler",
      "(zkrecipes only) one session; N [20] rounds: a 50 ms handler on P/slow's grant, and what it costs a "
      "blocking and an async acquire of P/other",
      {"ops", "warmup"},
      run};
}

}  // namespace zkr_bench
