#pragma once
/// \file
/// `zkr::with_diagnostics(token)`: a completion token adapter that turns an operation's
/// `void(error_code, T...)` into `void(std::exception_ptr, T...)`, a failure becoming `zkr::Error` (the
/// error code, the operation and the path), success a null `exception_ptr`. So
/// `co_await client.async_get_data(path, {}, zkr::with_diagnostics(boost::asio::use_awaitable))` throws the
/// same `zkr::Error` as the blocking `get_data(path)`, where plain `use_awaitable` throws a bare
/// `boost::system::system_error` without the operation and the path.
///
/// The default completion token of every zkrecipes asynchronous operation is
/// `with_diagnostics(boost::asio::deferred)` (`default_completion_token_t`), as Boost.MySQL's: with no token,
/// `async_op(args)` returns a deferred operation, which `co_await` in an `awaitable` coroutine runs and which
/// throws `zkr::Error`. See docs/async.md.
///
/// Only zkrecipes' operations carry the operation and the path: on another Asio operation the adapter still
/// converts the error code, into an `Error` with an empty operation and path.

#include <boost/asio/associator.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/version.hpp>
#include <concepts>
#include <exception>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <zkr/framework/error.hpp>

namespace zkr {

/// The token made by `with_diagnostics(inner)`.
template <class Inner>
struct with_diagnostics_t {
  Inner token;
};

/// Adapts `token` (a callback, `use_awaitable`, `use_future`, `deferred`, ...): the operation's error code
/// becomes a `zkr::Error` in a `std::exception_ptr` (null on success).
template <class Inner>
constexpr with_diagnostics_t<std::decay_t<Inner>> with_diagnostics(Inner&& token) {
  return {std::forward<Inner>(token)};
}

/// The completion token of every zkrecipes asynchronous operation called without one: a deferred operation
/// whose failure is a `zkr::Error`.
using default_completion_token_t = with_diagnostics_t<boost::asio::deferred_t>;

namespace detail {

/// An initiation that knows its operation's name and path (zkrecipes' own, `detail::Initiation`).
template <class I>
concept has_diagnostics = requires(const I& i) {
  { i.operation() } -> std::convertible_to<std::string_view>;
  { i.path() } -> std::convertible_to<std::string_view>;
};

/// The handler given to an operation under `with_diagnostics`: converts its error code and calls the inner
/// handler, whose executor, cancellation slot and allocator it reports as its own.
template <class Handler>
struct DiagnosticsHandler {
  Handler handler;
  std::string operation;
  std::string path;

  template <class... A>
  void operator()(error_code ec, A&&... a) {
    std::exception_ptr e;
    if (ec) e = std::make_exception_ptr(Error(ec, std::move(operation), std::move(path)));
    std::move(handler)(std::move(e), std::forward<A>(a)...);
  }
};

/// Wraps an initiation: hands it a `DiagnosticsHandler` around the handler made from the inner token.
template <class Initiation>
struct DiagnosticsInitiation {
  Initiation init;

  template <class Handler, class... Args>
  void operator()(Handler&& handler, Args&&... args) {
    std::string operation, path;
    if constexpr (has_diagnostics<Initiation>) {
      operation = std::string(init.operation());
      path = std::string(init.path());
    }
    std::move(init)(DiagnosticsHandler<std::decay_t<Handler>>{std::forward<Handler>(handler),
                                                              std::move(operation), std::move(path)},
                    std::forward<Args>(args)...);
  }
};

}  // namespace detail
}  // namespace zkr

namespace boost::asio {

template <class Inner, class... T>
struct async_result<zkr::with_diagnostics_t<Inner>, void(zkr::error_code, T...)> {
  template <class Initiation, class RawToken, class... Args>
  static auto initiate(Initiation&& init, RawToken&& token, Args&&... args) {
    // The inner token with the value category and constness of the adapter it came in.
    using Q = std::conditional_t<std::is_const_v<std::remove_reference_t<RawToken>>, const Inner, Inner>;
    using C = std::conditional_t<std::is_lvalue_reference_v<RawToken>, Q&, Q>;
    return async_initiate<C, void(std::exception_ptr, T...)>(
        zkr::detail::DiagnosticsInitiation<std::decay_t<Initiation>>{std::forward<Initiation>(init)},
        token.token, std::forward<Args>(args)...);
  }
};

template <template <class, class> class Associator, class Handler, class DefaultCandidate>
struct associator<Associator, zkr::detail::DiagnosticsHandler<Handler>, DefaultCandidate>
    : Associator<Handler, DefaultCandidate> {
  static typename Associator<Handler, DefaultCandidate>::type get(
      const zkr::detail::DiagnosticsHandler<Handler>& h) noexcept {
    return Associator<Handler, DefaultCandidate>::get(h.handler);
  }
  static auto get(const zkr::detail::DiagnosticsHandler<Handler>& h, const DefaultCandidate& c) noexcept
      -> decltype(Associator<Handler, DefaultCandidate>::get(h.handler, c)) {
    return Associator<Handler, DefaultCandidate>::get(h.handler, c);
  }
};

#if BOOST_VERSION >= 108000 && BOOST_VERSION < 108200
namespace detail {
/// Boost 1.80 and 1.81 cannot `co_await` a deferred operation completing with `void(std::exception_ptr, T)`
/// (chriskohlhoff/asio#1190: `resume` dereferences the result struct instead of the exception pointer), which
/// the default token `with_diagnostics(deferred)` makes of every zkrecipes operation with a value. This is
/// their specialization with that one line fixed; the constraint makes it the more specialized one.
template <typename R, typename T, typename Executor>
requires std::is_void_v<R>
class awaitable_async_op_handler<R(std::exception_ptr, T), Executor> : public awaitable_thread<Executor> {
 public:
  struct result_type {
    std::exception_ptr* ex_;
    T* value_;
  };

  awaitable_async_op_handler(awaitable_thread<Executor>* h, result_type& result)
      : awaitable_thread<Executor>(std::move(*h)), result_(result) {}

  void operator()(std::exception_ptr ex, T value) {
    result_.ex_ = &ex;
    result_.value_ = &value;
    this->entry_point()->top_of_stack_->attach_thread(this);
    this->entry_point()->top_of_stack_->clear_cancellation_slot();
    this->pump();
  }

  static T resume(result_type& result) {
    if (*result.ex_) std::rethrow_exception(std::exchange(*result.ex_, nullptr));
    return std::move(*result.value_);
  }

 private:
  result_type& result_;
};
}  // namespace detail
#endif

}  // namespace boost::asio
