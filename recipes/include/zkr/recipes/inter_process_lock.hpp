#pragma once
/// \file
/// `InterProcessLock`: the blocking lock interface shared by the lock recipes (Curator's `InterProcessLock`),
/// so that locks of different kinds can be combined, e.g. by `InterProcessMultiLock`.

#include <chrono>

#include <zkr/framework/error.hpp>

namespace zkr {

/// A lock shared across processes, acquired and released through blocking calls. Implemented by
/// `InterProcessMutex` (and so by the read and write locks of `InterProcessReadWriteLock`),
/// `InterProcessSemaphoreMutex` and `InterProcessMultiLock`.
///
/// Who owns a hold is the implementation's rule: the thread for `InterProcessMutex` (reentrant), the object for
/// `InterProcessSemaphoreMutex` (not reentrant). Every member is thread-safe in the implementations of this
/// library. Errors are as the implementation documents; the throwing forms throw `zkr::Error`.
class InterProcessLock {
 public:
  virtual ~InterProcessLock() = default;

  /// Blocks until held.
  virtual void acquire() = 0;
  virtual void acquire(error_code& ec) = 0;
  /// Waits at most `timeout`; false on timeout (not an error), leaving nothing queued behind.
  virtual bool acquire(std::chrono::milliseconds timeout) = 0;
  virtual bool acquire(std::chrono::milliseconds timeout, error_code& ec) = 0;
  /// Gives one hold back.
  virtual void release() = 0;
  virtual void release(error_code& ec) = 0;
  /// Some holder in this process holds it (Curator's `isAcquiredInThisProcess`).
  virtual bool is_acquired_in_this_process() const = 0;

 protected:
  InterProcessLock() = default;
  InterProcessLock(const InterProcessLock&) = default;
  InterProcessLock& operator=(const InterProcessLock&) = default;
};

}  // namespace zkr
