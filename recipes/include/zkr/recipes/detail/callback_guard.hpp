#pragma once
/// \file
/// `CallbackGuard`: the one way a recipe's callback reaches an object that may be gone, or that may have
/// moved past the step that issued the callback (a watch replaced by a newer one, a read whose answer is
/// stale). Internal.

#include <cstdint>
#include <memory>

namespace zkr::detail {

/// The steps of one kind an object has issued (a watch, a read): a callback of an earlier step is stale.
/// Touched on one thread (the client's I/O thread).
class Epoch {
 public:
  /// Starts a new step; the callbacks of every earlier one are stale from now on.
  std::uint64_t advance() noexcept { return ++current_; }
  bool is_current(std::uint64_t step) const noexcept { return step == current_; }

 private:
  std::uint64_t current_ = 0;
};

/// A callback's hold on a `T`: weak (the callback does not keep the object alive) or strong (it does: an
/// operation in flight owns itself through its callbacks), and optionally tied to a step of one of the
/// object's `Epoch`s. `get()` gives the object only while it lives and the step is current.
template <class T>
class CallbackGuard {
 public:
  /// Weak, any step.
  static CallbackGuard weak(const std::shared_ptr<T>& obj) { return CallbackGuard(obj, nullptr, false); }
  /// Weak, and only while the step begun now on `epoch` is current.
  static CallbackGuard weak(const std::shared_ptr<T>& obj, Epoch T::*epoch) {
    return CallbackGuard(obj, epoch, false);
  }
  /// Keeps the object alive; only while the step begun now on `epoch` is current.
  static CallbackGuard strong(const std::shared_ptr<T>& obj, Epoch T::*epoch) {
    return CallbackGuard(obj, epoch, true);
  }

  /// The object, or null when it is gone or the step is stale.
  std::shared_ptr<T> get() const {
    auto p = strong_ ? strong_ : weak_.lock();
    if (p && epoch_ && !((*p).*epoch_).is_current(step_)) return nullptr;
    return p;
  }

 private:
  CallbackGuard(const std::shared_ptr<T>& obj, Epoch T::*epoch, bool keep)
      : weak_(obj), epoch_(epoch), step_(epoch ? ((*obj).*epoch).advance() : 0) {
    if (keep) strong_ = obj;
  }

  std::weak_ptr<T> weak_;
  std::shared_ptr<T> strong_;
  Epoch T::*epoch_ = nullptr;
  std::uint64_t step_ = 0;
};

}  // namespace zkr::detail
