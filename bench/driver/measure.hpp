#pragma once
// What the driver measures besides the scenarios' own latencies: clocks, the process's CPU time, peak RSS and
// thread count, and the nearest-rank percentiles every driver (Java, Python, C++) computes the same way.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace zkr_bench {

using Clock = std::chrono::steady_clock;

/// The steady clock in ns (CLOCK_MONOTONIC: the failover leader's process reads the same clock).
std::int64_t now_ns();
/// The process's user+sys CPU time (CLOCK_PROCESS_CPUTIME_ID) in ns.
std::int64_t cpu_ns();
/// The context switches of every thread of the process so far, voluntary and not (getrusage).
std::int64_t context_switches();
/// The whole process's user+sys CPU time from getrusage, in seconds.
double rusage_cpu_seconds();
/// VmHWM (peak resident set) in MiB, from /proc/self/status; -1 when unreadable.
double peak_rss_mb();

/// Records the current thread count (/proc/self/task) when it is the largest seen; called at the interesting
/// moments and while waiting.
void sample_threads();
/// The largest thread count `sample_threads` saw.
int max_threads();

/// Nearest-rank percentile in microseconds (one decimal); nullopt without samples.
std::optional<double> percentile_us(const std::vector<std::int64_t>& sorted_ns, double p);
/// All samples, sorted.
std::vector<std::int64_t> merge_sorted(const std::vector<std::vector<std::int64_t>>& all);
/// The sequence number at the end of a lock node's name; -1 when it has none.
std::int64_t sequence_of(const std::string& node);

}  // namespace zkr_bench
