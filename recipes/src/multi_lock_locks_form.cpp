// The locks form of InterProcessMultiLock (`InterProcessMultiLock(locks)`): any InterProcessLocks taken one
// after the other in list order, as Curator's MultiLock, a grant lost meanwhile taken again. Blocking: each
// lock's own blocking acquire and release. Asynchronous: the sequencer (LocksRun) over each lock's
// `start_grant` (reached through `detail::access`).

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <exception>
#include <zkr/recipes/detail/callback_guard.hpp>

#include "multi_lock_internals.hpp"

namespace zkr::detail {

namespace {

class LocksForm;

// The asynchronous acquire: each lock's `start_grant` in list order, each on its own client's I/O thread with
// a stop signal of its own (a `StopSignal` belongs to one I/O thread); the operation's own signal (on the
// first lock's I/O thread) forwards a cancellation to the step in flight. Steps run one at a time, so `mu`
// only orders a step's start and end against a cancellation.
struct LocksRun : std::enable_shared_from_this<LocksRun> {
  std::shared_ptr<const LocksForm> form;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  unique_function<void(error_code, MultiLease)> done;
  std::mutex mu;
  bool cancelled = false;
  std::shared_ptr<StopSignal> step_stop;  // the step in flight's, requested on step_core's I/O thread
  std::shared_ptr<Core> step_core;
  std::vector<Lease> taken;             // in list order
  std::vector<std::size_t> taken_from;  // the index of the lock each of `taken` came from
  std::shared_ptr<CancelState> cancel;  // the operation's; kept alive for its cancellation slot

  void step(std::size_t i);
  void stepped(std::size_t i, error_code ec, std::vector<Lease> leases);
  void cancel_now();
  void roll_back(error_code ec);
  /// Gives back the grants from `from` on, in reverse list order, each release awaited, then runs `then`.
  void give_back(std::size_t from, unique_function<void()> then);
};

class LocksForm final : public MultiLockForm, public std::enable_shared_from_this<LocksForm> {
 public:
  LocksForm(std::vector<InterProcessLock*> locks, std::vector<std::shared_ptr<InterProcessLock>> owned)
      : locks_(std::move(locks)), owned_(std::move(owned)) {}

  const std::vector<InterProcessLock*>& locks() const noexcept { return locks_; }

  std::size_t size() const noexcept override { return locks_.size(); }
  bool acquire(std::optional<std::chrono::milliseconds> timeout, error_code& ec) override;
  void release(error_code& ec) override;
  bool is_acquired_in_this_process() const override {
    return std::all_of(locks_.begin(), locks_.end(),
                       [](const InterProcessLock* l) { return l->is_acquired_in_this_process(); });
  }
  bool hold_lost() const override {
    return std::any_of(locks_.begin(), locks_.end(),
                       [](const InterProcessLock* l) { return access::hold_lost(*l); });
  }
  std::shared_ptr<Core> grant_core() const override {
    for (const auto* l : locks_)
      if (!access::grant_core(*l)) return nullptr;
    return access::grant_core(*locks_.front());
  }
  void start_acquire(std::optional<std::chrono::steady_clock::time_point> deadline,
                     std::shared_ptr<CancelState> cancel,
                     unique_function<void(error_code, MultiLease)> done) override;

