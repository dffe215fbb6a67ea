// failover (issue 28): N [10] leader failovers. For each, this process starts a leader in a process of its
// own (this program, scenario failover-leader, on P/<i>: failover_leader.cpp), waits until it leads, queues
// its own participant behind it (--recipe: LeaderLatch or LeaderSelector) and ends the leader (--mode close:
// the leader closes its participant; kill: SIGKILL, the node goes at session expiry: give a short
// --session-timeout-ms, the leader's). Latency = from the leader's end (its clock just before close(), or the
// kill) to our is_leader / take_leadership. extra.failover_ms, notice_ms (from an observer session's
// node-deleted event to our leadership) and end_to_notice_ms (from the end to that event: in kill mode the
// expiry as the server acts on it) list every sample. The mntr window of a failover runs from just before the
// end to our leadership; the observer's own watch event (one per failover) is taken out of watch_events. In
// kill mode the leaders start spread evenly over the server's 2 s tick (a wait of (i + 1/2) / N ticks before
// the i-th one's start).

#include <algorithm>
#include <cmath>
#include <thread>
#include <zkr/recipes/leader_latch.hpp>
#include <zkr/recipes/leader_selector.hpp>

#include "../scenario.hpp"
#include "holding_listener.hpp"
#include "leader_process.hpp"

