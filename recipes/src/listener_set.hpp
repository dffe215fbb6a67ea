#pragma once
// ListenerSet: the listeners of a long-lived recipe (leader latch, persistent node), each called on its own
// executor (private to recipes/src). Not locked: its owner guards it with its own mutex.

#include <spdlog/logger.h>

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <string_view>

namespace zkr::detail {

template <class F>
class ListenerSet {
 public:
  std::uint64_t add(F fn, boost::asio::any_io_executor executor) {
    auto id = ++next_;
    entries_.emplace(id, Entry{std::move(fn), std::move(executor)});
    return id;
  }
  /// Removes one listener; its calls already posted are dropped.
  void remove(std::uint64_t id) {
    if (auto it = entries_.find(id); it != entries_.end()) {
      *it->second.active = false;
      entries_.erase(it);
    }
  }
  /// Removes every listener; `silence` also drops their calls already posted.
  void clear(bool silence) {
    if (silence)
      for (auto& [id, e] : entries_) *e.active = false;
    entries_.clear();
  }
  /// Posts `invoke(listener)` to each listener's executor. A call whose listener was removed or silenced
  /// meanwhile does not run; what a listener throws is logged as "<what> listener threw".
  template <class Invoke>
  void post_each(const std::shared_ptr<spdlog::logger>& log, std::string_view what, Invoke invoke) const {
    for (auto& [id, e] : entries_)
      boost::asio::post(e.executor, [fn = e.fn, active = e.active, log, what, invoke]() mutable {
        if (!*active) return;
        try {
          invoke(fn);
        } catch (const std::exception& ex) {
          log->error("{} listener threw: {}", what, ex.what());
        } catch (...) {
          log->error("{} listener threw", what);
        }
      });
  }

 private:
  struct Entry {
    F fn;
    boost::asio::any_io_executor executor;
    std::shared_ptr<std::atomic<bool>> active = std::make_shared<std::atomic<bool>>(true);
  };
  std::map<std::uint64_t, Entry> entries_;
  std::uint64_t next_ = 0;
};

}  // namespace zkr::detail
