#pragma once
/// \file
/// Glue between the I/O-thread callbacks of `Core` and the public twins: the one initiator of the
/// asynchronous form (`async_run`), and the blocking runners of the synchronous form. Not for applications:
/// the contract it implements is in docs/async.md.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/cancellation_type.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/system_executor.hpp>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <zkr/framework/detail/core.hpp>
#include <zkr/framework/with_diagnostics.hpp>

namespace zkr::detail {

/// How an operation honours a cancellation request (through its handler's cancellation slot). One choice per
/// operation; docs/async.md has the table.
enum class Cancellation {
  /// A read, or a wait with no effect on the server: completes at once (posted) with `operation_aborted`; the
  /// operation sends no further try, and a late result goes to its `abandon` hook (which removes a watch it
  /// set). Nothing observable remains: honours `terminal`, `partial` and `total`.
  read,
  /// A write: completes at once (posted) with `operation_aborted` and sends no further try, but a try already
  /// sent may still apply; its late result goes to `abandon` (e.g. deleting the node a create made after
  /// all).
  /// The outcome is not known at completion: honours `terminal` only.
  write,
  /// A recipe operation (acquire): the cancellation requests the operation's stop signal, and the operation
  /// completes itself once its cleanup is done (its nodes deleted, leases taken returned), with
  /// `operation_aborted`. A known state at completion: honours `terminal` and `partial`.
  cleanup,
};

/// The cancellation types an operation of kind `c` honours; it ignores the others (Asio's rule).
constexpr boost::asio::cancellation_type supported_cancellation(Cancellation c) noexcept {
  using boost::asio::cancellation_type;
  switch (c) {
    case Cancellation::read:
      return cancellation_type::terminal | cancellation_type::partial | cancellation_type::total;
    case Cancellation::write:
      return cancellation_type::terminal;
    case Cancellation::cleanup:
      return cancellation_type::terminal | cancellation_type::partial;
  }
  return cancellation_type::none;
}

/// What an asynchronous operation is: its name and path (for `with_diagnostics`, the same the throwing twin
/// puts in its `Error`), its cancellation, and whether it can start at all.
struct OpInfo {
  std::string_view operation;  // a literal
  std::string path;
  Cancellation cancellation = Cancellation::read;
  /// Set when the operation cannot start (an empty handle: `client_errc::not_acquired`): the handler gets
  /// this error, posted, and `start` never runs. The core may then be null.
  error_code refuse = {};
};

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

/// An operation that does not start on the initiating thread.
struct NoStartHere {
  template <class Callback>
  bool operator()(Callback&) const noexcept {
    return false;
  }
};

/// The executor a handler without an associated executor runs on: the client's completion executor; with no
/// client (an operation refused on an empty handle), the system executor.
inline boost::asio::any_io_executor default_completion_executor(const std::shared_ptr<Core>& core) {
  if (core) return core->completion_executor();
  return boost::asio::any_io_executor(boost::asio::system_executor());
}

/// The initiation object of every zkrecipes asynchronous operation (see `async_run`). It carries the
/// operation's name and path for `with_diagnostics`.
template <class... T>
class Initiation {
 public:
  Initiation(std::shared_ptr<Core> core, OpInfo info) : core_(std::move(core)), info_(std::move(info)) {}

  std::string_view operation() const noexcept { return info_.operation; }
  const std::string& path() const noexcept { return info_.path; }

