// 11: shared values and counters. A SharedCount tells its listener about every change; a compare-and-set
// with a stale version fails and one with the fresh version succeeds; a DistributedAtomicLong counts from
// four threads without losing an increment; a DistributedAtomicValue swaps bytes only when they are the
// expected ones; a semaphore takes its number of leases from the shared count.
//
//   example_11_counters 127.0.0.1:2181
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>
#include <zkr/zkrecipes.hpp>

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  const std::string connect = argc > 1 ? argv[1] : "127.0.0.1:2181";
  zkr::CuratorFramework client(
      {.connect_string = connect, .retry_policy = std::make_shared<zkr::RetryNTimes>(3, zkr::Millis(100))});
  client.start();
  if (!client.block_until_connected(30s)) return 1;

  // A shared count: 4 bytes big-endian at /examples/counters/limit, created with the seed if missing.
  zkr::SharedCount limit(client, "/examples/counters/limit", 1);
  std::atomic<int> heard{0};
  limit.add_listener({[&](std::int32_t n) {
                        std::printf("count is now %d\n", n);
                        heard = n;
                      },
                      {}});
  limit.start();
  const auto seen = limit.versioned_count();
  limit.set_count(2);                                              // moves the version on
  if (limit.try_set_count(seen, 5)) return 1;                      // stale version: refused
  if (!limit.try_set_count(limit.versioned_count(), 3)) return 1;  // fresh version: done
  for (int i = 0; i < 3000 && heard.load() != 3; ++i) std::this_thread::sleep_for(10ms);
  if (heard.load() != 3) return 1;

  // A distributed counter: 8 bytes big-endian, optimistic writes retried under the policy.
  auto retry = std::make_shared<zkr::RetryNTimes>(100, zkr::Millis(5));
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t)
    workers.emplace_back([&] {
      zkr::DistributedAtomicLong hits(client, "/examples/counters/hits", retry);
      for (int i = 0; i < 10; ++i) hits.increment();
    });
  for (auto& w : workers) w.join();
  const auto total = zkr::DistributedAtomicLong(client, "/examples/counters/hits", retry).get();
  std::printf("hits = %lld\n", static_cast<long long>(total.post_value));
  if (total.post_value != 40) return 1;

  // A distributed value: any bytes, swapped only when they are the ones expected.
  zkr::DistributedAtomicValue config(client, "/examples/counters/config", retry);
  config.initialize("v1");
  const bool stale = config.compare_and_set("v0", "v2").succeeded;
  const auto swapped = config.compare_and_set("v1", "v2");
  std::printf("stale swap %s, fresh swap %s (%s -> %s)\n", stale ? "applied" : "refused",
              swapped.succeeded ? "applied" : "refused", swapped.pre_value.c_str(),
              swapped.post_value.c_str());
  if (stale || !swapped.succeeded) return 1;

  // A semaphore whose number of leases is the shared count (3 now).
  zkr::InterProcessSemaphoreV2 pool(client, "/examples/counters/pool", limit);
  auto leases = pool.acquire(3);
  std::printf("%zu leases of %d\n", leases.size(), pool.max_leases());
  if (leases.size() != 3) return 1;
  pool.return_all(std::move(leases));

  limit.close();
  client.remove("/examples/counters", {.deleting_children = true});
  return 0;
}
