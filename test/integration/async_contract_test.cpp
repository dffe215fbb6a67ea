// The asynchronous contract of docs/async.md, over every completion style: the default token (a deferred
// operation whose co_await throws zkr::Error), with_diagnostics, no throwing initiation on an empty handle,
// posted completion, and the cancellation types each kind of operation honours.
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <exception>
#include <future>
#include <thread>

#include "fixture.hpp"

using namespace zkr;
using namespace zkr::test;
namespace asio = boost::asio;

namespace {

/// Runs the coroutine `f()` on a private io_context to its end; rethrows what escapes it.
template <class F>
void run_coroutine(F f) {
  asio::io_context io;
  std::exception_ptr escaped;
  asio::co_spawn(io, f(), [&](std::exception_ptr e) { escaped = e; });
  io.run();
  if (escaped) std::rethrow_exception(escaped);
}

/// The `zkr::Error` that `f()` (a coroutine) throws; fails the test when it throws none or another type.
template <class F>
Error error_of(F f) {
  try {
    run_coroutine(std::move(f));
  } catch (const Error& e) {
    return e;
  }
  FAIL("no zkr::Error thrown");
  return Error({}, "", "");
}

}  // namespace

TEST_CASE("async: an empty handle completes its handler with not_acquired, posted, never throws",
          "[async][contract]") {
  Lease empty;
  // A callback: completes on another thread (no client: the system executor), never inside the call.
  std::promise<std::pair<error_code, std::thread::id>> done;
  CHECK_NOTHROW(empty.async_release([&](error_code ec) {
    done.set_value({ec, std::this_thread::get_id()});
  }));
  auto f = done.get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  auto [ec, thread] = f.get();
  CHECK(ec == client_errc::not_acquired);
  CHECK(thread != std::this_thread::get_id());

  // use_future: the error is in the future (a bare system_error: no diagnostics asked for).
  auto data = empty.async_data(asio::use_future);
  try {
    data.get();
    FAIL("no error");
  } catch (const boost::system::system_error& e) {
    CHECK(e.code() == client_errc::not_acquired);
  }
  // with_diagnostics(use_future): zkr::Error with the operation.
  auto multi = empty.async_multi_while_held({}, with_diagnostics(asio::use_future));
  try {
    multi.get();
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.code() == client_errc::not_acquired);
    CHECK(e.operation() == "multi_while_held");
  }
  MultiLease none;
  auto released = none.async_release(asio::use_future);
  CHECK_THROWS_AS(released.get(), boost::system::system_error);

  // The default token: a deferred operation; co_await throws zkr::Error.
  auto op = empty.async_data();
  auto e = error_of([&]() -> asio::awaitable<void> { co_await std::move(op); });
  CHECK(e.code() == client_errc::not_acquired);
  CHECK(e.operation() == "get_data");
}

