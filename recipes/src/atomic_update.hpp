#pragma once
// `AtomicUpdate`: one read-compute-write of a distributed atomic number (Curator's `tryOptimistic` then
// `tryWithMutex`), on the client's I/O thread. Private to recipes/src.

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <zkr/recipes/detail/atomic_engine.hpp>
#include <zkr/recipes/lease.hpp>

namespace zkr::detail {

class AtomicUpdate : public std::enable_shared_from_this<AtomicUpdate> {
 public:
  using Next = std::function<std::int64_t(std::int64_t)>;

  /// Tries: read, `next(pre)`, then a versioned write (a create when the node is missing); while another
  /// writer wins (bad version, node exists, no node), again after the pause `retry` allows; when it gives
  /// up and `promoted` is set, the same under the lock `lock` with the promoted policy. `cb`: the outcome
  /// (I/O thread), after the lock, if taken, is released.
  static void start(std::shared_ptr<AtomicEngine> engine, std::shared_ptr<LockInternals> lock,
                    std::optional<PromotedToLock> promoted, RetryPolicyPtr retry, Next next,
                    AtomicCallback cb);

  AtomicUpdate(std::shared_ptr<AtomicEngine> engine, std::shared_ptr<LockInternals> lock,
               std::optional<PromotedToLock> promoted, RetryPolicyPtr retry, Next next, AtomicCallback cb);

 private:
  using Clock = std::chrono::steady_clock;
  void try_once();
  void write(bool missing, std::int64_t pre);
  void lost_race();
  void phase_over();
  void promote();
  void finish(error_code ec);
  void account();

  std::shared_ptr<AtomicEngine> engine_;
  std::shared_ptr<LockInternals> lock_;
  std::optional<PromotedToLock> promoted_;
  RetryPolicyPtr retry_;
  Next next_;
  AtomicCallback cb_;
  AtomicOutcome out_;
  bool under_lock_ = false;
  int retries_ = 0;
  std::int32_t version_ = 0;  // of the last read
  Clock::time_point phase_start_ = Clock::now();
  boost::asio::steady_timer timer_;
  Lease lease_;
};

}  // namespace zkr::detail
