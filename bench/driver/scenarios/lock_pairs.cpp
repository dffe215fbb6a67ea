#include "lock_pairs.hpp"

#include <algorithm>

namespace zkr_bench {

Result lock_pairs(Context& ctx, zkr::InterProcessLock& lock, int n, int warm) {
  for (int i = 0; i < warm; ++i) {
    lock.acquire();
    lock.release();
  }
  std::vector<std::int64_t> lat;
  lat.reserve(std::size_t(n));
  Result r;
  ctx.mark_start();
  for (int i = 0; i < n; ++i) {
    auto s = now_ns();
    lock.acquire();
    lock.release();
    lat.push_back(now_ns() - s);
  }
  ctx.mark_end(r);
  r.ops = n;
  std::sort(lat.begin(), lat.end());
  r.lat_ns = std::move(lat);
  r.extra.emplace_back("total_ops", n + warm);
  return r;
}

}  // namespace zkr_bench
