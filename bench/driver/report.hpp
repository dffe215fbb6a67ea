#pragma once
// zkr_bench's one output line: the scenario's Result with the parameters and the process-wide extras.

#include <ostream>

#include "context.hpp"

namespace zkr_bench {

/// {"library":"zkrecipes","scenario":...,"params":{...},"ops":n,"seconds":s,"ops_per_sec":x,"p50_us":...,
///  "p99_us":...,"cpu_seconds":c,"fifo_ok":true|false|null,"extra":{...}} and a newline.
void write_result_line(std::ostream& os, Context& ctx, Result r);

}  // namespace zkr_bench
