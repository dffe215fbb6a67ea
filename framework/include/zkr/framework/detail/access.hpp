#pragma once
/// \file
/// `detail::access`: the one door from the layers above (the recipes, the `zkr` tool, the tests) into what a
/// public class keeps private. A public class with something to give the layers above (the client's core, a
/// lock's engine, a lease's shared state, a semaphore's shared state, a lock's multi-lock hooks, a
/// constructor over a core) declares it private and names `friend struct detail::access;`; the layers above
/// reach it only through the members below. Nothing here is part of the API: a user's code that calls it may
/// break with any release.
///
/// The members are templates so that this header, in the lowest layer, names no class of the layers above;
/// the access check happens where one is instantiated, against `access` itself, the friend.

#include <memory>
#include <utility>

namespace zkr::detail {

struct access {
  /// `CuratorFramework`'s core (`detail::Core`), the interface the recipes drive.
  template <class Client>
  static decltype(auto) core(const Client& client) noexcept {
    return client.core();
  }
  /// A mutex's lock engine (`detail::LockInternals`).
  template <class Mutex>
  static decltype(auto) engine(const Mutex& mutex) noexcept {
    return mutex.internals();
  }
  /// A `Lease`'s shared grant state (`detail::LeaseCore`; null for an empty handle).
  template <class Lease>
  static decltype(auto) state(const Lease& lease) noexcept {
    return lease.state();
  }
  /// An `InterProcessSemaphoreV2`'s shared state (`detail::SemaphoreShared`).
  template <class Semaphore>
  static decltype(auto) shared(const Semaphore& semaphore) noexcept {
    return semaphore.shared();
  }
  /// An `InterProcessLock`'s hooks for a multi-lock's locks form (`InterProcessMultiLock`): the client whose
  /// I/O thread runs its asynchronous grant, one such grant, and whether a hold was lost.
  template <class Lock>
  static decltype(auto) grant_core(const Lock& lock) {
    return lock.grant_core();
  }
  template <class Lock, class... Args>
  static void start_grant(Lock& lock, Args&&... args) {
    lock.start_grant(std::forward<Args>(args)...);
  }
  template <class Lock>
  static bool hold_lost(const Lock& lock) {
    return lock.hold_lost();
  }
  /// `T` from one of its private constructors (a `Lease` over its state).
  template <class T, class... Args>
  static T make(Args&&... args) {
    return T(std::forward<Args>(args)...);
  }
  /// `make`, on the heap (a `LeaderLatch` over a fake core in the unit tests).
  template <class T, class... Args>
  static std::unique_ptr<T> make_unique(Args&&... args) {
    return std::unique_ptr<T>(new T(std::forward<Args>(args)...));
  }
};

}  // namespace zkr::detail