 private:
  std::vector<InterProcessLock*> locks_;
  std::vector<std::shared_ptr<InterProcessLock>> owned_;  // the locks given as shared_ptrs
};

void LocksForm::start_acquire(std::optional<std::chrono::steady_clock::time_point> deadline,
                              std::shared_ptr<CancelState> cancel,
                              unique_function<void(error_code, MultiLease)> done) {
  auto run = std::make_shared<LocksRun>();
  run->form = shared_from_this();
  run->deadline = deadline;
  run->done = std::move(done);
  if (cancel) {
    if (cancel->requested()) return run->done(boost::asio::error::operation_aborted, {});
    cancel->on_request([g = CallbackGuard<LocksRun>::weak(run)] {
      if (auto r = g.get()) r->cancel_now();
    });
    run->cancel = std::move(cancel);
  }
  run->step(0);
}

void LocksRun::step(std::size_t i) {
  const auto& locks = form->locks();
  if (i == locks.size()) {
    auto leases = std::move(taken);
    taken.clear();
    taken_from.clear();
    return done({}, MultiLease(std::move(leases)));
  }
  auto core = access::grant_core(*locks[i]);
  if (!core) return roll_back(client_errc::invalid_argument);  // checked at the start; cannot change
  auto io = core->io_executor();
  boost::asio::post(io, [run = shared_from_this(), i, core = std::move(core)]() mutable {
    auto stop = std::make_shared<StopSignal>();
    {
      std::lock_guard lk(run->mu);
      if (run->cancelled) {
        run->step_stop = nullptr;
      } else {
        run->step_stop = stop;
        run->step_core = std::move(core);
      }
    }
    if (!run->step_stop) return run->roll_back(boost::asio::error::operation_aborted);
    access::start_grant(*run->form->locks()[i], run->deadline, std::move(stop),
                        [run, i](error_code ec, std::vector<Lease> leases) mutable {
                          run->stepped(i, ec, std::move(leases));
                        });
  });
}

void LocksRun::stepped(std::size_t i, error_code ec, std::vector<Lease> leases) {
  bool was_cancelled;
  {
    std::lock_guard lk(mu);
    step_stop = nullptr;
    step_core = nullptr;
    was_cancelled = cancelled;
  }
  const bool granted = !leases.empty();
  for (auto& l : leases) {
    taken.push_back(std::move(l));
    taken_from.push_back(i);
  }
  if (was_cancelled) return roll_back(boost::asio::error::operation_aborted);
  if (ec || !granted) return roll_back(ec);  // an error, or the deadline passed (no error)
  // A grant of an earlier lock lost while this one was awaited (its session expired, its node was deleted)
  // holds nothing, and others may hold that lock now. Curator's MultiLock would return it all the same. Give
  // it back with every later grant (a later lock is never held while an earlier one is awaited) and take the
  // locks again from there, within the same deadline and cancellation.
  for (std::size_t k = 0; k < taken.size(); ++k) {
    if (taken[k].status() != LeaseStatus::lost) continue;
    const auto again = taken_from[k];
    return give_back(k, [run = shared_from_this(), again] { run->step(again); });
  }
  step(i + 1);
}

void LocksRun::cancel_now() {
  std::shared_ptr<StopSignal> stop;
  std::shared_ptr<Core> core;
  {
    std::lock_guard lk(mu);
    cancelled = true;
    stop = step_stop;
    core = step_core;
  }
  // The step in flight deletes its own nodes and completes with operation_aborted; a step about to start sees
  // `cancelled` and does not.
  if (stop) boost::asio::post(core->io_executor(), [stop] { stop->request(); });
}

void LocksRun::roll_back(error_code ec) {
  give_back(0, [run = shared_from_this(), ec] { run->done(ec, MultiLease()); });
}

void LocksRun::give_back(std::size_t from, unique_function<void()> then) {
  while (taken.size() > from) {
    Lease last = std::move(taken.back());
    taken.pop_back();
    taken_from.pop_back();
    if (!last.valid()) continue;
    try {
      last.async_release([run = shared_from_this(), from, then = std::move(then)](error_code) mutable {
        run->give_back(from, std::move(then));
      });
      return;
    } catch (...) {
      // an empty handle cannot be released; its Lease destructor has nothing to do either
    }
  }
  then();
}

bool LocksForm::acquire(std::optional<std::chrono::milliseconds> timeout, error_code& ec) {
  const auto deadline = std::chrono::steady_clock::now() + timeout.value_or(std::chrono::milliseconds(0));
  std::size_t taken = 0;
  auto give_back = [&](std::size_t from) {
    while (taken > from) {
      error_code ignored;
      try {
        locks_[--taken]->release(ignored);
      } catch (...) {
        // Curator ignores release failures of the roll-back
      }
    }
  };
  // A lock taken earlier in this acquire whose hold was lost while a later one was awaited (its session
  // expired) is given back with every later lock and taken again (Curator's MultiLock would return it). A
  // hold that stays lost after being taken again (a reentrant hold older than this acquire, say) fails the
  // acquire.
  constexpr int max_retakes = 16;
  int retakes = 0;
  try {
    while (taken < locks_.size()) {
      bool ok;
      if (timeout) {
        auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        ok = locks_[taken]->acquire(std::max(left, std::chrono::milliseconds(0)), ec);
      } else {
        locks_[taken]->acquire(ec);
        ok = !ec;
      }
      if (!ok) {
        give_back(0);
        return false;
      }
      ++taken;
      std::size_t lost = 0;
      while (lost < taken && !access::hold_lost(*locks_[lost])) ++lost;
      if (lost == taken) continue;
      give_back(lost);
      if (++retakes > max_retakes) {
        give_back(0);
        ec = client_errc::lock_lost;
        return false;
      }
    }
  } catch (...) {
    give_back(0);
    throw;
  }
  return true;
}

void LocksForm::release(error_code& ec) {
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

}  // namespace

std::shared_ptr<MultiLockForm> make_locks_form(std::vector<InterProcessLock*> locks,
                                               std::vector<std::shared_ptr<InterProcessLock>> owned) {
  return std::make_shared<LocksForm>(std::move(locks), std::move(owned));
}

}  // namespace zkr::detail
