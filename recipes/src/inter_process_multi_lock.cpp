// InterProcessMultiLock itself: the constructors of both forms, the blocking twins and what they dispatch
// to, the paths form's per-thread reentrant holds (a MultiLease per thread), release of both forms, the
// queries, and the InterProcessLock hooks that let a multi-lock stand in another multi-lock's locks form.

#include <algorithm>
#include <exception>
#include <zkr/recipes/inter_process_multi_lock.hpp>

#include "multi_lock_internals.hpp"
#include "thread_holds.hpp"

namespace zkr {

InterProcessMultiLock::InterProcessMultiLock(CuratorFramework& client, std::vector<std::string> paths)
    : paths_(std::move(paths)),
      shared_(detail::make_multi_shared(detail::access::core(client), paths_)),
      async_target_(std::make_shared<const AsyncTarget>(AsyncTarget{shared_, {}, {}})) {}

InterProcessMultiLock::InterProcessMultiLock(std::vector<std::shared_ptr<InterProcessLock>> locks)
    : owned_(std::move(locks)) {
  if (owned_.empty()) throw Error(client_errc::invalid_argument, "multi-lock (no locks)", "");
  for (const auto& l : owned_) {
    if (!l) throw Error(client_errc::invalid_argument, "multi-lock (null lock)", "");
    locks_.push_back(l.get());
  }
  async_target_ = std::make_shared<const AsyncTarget>(AsyncTarget{nullptr, locks_, owned_});
}

InterProcessMultiLock::InterProcessMultiLock(std::vector<std::reference_wrapper<InterProcessLock>> locks) {
  if (locks.empty()) throw Error(client_errc::invalid_argument, "multi-lock (no locks)", "");
  for (auto& l : locks) locks_.push_back(&l.get());
  async_target_ = std::make_shared<const AsyncTarget>(AsyncTarget{nullptr, locks_, {}});
}

InterProcessMultiLock::~InterProcessMultiLock() = default;  // held MultiLeases release themselves

std::size_t InterProcessMultiLock::size() const noexcept { return shared_ ? paths_.size() : locks_.size(); }

void InterProcessMultiLock::set_node_data(std::optional<std::string> data) {
  if (!shared_) return;
  std::lock_guard lk(shared_->mu);
  shared_->node_data = std::move(data);
}

std::shared_ptr<detail::Core> InterProcessMultiLock::async_core() const { return grant_core(); }

detail::OpInfo InterProcessMultiLock::acquire_info() const {
  detail::OpInfo info{"acquire", paths_.empty() ? std::string() : paths_.front(),
                      detail::Cancellation::cleanup};
  if (!grant_core())
    info.refuse = client_errc::invalid_argument;  // a lock of this multi-lock has no asynchronous acquire
  return info;
}

bool InterProcessMultiLock::hold_lost() const {
  if (!shared_)
    return std::any_of(locks_.begin(), locks_.end(),
                       [](const InterProcessLock* l) { return l->hold_lost(); });
  std::lock_guard lk(mu_);
  auto it = holds_.find(std::this_thread::get_id());
  if (it == holds_.end()) return false;
  const auto& leases = it->second.lease.leases();
  return std::any_of(leases.begin(), leases.end(),
                     [](const Lease& l) { return l.status() == LeaseStatus::lost; });
}

std::shared_ptr<detail::Core> InterProcessMultiLock::grant_core() const {
  if (shared_) return shared_->core;
  for (const auto* l : locks_)
    if (!l->grant_core()) return nullptr;
  return locks_.front()->grant_core();
}

void InterProcessMultiLock::start_grant(std::optional<std::chrono::steady_clock::time_point> deadline,
                                        std::shared_ptr<detail::StopSignal> cancel,
                                        detail::unique_function<void(error_code, std::vector<Lease>)> done) {
  start_acquire(async_target_, deadline, std::move(cancel),
                [done = std::move(done)](error_code ec, MultiLease m) mutable { done(ec, m.take()); });
}

bool InterProcessMultiLock::paths_acquire(std::optional<std::chrono::milliseconds> timeout, error_code& ec) {
  if (detail::reenter_hold(mu_, holds_)) return true;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (timeout) deadline = std::chrono::steady_clock::now() + std::max(*timeout, std::chrono::milliseconds(0));
  MultiLease lease = detail::run_blocking<MultiLease>(
      *shared_->core,
      [s = shared_, deadline](detail::unique_function<void(error_code, MultiLease)> cb) mutable {
        detail::multi_acquire(std::move(s), deadline, nullptr, std::move(cb));
      },
      ec);
  if (ec || !lease) return false;
  std::lock_guard lk(mu_);
  holds_[std::this_thread::get_id()] = Hold{std::move(lease), 1};
  return true;
}

void InterProcessMultiLock::acquire(error_code& ec) {
  ec = {};
  shared_ ? paths_acquire(std::nullopt, ec) : locks_acquire(std::nullopt, ec);
}
void InterProcessMultiLock::acquire() {
  error_code ec;
  acquire(ec);
  throw_if(ec, "acquire", paths_.empty() ? std::string() : paths_.front());
}
bool InterProcessMultiLock::timed_acquire(std::chrono::milliseconds timeout, error_code& ec) {
  ec = {};
  return shared_ ? paths_acquire(timeout, ec) : locks_acquire(timeout, ec);
}
bool InterProcessMultiLock::timed_acquire(std::chrono::milliseconds timeout) {
  error_code ec;
  const bool r = acquire(timeout, ec);
  throw_if(ec, "acquire", paths_.empty() ? std::string() : paths_.front());
  return r;
}

void InterProcessMultiLock::release(error_code& ec) {
  ec = {};
  if (shared_) {
    auto lease = detail::leave_hold(mu_, holds_, ec, [] {});
    if (lease) lease->release(ec);
    return;
  }
  // Curator: every lock, in reverse order, whatever fails; the first failure is reported.
  std::exception_ptr thrown;
  for (auto it = locks_.rbegin(); it != locks_.rend(); ++it) {
    error_code e;
    try {
      (*it)->release(e);
    } catch (const boost::system::system_error& x) {
      e = x.code();
    } catch (...) {
      if (!thrown && !ec) thrown = std::current_exception();
    }
    if (e && !ec && !thrown) ec = e;
  }
  if (thrown) std::rethrow_exception(thrown);
}
void InterProcessMultiLock::release() {
  error_code ec;
  release(ec);
  throw_if(ec, "release", paths_.empty() ? std::string() : paths_.front());
}

bool InterProcessMultiLock::is_acquired_in_this_process() const {
  if (shared_) {
    std::lock_guard lk(mu_);
    return !holds_.empty();
  }
  return std::all_of(locks_.begin(), locks_.end(),
                     [](const InterProcessLock* l) { return l->is_acquired_in_this_process(); });
}

bool InterProcessMultiLock::is_owned_by_current_thread() const {
  std::lock_guard lk(mu_);
  return holds_.count(std::this_thread::get_id()) > 0;
}

std::vector<std::int64_t> InterProcessMultiLock::fencing_tokens() const {
  std::lock_guard lk(mu_);
  auto it = holds_.find(std::this_thread::get_id());
  return it == holds_.end() ? std::vector<std::int64_t>{} : it->second.lease.fencing_tokens();
}

std::vector<std::string> InterProcessMultiLock::lock_paths() const {
  std::lock_guard lk(mu_);
  auto it = holds_.find(std::this_thread::get_id());
  return it == holds_.end() ? std::vector<std::string>{} : it->second.lease.node_paths();
}

}  // namespace zkr
