// 06: InterProcessReadWriteLock: readers share, a writer excludes everyone, the write holder may downgrade to
// a read lock, and an upgrade attempt fails at once instead of deadlocking.
//
//   example_06_read_write_lock 127.0.0.1:2181
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
  zkr::InterProcessReadWriteLock rw_a(a, "/examples/config");
  zkr::InterProcessReadWriteLock rw_b(b, "/examples/config");
  zkr::InterProcessReadWriteLock rw_c(b, "/examples/config");  // a third party, for the writer

  int failures = 0;
  rw_a.read_lock().acquire();
  bool shared = rw_b.read_lock().acquire(2s);  // readers share
  std::printf("two readers at once: %s\n", shared ? "yes" : "no");
  failures += shared ? 0 : 1;
  bool writer_blocked = !rw_c.write_lock().acquire(300ms);  // writers wait for readers
  std::printf("writer while readers hold: %s\n", writer_blocked ? "waits (timed out)" : "acquired?!");
  failures += writer_blocked ? 0 : 1;
  zkr::error_code ec;
  rw_a.write_lock().acquire(ec);  // upgrade: same thread holds the read lock
  std::printf("upgrade attempt: %s\n", ec.message().c_str());
  failures += ec == zkr::client_errc::would_deadlock ? 0 : 1;
  rw_b.read_lock().release();
  rw_a.read_lock().release();

  rw_a.write_lock().acquire();  // downgrade: write, then read, then give up the write
  rw_a.read_lock().acquire();
  rw_a.write_lock().release();
  bool reader_ok = rw_b.read_lock().acquire(2s);
  std::printf("after the downgrade another reader gets in: %s\n", reader_ok ? "yes" : "no");
  failures += reader_ok ? 0 : 1;
  rw_b.read_lock().release();
  rw_a.read_lock().release();
  return failures == 0 ? 0 : 1;
}
