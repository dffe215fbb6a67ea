#pragma once
// `AtomicUpdate`: one read-compute-write of a distributed atomic value or number (Curator's `tryOptimistic`
// then `tryWithMutex`; a compare-and-set is one try of it), on the client's I/O thread. Private to
// recipes/src.

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <zkr/recipes/detail/atomic_engine.hpp>
#include <zkr/recipes/lease.hpp>

namespace zkr::detail {

class AtomicUpdate : public std::enable_shared_from_this<AtomicUpdate> {
 public:
  /// The value to write, from the value read (`AtomicEngine::read`'s bytes; `missing`: there is no node, and
  /// `pre` is what empty data reads as); nullopt: write nothing, the update does not succeed.
  using Next = std::function<std::optional<std::string>(bool missing, const std::string& pre)>;

  /// Tries: read, `next(pre)`, then a versioned write (a create when the node is missing); while another
  /// writer wins (bad version, node exists, no node), again after the pause `retry` allows; when it gives
  /// up and `promoted` is set, the same under the lock `lock` with the promoted policy. `cb`: the outcome
  /// (I/O thread), after the lock, if taken, is released.
  ///
  /// A write whose answer is lost with the connection is not sent again blindly (it may have been applied):
  /// it is a conditional write (`RequestOptions::conditional`), which the client's retry loop sends again
  /// only when the node is as it was read; changed: `client_errc::outcome_unknown`.
  static void start(std::shared_ptr<AtomicEngine> engine, std::shared_ptr<LockInternals> lock,
                    std::optional<PromotedToLock> promoted, RetryPolicyPtr retry, Next next,
                    AtomicCallback cb);

  AtomicUpdate(std::shared_ptr<AtomicEngine> engine, std::shared_ptr<LockInternals> lock,
               std::optional<PromotedToLock> promoted, RetryPolicyPtr retry, Next next, AtomicCallback cb);

 private:
  using Clock = std::chrono::steady_clock;
  void try_once();
  void write(bool missing, std::string pre);
  void written(error_code ec, std::string v);
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
