// The locks form's acquire (`InterProcessMultiLock(locks)`): any InterProcessLocks taken one after the other
// in list order, as Curator's MultiLock, a grant lost meanwhile taken again. Blocking: each lock's own
// blocking acquire. Asynchronous: the sequencer (LocksRun) over each lock's start_grant, which start_acquire
// dispatches to; it hands the paths form to the batched acquire (multi_acquire.cpp).

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <zkr/recipes/detail/callback_guard.hpp>

#include "multi_lock_internals.hpp"

namespace zkr {

// The locks form's asynchronous acquire: each lock's `start_grant` in list order, each on its own client's
// I/O thread with a stop signal of its own (a `StopSignal` belongs to one I/O thread); the operation's own
// signal (on the first lock's I/O thread) forwards a cancellation to the step in flight. Steps run one at a
// time, so `mu` only orders a step's start and end against a cancellation.
struct InterProcessMultiLock::LocksRun {
  std::shared_ptr<const AsyncTarget> target;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  detail::unique_function<void(error_code, MultiLease)> done;
  std::mutex mu;
  bool cancelled = false;
  std::shared_ptr<detail::StopSignal> step_stop;  // the step in flight's, requested on step_core's I/O thread
  std::shared_ptr<detail::Core> step_core;
  std::vector<Lease> taken;                     // in list order
  std::vector<std::size_t> taken_from;          // the index of the lock each of `taken` came from
  std::shared_ptr<detail::CancelState> cancel;  // the operation's; kept alive for its cancellation slot
};

void InterProcessMultiLock::start_acquire(const std::shared_ptr<const AsyncTarget>& target,
                                          std::optional<std::chrono::steady_clock::time_point> deadline,
                                          std::shared_ptr<detail::CancelState> cancel,
                                          detail::unique_function<void(error_code, MultiLease)> done) {
  if (target->shared)
    return detail::multi_acquire(target->shared, deadline, std::move(cancel), std::move(done));
  auto run = std::make_shared<LocksRun>();
  run->target = target;
  run->deadline = deadline;
  run->done = std::move(done);
  if (cancel) {
    if (cancel->requested()) return run->done(boost::asio::error::operation_aborted, {});
    cancel->on_request([g = detail::CallbackGuard<LocksRun>::weak(run)] {
      if (auto r = g.get()) locks_cancel(r);
    });
    run->cancel = std::move(cancel);
  }
  locks_step(run, 0);
}

void InterProcessMultiLock::locks_step(const std::shared_ptr<LocksRun>& run, std::size_t i) {
  const auto& locks = run->target->locks;
  if (i == locks.size()) {
    auto leases = std::move(run->taken);
    run->taken.clear();
    run->taken_from.clear();
    return run->done({}, MultiLease(std::move(leases)));
  }
  auto core = locks[i]->grant_core();
  if (!core)
    return locks_roll_back(run, client_errc::invalid_argument);  // checked at the start; cannot change
  auto io = core->io_executor();
  boost::asio::post(io, [run, i, core = std::move(core)]() mutable {
    auto stop = std::make_shared<detail::StopSignal>();
    {
      std::lock_guard lk(run->mu);
      if (run->cancelled) {
        run->step_stop = nullptr;
      } else {
        run->step_stop = stop;
        run->step_core = std::move(core);
      }
    }
    if (!run->step_stop) return locks_roll_back(run, boost::asio::error::operation_aborted);
    run->target->locks[i]->start_grant(run->deadline, std::move(stop),
                                       [run, i](error_code ec, std::vector<Lease> leases) mutable {
                                         locks_stepped(run, i, ec, std::move(leases));
                                       });
  });
}

void InterProcessMultiLock::locks_stepped(const std::shared_ptr<LocksRun>& run, std::size_t i, error_code ec,
                                          std::vector<Lease> leases) {
  bool cancelled;
  {
    std::lock_guard lk(run->mu);
    run->step_stop = nullptr;
    run->step_core = nullptr;
    cancelled = run->cancelled;
  }
  const bool granted = !leases.empty();
  for (auto& l : leases) {
    run->taken.push_back(std::move(l));
    run->taken_from.push_back(i);
  }
  if (cancelled) return locks_roll_back(run, boost::asio::error::operation_aborted);
  if (ec || !granted) return locks_roll_back(run, ec);  // an error, or the deadline passed (no error)
  // A grant of an earlier lock lost while this one was awaited (its session expired, its node was deleted)
  // holds nothing, and others may hold that lock now. Curator's MultiLock would return it all the same. Give
  // it back with every later grant (a later lock is never held while an earlier one is awaited) and take the
  // locks again from there, within the same deadline and cancellation.
  for (std::size_t k = 0; k < run->taken.size(); ++k) {
    if (run->taken[k].status() != LeaseStatus::lost) continue;
    const auto again = run->taken_from[k];
    return locks_give_back(run, k, [run, again] { locks_step(run, again); });
  }
  locks_step(run, i + 1);
}

void InterProcessMultiLock::locks_cancel(const std::shared_ptr<LocksRun>& run) {
  std::shared_ptr<detail::StopSignal> stop;
  std::shared_ptr<detail::Core> core;
  {
    std::lock_guard lk(run->mu);
    run->cancelled = true;
    stop = run->step_stop;
    core = run->step_core;
  }
  // The step in flight deletes its own nodes and completes with operation_aborted; a step about to start sees
  // `cancelled` and does not.
  if (stop) boost::asio::post(core->io_executor(), [stop] { stop->request(); });
}

void InterProcessMultiLock::locks_roll_back(const std::shared_ptr<LocksRun>& run, error_code ec) {
  locks_give_back(run, 0, [run, ec] { run->done(ec, MultiLease()); });
}

void InterProcessMultiLock::locks_give_back(const std::shared_ptr<LocksRun>& run, std::size_t from,
                                            detail::unique_function<void()> then) {
  // The grants go back in reverse list order, each release awaited, before `then`.
  while (run->taken.size() > from) {
    Lease last = std::move(run->taken.back());
    run->taken.pop_back();
    run->taken_from.pop_back();
    if (!last.valid()) continue;
    try {
      last.async_release([run, from, then = std::move(then)](error_code) mutable {
        locks_give_back(run, from, std::move(then));
      });
      return;
    } catch (...) {
      // an empty handle cannot be released; its Lease destructor has nothing to do either
    }
  }
  then();
}

bool InterProcessMultiLock::locks_acquire(std::optional<std::chrono::milliseconds> timeout, error_code& ec) {
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
      while (lost < taken && !locks_[lost]->hold_lost()) ++lost;
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

}  // namespace zkr
