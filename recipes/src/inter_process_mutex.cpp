#include <zkr/framework/paths.hpp>
#include <zkr/recipes/inter_process_mutex.hpp>

#include "thread_holds.hpp"

namespace zkr {

InterProcessMutex::InterProcessMutex(CuratorFramework& client, std::string path)
    : InterProcessMutex(client, std::move(path), std::string(lock_name), nullptr) {}

InterProcessMutex::InterProcessMutex(CuratorFramework& client, std::string path,
                                     std::shared_ptr<const LockDriver> driver)
    : InterProcessMutex(client, std::move(path), std::string(lock_name), std::move(driver)) {}

InterProcessMutex::InterProcessMutex(CuratorFramework& client, std::string path, std::string name,
                                     std::shared_ptr<const LockDriver> driver)
    : engine_(std::make_shared<detail::LockInternals>(
          client, std::move(path), std::move(name), 1,
          driver ? std::move(driver) : detail::default_mutex_driver())),
      revoke_target_(std::make_shared<RevokeTarget>()) {
  revoke_target_->self = this;
}

InterProcessMutex::~InterProcessMutex() {  // held leases are released by their destructors
  std::lock_guard lk(revoke_target_->m);   // waits for a revocation listener call in progress
  revoke_target_->self = nullptr;
}

void InterProcessMutex::make_revocable(std::function<void(InterProcessMutex&)> listener) {
  std::lock_guard lk(mu_);
  revocation_listener_ = std::move(listener);
}

void InterProcessMutex::set_node_data(std::optional<std::string> data) {
  std::lock_guard lk(mu_);
  node_data_ = std::move(data);
}

std::optional<std::string> InterProcessMutex::node_data() const {
  std::lock_guard lk(mu_);
  return node_data_;
}

detail::AcquireOptions InterProcessMutex::make_options(
    std::optional<std::chrono::steady_clock::time_point> deadline) const {
  detail::AcquireOptions o;
  o.deadline = deadline;
  o.node_data = node_data();
  std::lock_guard lk(mu_);
  if (revocation_listener_) {
    o.revocable = true;
    o.on_revocation_requested = [target = revoke_target_, listener = revocation_listener_] {
      std::lock_guard lk(target->m);
      if (target->self) listener(*target->self);
    };
  }
  return o;
}

bool InterProcessMutex::internal_lock(std::optional<std::chrono::milliseconds> timeout, error_code& ec) {
  ec = {};
  if (detail::reenter_hold(mu_, holds_)) return true;
  if (auto e = acquire_precondition()) {
    ec = e;
    return false;
  }
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (timeout) deadline = std::chrono::steady_clock::now() + std::max(*timeout, std::chrono::milliseconds(0));
  Lease lease = engine_->acquire_blocking(make_options(deadline), ec);
  if (ec || !lease) return false;
  std::lock_guard lk(mu_);
  holds_[std::this_thread::get_id()] = Hold{std::move(lease), 1};
  return true;
}

void InterProcessMutex::acquire(error_code& ec) { internal_lock(std::nullopt, ec); }
void InterProcessMutex::acquire() {
  error_code ec;
  acquire(ec);
  throw_if(ec, "acquire", path());
}
bool InterProcessMutex::timed_acquire(std::chrono::milliseconds timeout, error_code& ec) {
  return internal_lock(timeout, ec);
}
bool InterProcessMutex::timed_acquire(std::chrono::milliseconds timeout) {
  error_code ec;
  bool r = acquire(timeout, ec);
  throw_if(ec, "acquire", path());
  return r;
}

void InterProcessMutex::release(error_code& ec) {
  ec = {};
  // The last level clears revocability, as Curator's releaseLock does.
  auto lease = detail::leave_hold(mu_, holds_, ec, [this] { revocation_listener_ = nullptr; });
  if (lease) lease->release(ec);
}
void InterProcessMutex::release() {
  error_code ec;
  release(ec);
  throw_if(ec, "release", path());
}

bool InterProcessMutex::is_acquired_in_this_process() const {
  std::lock_guard lk(mu_);
  return !holds_.empty();
}
bool InterProcessMutex::is_owned_by_current_thread() const {
  std::lock_guard lk(mu_);
  auto it = holds_.find(std::this_thread::get_id());
  return it != holds_.end() && it->second.count > 0;
}
void InterProcessMutex::participants_start(
    const std::shared_ptr<detail::LockInternals>& engine, std::string kind,
    detail::unique_function<void(error_code, std::vector<std::string>)> cb) {
  engine->participant_nodes(
      [kind = std::move(kind), cb = std::move(cb)](error_code ec, std::vector<std::string> nodes) mutable {
        if (!kind.empty())
          std::erase_if(nodes,
                        [&](const std::string& p) { return node_name(p).find(kind) == std::string::npos; });
        cb(ec, std::move(nodes));
      });
}

std::vector<std::string> InterProcessMutex::participant_nodes() const {
  error_code ec;
  auto r = detail::run_blocking<std::vector<std::string>>(
      *engine_->core(),
      [&](detail::unique_function<void(error_code, std::vector<std::string>)> cb) {
        participants_start(engine_, participant_kind(), std::move(cb));
      },
      ec);
  throw_if(ec, "participant_nodes", path());
  return r;
}
std::string InterProcessMutex::lock_path() const {
  std::lock_guard lk(mu_);
  auto it = holds_.find(std::this_thread::get_id());
  return it == holds_.end() ? std::string() : it->second.lease.node_path();
}
std::int64_t InterProcessMutex::fencing_token() const {
  std::lock_guard lk(mu_);
  auto it = holds_.find(std::this_thread::get_id());
  return it == holds_.end() ? 0 : it->second.lease.fencing_token();
}
LeaseStatus InterProcessMutex::lease_status() const {
  std::lock_guard lk(mu_);
  auto it = holds_.find(std::this_thread::get_id());
  return it == holds_.end() ? LeaseStatus::released : it->second.lease.status();
}
const Lease* InterProcessMutex::lease() const {
  std::lock_guard lk(mu_);
  auto it = holds_.find(std::this_thread::get_id());
  return it == holds_.end() ? nullptr : &it->second.lease;
}

std::shared_ptr<detail::Core> InterProcessMutex::grant_core() const { return engine_->core(); }
bool InterProcessMutex::hold_lost() const { return lease_status() == LeaseStatus::lost; }
void InterProcessMutex::start_grant(std::optional<std::chrono::steady_clock::time_point> deadline,
                                    std::shared_ptr<detail::StopSignal> cancel,
                                    detail::unique_function<void(error_code, std::vector<Lease>)> done) {
  detail::AcquireOptions o;
  o.node_data = node_data();
  o.deadline = deadline;
  engine_->attempt_lock(std::move(o), std::move(cancel),
                        [done = std::move(done)](error_code ec, Lease l) mutable {
                          std::vector<Lease> v;
                          if (l) v.push_back(std::move(l));
                          done(ec, std::move(v));
                        });
}

}  // namespace zkr
