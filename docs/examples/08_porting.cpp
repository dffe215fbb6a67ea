// 08: the C++ side of the side-by-side example in docs/porting-from-curator.md.
//
//   example_08_porting 127.0.0.1:2181
#include <cstdio>
#include <mutex>
#include <zkr/zkrecipes.hpp>

using namespace std::chrono_literals;

static int processed = 0, queried = 0;
static void process_orders(std::int64_t token) {
  std::printf("processing orders under fencing token %lld\n", static_cast<long long>(token));
  ++processed;
}
static void query() { ++queried; }

int main(int argc, char** argv) {
  const std::string connect = argc > 1 ? argv[1] : "127.0.0.1:2181";
  auto client = zkr::CuratorFrameworkFactory::new_client(
      connect, std::make_shared<zkr::ExponentialBackoffRetry>(zkr::Millis(1000), 3));
  client->start();
  zkr::InterProcessMutex lock(*client, "/locks/orders");
  if (lock.acquire(10s)) {
    std::unique_lock guard(lock, std::adopt_lock);  // the `finally`: unlock() = release() on scope exit
    process_orders(lock.fencing_token());
  }

  zkr::InterProcessSemaphoreV2 pool(*client, "/pools/db", 5);
  if (zkr::Lease lease = pool.acquire(2s)) {
    query();
  }  // the lease is returned by its destructor (or pool.return_lease(std::move(lease)))
  bool released = !lock.is_acquired_in_this_process();
  std::printf("processed=%d queried=%d released=%s\n", processed, queried, released ? "yes" : "no");
  return processed == 1 && queried == 1 && released ? 0 : 1;
}
