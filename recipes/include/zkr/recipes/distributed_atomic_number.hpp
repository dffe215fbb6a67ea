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
#include <zkr/recipes/atomic_value.hpp>
#include <zkr/recipes/detail/atomic_engine.hpp>
#include <zkr/recipes/detail/atomic_twins.hpp>
#include <zkr/recipes/detail/number_codec.hpp>

namespace zkr {

namespace detail {
/// The engine's outcome (bytes) as numbers of type `T`: a value not written is 0.
template <class T>
AtomicValue<T> number_value(const AtomicOutcome& o) {
  auto number = [](const std::string& bytes) {
    return static_cast<T>(decode_big_endian(bytes, sizeof(T)).value_or(0));
  };
  return {o.succeeded, number(o.pre), number(o.post), o.stats};
}
}  // namespace detail

/// Curator's `DistributedAtomicNumber<T>` (`T` is `std::int64_t` or `std::int32_t`): a number at
/// `counter_path`, changed by a read and a write versioned on what was read. While another writer wins, the
/// write is tried again after the pauses `retry_policy` allows; when that gives up and a `PromotedToLock`
/// is given, it is tried again under that lock with the lock's policy. An `AtomicValue` says whether it
/// succeeded, and the values before and after.
///
/// The node is created `PERSISTENT` (parents as containers) by the first write; reads of a missing node or
/// of empty data give 0 (and create nothing). Arithmetic wraps around as Java's does. Data of another size
/// than the number's (written by someone else, or by the other width on one path) is
/// `client_errc::corrupted_data`, never a number (Curator reads the first bytes of longer data).
///
/// Every operation comes as three twins: throwing, `error_code&`, and `async_` with a completion token
/// (handler `void(error_code, AtomicValue<T>)`, or as noted; executor: the handler's, else the client's
/// completion executor; cancellation: terminal only: completes at once with `operation_aborted`, a write
/// already sent may still apply, and a promoted lock taken is released). Errors: the client's (after its
/// own retry policy: connection loss and session expiry are the client's business, as in Curator),
/// `client_errc::corrupted_data`. Thread-safety: every member, from any thread; the object holds no state
/// between operations. Never call a blocking twin on the client's I/O thread (`client_errc::would_deadlock`).
template <class T>
class DistributedAtomicNumber {
  static_assert(std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::int32_t>,
                "DistributedAtomicNumber is for std::int64_t (Long) and std::int32_t (Integer)");

 public:
  static constexpr std::size_t width = sizeof(T);

  /// `counter_path` (and a promoted lock's path) are validated (`Error` with `client_errc::invalid_path`); a
  /// null retry policy is `client_errc::invalid_argument`.
  DistributedAtomicNumber(CuratorFramework& client, std::string counter_path, RetryPolicyPtr retry_policy,
                          std::optional<PromotedToLock> promoted = std::nullopt)
      : twins_(twins_for(client, std::move(counter_path), std::move(retry_policy), std::move(promoted))) {}

  /// The current value (one read; a missing node gives 0, succeeded).
  AtomicValue<T> get() { return twins_.run_or_throw({detail::AtomicOp::Kind::get}, "get"); }
  AtomicValue<T> get(error_code& ec) { return twins_.run({detail::AtomicOp::Kind::get}, ec); }
  template <
      boost::asio::completion_token_for<void(error_code, AtomicValue<T>)> Token = default_completion_token_t>
  auto async_get(Token&& token = {}) {
    return twins_.async({detail::AtomicOp::Kind::get}, "get", std::forward<Token>(token));
  }

