#pragma once
/// \file
/// Glue between the I/O-thread callbacks of `Core` and the public twins: Asio completion tokens for the async
/// form, and a blocking runner for the synchronous form. Not for applications.

#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <type_traits>

#include <zkr/framework/detail/core.hpp>

namespace zkr::detail {

/// What a late result of a cancelled operation is handed to (I/O thread): for an operation that can undo its
/// own effect, such as deleting the node a cancelled create made after all.
struct NoAbandon {
  template <class... A>
  void operator()(error_code, A&&...) const noexcept {}
};

/// What runs when a cancellation completes the handler (I/O thread), before any late result: for an
/// operation that can withdraw itself, such as a registered waiter.
struct NoCancelHook {
  void operator()() const noexcept {}
};

/// `async_run` (below) whose operation first gets a chance on the initiating thread: `start_here(callback)` either
/// takes the callback and returns true (the operation then completes it on the I/O thread, as `start` would),
/// or returns false and leaves it, and `start` is posted to the I/O thread as usual.
template <class... T, class Token, class StartHere, class Start, class Abandon = NoAbandon,
          class OnCancel = NoCancelHook>
auto async_run_from_caller(std::shared_ptr<Core> core, Token&& token, StartHere&& start_here, Start&& start,
                           Abandon abandon = {}, OnCancel on_cancel = {}) {
  return boost::asio::async_initiate<Token, void(error_code, T...)>(
      [](auto handler, std::shared_ptr<Core> core, auto start_here, auto start, Abandon abandon,
         OnCancel on_cancel) {
        using Handler = decltype(handler);
        auto ex = boost::asio::get_associated_executor(handler, core->completion_executor());
        // The handler and its work guard, until one of the result and the cancellation takes them (I/O thread).
        struct Pending {
          std::optional<Handler> h;
          std::optional<boost::asio::executor_work_guard<decltype(ex)>> work;
          void complete(error_code ec, T... v) {
            auto h2 = std::move(*h);
            h.reset();
            auto w = std::move(*work);
            work.reset();
            boost::asio::post(w.get_executor(),
                              [h = std::move(h2), ec, tup = std::make_tuple(std::move(v)...)]() mutable {
                                auto slot = boost::asio::get_associated_cancellation_slot(h);
                                if (slot.is_connected()) slot.clear();
                                std::apply([&](auto&&... a) { std::move(h)(ec, std::move(a)...); }, std::move(tup));
                              });
            w.reset();
          }
        };
        auto slot = boost::asio::get_associated_cancellation_slot(handler);
        auto pending = std::make_shared<Pending>();
        pending->work.emplace(boost::asio::make_work_guard(ex));
        pending->h.emplace(std::move(handler));
        auto io = core->io_executor();
        StopPtr stop;
        if (slot.is_connected()) {
          stop = std::make_shared<StopSignal>();
          slot.assign([io, weak = std::weak_ptr<Pending>(pending), stop,
                       on_cancel = std::move(on_cancel)](boost::asio::cancellation_type) mutable {
            boost::asio::post(io, [weak, stop, on_cancel = std::move(on_cancel)]() mutable {
              if (auto p = weak.lock(); p && p->h) {
                p->complete(boost::asio::error::operation_aborted, T{}...);
                on_cancel();
                stop->request();
              }
            });
          });
        }
        using Callback = unique_function<void(error_code, T...)>;
        Callback cb([pending = std::move(pending), abandon = std::move(abandon)](error_code ec, T... v) mutable {
          if (pending->h)
            pending->complete(ec, std::move(v)...);
          else
            abandon(ec, std::move(v)...);
        });
        if (start_here(cb)) return;
        boost::asio::post(io, [core = std::move(core), start = std::move(start), cb = std::move(cb),
                               stop = std::move(stop)]() mutable {
          if constexpr (std::is_invocable_v<decltype(start)&, Callback&&, StopPtr>)
            start(std::move(cb), std::move(stop));
          else
            start(std::move(cb));
        });
      },
      token, std::move(core), std::forward<StartHere>(start_here), std::forward<Start>(start), std::move(abandon),
      std::move(on_cancel));
}

/// Starts `start(callback)` on the client's I/O thread and completes the Asio handler made from `token` with
/// the callback's arguments, on the handler's associated executor (default: the client's completion
/// executor). The handler is never invoked inline.
///
/// Cancellation (any type, through the handler's cancellation slot) is terminal: the handler completes at once
/// with `operation_aborted`. A `start` that also takes a `StopPtr` (`start(callback, stop)`) gets one when the
/// handler has a slot, and the cancellation requests it, so the operation's retry loop sends no further try.
/// A try already sent may still reach the server; its result, when it comes, goes to `abandon` instead of the
/// handler. `on_cancel` runs once the cancellation has completed the handler.
template <class... T, class Token, class Start, class Abandon = NoAbandon, class OnCancel = NoCancelHook>
auto async_run(std::shared_ptr<Core> core, Token&& token, Start&& start, Abandon abandon = {},
               OnCancel on_cancel = {}) {
  return async_run_from_caller<T...>(
      std::move(core), std::forward<Token>(token), [](auto&) { return false; }, std::forward<Start>(start),
      std::move(abandon), std::move(on_cancel));
}

/// Blocks the calling thread until `done(ec, value)` runs. The operation first gets a chance on the calling
/// thread: `start_here(done)` either takes `done` and returns true (`done` then runs on another thread), or
/// returns false and leaves it, and `start(done)` is posted to the I/O thread.
/// Refuses (errc::would_deadlock) when called on the I/O thread itself.
template <class R, class StartHere, class Start>
R run_blocking_from_caller(Core& core, StartHere&& start_here, Start&& start, error_code& ec) {
  if (core.running_in_io_thread()) {
    ec = errc::would_deadlock;
    return R{};
  }
  struct State {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    error_code ec;
    std::optional<R> value;
  };
  auto st = std::make_shared<State>();
  unique_function<void(error_code, R)> done([st](error_code e, R v) {
    {
      std::lock_guard lk(st->m);
      st->ec = e;
      st->value.emplace(std::move(v));
      st->done = true;
    }
    st->cv.notify_one();  // outside the lock: the woken caller does not block on the mutex again
  });
  if (!start_here(done))
    boost::asio::post(core.io_executor(),
                      [start = std::forward<Start>(start), done = std::move(done)]() mutable { start(std::move(done)); });
  std::unique_lock lk(st->m);
  st->cv.wait(lk, [&] { return st->done; });
  ec = st->ec;
  return std::move(*st->value);
}

/// Runs `start(callback)` on the I/O thread and blocks the calling thread until the callback runs.
/// Refuses (errc::would_deadlock) when called on the I/O thread itself.
template <class R, class Start>
R run_blocking(Core& core, Start&& start, error_code& ec) {
  return run_blocking_from_caller<R>(
      core, [](unique_function<void(error_code, R)>&) { return false; }, std::forward<Start>(start), ec);
}

/// `run_blocking` for callbacks with no value.
template <class Start>
void run_blocking_void(Core& core, Start&& start, error_code& ec) {
  struct Unit {};
  run_blocking<Unit>(
      core,
      [start = std::forward<Start>(start)](unique_function<void(error_code, Unit)> done) mutable {
        start(VoidCallback([done = std::move(done)](error_code e) { done(e, Unit{}); }));
      },
      ec);
}

/// `run_blocking_void` whose operation first gets a chance on the calling thread (`run_blocking_from_caller`):
/// `start_here(done)` takes `done` and returns true, or returns false and leaves it.
template <class StartHere, class Start>
void run_blocking_void_from_caller(Core& core, StartHere&& start_here, Start&& start, error_code& ec) {
  struct Unit {};
  run_blocking_from_caller<Unit>(
      core,
      [&start_here](unique_function<void(error_code, Unit)>& done) {
        VoidCallback cb([d = std::move(done)](error_code e) mutable { d(e, Unit{}); });
        if (start_here(cb)) return true;
        done = [cb = std::move(cb)](error_code e, Unit) mutable { cb(e); };  // declined: `cb` is untouched
        return false;
      },
      [start = std::forward<Start>(start)](unique_function<void(error_code, Unit)> done) mutable {
        start(VoidCallback([done = std::move(done)](error_code e) { done(e, Unit{}); }));
      },
      ec);
}

}  // namespace zkr::detail
