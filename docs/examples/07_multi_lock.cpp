// 07: InterProcessMultiLock: all of several locks or none, in list order. When the locks are free this costs
// one round trip to acquire and one to release, however many locks there are.
//
//   example_07_multi_lock 127.0.0.1:2181
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

  zkr::InterProcessMultiLock accounts(a, {"/examples/accounts/alice", "/examples/accounts/bob"});
  zkr::InterProcessMutex bob(b, "/examples/accounts/bob");

  int failures = 0;
  accounts.acquire();
  std::printf("holding both accounts: %s\n", accounts.is_acquired_in_this_process() ? "yes" : "no");
  bool bob_free = bob.acquire(300ms);
  std::printf("bob alone while the multi-lock holds it: %s\n", bob_free ? "acquired?!" : "waits (timed out)");
  failures += bob_free ? 1 : 0;
  accounts.release();

  bob.acquire();  // now bob is taken: the multi-lock must get all or nothing
  bool both = accounts.acquire(300ms);
  std::printf("multi-lock while bob is held elsewhere: %s\n",
              both ? "acquired?!" : "timed out, holds nothing");
  failures += both || accounts.is_acquired_in_this_process() ? 1 : 0;
  bob.release();
  return failures == 0 ? 0 : 1;
}