TEST_CASE("async: default token, with_diagnostics and the cancellation types", "[async][contract][cancel]") {
  ServerFixture fx;
  auto c = fx.client();
  CreateOptions parents;
  parents.creating_parents = true;
  parents.data = "x";
  fx.admin->create("/async/a", parents);

  // The default token returns a deferred operation: nothing happens until it is launched.
  auto create = c->async_create("/async/later", {});
  std::this_thread::sleep_for(200ms);
  CHECK_FALSE(fx.admin->exists("/async/later"));
  run_coroutine([&]() -> asio::awaitable<void> {
    auto made = co_await std::move(create);
    CHECK(made.path == "/async/later");
    // Deferred operations compose: a continuation that starts another operation.
    auto read = c->async_get_data("/async/a", {}) | asio::deferred([&](std::exception_ptr, NodeData) {
                  return c->async_exists("/async/later", {});
                });
    auto st = co_await std::move(read);
    CHECK(st.has_value());
  });

  // co_await with the default token: zkr::Error with the operation and the path.
  auto e = error_of([&]() -> asio::awaitable<void> { co_await c->async_get_data("/async/missing", {}); });
  CHECK(e.code() == zk_errc::no_node);
  CHECK(e.operation() == "get_data");
  CHECK(e.path() == "/async/missing");
  // with_diagnostics(use_awaitable): the same.
  e = error_of([&]() -> asio::awaitable<void> {
    co_await c->async_set_data("/async/missing", "v", -1, with_diagnostics(asio::use_awaitable));
  });
  CHECK(e.code() == zk_errc::no_node);
  CHECK(e.operation() == "set_data");
  CHECK(e.path() == "/async/missing");
  // with_diagnostics(use_future): the same; success gives the value.
  CHECK(c->async_get_data("/async/a", {}, with_diagnostics(asio::use_future)).get().data == "x");
  auto failed = c->async_remove("/async/missing", {}, with_diagnostics(asio::use_future));
  try {
    failed.get();
    FAIL("no error");
  } catch (const Error& err) {
    CHECK(err.operation() == "delete");
    CHECK(err.path() == "/async/missing");
  }
  // Plain use_awaitable: Asio's own bare system_error, as documented.
  bool bare = false;
  run_coroutine([&]() -> asio::awaitable<void> {
    try {
      co_await c->async_get_data("/async/missing", {}, asio::use_awaitable);
    } catch (const Error&) {
    } catch (const boost::system::system_error& err) {
      bare = err.code() == zk_errc::no_node;
    }
  });
  CHECK(bare);

  // An acquire with a deadline on a closed client: zkr::Error("acquire", path).
  {
    auto closed = fx.client();
    InterProcessMutex m(*closed, "/async/lock");
    closed->close();
    e = error_of([&]() -> asio::awaitable<void> { co_await m.async_try_acquire_for(1s); });
    CHECK(e.code() == client_errc::closed);
    CHECK(e.operation() == "acquire");
    CHECK(e.path() == "/async/lock");
  }

  // A read honours every type: each completes it at once with operation_aborted.
  for (auto type : {asio::cancellation_type::terminal, asio::cancellation_type::partial,
                    asio::cancellation_type::total}) {
    asio::cancellation_signal sig;
    std::future<NodeData> f;
    {
      IoStall stall(*c);  // the read and the cancellation reach the I/O thread in this order
      f = c->async_get_data("/async/a", {}, asio::bind_cancellation_slot(sig.slot(), asio::use_future));
      sig.emit(type);
    }
    REQUIRE(f.wait_for(10s) == std::future_status::ready);
    try {
      f.get();
      FAIL("not cancelled");
    } catch (const boost::system::system_error& err) {
      CHECK(err.code() == asio::error::operation_aborted);
    }
  }
  // A write honours terminal only: partial and total are ignored, the write completes.
  for (auto type : {asio::cancellation_type::partial, asio::cancellation_type::total}) {
    asio::cancellation_signal sig;
    std::future<Stat> f;
    {
      IoStall stall(*c);
      f = c->async_set_data("/async/a", "y", -1, asio::bind_cancellation_slot(sig.slot(), asio::use_future));
      sig.emit(type);
    }
    REQUIRE(f.wait_for(10s) == std::future_status::ready);
    CHECK_NOTHROW(f.get());
  }
  {
    asio::cancellation_signal sig;
    std::future<Stat> f;
    {
      IoStall stall(*c);
      f = c->async_set_data("/async/a", "z", -1, asio::bind_cancellation_slot(sig.slot(), asio::use_future));
      sig.emit(asio::cancellation_type::terminal);
    }
    REQUIRE(f.wait_for(10s) == std::future_status::ready);
    CHECK_THROWS_AS(f.get(), boost::system::system_error);
  }

  // An acquire honours terminal and partial: its node is gone when it completes; total is ignored.
  InterProcessMutex holder(*c, "/async/contended");
  holder.acquire();
  for (auto type : {asio::cancellation_type::partial, asio::cancellation_type::terminal}) {
    InterProcessMutex contender(*c, "/async/contended");
    asio::cancellation_signal sig;
    auto f = contender.async_acquire(asio::bind_cancellation_slot(sig.slot(), asio::use_future));
    REQUIRE(eventually([&] { return fx.children("/async/contended").size() == 2; }, 10s));
    sig.emit(asio::cancellation_type::total);  // ignored: it keeps waiting
    CHECK(f.wait_for(300ms) == std::future_status::timeout);
    CHECK(fx.children("/async/contended").size() == 2);
    sig.emit(type);
    REQUIRE(f.wait_for(10s) == std::future_status::ready);
    CHECK(fx.children("/async/contended").size() == 1);  // already deleted at completion
    try {
      f.get();
      FAIL("not cancelled");
    } catch (const boost::system::system_error& err) {
      CHECK(err.code() == asio::error::operation_aborted);
    }
  }
  holder.release();
}
