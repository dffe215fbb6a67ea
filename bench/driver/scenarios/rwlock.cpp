// rwlock: 4 reader sessions + 1 writer session (InterProcessReadWriteLock), one thread each, looping for N
// [5000] milliseconds after W [500] unmeasured ones; ops = reads + writes; extra has reads/s and writes/s.

#include <atomic>
#include <thread>
#include <zkr/recipes/inter_process_read_write_lock.hpp>

#include "../scenario.hpp"
#include "../sync.hpp"

namespace zkr_bench {

namespace {

using namespace std::chrono_literals;

Result run(Context& ctx) {
  const Options& a = ctx.options();
  constexpr int readers = 4;
  const long duration_ms = or_default(a.ops, 5000);
  const long warm_ms = or_default(a.warmup, 500);
  std::vector<std::unique_ptr<zkr::InterProcessReadWriteLock>> rws;
  std::vector<zkr::InterProcessMutex*> locks;
  for (int i = 0; i < readers + 1; ++i) {
    rws.push_back(std::make_unique<zkr::InterProcessReadWriteLock>(ctx.new_session(), a.path));
    if (i < readers)
      locks.push_back(&rws.back()->read_lock());
    else
      locks.push_back(&rws.back()->write_lock());
  }
  std::atomic<bool> measuring{false}, stop{false};
  std::vector<std::vector<std::int64_t>> lats(readers + 1);
  std::vector<long> warm_ops(readers + 1, 0), timeouts(readers + 1, 0);
  Failure failure;
  std::vector<std::thread> crew;
  for (int i = 0; i < readers + 1; ++i) {
    crew.emplace_back([&, i] {
      try {
        auto& m = *locks[std::size_t(i)];
        auto& lat = lats[std::size_t(i)];
        while (!stop.load()) {
          bool counted = measuring.load();
          auto s = now_ns();
          if (!m.acquire(10s)) {
            ++timeouts[std::size_t(i)];
            continue;
          }
          m.release();
          auto d = now_ns() - s;
          if (counted && !stop.load())
            lat.push_back(d);
          else
            ++warm_ops[std::size_t(i)];
        }
      } catch (const std::exception& e) {
        failure.set(e.what());
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(warm_ms));
  if (auto f = failure.get()) ctx.fatal("worker failed: " + *f);
  Result r;
  ctx.mark_start();
  measuring = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(duration_ms));
  stop = true;
  ctx.mark_end(r);
  for (auto& t : crew) t.join();
  if (auto f = failure.get()) ctx.fatal("worker failed: " + *f);

  std::vector<std::vector<std::int64_t>> read_parts(lats.begin(), lats.begin() + readers);
  auto read_lat = merge_sorted(read_parts);
  auto write_lat = merge_sorted({lats[readers]});
  auto all = merge_sorted(lats);
  long warm_total = 0, timeout_total = 0;
  for (int i = 0; i < readers + 1; ++i)
    warm_total += warm_ops[std::size_t(i)], timeout_total += timeouts[std::size_t(i)];
  r.ops = long(all.size());
  r.lat_ns = std::move(all);
  r.extra.emplace_back("sessions", readers + 1);
  r.extra.emplace_back("readers", readers);
  r.extra.emplace_back("writers", 1);
  r.extra.emplace_back("duration_ms", duration_ms);
  r.extra.emplace_back("reads", long(read_lat.size()));
  r.extra.emplace_back("writes", long(write_lat.size()));
  r.extra.emplace_back("reads_per_sec", double(read_lat.size()) / r.seconds);
  r.extra.emplace_back("writes_per_sec", double(write_lat.size()) / r.seconds);
  r.extra.emplace_back("read_p50_us", percentile_us(read_lat, 0.50));
  r.extra.emplace_back("read_p99_us", percentile_us(read_lat, 0.99));
  r.extra.emplace_back("write_p50_us", percentile_us(write_lat, 0.50));
  r.extra.emplace_back("write_p99_us", percentile_us(write_lat, 0.99));
  r.extra.emplace_back("timeouts", timeout_total);
  r.extra.emplace_back("total_ops", r.ops + warm_total);
  return r;
}

}  // namespace

Scenario rwlock_scenario() {
  return {"rwlock",
          "4 reader sessions + 1 writer session (InterProcessReadWriteLock), a thread each, looping for N "
          "[5000] ms; "
          "ops = reads + writes",
          {"ops", "warmup"},
          run};
}

}  // namespace zkr_bench
