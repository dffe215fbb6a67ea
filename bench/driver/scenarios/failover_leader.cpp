// The failover's child mode (scenario failover-leader, not listed): the leader process the failover scenario
// spawns. It leads on --path (--recipe), prints "LEADING <node>"; on the input line "close" closes its
// participant and prints "CLOSING <steady ns just before close()>"; exits on "exit" or at the end of its
// input (its session closed then, not before: no closeSession in the parent's measured window).

#include "failover_leader.hpp"

#include <iostream>
#include <zkr/recipes/leader_latch.hpp>
#include <zkr/recipes/leader_selector.hpp>

#include "../context.hpp"
#include "holding_listener.hpp"

namespace zkr_bench {

using namespace std::chrono_literals;

int run_failover_leader(Context& ctx) {
  const Options& a = ctx.options();
  auto& c = ctx.new_session();
  std::unique_ptr<zkr::LeaderLatch> latch;
  std::unique_ptr<zkr::LeaderSelector> selector;
  std::string node;
  if (a.recipe == "latch") {
    latch = std::make_unique<zkr::LeaderLatch>(c, a.path, "leader");
    latch->start();
    if (!latch->await(30s)) ctx.fatal("no leadership within 30 s");
    node = latch->our_path();
  } else {
    auto listener = std::make_shared<HoldingListener>();
    selector = std::make_unique<zkr::LeaderSelector>(c, a.path, listener);
    selector->set_id("leader");
    selector->start();
    if (!listener->started->wait_for(30s)) ctx.fatal("no leadership within 30 s");
    node = listener->node();
  }
  std::cout << "LEADING " << node << std::endl;
  std::string line;
  while (std::getline(std::cin, line) && line != "exit") {
    if (line != "close") continue;
    const auto t = now_ns();
    if (latch)
      latch->close();
    else
      selector->close();
    std::cout << "CLOSING " << t << std::endl;
  }
  selector.reset();
  latch.reset();
  ctx.close_sessions();
  return 0;
}

}  // namespace zkr_bench
