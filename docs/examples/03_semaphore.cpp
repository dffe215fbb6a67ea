// 03: InterProcessSemaphoreV2 with 3 leases shared by two clients; acquire several at once (all or none),
// return them individually or all together.
//
//   example_03_semaphore 127.0.0.1:2181
#include <cstdio>
#include <zkr/zkrecipes.hpp>

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  const std::string connect = argc > 1 ? argv[1] : "127.0.0.1:2181";
  auto retry = std::make_shared<zkr::RetryNTimes>(3, zkr::Millis(100));
  zkr::CuratorFramework a({.connect_string = connect, .retry_policy = retry});
  zkr::CuratorFramework b({.connect_string = connect, .retry_policy = retry});
  a.start();
  b.start();

  zkr::InterProcessSemaphoreV2 pool_a(a, "/examples/pool", 3);
  zkr::InterProcessSemaphoreV2 pool_b(b, "/examples/pool", 3);

  std::vector<zkr::Lease> two = pool_a.acquire(2);
  std::printf("a holds %zu leases\n", two.size());
  std::vector<zkr::Lease> too_many = pool_b.acquire(2, 300ms);  // only 1 left: all or none
  std::printf("b asking for 2 more: %s\n", too_many.empty() ? "none (timed out)" : "granted?!");
  zkr::Lease one = pool_b.acquire(1s);
  std::printf("b asking for 1: %s (%s)\n", one ? "granted" : "timed out", one.node_name().c_str());
  pool_a.return_lease(std::move(two[0]));
  zkr::Lease another = pool_b.acquire(5s);
  std::printf("after a returned one, b got another: %s\n", another ? "yes" : "no");
  pool_b.return_all({});
  bool ok = two.size() == 2 && too_many.empty() && one && another;
  return ok ? 0 : 1;
}
