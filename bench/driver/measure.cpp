#include "measure.hpp"

#include <dirent.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <fstream>

namespace zkr_bench {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

std::int64_t cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::int64_t context_switches() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return std::int64_t(ru.ru_nvcsw) + std::int64_t(ru.ru_nivcsw);
}

double rusage_cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

double peak_rss_mb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  }
  return -1;
}

namespace {

int thread_count() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') ++n;
    }
    ::closedir(d);
  }
  return n;
}

std::atomic<int> max_threads_seen{0};

}  // namespace

void sample_threads() {
  int n = thread_count();
  int m = max_threads_seen.load();
  while (n > m && !max_threads_seen.compare_exchange_weak(m, n)) {
  }
}

int max_threads() { return max_threads_seen.load(); }

std::optional<double> percentile_us(const std::vector<std::int64_t>& sorted_ns, double p) {
  if (sorted_ns.empty()) return std::nullopt;
  auto rank = static_cast<long>(std::ceil(p * double(sorted_ns.size())));
  auto idx = std::min<long>(long(sorted_ns.size()) - 1, std::max<long>(0, rank - 1));
  return std::round(double(sorted_ns[std::size_t(idx)]) / 100.0) / 10.0;
}

std::vector<std::int64_t> merge_sorted(const std::vector<std::vector<std::int64_t>>& all) {
  std::vector<std::int64_t> out;
  for (const auto& v : all) out.insert(out.end(), v.begin(), v.end());
  std::sort(out.begin(), out.end());
  return out;
}

std::int64_t sequence_of(const std::string& node) {
  if (node.size() < 10) return -1;
  return std::strtoll(node.c_str() + node.size() - 10, nullptr, 10);
}

}  // namespace zkr_bench
