#pragma once
// The three asynchronous completion styles (a plain callback, `use_future`, `use_awaitable`), each run to its
// `Outcome` with a bound, and the error code a throwing twin threw.

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <exception>
#include <future>
#include <memory>
#include <optional>
#include <utility>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/test/outcome.hpp>

namespace zkr::itest {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using zkr::test::Outcome;

/// Runs `start(callback)` where the callback is a plain lambda taking (error_code, T); waits up to `timeout`.
template <class T, class Start>
Outcome<T> with_callback(Start&& start, std::chrono::milliseconds timeout = 20s) {
  auto p = std::make_shared<std::promise<Outcome<T>>>();
  auto f = p->get_future();
  start([p](error_code ec, T v) { p->set_value(Outcome<T>{ec, std::move(v)}); });
  REQUIRE(f.wait_for(timeout) == std::future_status::ready);
  return f.get();
}

/// As `with_callback` for operations completing with (error_code) only.
template <class Start>
error_code with_void_callback(Start&& start, std::chrono::milliseconds timeout = 20s) {
  auto p = std::make_shared<std::promise<error_code>>();
  auto f = p->get_future();
  start([p](error_code ec) { p->set_value(ec); });
  REQUIRE(f.wait_for(timeout) == std::future_status::ready);
  return f.get();
}

/// Waits for a `use_future` future and returns its value, or the error code it failed with.
template <class T>
Outcome<T> from_future(std::future<T> f, std::chrono::milliseconds timeout = 20s) {
  REQUIRE(f.wait_for(timeout) == std::future_status::ready);
  try {
    return Outcome<T>{{}, f.get()};
  } catch (const boost::system::system_error& e) {
    return Outcome<T>{e.code(), T{}};
  }
}
inline error_code from_void_future(std::future<void> f, std::chrono::milliseconds timeout = 20s) {
  REQUIRE(f.wait_for(timeout) == std::future_status::ready);
  try {
    f.get();
    return {};
  } catch (const boost::system::system_error& e) {
    return e.code();
  }
}

/// Runs the coroutine `make()` (returning `asio::awaitable<T>`) with `co_spawn` on a fresh io_context in this
/// thread; a `system_error` thrown by an awaited operation becomes the outcome's error code.
template <class T, class Make>
Outcome<T> with_awaitable(Make&& make, std::chrono::milliseconds timeout = 20s) {
  asio::io_context ioc;
  std::optional<Outcome<T>> out;
  std::exception_ptr other;
  asio::co_spawn(ioc, make(), [&](std::exception_ptr e, T v) {
    if (!e) {
      out.emplace(Outcome<T>{{}, std::move(v)});
      return;
    }
    try {
      std::rethrow_exception(e);
    } catch (const boost::system::system_error& se) {
      out.emplace(Outcome<T>{se.code(), T{}});
    } catch (...) {
      other = std::current_exception();
    }
  });
  ioc.run_for(timeout);
  if (other) std::rethrow_exception(other);
  REQUIRE(out.has_value());
  return std::move(*out);
}
template <class Make>
error_code with_void_awaitable(Make&& make, std::chrono::milliseconds timeout = 20s) {
  asio::io_context ioc;
  std::optional<error_code> out;
  std::exception_ptr other;
  asio::co_spawn(ioc, make(), [&](std::exception_ptr e) {
    if (!e) {
      out.emplace();
      return;
    }
    try {
      std::rethrow_exception(e);
    } catch (const boost::system::system_error& se) {
      out.emplace(se.code());
    } catch (...) {
      other = std::current_exception();
    }
  });
  ioc.run_for(timeout);
  if (other) std::rethrow_exception(other);
  REQUIRE(out.has_value());
  return *out;
}

/// The error code a throwing twin threw (empty when it did not throw).
template <class F>
error_code thrown_by(F&& f) {
  try {
    f();
  } catch (const zkr::Error& e) {
    return e.code();
  }
  return {};
}

}  // namespace zkr::itest
