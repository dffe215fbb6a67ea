#pragma once
/// \file
/// `DistributedAtomicValue`: Curator's distributed atomic value, a node's bytes changed by a read and a
/// versioned write, byte-compatible with Curator 5.x on the same path. docs/counters.md describes it against
/// Curator.

#include <memory>
#include <optional>
#include <string>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/framework/detail/access.hpp>
#include <zkr/recipes/atomic_value.hpp>
#include <zkr/recipes/detail/atomic_engine.hpp>
#include <zkr/recipes/detail/atomic_twins.hpp>

namespace zkr {

namespace detail {
/// The engine's outcome as bytes.
inline AtomicValue<std::string> bytes_value(const AtomicOutcome& o) {
  return {o.succeeded, o.pre, o.post, o.stats};
}
}  // namespace detail

/// Curator's `DistributedAtomicValue`: the bytes at `path`, changed by a read and a write versioned on what
/// was read. While another writer wins, `try_set` tries again after the pauses `retry_policy` allows; when
/// that gives up and a `PromotedToLock` is given, again under that lock with the lock's policy. An
/// `AtomicValue<std::string>` says whether it succeeded, and the bytes before and after.
///
/// The node is created `PERSISTENT` (parents as containers) by the first write. A missing node reads as
/// empty bytes and creates nothing (Curator reads it as `null`: empty and missing are one value here, as
/// they are to Curator's `DistributedAtomicLong`). Every byte string is a value: nothing is ever
/// `client_errc::corrupted_data`. `DistributedAtomicLong` is this recipe over 8-byte numbers; one path can be
/// read by both.
///
/// Twins, errors and thread-safety as `DistributedAtomicNumber<T>`'s: throwing, `error_code&`, and `async_`
/// with a completion token (handler `void(error_code, AtomicValue<std::string>)`, or as noted; cancellation:
/// terminal only: completes at once with `operation_aborted`, a write already sent may still apply, and a
/// promoted lock taken is released). Never call a blocking twin on the client's I/O thread
/// (`client_errc::would_deadlock`).
class DistributedAtomicValue {
 public:
  /// `path` (and a promoted lock's path) are validated (`Error` with `client_errc::invalid_path`); a null
  /// retry policy is `client_errc::invalid_argument`.
  DistributedAtomicValue(CuratorFramework& client, std::string path, RetryPolicyPtr retry_policy,
                         std::optional<PromotedToLock> promoted = std::nullopt)
      : twins_(twins_for(client, std::move(path), std::move(retry_policy), std::move(promoted))) {}

  /// The current bytes (one read; a missing node gives empty bytes, succeeded).
  AtomicValue<std::string> get() { return twins_.run_or_throw({detail::AtomicOp::Kind::get}, "get"); }
  AtomicValue<std::string> get(error_code& ec) { return twins_.run({detail::AtomicOp::Kind::get}, ec); }
  template <boost::asio::completion_token_for<void(error_code, AtomicValue<std::string>)> Token =
                default_completion_token_t>
  auto async_get(Token&& token = {}) {
    return twins_.async({detail::AtomicOp::Kind::get}, "get", std::forward<Token>(token));
  }

  /// Sets `v` whatever the bytes were (optimistic, then promoted): fails only when the policies give up.
  AtomicValue<std::string> try_set(std::string v) {
    return twins_.run_or_throw(set_op(std::move(v)), "try_set");
  }
  AtomicValue<std::string> try_set(std::string v, error_code& ec) {
    return twins_.run(set_op(std::move(v)), ec);
  }
  template <boost::asio::completion_token_for<void(error_code, AtomicValue<std::string>)> Token =
                default_completion_token_t>
  auto async_try_set(std::string v, Token&& token = {}) {
    return twins_.async(set_op(std::move(v)), "try_set", std::forward<Token>(token));
  }

  /// Sets `v` if the bytes are `expected` (compared byte for byte; a missing node fails, as Curator's): one
  /// read and one versioned write, no retry and no promotion. Fails (not an error) when the bytes differ or
  /// someone wrote in between.
  AtomicValue<std::string> compare_and_set(std::string expected, std::string v) {
    return twins_.run_or_throw(cas_op(std::move(expected), std::move(v)), "compare_and_set");
  }
  AtomicValue<std::string> compare_and_set(std::string expected, std::string v, error_code& ec) {
    return twins_.run(cas_op(std::move(expected), std::move(v)), ec);
  }
  template <boost::asio::completion_token_for<void(error_code, AtomicValue<std::string>)> Token =
                default_completion_token_t>
  auto async_compare_and_set(std::string expected, std::string v, Token&& token = {}) {
    return twins_.async(cas_op(std::move(expected), std::move(v)), "compare_and_set",
                        std::forward<Token>(token));
  }

  /// Writes `v` unconditionally (creating the node if missing). Handler of the async twin:
  /// `void(error_code)`.
  void force_set(std::string v) { twins_.force_set(std::move(v)); }
  void force_set(std::string v, error_code& ec) { twins_.force_set(std::move(v), ec); }
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_force_set(std::string v, Token&& token = {}) {
    return twins_.async_force_set(std::move(v), std::forward<Token>(token));
  }

  /// Creates the node with `v` if it does not exist: true if this call created it. Handler of the async
  /// twin: `void(error_code, bool)`.
  bool initialize(std::string v) { return twins_.initialize(std::move(v)); }
  bool initialize(std::string v, error_code& ec) { return twins_.initialize(std::move(v), ec); }
  template <boost::asio::completion_token_for<void(error_code, bool)> Token = default_completion_token_t>
  auto async_initialize(std::string v, Token&& token = {}) {
    return twins_.async_initialize(std::move(v), std::forward<Token>(token));
  }

  const std::string& path() const noexcept { return twins_.engine()->path(); }

  friend struct detail::access;

 private:
  using Twins = detail::AtomicTwins<AtomicValue<std::string>, &detail::bytes_value>;
  static Twins twins_for(CuratorFramework& client, std::string path, RetryPolicyPtr retry_policy,
                         std::optional<PromotedToLock> promoted) {
    return twins_over(detail::access::core(client), std::move(path), std::move(retry_policy),
                      std::move(promoted));
  }
  static Twins twins_over(std::shared_ptr<detail::Core> core, std::string path, RetryPolicyPtr retry_policy,
                          std::optional<PromotedToLock> promoted) {
    return Twins(std::make_shared<detail::AtomicEngine>(std::move(core), std::move(path), 0,
                                                        std::move(retry_policy), std::move(promoted)),
                 "DistributedAtomicValue");
  }
  /// Over a core (`detail::access::make`: the unit tests' fake).
  DistributedAtomicValue(std::shared_ptr<detail::Core> core, std::string path, RetryPolicyPtr retry_policy,
                         std::optional<PromotedToLock> promoted)
      : twins_(twins_over(std::move(core), std::move(path), std::move(retry_policy), std::move(promoted))) {}

  static detail::AtomicOp set_op(std::string v) { return {detail::AtomicOp::Kind::try_set, std::move(v)}; }
  static detail::AtomicOp cas_op(std::string expected, std::string v) {
    return {detail::AtomicOp::Kind::compare_and_set, std::move(v), std::move(expected)};
  }

  Twins twins_;
};

}  // namespace zkr
