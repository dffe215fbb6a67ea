#pragma once
// The unit tests' way onto an I/O thread of their own: run a function there and wait until it has run.

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <future>

namespace zkr::test {

/// Runs `f` on the thread that runs `ioc` and returns once it has run. Not on that thread.
template <class F>
void run_on_io(boost::asio::io_context& ioc, F&& f) {
  std::promise<void> done;
  boost::asio::post(ioc, [&] {
    f();
    done.set_value();
  });
  done.get_future().wait();
}

}  // namespace zkr::test
