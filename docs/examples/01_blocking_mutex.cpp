// 01: a blocking InterProcessMutex, as ported Java code uses it: several threads of two clients (two
// sessions) take turns; reentrancy is counted per thread; std::scoped_lock works too.
//
//   example_01_blocking_mutex 127.0.0.1:2181
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>
#include <zkr/zkrecipes.hpp>

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  const std::string connect = argc > 1 ? argv[1] : "127.0.0.1:2181";
  auto retry = std::make_shared<zkr::ExponentialBackoffRetry>(zkr::Millis(100), 3);
  zkr::CuratorFramework a({.connect_string = connect, .retry_policy = retry});
  zkr::CuratorFramework b({.connect_string = connect, .retry_policy = retry});
  a.start();
  b.start();

  int shared_counter = 0;  // protected only by the distributed lock
  std::vector<std::thread> workers;
  for (int i = 0; i < 4; ++i) {
    workers.emplace_back([&, i] {
      zkr::InterProcessMutex mutex(i % 2 ? a : b, "/examples/counter");
      for (int round = 0; round < 5; ++round) {
        mutex.acquire();
        mutex.acquire();  // reentrant: same thread, no extra node
        int seen = shared_counter;
        std::this_thread::sleep_for(1ms);
        shared_counter = seen + 1;
        mutex.release();
        mutex.release();
      }
    });
  }
  for (auto& w : workers) w.join();

  zkr::InterProcessMutex m(a, "/examples/counter");
  {
    std::scoped_lock guard(m);  // Lockable: lock() / unlock()
    std::printf("holding %s with fencing token %lld\n", m.lock_path().c_str(),
                static_cast<long long>(m.fencing_token()));
  }
  std::printf("counter = %d (expected 20)\n", shared_counter);
  return shared_counter == 20 ? 0 : 1;
}
