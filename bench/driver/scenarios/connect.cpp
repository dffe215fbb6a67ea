// connect: N [200] sessions, one at a time, each started and closed; latency = from `start()` to CONNECTED,
// which includes the TCP connection, the session handshake and any TLS or SASL exchange (CONNECTED comes only
// once authenticated). The close is not measured.

#include <algorithm>
#include <vector>

#include "../scenario.hpp"

namespace zkr_bench {

namespace {

using namespace std::chrono_literals;

/// One session's connection set-up, in ns.
std::int64_t connect_once(Context& ctx) {
  zkr::CuratorFramework c(ctx.client_config(ctx.options().session_timeout_ms));
  const auto s = now_ns();
  c.start();
  if (!c.block_until_connected(20s)) ctx.fatal("could not connect to " + ctx.options().connect);
  const auto t = now_ns() - s;
  c.close();
  return t;
}

Result run(Context& ctx) {
  const Options& a = ctx.options();
  const int n = or_default(a.ops, 200), warm = or_default(a.warmup, 20);
  for (int i = 0; i < warm; ++i) connect_once(ctx);
  std::vector<std::int64_t> lat;
  lat.reserve(std::size_t(n));
  Result r;
  ctx.mark_start();
  for (int i = 0; i < n; ++i) lat.push_back(connect_once(ctx));
  ctx.mark_end(r);
  r.ops = n;
  std::sort(lat.begin(), lat.end());
  r.lat_ns = std::move(lat);
  r.extra.emplace_back("sessions", n + warm);
  r.extra.emplace_back("total_ops", n + warm);
  return r;
}

}  // namespace

Scenario connect_scenario() {
  return {
      "connect",
      "N [200] sessions one at a time, each started and closed; latency = start() to CONNECTED (TCP, session "
      "handshake, TLS or SASL exchange)",
      {"ops", "warmup"},
      run};
}

}  // namespace zkr_bench
