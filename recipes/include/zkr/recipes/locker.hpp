#pragma once
/// \file
/// `Locker`: Curator's scoped hold of any lock (acquired in the constructor, released in the destructor).

#include <chrono>
#include <string>
#include <zkr/framework/error.hpp>

namespace zkr {

/// Curator's `Locker`: acquires in the constructor, releases in the destructor without throwing.
/// The timed constructor throws `Error` with `client_errc::timed_out` (operation "acquire", the lock's path
/// when the lock has a `path()`) when the lock is not acquired in time; the acquire's own errors throw as
/// `acquire()`.
template <class Lock>
class Locker {
 public:
  explicit Locker(Lock& lock) : lock_(lock) { lock_.acquire(); }
  Locker(Lock& lock, std::chrono::milliseconds timeout) : lock_(lock) {
    if (lock_.acquire(timeout)) return;
    std::string path;
    if constexpr (requires { std::string(lock.path()); }) path = lock.path();
    throw Error(client_errc::timed_out, "acquire", std::move(path));
  }
  ~Locker() {
    error_code ec;
    lock_.release(ec);
  }
  Locker(const Locker&) = delete;
  Locker& operator=(const Locker&) = delete;

 private:
  Lock& lock_;
};

}  // namespace zkr
