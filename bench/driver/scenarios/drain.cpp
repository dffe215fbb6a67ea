// drain: one holder session holds P; W [200] waiters queue with async_acquire, spread over K [min(8,W)]
// sessions (no thread per waiter); once W nodes wait the holder releases and every waiter acquires and
// releases once. ops = W handoffs; latency = time between consecutive acquisitions; fifo_ok = acquisition
// order equals sequence order.

#include <algorithm>

#include "../scenario.hpp"
#include "async_drain.hpp"

namespace zkr_bench {

namespace {

using namespace std::chrono_literals;

Result run(Context& ctx) {
  const Options& a = ctx.options();
  const long w = std::max(1, or_default(a.waiters, 200));
  const int k = int(std::max<long>(1, std::min<long>(w, or_default(a.clients, 8))));
  auto& holder_session = ctx.new_session();
  std::vector<zkr::CuratorFramework*> cs;
  for (int i = 0; i < k; ++i) cs.push_back(&ctx.new_session());
  auto holder = ctx.mutex(holder_session);
  auto d = async_drain(ctx, *holder, cs, w, 5ms);
  d.r.extra.emplace_back("sessions", k + 1);
  d.r.extra.emplace_back("waiters", w);
  d.r.extra.emplace_back("total_ops", w + 1);
  d.r.extra.emplace_back("enqueue_seconds", d.enqueue_seconds);
  d.r.extra.emplace_back("release_errors", d.release_errors);
  d.r.extra.emplace_back("watches_before_release", d.watches_before_release);
  return std::move(d.r);
}

}  // namespace

Scenario drain_scenario() {
  return {
      "drain",
      "a holder holds P; W [200] async waiters over K [min(8,W)] sessions; then the FIFO drain (latency = "
      "between acquisitions)",
      {"waiters", "clients", "lock-driver"},
      run};
}

}  // namespace zkr_bench
