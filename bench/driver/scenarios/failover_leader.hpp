#pragma once
// The leader process of the failover scenario (zkr_bench --scenario failover-leader).

#include "../context.hpp"

namespace zkr_bench {

/// The scenario name of the child mode.
inline constexpr const char* failover_leader_mode = "failover-leader";

/// Leads, reports, closes on request; returns the exit status.
int run_failover_leader(Context& ctx);

}  // namespace zkr_bench
