#pragma once
/// \file
/// Glue between the I/O-thread callbacks of `Core` and the public twins: Asio completion tokens for the async
/// form, and a blocking runner for the synchronous form. Not for applications.

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>

#include <zkr/framework/detail/core.hpp>

namespace zkr::detail {

/// Starts `start(callback)` on the client's I/O thread and completes the Asio handler made from `token` with
/// the callback's arguments, on the handler's associated executor (default: the client's completion
/// executor). The handler is never invoked inline.
template <class... T, class Token, class Start>
auto async_run(std::shared_ptr<Core> core, Token&& token, Start&& start) {
  return boost::asio::async_initiate<Token, void(error_code, T...)>(
      [](auto handler, std::shared_ptr<Core> core, auto start) {
        auto ex = boost::asio::get_associated_executor(handler, core->completion_executor());
        auto work = boost::asio::make_work_guard(ex);
        auto io = core->io_executor();
        boost::asio::post(io, [core = std::move(core), start = std::move(start), h = std::move(handler),
                               work = std::move(work)]() mutable {
          start(unique_function<void(error_code, T...)>(
              [h = std::move(h), work = std::move(work)](error_code ec, T... v) mutable {
                auto ex = work.get_executor();
                boost::asio::post(ex, [h = std::move(h), ec, tup = std::make_tuple(std::move(v)...)]() mutable {
                  std::apply([&](auto&&... a) { std::move(h)(ec, std::move(a)...); }, std::move(tup));
                });
                work.reset();
              }));
        });
      },
      token, std::move(core), std::forward<Start>(start));
}

/// Runs `start(callback)` on the I/O thread and blocks the calling thread until the callback runs.
/// Refuses (errc::would_deadlock) when called on the I/O thread itself.
template <class R, class Start>
R run_blocking(Core& core, Start&& start, error_code& ec) {
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
  boost::asio::post(core.io_executor(), [st, start = std::forward<Start>(start)]() mutable {
    start(unique_function<void(error_code, R)>([st](error_code e, R v) {
      {
        std::lock_guard lk(st->m);
        st->ec = e;
        st->value.emplace(std::move(v));
        st->done = true;
      }
      st->cv.notify_one();  // outside the lock: the woken caller does not block on the mutex again
    }));
  });
  std::unique_lock lk(st->m);
  st->cv.wait(lk, [&] { return st->done; });
  ec = st->ec;
  return std::move(*st->value);
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

}  // namespace zkr::detail
