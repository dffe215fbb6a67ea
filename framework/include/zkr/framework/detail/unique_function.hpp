#pragma once
/// \file
/// A small move-only `std::function` (C++23's `std::move_only_function` is not in the toolchains we target).

#include <memory>
#include <type_traits>
#include <utility>

namespace zkr::detail {

template <class Sig>
class unique_function;

template <class R, class... Args>
class unique_function<R(Args...)> {
  struct base {
    virtual ~base() = default;
    virtual R call(Args&&... args) = 0;
  };
  template <class F>
  struct impl final : base {
    F f;
    explicit impl(F&& fn) : f(std::move(fn)) {}
    R call(Args&&... args) override { return f(std::forward<Args>(args)...); }
  };
  std::unique_ptr<base> p_;

 public:
  unique_function() noexcept = default;
  unique_function(std::nullptr_t) noexcept {}
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, unique_function> &&
                                              std::is_invocable_r_v<R, std::decay_t<F>&, Args...>>>
  unique_function(F&& f) : p_(std::make_unique<impl<std::decay_t<F>>>(std::forward<F>(f))) {}
  unique_function(unique_function&&) noexcept = default;
  unique_function& operator=(unique_function&&) noexcept = default;
  explicit operator bool() const noexcept { return static_cast<bool>(p_); }
  R operator()(Args... args) const { return p_->call(std::forward<Args>(args)...); }
};

}  // namespace zkr::detail