namespace zkr_bench {

namespace {

using namespace std::chrono_literals;

/// The server's tickTime (run_bench.py's), over which failover spreads its kills.
constexpr int expiry_tick_ms = 2000;

Result run(Context& ctx) {
  const Options& a = ctx.options();
  static const char* const counters[] = {"zk_cnt_readlatency",
                                         "zk_cnt_updatelatency",
                                         "zk_sum_node_created_watch_count",
                                         "zk_sum_node_deleted_watch_count",
                                         "zk_sum_node_changed_watch_count",
                                         "zk_sum_node_children_watch_count",
                                         "zk_packets_received"};
  const int n = std::max(1, or_default(a.ops, 10));
  const bool kill = a.mode == "kill";
  const auto lead_within = std::chrono::milliseconds(a.session_timeout_ms) * 3 + 30s;
  // --session-timeout-ms is the leader's. Ours are long: the server counts pings as reads, and a short
  // timeout would have our two sessions ping during the window of a kill (a third of the timeout idle).
  auto& observer = ctx.new_session(30000);  // the node-deleted notice
  auto& follower = ctx.new_session(30000);
  const std::string self = self_executable();
  MntrSample sums;
  for (const char* k : counters) sums[k] = 0;
  std::vector<std::int64_t> lat;
  JsonArray failover_ms, notice_ms, end_to_notice_ms;
  auto ms = [](std::int64_t ns) { return Json(std::round(double(ns) / 1e3) / 1e3); };
  Result r;
  for (int i = 0; i < n; ++i) {
    // A kill's failover waits for the server's expiry, which comes in buckets of its tick (2 s in
    // run_bench.py) counted from the dead session's last packet. Started right after the last failover's
    // expiry, every leader would send its packets at one phase of the tick and the figures would carry that
    // phase: start the leaders spread evenly over a tick instead.
    if (kill) std::this_thread::sleep_for(std::chrono::milliseconds((2 * i + 1) * expiry_tick_ms / (2 * n)));
    const std::string path = a.path + "/" + std::to_string(i);
    std::vector<std::string> leader_argv{self,
                                         "--connect",
                                         a.connect,
                                         "--scenario",
                                         "failover-leader",
                                         "--path",
                                         path,
                                         "--recipe",
                                         a.recipe,
                                         "--session-timeout-ms",
                                         std::to_string(a.session_timeout_ms),
                                         "--timeout-s",
                                         std::to_string(a.timeout_s)};
    for (auto& v : a.security_argv()) leader_argv.push_back(std::move(v));
    LeaderProcess leader(leader_argv);
    const std::string leading = leader.read_line(Clock::now() + 60s);
    if (leading.rfind("LEADING /", 0) != 0)
      ctx.fatal("leader process: expected LEADING, got '" + leading + "'");
    const std::string node = leading.substr(8);
    auto deleted = std::make_shared<Stamp>();
    if (!observer.exists(node, [deleted](const zkr::WatchedEvent& e) {
          if (e.type == zkr::EventType::node_deleted) deleted->set();
        })) {
      ctx.fatal("the leader's node " + node + " is gone before the failover");
    }
    const double watches0 = a.mntr.empty() ? -1 : ctx.mntr().value("zk_watch_count");

    std::unique_ptr<zkr::LeaderLatch> latch;
    std::unique_ptr<zkr::LeaderSelector> selector;
    std::shared_ptr<Stamp> leads;
    if (a.recipe == "latch") {
      leads = std::make_shared<Stamp>();
      latch = std::make_unique<zkr::LeaderLatch>(follower, path, "follower");
      latch->add_listener({.is_leader = [leads] { leads->set(); }, .not_leader = {}});
      latch->start();
    } else {
      auto listener = std::make_shared<HoldingListener>();
      leads = listener->started;
      selector = std::make_unique<zkr::LeaderSelector>(follower, path, listener);
      selector->set_id("follower");
      selector->start();
    }
    // Queued: the server holds one more watch (ours, on the leader's node). Without --mntr, a moment.
    if (watches0 >= 0) {
      const auto dl = Clock::now() + 10s;
      while (ctx.mntr().value("zk_watch_count") < watches0 + 1 && Clock::now() < dl)
        std::this_thread::sleep_for(5ms);
    } else {
      std::this_thread::sleep_for(500ms);
    }

    auto before = ctx.mntr().sample();
    const auto cpu0 = cpu_ns();
    std::int64_t end = 0;
    if (kill) {
      end = now_ns();
      leader.kill();
    } else {
      leader.send("close");
      const std::string closing = leader.read_line(Clock::now() + lead_within);
      if (closing.rfind("CLOSING ", 0) != 0)
        ctx.fatal("leader process: expected CLOSING, got '" + closing + "'");
      end = std::strtoll(closing.c_str() + 8, nullptr, 10);
    }
    const auto led = leads->wait_for(lead_within);
    if (!led) ctx.fatal("failover " + std::to_string(i) + ": the follower did not lead in time");
    auto after = ctx.mntr().sample();
    r.cpu_ns += cpu_ns() - cpu0;
    if (before && after) {
      for (const char* k : counters) sums[k] += (*after)[k] - (*before)[k];
      sums["zk_sum_node_deleted_watch_count"] -= 1;  // the observer's own watch
    } else {
      ctx.mntr().note_missing();
    }
    const auto noticed = deleted->wait_for(5s);
    lat.push_back(*led - end);
    r.seconds += double(*led - end) / 1e9;
    failover_ms.push_back(ms(*led - end));
    notice_ms.push_back(noticed ? ms(*led - *noticed) : Json());
    end_to_notice_ms.push_back(noticed ? ms(*noticed - end) : Json());

    if (!kill) {
      leader.send("exit");
      leader.wait_exit(20s);
    }
    if (latch)
      latch->close();
    else
      selector->close();
  }
  if (!ctx.mntr().has_error() && ctx.mntr().enabled()) ctx.mntr().set_sums(sums);
  std::sort(lat.begin(), lat.end());
  r.ops = n;
  r.lat_ns = std::move(lat);
  r.extra.emplace_back("sessions", 2);
  r.extra.emplace_back("recipe", a.recipe);
  r.extra.emplace_back("mode", a.mode);
  r.extra.emplace_back("session_timeout_ms", a.session_timeout_ms);
  r.extra.emplace_back("failover_ms", std::move(failover_ms));
  r.extra.emplace_back("notice_ms", std::move(notice_ms));
  r.extra.emplace_back("end_to_notice_ms", std::move(end_to_notice_ms));
  return r;
}

}  // namespace

Scenario failover_scenario() {
  return {
      "failover",
      "N [10] leader failovers: a leader in a process of its own, ours queued behind it, the leader ended "
      "(--mode); latency = end to our leadership",
      {"ops", "recipe", "mode", "session-timeout-ms"},
      run};
}

}  // namespace zkr_bench
