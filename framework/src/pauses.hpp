#pragma once
// The client's pauses (a part of the client, see client.hpp): the timers that the retry loop and the
// background deletes sleep on, ended all at once by a close or a give-up so that nothing sleeps past the
// client's end. I/O thread only.

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <zkr/framework/detail/unique_function.hpp>

namespace zkr::detail {

class Pauses {
 public:
  explicit Pauses(boost::asio::io_context& ioc) : ioc_(ioc) {}

  /// Runs `k` after `d`, or earlier when woken (`wake`, `wake_all`); returns the pause's id.
  std::uint64_t after(std::chrono::milliseconds d, unique_function<void()> k);
  /// Ends the pause `id` now (its `k` runs, posted); nothing when it is over.
  void wake(std::uint64_t id);
  /// Ends every pause now.
  void wake_all();

 private:
  boost::asio::io_context& ioc_;
  std::map<std::uint64_t, std::shared_ptr<boost::asio::steady_timer>> timers_;
  std::uint64_t next_id_ = 1;
};

}  // namespace zkr::detail