  template <class Handler, class Start, class Abandon, class OnCancel, class StartHere>
  void operator()(Handler handler, Start start, Abandon abandon, OnCancel on_cancel,
                  StartHere start_here) const {
    using Callback = unique_function<void(error_code, T...)>;
    auto ex = boost::asio::get_associated_executor(handler, default_completion_executor(core_));
    // The handler and its work guard, until the result or a cancellation takes them (I/O thread); the one
    // place that completes a handler: always posted, never inline.
    struct Pending {
      std::optional<Handler> h;
      std::optional<boost::asio::executor_work_guard<decltype(ex)>> work;
      void complete(error_code ec, T... v) {
        auto h2 = std::move(*h);
        h.reset();
        auto w = std::move(*work);
        work.reset();
        boost::asio::post(
            w.get_executor(), [h = std::move(h2), ec, tup = std::make_tuple(std::move(v)...)]() mutable {
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
    if (info_.refuse || !core_) {
      pending->complete(info_.refuse ? info_.refuse : error_code(client_errc::closed), T{}...);
      return;
    }
    auto io = core_->io_executor();
    const auto supported = supported_cancellation(info_.cancellation);
    StopPtr stop;
    if (info_.cancellation == Cancellation::cleanup) {
      // The operation completes itself after its cleanup: the slot only requests its stop.
      stop = std::make_shared<StopSignal>();
      if (slot.is_connected())
        slot.assign(
            [io, weak = std::weak_ptr<StopSignal>(stop), supported](boost::asio::cancellation_type t) {
              if ((t & supported) == boost::asio::cancellation_type::none) return;
              boost::asio::post(io, [weak] {
                if (auto s = weak.lock()) s->request();
              });
            });
    } else if (slot.is_connected()) {
      stop = std::make_shared<StopSignal>();
      slot.assign([io, weak = std::weak_ptr<Pending>(pending), stop, supported,
                   on_cancel = std::move(on_cancel)](boost::asio::cancellation_type t) mutable {
        if ((t & supported) == boost::asio::cancellation_type::none) return;
        boost::asio::post(io, [weak, stop, on_cancel = std::move(on_cancel)]() mutable {
          if (auto p = weak.lock(); p && p->h) {
            p->complete(boost::asio::error::operation_aborted, T{}...);
            on_cancel();
            stop->request();
          }
        });
      });
    }
    Callback cb([pending = std::move(pending), abandon = std::move(abandon)](error_code ec, T... v) mutable {
      if (pending->h)
        pending->complete(ec, std::move(v)...);
      else
        abandon(ec, std::move(v)...);
    });
    if (start_here(cb)) return;
    boost::asio::post(
        io, [core = core_, start = std::move(start), cb = std::move(cb), stop = std::move(stop)]() mutable {
          if constexpr (std::is_invocable_v<decltype(start)&, Callback&&, StopPtr>)
            start(std::move(cb), std::move(stop));
          else
            start(std::move(cb));
        });
  }

 private:
  std::shared_ptr<Core> core_;
  OpInfo info_;
};

/// The one initiator of every public asynchronous operation of zkrecipes (framework and recipes). Starts
/// `start(callback)` or `start(callback, stop)` on the client's I/O thread and completes the Asio handler
/// made from `token` with the callback's arguments (`void(error_code, T...)`), on the handler's associated
/// executor (default: the client's completion executor), under a work guard. The handler is never invoked
/// inline.
///
/// Cancellation, through the handler's cancellation slot, as `info.cancellation` says (`Cancellation`): the
/// types the operation does not honour are ignored. `read`/`write`: the handler completes at once with
/// `operation_aborted`, `on_cancel` runs, and the `stop` given to `start` (when the handler has a slot) is
/// requested so the operation's retry loop sends no further try; a late result goes to `abandon`. `cleanup`:
/// `stop` (always given) is requested and the operation completes itself after its cleanup.
///
/// `start_here(callback)` gives the operation a chance on the initiating thread: it takes the callback and
/// returns true (the operation then completes it on the I/O thread), or returns false and leaves it, and
/// `start` is posted to the I/O thread as usual. An operation that cannot start (`info.refuse`) completes
/// its handler with that error, posted.
template <class... T, class Token, class Start, class Abandon = NoAbandon, class OnCancel = NoCancelHook,
          class StartHere = NoStartHere>
auto async_run(std::shared_ptr<Core> core, OpInfo info, Token&& token, Start&& start, Abandon abandon = {},
               OnCancel on_cancel = {}, StartHere start_here = {}) {
  return boost::asio::async_initiate<Token, void(error_code, T...)>(
      Initiation<T...>(std::move(core), std::move(info)), token, std::forward<Start>(start),
      std::move(abandon), std::move(on_cancel), std::move(start_here));
}

/// What a blocking runner waits on: the operation's result, once.
template <class R>
struct BlockingWait {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  error_code ec;
  std::optional<R> value;

  void finish(error_code e, std::optional<R> v) {
    {
      std::lock_guard lk(m);
      ec = e;
      value = std::move(v);
      done = true;
    }
    cv.notify_one();  // outside the lock: the woken caller does not block on the mutex again
  }
};

/// The callback a blocking runner hands to its operation. Called, it completes the wait; destroyed uncalled
/// (the client's I/O thread ended without running the operation), it completes the wait with
/// `client_errc::closed`, so the caller never waits for a callback that no longer exists.
template <class R>
class BlockingDone {
 public:
  explicit BlockingDone(std::shared_ptr<BlockingWait<R>> w) noexcept : w_(std::move(w)) {}
  BlockingDone(BlockingDone&&) noexcept = default;
  BlockingDone& operator=(BlockingDone&&) = delete;
  BlockingDone(const BlockingDone&) = delete;
  BlockingDone& operator=(const BlockingDone&) = delete;
  ~BlockingDone() {
    if (w_) w_->finish(client_errc::closed, std::nullopt);
  }
  void operator()(error_code e, R v) { std::exchange(w_, nullptr)->finish(e, std::move(v)); }

 private:
  std::shared_ptr<BlockingWait<R>> w_;
};

/// The one blocking runner: blocks the calling thread until `done(ec, value)` runs. The operation first gets
/// a chance on the calling thread: `start_here(done)` either takes `done` and returns true (`done` then runs
/// on another thread), or returns false and leaves it, and `start(done)` is posted to the I/O thread.
/// Refuses (client_errc::would_deadlock) when called on the I/O thread itself. A `done` dropped uncalled
/// completes the call with `client_errc::closed` (`BlockingDone`).
template <class R, class StartHere, class Start>
R run_blocking_from_caller(Core& core, StartHere&& start_here, Start&& start, error_code& ec) {
  if (core.running_in_io_thread()) {
    ec = client_errc::would_deadlock;
    return R{};
  }
  auto st = std::make_shared<BlockingWait<R>>();
  unique_function<void(error_code, R)> done{BlockingDone<R>{st}};
  if (!start_here(done))
    boost::asio::post(core.io_executor(), [start = std::forward<Start>(start),
                                           done = std::move(done)]() mutable { start(std::move(done)); });
  std::unique_lock lk(st->m);
  st->cv.wait(lk, [&] { return st->done; });
  ec = st->ec;
  return st->value ? std::move(*st->value) : R{};
}

/// Runs `start(callback)` on the I/O thread and blocks the calling thread until the callback runs.
/// Refuses (client_errc::would_deadlock) when called on the I/O thread itself.
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

/// `run_blocking_void` whose operation first gets a chance on the calling thread
/// (`run_blocking_from_caller`): `start_here(done)` takes `done` and returns true, or returns false and
/// leaves it.
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
