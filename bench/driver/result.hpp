#pragma once
// What a scenario measured: the figures every driver reports, before the process-wide extras.

#include <cstdint>
#include <optional>
#include <vector>

#include "json.hpp"

namespace zkr_bench {

/// What a scenario measured. `lat_ns` sorted; the output line adds the process-wide extras.
struct Result {
  long ops = 0;
  double seconds = 0;
  std::vector<std::int64_t> lat_ns;
  std::optional<bool> fifo_ok;
  std::int64_t cpu_ns = 0;
  std::int64_t context_switches = -1;  ///< the process's, during the measured part (-1: not measured)
  JsonObject extra;
};

}  // namespace zkr_bench
