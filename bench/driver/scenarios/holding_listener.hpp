#pragma once
// The failover's LeaderSelector listener (the leader process's and the follower's).

#include <condition_variable>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <zkr/recipes/leader_selector.hpp>

#include "../sync.hpp"

namespace zkr_bench {

/// The failover's LeaderSelector listener: stamps the start of its first term and keeps leadership until the
/// term is asked to stop (close).
class HoldingListener : public zkr::LeaderSelectorListenerAdapter {
 public:
  void take_leadership(zkr::CuratorFramework&, zkr::Leadership& l) override {
    {
      std::lock_guard lk(m_);
      node_ = l.lease().node_path();
    }
    started->set();
    std::mutex hold;
    std::unique_lock lk(hold);
    std::condition_variable_any cv;
    cv.wait(lk, l.stop_token(), [] { return false; });
  }
  std::string node() const {
    std::lock_guard lk(m_);
    return node_;
  }
  const std::shared_ptr<Stamp> started = std::make_shared<Stamp>();

 private:
  mutable std::mutex m_;
  std::string node_;
};

}  // namespace zkr_bench
