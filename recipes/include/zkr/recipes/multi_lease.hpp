#pragma once
/// \file
/// `MultiLease`: the grants of one `InterProcessMultiLock` acquire, one `Lease` per lock, owned by whoever
/// holds it.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>
#include <zkr/recipes/lease.hpp>

namespace zkr {

/// The grants of one multi-lock acquire: one `Lease` per lock, in list order, each with its own fencing token
/// and loss signal. Move-only, owned by whoever holds it. The destructor gives every grant back without
/// throwing and without blocking (in the background, in one transaction when it can).
///
/// Thread-safety: as `Lease` (distinct objects are independent; one object must not be used concurrently).
class MultiLease {
 public:
  MultiLease() noexcept = default;
  explicit MultiLease(std::vector<Lease> leases) noexcept : leases_(std::move(leases)) {}
  MultiLease(MultiLease&&) noexcept = default;
  MultiLease& operator=(MultiLease&& other) noexcept;
  MultiLease(const MultiLease&) = delete;
  MultiLease& operator=(const MultiLease&) = delete;
  ~MultiLease();

  /// True when it holds at least one grant and none was released.
  bool valid() const noexcept;
  explicit operator bool() const noexcept { return valid(); }
  /// The grants, in list order.
  const std::vector<Lease>& leases() const noexcept { return leases_; }
  std::size_t size() const noexcept { return leases_.size(); }
  /// One fencing token per lock, in list order (each lock node's czxid; see `Lease::fencing_token`).
  std::vector<std::int64_t> fencing_tokens() const;
  /// The lock nodes, in list order.
  std::vector<std::string> node_paths() const;
  /// `Lease::multi_while_held` for every grant at once: `ops` commit only while every lock node still exists
  /// (one check per lock, in the same transaction). Grants of different clients:
  /// `client_errc::invalid_argument`.
  std::vector<OpResult> multi_while_held(std::vector<Op> ops) const;
  std::vector<OpResult> multi_while_held(std::vector<Op> ops, error_code& ec) const;
  /// `multi_while_held`, asynchronously. Handler: `void(error_code, std::vector<OpResult>)`. Executor: the
  /// handler's, else the client's completion executor. Cancellation: terminal only: completes at once with
  /// `operation_aborted`; a try already sent may still commit. Errors: as `multi_while_held`
  /// (`client_errc::not_acquired` for an empty handle, through the handler). Thread-safety: as the class.
  template <boost::asio::completion_token_for<void(error_code, std::vector<OpResult>)> Token =
                default_completion_token_t>
  auto async_multi_while_held(std::vector<Op> ops, Token&& token = {}) const {
    return detail::async_run<std::vector<OpResult>>(
        async_core(), info("multi_while_held", detail::Cancellation::write), std::forward<Token>(token),
        [grants = grant_states(), ops = std::move(ops)](auto cb, detail::StopPtr stop) mutable {
          Lease::multi_while_held_start(std::move(grants), std::move(ops), std::move(cb), std::move(stop));
        });
  }
  /// Takes the grants out (this object becomes empty).
  std::vector<Lease> take() noexcept { return std::exchange(leases_, {}); }

  /// Gives every grant back, in reverse list order as Curator does (all nodes in one transaction when they
  /// belong to one client; if that fails, one guaranteed delete each). Every grant is released even when one
  /// fails; the error is the first failure. `client_errc::not_acquired` when empty or already released. On
  /// the client's I/O thread it starts the deletes and returns without waiting, as `Lease::release`.
  void release();
  void release(error_code& ec);
  /// `release`, asynchronously. Handler: `void(error_code)`. Executor: the handler's, else the client's
  /// completion executor. Cancellation: terminal only: completes at once with `operation_aborted`; the
  /// deletes go on (guaranteed deletes). Errors: as `release` (`client_errc::not_acquired` when empty,
  /// through the handler). Thread-safety: as the class. The operation owns the grants from the call on (this
  /// object is empty after it): one that never starts (the default deferred operation never launched) gives
  /// them back when it is destroyed, as the destructor does.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_release(Token&& token = {}) {
    auto core = async_core();
    auto op = info("release", detail::Cancellation::write);
    auto owned = std::make_shared<MultiLease>(std::move(*this));
    // As the blocking release, the deletes leave from the initiating thread when they can.
    return detail::async_run<>(
        std::move(core), std::move(op), std::forward<Token>(token),
        [owned](auto cb) mutable { release_start(owned->take(), std::move(cb)); }, detail::NoAbandon{},
        detail::NoCancelHook{},
        [owned](detail::VoidCallback& cb) {
          if (!release_here(owned->leases_, cb)) return false;
          owned->leases_.clear();  // each Lease sees itself released
          return true;
        });
  }

 private:
  std::shared_ptr<detail::Core> core_of() const;
  /// The first grant's client core, null when empty (the asynchronous operations are then refused).
  std::shared_ptr<detail::Core> async_core() const noexcept;
  /// An asynchronous operation on these grants; refused (`client_errc::not_acquired`) when empty.
  detail::OpInfo info(std::string_view operation, detail::Cancellation cancellation) const;
  std::vector<std::shared_ptr<detail::LeaseCore>> grant_states() const;
  static void release_start(std::vector<Lease> leases, detail::VoidCallback cb);
  /// The release's deletes (one `multi`) sent from this thread, when the leases belong to one client and it
  /// can be done; false, with `cb` untouched, otherwise.
  static bool release_here(const std::vector<Lease>& leases, detail::VoidCallback& cb);
  std::vector<Lease> leases_;
};

}  // namespace zkr
