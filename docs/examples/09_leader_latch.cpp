// 09: leader election. Two LeaderLatch participants on one path: the first leads, the second awaits its turn
// (asynchronously) and takes over, with a larger fencing token, once the first closes. A LeaderSelector then
// runs a task while it leads and gives leadership up when the task returns.
//
//   example_09_leader_latch 127.0.0.1:2181
#include <boost/asio/use_future.hpp>
#include <cstdio>
#include <future>
#include <zkr/zkrecipes.hpp>

namespace {

/// Runs one step as leader; the adapter stops the term on SUSPENDED and LOST.
struct OneStep : zkr::LeaderSelectorListenerAdapter {
  std::promise<std::int64_t> done;
  void take_leadership(zkr::CuratorFramework&, zkr::Leadership& l) override {
    std::printf("selector leads, token %lld\n", static_cast<long long>(l.fencing_token()));
    done.set_value(l.fencing_token());
  }  // returning gives leadership up
};

}  // namespace

int main(int argc, char** argv) {
  using namespace std::chrono_literals;
  const std::string connect = argc > 1 ? argv[1] : "127.0.0.1:2181";
  zkr::CuratorFramework client(
      {.connect_string = connect, .retry_policy = std::make_shared<zkr::RetryNTimes>(3, zkr::Millis(100))});
  client.start();

  zkr::LeaderLatch first(client, "/examples/leader", "first");
  zkr::LeaderLatch second(client, "/examples/leader", "second");
  second.add_listener({.is_leader = [] { std::printf("second: is_leader\n"); },
                       .not_leader = [] { std::printf("second: not_leader\n"); }});
  first.start();
  if (!first.await(30s)) return 1;
  second.start();
  auto turn = second.async_await(boost::asio::use_future);

  const auto leader = first.get_leader();
  std::printf("leader: %s, token %lld\n", leader.id.c_str(), static_cast<long long>(first.fencing_token()));
  const auto first_token = first.fencing_token();
  first.close();
  if (turn.wait_for(30s) != std::future_status::ready) return 1;
  turn.get();
  std::printf("second leads, token %lld (larger: %s)\n", static_cast<long long>(second.fencing_token()),
              second.fencing_token() > first_token ? "yes" : "no");
  if (second.fencing_token() <= first_token) return 1;
  second.close();

  auto task = std::make_shared<OneStep>();
  auto led = task->done.get_future();
  zkr::LeaderSelector selector(client, "/examples/selector", task);
  selector.set_id("selector");
  selector.start();
  if (led.wait_for(30s) != std::future_status::ready) return 1;
  selector.close();
  return 0;
}
