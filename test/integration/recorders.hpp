#pragma once
// Thread-safe recorders for what a client delivers on its own threads (watch events, connection states),
// waited for with a bound.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <vector>
#include <zkr/framework/curator_framework.hpp>

namespace zkr::itest {

/// Records things delivered on other threads; waits for them with a bound.
template <class T>
class Recorder {
 public:
  void push(T v) {
    // Notified under the lock: a waiting test may see the item, return and destroy this recorder as soon as
    // it can take the mutex, which must not be before this thread is done with the condition variable.
    std::lock_guard lk(m_);
    items_.push_back(std::move(v));
    cv_.notify_all();
  }
  /// A callable that records its argument.
  auto sink() {
    return [this](const T& v) { push(v); };
  }
  std::vector<T> items() const {
    std::lock_guard lk(m_);
    return items_;
  }
  std::size_t size() const {
    std::lock_guard lk(m_);
    return items_.size();
  }
  /// Waits until at least `n` items were recorded.
  bool wait_count(std::size_t n, std::chrono::milliseconds timeout) {
    std::unique_lock lk(m_);
    return cv_.wait_for(lk, timeout, [&] { return items_.size() >= n; });
  }
  /// Waits until an item equal to `v` was recorded (at index >= `from`); returns its index.
  std::optional<std::size_t> wait_for(const T& v, std::chrono::milliseconds timeout, std::size_t from = 0) {
    std::unique_lock lk(m_);
    std::optional<std::size_t> at;
    cv_.wait_for(lk, timeout, [&] {
      for (std::size_t i = from; i < items_.size(); ++i)
        if (items_[i] == v) {
          at = i;
          return true;
        }
      return false;
    });
    return at;
  }

 private:
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::vector<T> items_;
};

struct Event {
  EventType type;
  std::string path;
  friend bool operator==(const Event&, const Event&) = default;
};

/// Records watch events.
class EventRecorder : public Recorder<Event> {
 public:
  Watcher watcher() {
    return [this](const WatchedEvent& e) { push(Event{e.type, e.path}); };
  }
};

using StateRecorder = Recorder<ConnectionState>;

}  // namespace zkr::itest
