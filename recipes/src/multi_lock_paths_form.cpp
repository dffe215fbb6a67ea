// The paths form of InterProcessMultiLock (`InterProcessMultiLock(client, paths)`): one mutex per path,
// acquired by the batched acquire (multi_acquire.cpp). Blocking holds belong to the calling thread and are
// reentrant (a MultiLease per thread, as the mutex keeps a Lease per thread); asynchronous acquires return
// the MultiLease to their caller.

#include <algorithm>
#include <thread>
#include <unordered_map>
#include <zkr/framework/detail/async.hpp>

#include "multi_lock_internals.hpp"
#include "thread_holds.hpp"

namespace zkr::detail {

namespace {

class PathsForm final : public MultiLockForm {
 public:
  explicit PathsForm(std::shared_ptr<MultiShared> shared) : shared_(std::move(shared)) {}

  std::size_t size() const noexcept override { return shared_->engines.size(); }

  bool acquire(std::optional<std::chrono::milliseconds> timeout, error_code& ec) override {
    if (reenter_hold(mu_, holds_)) return true;
    std::optional<std::chrono::steady_clock::time_point> deadline;
    if (timeout)
      deadline = std::chrono::steady_clock::now() + std::max(*timeout, std::chrono::milliseconds(0));
    MultiLease lease = run_blocking<MultiLease>(
        *shared_->core,
        [s = shared_, deadline](unique_function<void(error_code, MultiLease)> cb) mutable {
          multi_acquire(std::move(s), deadline, nullptr, std::move(cb));
        },
        ec);
    if (ec || !lease) return false;
    std::lock_guard lk(mu_);
    holds_[std::this_thread::get_id()] = Hold{std::move(lease), 1};
    return true;
  }

  void release(error_code& ec) override {
    auto lease = leave_hold(mu_, holds_, ec, [] {});
    if (lease) lease->release(ec);
  }

  bool is_acquired_in_this_process() const override {
    std::lock_guard lk(mu_);
    return !holds_.empty();
  }

  bool hold_lost() const override {
    std::lock_guard lk(mu_);
    const auto* hold = mine();
    if (!hold) return false;
    const auto& leases = hold->lease.leases();
    return std::any_of(leases.begin(), leases.end(),
                       [](const Lease& l) { return l.status() == LeaseStatus::lost; });
  }

  std::shared_ptr<Core> grant_core() const override { return shared_->core; }

  void start_acquire(std::optional<std::chrono::steady_clock::time_point> deadline,
                     std::shared_ptr<CancelState> cancel,
                     unique_function<void(error_code, MultiLease)> done) override {
    multi_acquire(shared_, deadline, std::move(cancel), std::move(done));
  }

  bool owned_by_current_thread() const override {
    std::lock_guard lk(mu_);
    return mine() != nullptr;
  }
  std::vector<std::int64_t> fencing_tokens() const override {
    std::lock_guard lk(mu_);
    const auto* hold = mine();
    return hold ? hold->lease.fencing_tokens() : std::vector<std::int64_t>{};
  }
  std::vector<std::string> lock_paths() const override {
    std::lock_guard lk(mu_);
    const auto* hold = mine();
    return hold ? hold->lease.node_paths() : std::vector<std::string>{};
  }
  void set_node_data(std::optional<std::string> data) override {
    std::lock_guard lk(shared_->mu);
    shared_->node_data = std::move(data);
  }

 private:
  struct Hold {
    MultiLease lease;
    int count = 0;
  };
  /// The calling thread's hold, or null (under `mu_`).
  const Hold* mine() const {
    auto it = holds_.find(std::this_thread::get_id());
    return it == holds_.end() ? nullptr : &it->second;
  }

  std::shared_ptr<MultiShared> shared_;
  mutable std::mutex mu_;
  std::unordered_map<std::thread::id, Hold> holds_;  // held MultiLeases release themselves when destroyed
};

}  // namespace

std::shared_ptr<MultiLockForm> make_paths_form(std::shared_ptr<Core> core,
                                               const std::vector<std::string>& paths) {
  return std::make_shared<PathsForm>(make_multi_shared(std::move(core), paths));
}

}  // namespace zkr::detail