  /// Adds `delta` (optimistic, then promoted).
  AtomicValue<T> add(T delta) { return twins_.run_or_throw(add_op(delta), "add"); }
  AtomicValue<T> add(T delta, error_code& ec) { return twins_.run(add_op(delta), ec); }
  template <
      boost::asio::completion_token_for<void(error_code, AtomicValue<T>)> Token = default_completion_token_t>
  auto async_add(T delta, Token&& token = {}) {
    return twins_.async(add_op(delta), "add", std::forward<Token>(token));
  }
  /// Subtracts `delta` (an add of its two's-complement negation, as Curator's).
  AtomicValue<T> subtract(T delta) { return twins_.run_or_throw(add_op(negate(delta)), "subtract"); }
  AtomicValue<T> subtract(T delta, error_code& ec) { return twins_.run(add_op(negate(delta)), ec); }
  template <
      boost::asio::completion_token_for<void(error_code, AtomicValue<T>)> Token = default_completion_token_t>
  auto async_subtract(T delta, Token&& token = {}) {
    return twins_.async(add_op(negate(delta)), "subtract", std::forward<Token>(token));
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
  AtomicValue<T> try_set(T v) { return twins_.run_or_throw(set_op(v), "try_set"); }
  AtomicValue<T> try_set(T v, error_code& ec) { return twins_.run(set_op(v), ec); }
  template <
      boost::asio::completion_token_for<void(error_code, AtomicValue<T>)> Token = default_completion_token_t>
  auto async_try_set(T v, Token&& token = {}) {
    return twins_.async(set_op(v), "try_set", std::forward<Token>(token));
  }

  /// Sets `v` if the value is `expected`: one read and one versioned write, no retry and no promotion, as
  /// Curator's. Fails (not an error) when the value differs, someone wrote in between, or the node is missing
  /// (as Curator's; `initialize` creates it).
  AtomicValue<T> compare_and_set(T expected, T v) {
    return twins_.run_or_throw(cas_op(expected, v), "compare_and_set");
  }
  AtomicValue<T> compare_and_set(T expected, T v, error_code& ec) {
    return twins_.run(cas_op(expected, v), ec);
  }
  template <
      boost::asio::completion_token_for<void(error_code, AtomicValue<T>)> Token = default_completion_token_t>
  auto async_compare_and_set(T expected, T v, Token&& token = {}) {
    return twins_.async(cas_op(expected, v), "compare_and_set", std::forward<Token>(token));
  }

  /// Writes `v` unconditionally (creating the node if missing). Handler of the async twin:
  /// `void(error_code)`.
  void force_set(T v) { twins_.force_set(encode(v)); }
  void force_set(T v, error_code& ec) { twins_.force_set(encode(v), ec); }
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_force_set(T v, Token&& token = {}) {
    return twins_.async_force_set(encode(v), std::forward<Token>(token));
  }

  /// Creates the node with `v` if it does not exist: true if this call created it. Handler of the async
  /// twin: `void(error_code, bool)`.
  bool initialize(T v) { return twins_.initialize(encode(v)); }
  bool initialize(T v, error_code& ec) { return twins_.initialize(encode(v), ec); }
  template <boost::asio::completion_token_for<void(error_code, bool)> Token = default_completion_token_t>
  auto async_initialize(T v, Token&& token = {}) {
    return twins_.async_initialize(encode(v), std::forward<Token>(token));
  }

  const std::string& path() const noexcept { return twins_.engine()->path(); }

  friend struct detail::access;

 private:
  using Twins = detail::AtomicTwins<AtomicValue<T>, &detail::number_value<T>>;
  static Twins twins_for(CuratorFramework& client, std::string counter_path, RetryPolicyPtr retry_policy,
                         std::optional<PromotedToLock> promoted) {
    return twins_over(detail::access::core(client), std::move(counter_path), std::move(retry_policy),
                      std::move(promoted));
  }
  static Twins twins_over(std::shared_ptr<detail::Core> core, std::string counter_path,
                          RetryPolicyPtr retry_policy, std::optional<PromotedToLock> promoted) {
    return Twins(std::make_shared<detail::AtomicEngine>(std::move(core), std::move(counter_path), width,
                                                        std::move(retry_policy), std::move(promoted)),
                 "DistributedAtomicNumber");
  }
  /// Over a core (`detail::access::make`: the unit tests' fake).
  DistributedAtomicNumber(std::shared_ptr<detail::Core> core, std::string counter_path,
                          RetryPolicyPtr retry_policy, std::optional<PromotedToLock> promoted)
      : twins_(twins_over(std::move(core), std::move(counter_path), std::move(retry_policy),
                          std::move(promoted))) {}
  /// The engine, for the recipes built on this number (`detail::access::engine`: `CachedAtomicLong`).
  const std::shared_ptr<detail::AtomicEngine>& internals() const noexcept { return twins_.engine(); }

  static constexpr T negate(T d) noexcept {
    return static_cast<T>(detail::wrap_to_width(std::uint64_t{0} - static_cast<std::uint64_t>(d), width));
  }
  static std::string encode(T v) { return detail::encode_big_endian(v, width); }
  static detail::AtomicOp add_op(T d) { return {detail::AtomicOp::Kind::add, {}, {}, d}; }
  static detail::AtomicOp set_op(T v) { return {detail::AtomicOp::Kind::try_set, encode(v)}; }
  static detail::AtomicOp cas_op(T e, T v) {
    return {detail::AtomicOp::Kind::compare_and_set, encode(v), encode(e)};
  }

  Twins twins_;
};

/// Curator's `DistributedAtomicLong`: 8 bytes big-endian.
using DistributedAtomicLong = DistributedAtomicNumber<std::int64_t>;
/// Curator's `DistributedAtomicInteger`: 4 bytes big-endian.
using DistributedAtomicInteger = DistributedAtomicNumber<std::int32_t>;

}  // namespace zkr
