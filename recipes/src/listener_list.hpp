#pragma once
// `ListenerList`: the listeners of a recipe object (leader latch, persistent node, shared value), each called
// on its own strand of its executor, and silenced at once when removed (a call already posted is dropped).
// Locked: safe to call from any thread, and from under its owner's mutex (it never runs a listener inline).
// Private to recipes/src.

#include <spdlog/logger.h>

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

namespace zkr::detail {

template <class L>
class ListenerList {
 public:
  explicit ListenerList(std::shared_ptr<spdlog::logger> log, std::string what)
      : log_(std::move(log)), what_(std::move(what)) {}

  std::uint64_t add(L listener, boost::asio::any_io_executor ex) {
    std::lock_guard lk(mu_);
    const auto id = ++next_;
    if (!closed_)
      entries_.emplace(id, Entry{std::make_shared<L>(std::move(listener)), boost::asio::make_strand(ex),
                                 std::make_shared<std::atomic<bool>>(true)});
    return id;
  }
  void remove(std::uint64_t id) {
    std::lock_guard lk(mu_);
    auto it = entries_.find(id);
    if (it == entries_.end()) return;
    *it->second.active = false;
    entries_.erase(it);
  }
  /// Drops every listener; later `add`s are ignored. `silence` also drops their calls already posted (false:
  /// a last notification just posted still runs, as a leader latch's NOTIFY_LEADER close wants).
  void close(bool silence = true) {
    std::lock_guard lk(mu_);
    closed_ = true;
    if (silence)
      for (auto& [id, e] : entries_) *e.active = false;
    entries_.clear();
  }
  /// Posts `call(listener)` to each listener's strand (`call` is copied once per listener).
  template <class Call>
  void post_each(const Call& call) {
    std::lock_guard lk(mu_);
    for (auto& [id, e] : entries_)
      boost::asio::post(e.strand, [l = e.fn, active = e.active, call, log = log_, what = what_] {
        if (!*active) return;
        try {
          call(*l);
        } catch (const std::exception& ex) {
          log->error("{} listener threw: {}", what, ex.what());
        } catch (...) {
          log->error("{} listener threw", what);
        }
      });
  }

 private:
  struct Entry {
    std::shared_ptr<L> fn;
    boost::asio::strand<boost::asio::any_io_executor> strand;
    std::shared_ptr<std::atomic<bool>> active;
  };
  std::shared_ptr<spdlog::logger> log_;
  std::string what_;
  std::mutex mu_;
  std::map<std::uint64_t, Entry> entries_;
  std::uint64_t next_ = 0;
  bool closed_ = false;
};

}  // namespace zkr::detail
