// InterProcessMultiLock itself: the constructors of both forms, the blocking twins, and the InterProcessLock
// hooks that let a multi-lock stand in another multi-lock's locks form, each forwarded to the form
// (multi_lock_paths_form.cpp, multi_lock_locks_form.cpp).

#include <zkr/recipes/inter_process_multi_lock.hpp>

#include "multi_lock_internals.hpp"

namespace zkr {

InterProcessMultiLock::InterProcessMultiLock(CuratorFramework& client, std::vector<std::string> paths)
    : paths_(std::move(paths)), form_(detail::make_paths_form(detail::access::core(client), paths_)) {}

InterProcessMultiLock::InterProcessMultiLock(std::vector<std::shared_ptr<InterProcessLock>> locks) {
  if (locks.empty()) throw Error(client_errc::invalid_argument, "multi-lock (no locks)", "");
  std::vector<InterProcessLock*> raw;
  for (const auto& l : locks) {
    if (!l) throw Error(client_errc::invalid_argument, "multi-lock (null lock)", "");
    raw.push_back(l.get());
  }
  form_ = detail::make_locks_form(std::move(raw), std::move(locks));
}

InterProcessMultiLock::InterProcessMultiLock(std::vector<std::reference_wrapper<InterProcessLock>> locks) {
  if (locks.empty()) throw Error(client_errc::invalid_argument, "multi-lock (no locks)", "");
  std::vector<InterProcessLock*> raw;
  for (auto& l : locks) raw.push_back(&l.get());
  form_ = detail::make_locks_form(std::move(raw), {});
}

InterProcessMultiLock::~InterProcessMultiLock() = default;

std::string InterProcessMultiLock::error_path() const {
  return paths_.empty() ? std::string() : paths_.front();
}

std::size_t InterProcessMultiLock::size() const noexcept { return form_->size(); }

void InterProcessMultiLock::set_node_data(std::optional<std::string> data) {
  form_->set_node_data(std::move(data));
}

void InterProcessMultiLock::start_acquire(const std::shared_ptr<detail::MultiLockForm>& form,
                                          std::optional<std::chrono::steady_clock::time_point> deadline,
                                          std::shared_ptr<detail::CancelState> cancel,
                                          detail::unique_function<void(error_code, MultiLease)> done) {
  form->start_acquire(deadline, std::move(cancel), std::move(done));
}

std::shared_ptr<detail::Core> InterProcessMultiLock::async_core() const { return form_->grant_core(); }

detail::OpInfo InterProcessMultiLock::acquire_info() const {
  detail::OpInfo info{"acquire", error_path(), detail::Cancellation::cleanup};
  if (!form_->grant_core())
    info.refuse = client_errc::invalid_argument;  // a lock of this multi-lock has no asynchronous acquire
  return info;
}

bool InterProcessMultiLock::hold_lost() const { return form_->hold_lost(); }

std::shared_ptr<detail::Core> InterProcessMultiLock::grant_core() const { return form_->grant_core(); }

void InterProcessMultiLock::start_grant(std::optional<std::chrono::steady_clock::time_point> deadline,
                                        std::shared_ptr<detail::StopSignal> cancel,
                                        detail::unique_function<void(error_code, std::vector<Lease>)> done) {
  form_->start_acquire(deadline, std::move(cancel),
                       [done = std::move(done)](error_code ec, MultiLease m) mutable { done(ec, m.take()); });
}

void InterProcessMultiLock::acquire(error_code& ec) {
  ec = {};
  (void)form_->acquire(std::nullopt, ec);
}
void InterProcessMultiLock::acquire() {
  error_code ec;
  acquire(ec);
  throw_if(ec, "acquire", error_path());
}
bool InterProcessMultiLock::timed_acquire(std::chrono::milliseconds timeout, error_code& ec) {
  ec = {};
  return form_->acquire(timeout, ec);
}
bool InterProcessMultiLock::timed_acquire(std::chrono::milliseconds timeout) {
  error_code ec;
  const bool r = acquire(timeout, ec);
  throw_if(ec, "acquire", error_path());
  return r;
}

void InterProcessMultiLock::release(error_code& ec) {
  ec = {};
  form_->release(ec);
}
void InterProcessMultiLock::release() {
  error_code ec;
  release(ec);
  throw_if(ec, "release", error_path());
}

bool InterProcessMultiLock::is_acquired_in_this_process() const {
  return form_->is_acquired_in_this_process();
}
bool InterProcessMultiLock::is_owned_by_current_thread() const { return form_->owned_by_current_thread(); }
std::vector<std::int64_t> InterProcessMultiLock::fencing_tokens() const { return form_->fencing_tokens(); }
std::vector<std::string> InterProcessMultiLock::lock_paths() const { return form_->lock_paths(); }

}  // namespace zkr
