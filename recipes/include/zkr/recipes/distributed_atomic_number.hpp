#pragma once
/// \file
/// `DistributedAtomicLong` and `DistributedAtomicInteger`: Curator's distributed atomic numbers, one template
/// over the width (8 or 4 bytes, big-endian two's complement, as Java's `ByteBuffer` writes them),
/// byte-compatible with Curator 5.x on the same path. docs/counters.md describes them against Curator.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/framework/detail/access.hpp>
#include <zkr/framework/detail/async.hpp>
#include <zkr/recipes/atomic_value.hpp>
#include <zkr/recipes/detail/atomic_engine.hpp>
#include <zkr/recipes/detail/number_codec.hpp>

namespace zkr {

/// Curator's `DistributedAtomicNumber<T>` (`T` is `std::int64_t` or `std::int32_t`): a number at
/// `counter_path`, changed by a read and a write versioned on what was read. While another writer wins, the
/// write is tried again after the pauses `retry_policy` allows; when that gives up and a `PromotedToLock`
/// is given, it is tried again under that lock with the lock's policy. An `AtomicValue` says whether it
/// succeeded, and the values before and after.
///
/// The node is created `PERSISTENT` (parents as containers) by the first write; reads of a missing node or
/// of empty data give 0 (and create nothing). Arithmetic wraps around as Java's does. Data of another size
/// than the number's (written by someone else, or by the other width on one path) is
/// `errc::corrupted_data`, never a number (Curator reads the first bytes of longer data).
///
/// Every operation comes as three twins: throwing, `error_code&`, and `async_` with a completion token
/// (handler `void(error_code, AtomicValue<T>)`, or as noted; executor: the handler's, else the client's
/// completion executor; cancellation: terminal only: completes at once with `operation_aborted`, a write
/// already sent may still apply, and a promoted lock taken is released). Errors: the client's (after its
/// own retry policy: connection loss and session expiry are the client's business, as in Curator),
/// `errc::corrupted_data`. Thread-safety: every member, from any thread; the object holds no state between
/// operations. Never call a blocking twin on the client's I/O thread (`errc::would_deadlock`).
template <class T>
class DistributedAtomicNumber {
  static_assert(std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::int32_t>,
                "DistributedAtomicNumber is for std::int64_t (Long) and std::int32_t (Integer)");

 public:
  static constexpr std::size_t width = sizeof(T);

  /// `counter_path` (and a promoted lock's path) are validated (`Error` with `errc::invalid_path`); a null
  /// retry policy is `errc::invalid_argument`.
  DistributedAtomicNumber(CuratorFramework& client, std::string counter_path, RetryPolicyPtr retry_policy,
                          std::optional<PromotedToLock> promoted = std::nullopt) {
    engine_ = std::make_shared<detail::AtomicEngine>(detail::access::core(client), std::move(counter_path),
                                                     width, std::move(retry_policy), std::move(promoted));
  }

  /// The current value (one read; a missing node gives 0, succeeded).
  AtomicValue<T> get() { return run_or_throw({detail::AtomicOp::Kind::get}, "get"); }
  AtomicValue<T> get(error_code& ec) { return run({detail::AtomicOp::Kind::get}, ec); }
  template <
      boost::asio::completion_token_for<void(error_code, AtomicValue<T>)> Token = default_completion_token_t>
  auto async_get(Token&& token = {}) {
    return async({detail::AtomicOp::Kind::get}, "get", std::forward<Token>(token));
  }

  /// Adds `delta` (optimistic, then promoted).
  AtomicValue<T> add(T delta) { return run_or_throw(add_op(delta), "add"); }
  AtomicValue<T> add(T delta, error_code& ec) { return run(add_op(delta), ec); }
  template <
      boost::asio::completion_token_for<void(error_code, AtomicValue<T>)> Token = default_completion_token_t>
  auto async_add(T delta, Token&& token = {}) {
    return async(add_op(delta), "add", std::forward<Token>(token));
  }
  /// Subtracts `delta` (an add of its two's-complement negation, as Curator's).
  AtomicValue<T> subtract(T delta) { return run_or_throw(add_op(negate(delta)), "subtract"); }
  AtomicValue<T> subtract(T delta, error_code& ec) { return run(add_op(negate(delta)), ec); }
  template <
      boost::asio::completion_token_for<void(error_code, AtomicValue<T>)> Token = default_completion_token_t>
  auto async_subtract(T delta, Token&& token = {}) {
    return async(add_op(negate(delta)), "subtract", std::forward<Token>(token));
  }
  /// `add(1)`.
  AtomicValue<T> increment() { return add(1); }
  AtomicValue<T> increment(error_code& ec) { return add(1, ec); }
  template <
      boost::asio::completion_token_for<void(error_code, AtomicValue<T>)> Token = default_completion_token_t>
  auto async_increment(Token&& token = {}) {
    return async_add(1, std::forward<Token>(token));
  }
  /// `add(-1)`.
  AtomicValue<T> decrement() { return add(-1); }
  AtomicValue<T> decrement(error_code& ec) { return add(-1, ec); }
  template <
      boost::asio::completion_token_for<void(error_code, AtomicValue<T>)> Token = default_completion_token_t>
  auto async_decrement(Token&& token = {}) {
    return async_add(-1, std::forward<Token>(token));
  }

  /// Sets `v` whatever the value was (optimistic, then promoted): fails only when the policies give up.
  AtomicValue<T> try_set(T v) { return run_or_throw(set_op(v), "try_set"); }
  AtomicValue<T> try_set(T v, error_code& ec) { return run(set_op(v), ec); }
  template <
      boost::asio::completion_token_for<void(error_code, AtomicValue<T>)> Token = default_completion_token_t>
  auto async_try_set(T v, Token&& token = {}) {
    return async(set_op(v), "try_set", std::forward<Token>(token));
  }

