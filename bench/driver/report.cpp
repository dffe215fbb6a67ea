#include "report.hpp"

#include <sstream>

#ifndef ZKR_BENCH_VERSION
#define ZKR_BENCH_VERSION "unknown"
#endif

namespace zkr_bench {

void write_result_line(std::ostream& os, Context& ctx, Result r) {
  const Options& a = ctx.options();
  auto param = [](int v) { return v >= 0 ? Json(v) : Json(); };
  JsonObject params{{"clients", param(a.clients)},
                    {"ops", param(a.ops)},
                    {"waiters", param(a.waiters)},
                    {"warmup", param(a.warmup)},
                    {"path", a.path},
                    {"lock_driver", a.standard ? "standard" : "default"},
                    {"handler_executor", a.handler_executor}};
  if (a.scenario.rfind("cache-", 0) == 0) {
    params.emplace_back("nodes", param(a.nodes));
    params.emplace_back("recipe", a.recipe);
  }
  if (r.context_switches >= 0) r.extra.emplace_back("context_switches", Json(double(r.context_switches)));
  r.extra.emplace_back("cpu_seconds_total", rusage_cpu_seconds());
  r.extra.emplace_back("peak_rss_mb", peak_rss_mb());
  r.extra.emplace_back("max_threads", max_threads());
  if (ctx.mntr().enabled()) r.extra.emplace_back("mntr", ctx.mntr().delta());
  r.extra.emplace_back("zkrecipes_version", ZKR_BENCH_VERSION);

  JsonObject out{{"library", "zkrecipes"},
                 {"scenario", a.scenario},
                 {"params", std::move(params)},
                 {"ops", r.ops},
                 {"seconds", r.seconds},
                 {"ops_per_sec", r.seconds > 0 ? Json(double(r.ops) / r.seconds) : Json()},
                 {"p50_us", percentile_us(r.lat_ns, 0.50)},
                 {"p99_us", percentile_us(r.lat_ns, 0.99)},
                 {"cpu_seconds", double(r.cpu_ns) / 1e9},
                 {"fifo_ok", r.fifo_ok},
                 {"extra", std::move(r.extra)}};
  std::ostringstream line;
  write_json(line, Json(std::move(out)));
  os << line.str() << std::endl;
}

}  // namespace zkr_bench
