#include "async_drain.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include "../sync.hpp"

namespace zkr_bench {

using namespace std::chrono_literals;

DrainOutcome async_drain(Context& ctx, zkr::InterProcessMutex& holder,
                         const std::vector<zkr::CuratorFramework*>& waiter_sessions, long w,
                         Clock::duration poll_every) {
  const Options& a = ctx.options();
  holder.acquire();
  std::vector<std::unique_ptr<zkr::InterProcessMutex>> mutexes;
  for (auto* s : waiter_sessions) mutexes.push_back(ctx.mutex(*s));

  std::vector<std::int64_t> acquired_at(std::size_t(w), 0);  // by acquisition order
  std::vector<std::int64_t> seq_by_order(std::size_t(w), -1);
  std::atomic<long> order{0};
  std::atomic<long> release_errors{0};
  Countdown finished(w);
  Failure failure;

  const long watch_base = a.mntr.empty() ? -1 : long(ctx.mntr().value("zk_watch_count"));
  const auto e0 = now_ns();
  for (long i = 0; i < w; ++i) {
    auto& m = *mutexes[std::size_t(i) % mutexes.size()];
    m.async_acquire([&](zkr::error_code ec, zkr::Lease lease) {
      if (ec || !lease) {
        failure.set("async_acquire: " + (ec ? ec.message() : std::string("no lease")));
        finished.count_down();
        return;
      }
      // Exact: we hold the lock, and the next holder can only be granted after our release below.
      long pos = order.fetch_add(1);
      if (pos < w) {
        acquired_at[std::size_t(pos)] = now_ns();
        seq_by_order[std::size_t(pos)] = sequence_of(lease.node_path());
      }
      lease.async_release([&](zkr::error_code rec) {
        if (rec) release_errors.fetch_add(1);
        finished.count_down();
      });
    });
  }

  // Wait until every waiter's node is queued (plus the holder's): the parent's child count (a stat, not a
  // listing, so the probe stays cheap with 10,000 children).
  auto dl = ctx.deadline();
  auto& probe = *waiter_sessions.front();
  for (;;) {
    if (auto f = failure.get()) ctx.fatal(*f);
    long have = 0;
    zkr::error_code ec;
    if (auto st = probe.exists(a.path, {}, ec); !ec && st) have = st->num_children;
    if (have >= w + 1) break;
    if (Clock::now() > dl) {
      ctx.fatal("only " + std::to_string(have) + " of " + std::to_string(w + 1) + " nodes queued in time");
    }
    sample_threads();
    std::this_thread::sleep_for(poll_every);
  }
  // Every node exists, but the last waiters may still be listing the children and setting their watch. With
  // --mntr, wait until the server holds W more watches than before the enqueue (each waiter watches its
  // predecessor); otherwise give them a moment. (A waiter not yet watching is still correct: it only lists
  // again when its get_data returns; this keeps the measured part to the drain itself.)
  long watches = -1;
  if (watch_base >= 0) {
    const auto settle_dl = std::min(dl, Clock::now() + 60s);
    for (;;) {
      if (auto f = failure.get()) ctx.fatal(*f);
      watches = long(ctx.mntr().value("zk_watch_count")) - watch_base;
      if (watches >= w || Clock::now() > settle_dl) break;
      sample_threads();
      std::this_thread::sleep_for(poll_every);
    }
  } else {
    std::this_thread::sleep_for(std::min<Clock::duration>(poll_every * 10, 500ms));
  }
  DrainOutcome out;
  out.enqueue_seconds = double(now_ns() - e0) / 1e9;
  out.watches_before_release = watches;

  Result& r = out.r;
  ctx.mark_start();
  const auto t0 = ctx.start_ns();
  holder.release();
  while (!finished.wait_for(10ms)) {
    sample_threads();
    if (Clock::now() > dl) ctx.fatal(std::to_string(finished.left()) + " waiters left at the deadline");
  }
  ctx.mark_end(r);
  if (auto f = failure.get()) ctx.fatal(*f);

  std::vector<std::int64_t> gaps;
  gaps.reserve(std::size_t(w));
  bool fifo = order.load() == w;
  for (long i = 0; i < w && i < order.load(); ++i) {
    gaps.push_back(acquired_at[std::size_t(i)] - (i == 0 ? t0 : acquired_at[std::size_t(i) - 1]));
    if (i > 0 && seq_by_order[std::size_t(i)] <= seq_by_order[std::size_t(i) - 1]) fifo = false;
  }
  std::sort(gaps.begin(), gaps.end());
  r.ops = w;
  r.lat_ns = std::move(gaps);
  r.fifo_ok = fifo;
  out.release_errors = release_errors.load();
  return out;
}

}  // namespace zkr_bench
