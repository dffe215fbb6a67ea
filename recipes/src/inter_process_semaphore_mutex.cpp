#include <zkr/recipes/inter_process_semaphore_mutex.hpp>

namespace zkr {

InterProcessSemaphoreMutex::InterProcessSemaphoreMutex(CuratorFramework& client, std::string path)
    : semaphore_(client, std::move(path), 1) {}

void InterProcessSemaphoreMutex::acquire(error_code& ec) {
  Lease l = semaphore_.acquire(ec);
  if (ec) return;
  std::lock_guard lk(mu_);
  lease_ = std::move(l);
}
void InterProcessSemaphoreMutex::acquire() {
  error_code ec;
  acquire(ec);
  throw_if(ec, "acquire", semaphore_.path());
}
bool InterProcessSemaphoreMutex::timed_acquire(std::chrono::milliseconds timeout, error_code& ec) {
  Lease l = semaphore_.acquire(timeout, ec);
  if (ec || !l) return false;
  std::lock_guard lk(mu_);
  lease_ = std::move(l);
  return true;
}
bool InterProcessSemaphoreMutex::timed_acquire(std::chrono::milliseconds timeout) {
  error_code ec;
  bool r = acquire(timeout, ec);
  throw_if(ec, "acquire", semaphore_.path());
  return r;
}

void InterProcessSemaphoreMutex::release(error_code& ec) {
  Lease l;
  {
    std::lock_guard lk(mu_);
    if (!lease_) {
      ec = client_errc::not_acquired;
      return;
    }
    l = std::move(lease_);  // cleared before the delete (CURATOR-376)
    lease_ = Lease();
  }
  l.release(ec);
}
void InterProcessSemaphoreMutex::release() {
  error_code ec;
  release(ec);
  throw_if(ec, "release", semaphore_.path());
}

bool InterProcessSemaphoreMutex::is_acquired_in_this_process() const {
  std::lock_guard lk(mu_);
  return lease_.valid();
}
std::int64_t InterProcessSemaphoreMutex::fencing_token() const {
  std::lock_guard lk(mu_);
  return lease_.fencing_token();
}
LeaseStatus InterProcessSemaphoreMutex::lease_status() const {
  std::lock_guard lk(mu_);
  return lease_.valid() ? lease_.status() : LeaseStatus::released;
}
const Lease* InterProcessSemaphoreMutex::lease() const {
  std::lock_guard lk(mu_);
  return lease_.valid() ? &lease_ : nullptr;
}

bool InterProcessSemaphoreMutex::hold_lost() const { return lease_status() == LeaseStatus::lost; }
std::shared_ptr<detail::Core> InterProcessSemaphoreMutex::grant_core() const {
  return detail::semaphore_core(detail::access::shared(semaphore_));
}
void InterProcessSemaphoreMutex::start_grant(
    std::optional<std::chrono::steady_clock::time_point> deadline, std::shared_ptr<detail::StopSignal> cancel,
    detail::unique_function<void(error_code, std::vector<Lease>)> done) {
  detail::semaphore_acquire(detail::access::shared(semaphore_), 1, deadline, std::move(cancel),
                            std::move(done));
}

}  // namespace zkr
