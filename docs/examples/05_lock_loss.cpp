// 05: reacting to lock loss. Each grant carries a loss signal: maybe_lost while the connection is SUSPENDED,
// lost once the session expired (or the node was deleted). Here the session is expired on purpose.
//
//   example_05_lock_loss 127.0.0.1:2181
#include <boost/asio/use_future.hpp>
#include <cstdio>
#include <future>
#include <zkr/zkrecipes.hpp>

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  const std::string connect = argc > 1 ? argv[1] : "127.0.0.1:2181";
  zkr::CuratorFramework client({.connect_string = connect,
                                .retry_policy = std::make_shared<zkr::RetryNTimes>(3, zkr::Millis(100)),
                                .session_timeout = 4s});
  client.start();
  client.add_connection_state_listener([](zkr::ConnectionState s) {
    std::printf("connection: %s\n", std::string(zkr::to_string(s)).c_str());
  });

  zkr::InterProcessMutex mutex(client, "/examples/loss");
  zkr::Lease lease = mutex.async_acquire(boost::asio::use_future).get();
  std::printf("holding %s\n", lease.node_path().c_str());
  lease.on_status_change(
      [](zkr::LeaseStatus s) { std::printf("lease status: %s\n", std::string(zkr::to_string(s)).c_str()); });
  auto lost = lease.async_wait_lost(boost::asio::use_future);

  client.inject_session_expiration();
  if (lost.wait_for(30s) != std::future_status::ready) {
    std::printf("no loss signal within 30 s\n");
    return 1;
  }
  std::printf("lost: stop using the resource; status is %s\n",
              std::string(zkr::to_string(lease.status())).c_str());
  return lease.status() == zkr::LeaseStatus::lost ? 0 : 1;
}