  /// Sets `v` if the value is `expected`: one read and one versioned write, no retry and no promotion, as
  /// Curator's. Fails (not an error) when the value differs, someone wrote in between, or the node is missing
  /// (as Curator's; `initialize` creates it).
  AtomicValue<T> compare_and_set(T expected, T v) {
    return run_or_throw(cas_op(expected, v), "compare_and_set");
  }
  AtomicValue<T> compare_and_set(T expected, T v, error_code& ec) { return run(cas_op(expected, v), ec); }
  template <
      boost::asio::completion_token_for<void(error_code, AtomicValue<T>)> Token = default_completion_token_t>
  auto async_compare_and_set(T expected, T v, Token&& token = {}) {
    return async(cas_op(expected, v), "compare_and_set", std::forward<Token>(token));
  }

  /// Writes `v` unconditionally (creating the node if missing). Handler of the async twin:
  /// `void(error_code)`.
  void force_set(T v) { run_or_throw(plain_op(detail::AtomicOp::Kind::force_set, v), "force_set"); }
  void force_set(T v, error_code& ec) { run(plain_op(detail::AtomicOp::Kind::force_set, v), ec); }
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_force_set(T v, Token&& token = {}) {
    return detail::async_run<>(
        engine_->core(), info("force_set"), std::forward<Token>(token),
        [e = engine_, op = plain_op(detail::AtomicOp::Kind::force_set, v)](auto cb) mutable {
          e->run(op, [cb = std::move(cb)](error_code ec, detail::AtomicOutcome) mutable { cb(ec); });
        });
  }

  /// Creates the node with `v` if it does not exist: true if this call created it. Handler of the async
  /// twin: `void(error_code, bool)`.
  bool initialize(T v) {
    return run_or_throw(plain_op(detail::AtomicOp::Kind::initialize, v), "initialize").succeeded;
  }
  bool initialize(T v, error_code& ec) {
    return run(plain_op(detail::AtomicOp::Kind::initialize, v), ec).succeeded;
  }
  template <boost::asio::completion_token_for<void(error_code, bool)> Token = default_completion_token_t>
  auto async_initialize(T v, Token&& token = {}) {
    return detail::async_run<bool>(
        engine_->core(), info("initialize"), std::forward<Token>(token),
        [e = engine_, op = plain_op(detail::AtomicOp::Kind::initialize, v)](auto cb) mutable {
          e->run(op, [cb = std::move(cb)](error_code ec, detail::AtomicOutcome o) mutable {
            cb(ec, o.succeeded);
          });
        });
  }

  const std::string& path() const noexcept { return engine_->path(); }

  friend struct detail::access;

 private:
  /// Over a core (`detail::access::make`: the unit tests' fake).
  DistributedAtomicNumber(std::shared_ptr<detail::Core> core, std::string counter_path,
                          RetryPolicyPtr retry_policy, std::optional<PromotedToLock> promoted) {
    engine_ = std::make_shared<detail::AtomicEngine>(std::move(core), std::move(counter_path), width,
                                                     std::move(retry_policy), std::move(promoted));
  }
  /// The engine, for the recipes built on this number (`detail::access::engine`: `CachedAtomicLong`).
  const std::shared_ptr<detail::AtomicEngine>& internals() const noexcept { return engine_; }

  static constexpr T negate(T d) noexcept {
    return static_cast<T>(detail::wrap_to_width(std::uint64_t{0} - static_cast<std::uint64_t>(d), width));
  }
  static detail::AtomicOp add_op(T d) { return {detail::AtomicOp::Kind::add, d, 0}; }
  static detail::AtomicOp set_op(T v) { return {detail::AtomicOp::Kind::try_set, v, 0}; }
  static detail::AtomicOp cas_op(T e, T v) { return {detail::AtomicOp::Kind::compare_and_set, e, v}; }
  static detail::AtomicOp plain_op(detail::AtomicOp::Kind k, T v) { return {k, v, 0}; }

  static AtomicValue<T> narrow(const detail::AtomicOutcome& o) {
    return {o.succeeded, static_cast<T>(o.pre), static_cast<T>(o.post), o.stats};
  }
  detail::OpInfo info(std::string_view op) const {
    return {op, engine_->path(), detail::Cancellation::write};
  }
  AtomicValue<T> run(detail::AtomicOp op, error_code& ec) {
    auto o = detail::run_blocking<detail::AtomicOutcome>(
        *engine_->core(), [e = engine_, op](detail::AtomicCallback cb) mutable { e->run(op, std::move(cb)); },
        ec);
    return narrow(o);
  }
  AtomicValue<T> run_or_throw(detail::AtomicOp op, std::string_view name) {
    error_code ec;
    auto r = run(op, ec);
    throw_if(ec, std::string("DistributedAtomicNumber::") + std::string(name), engine_->path());
    return r;
  }
  template <class Token>
  auto async(detail::AtomicOp op, std::string_view name, Token&& token) {
    return detail::async_run<AtomicValue<T>>(
        engine_->core(), info(name), std::forward<Token>(token), [e = engine_, op](auto cb) mutable {
          e->run(op,
                 [cb = std::move(cb)](error_code ec, detail::AtomicOutcome o) mutable { cb(ec, narrow(o)); });
        });
  }

  std::shared_ptr<detail::AtomicEngine> engine_;
};

/// Curator's `DistributedAtomicLong`: 8 bytes big-endian.
using DistributedAtomicLong = DistributedAtomicNumber<std::int64_t>;
/// Curator's `DistributedAtomicInteger`: 4 bytes big-endian.
using DistributedAtomicInteger = DistributedAtomicNumber<std::int32_t>;

}  // namespace zkr
