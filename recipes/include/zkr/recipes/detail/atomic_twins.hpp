#pragma once
/// \file
/// `detail::AtomicTwins`: the throwing, `error_code&` and `async_` forms of every operation of a distributed
/// atomic value or number, over its engine. `V` is what the public class reports, made from the engine's
/// outcome by `Convert`. Not API: the public faces are `DistributedAtomicValue` and
/// `DistributedAtomicNumber<T>`.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <zkr/framework/detail/async.hpp>
#include <zkr/framework/error.hpp>
#include <zkr/recipes/detail/atomic_engine.hpp>

namespace zkr::detail {

template <class V, V (*Convert)(const AtomicOutcome&)>
class AtomicTwins {
 public:
  /// `owner` names the public class in exceptions ("DistributedAtomicValue::get").
  AtomicTwins(std::shared_ptr<AtomicEngine> engine, std::string_view owner)
      : engine_(std::move(engine)), owner_(owner) {}

  V run(AtomicOp op, error_code& ec) const {
    auto o = run_blocking<AtomicOutcome>(
        *engine_->core(),
        [e = engine_, op = std::move(op)](AtomicCallback cb) mutable {
          e->run(std::move(op), std::move(cb));
        },
        ec);
    return Convert(o);
  }
  V run_or_throw(AtomicOp op, std::string_view name) const {
    error_code ec;
    auto r = run(std::move(op), ec);
    throw_if(ec, what(name), engine_->path());
    return r;
  }
  /// Handler: `void(error_code, V)`.
  template <class Token>
  auto async(AtomicOp op, std::string_view name, Token&& token) const {
    return async_run<V>(engine_->core(), info(name), std::forward<Token>(token),
                        [e = engine_, op = std::move(op)](auto cb) mutable {
                          e->run(std::move(op), [cb = std::move(cb)](error_code ec, AtomicOutcome o) mutable {
                            cb(ec, Convert(o));
                          });
                        });
  }

  /// `force_set`'s three forms: no value.
  void force_set(std::string v, error_code& ec) const { run({AtomicOp::Kind::force_set, std::move(v)}, ec); }
  void force_set(std::string v) const {
    run_or_throw({AtomicOp::Kind::force_set, std::move(v)}, "force_set");
  }
  /// Handler: `void(error_code)`.
  template <class Token>
  auto async_force_set(std::string v, Token&& token) const {
    return async_run<>(
        engine_->core(), info("force_set"), std::forward<Token>(token),
        [e = engine_, op = AtomicOp{AtomicOp::Kind::force_set, std::move(v)}](auto cb) mutable {
          e->run(std::move(op), [cb = std::move(cb)](error_code ec, AtomicOutcome) mutable { cb(ec); });
        });
  }

  /// `initialize`'s three forms: whether this call created the node.
  bool initialize(std::string v, error_code& ec) const {
    return run({AtomicOp::Kind::initialize, std::move(v)}, ec).succeeded;
  }
  bool initialize(std::string v) const {
    return run_or_throw({AtomicOp::Kind::initialize, std::move(v)}, "initialize").succeeded;
  }
  /// Handler: `void(error_code, bool)`.
  template <class Token>
  auto async_initialize(std::string v, Token&& token) const {
    return async_run<bool>(
        engine_->core(), info("initialize"), std::forward<Token>(token),
        [e = engine_, op = AtomicOp{AtomicOp::Kind::initialize, std::move(v)}](auto cb) mutable {
          e->run(std::move(op),
                 [cb = std::move(cb)](error_code ec, AtomicOutcome o) mutable { cb(ec, o.succeeded); });
        });
  }

  const std::shared_ptr<AtomicEngine>& engine() const noexcept { return engine_; }

 private:
  OpInfo info(std::string_view op) const { return {op, engine_->path(), Cancellation::write}; }
  std::string what(std::string_view op) const { return std::string(owner_) + "::" + std::string(op); }

  std::shared_ptr<AtomicEngine> engine_;
  std::string_view owner_;  // a literal
};

}  // namespace zkr::detail
