// 02: asynchronous acquire in a coroutine, with a timeout and with per-operation cancellation. A cancelled or
// timed-out acquire deletes its own lock node before it completes.
//
//   example_02_coroutine_acquire 127.0.0.1:2181
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cstdio>
#include <zkr/zkrecipes.hpp>

namespace asio = boost::asio;
using namespace std::chrono_literals;

int failures = 0;

asio::awaitable<void> demo(zkr::CuratorFramework& client) {
  zkr::InterProcessMutex mutex(client, "/examples/coroutine");
  zkr::InterProcessMutex other(client, "/examples/coroutine");

  // 1. Acquire, use the fencing token, release. No token: a deferred operation, which co_await runs; a
  // failure
  //    throws zkr::Error with the operation and the path (docs/async.md).
  zkr::Lease lease = co_await mutex.async_acquire();
  std::printf("acquired %s, token %lld\n", lease.node_path().c_str(),
              static_cast<long long>(lease.fencing_token()));

  // 2. A second contender with a timeout: it gives up and leaves no node.
  zkr::Lease second = co_await other.async_try_acquire_for(200ms, asio::use_awaitable);
  std::printf("second contender %s\n", second ? "acquired (unexpected)" : "timed out, as expected");
  failures += second ? 1 : 0;

  // 3. A second contender cancelled while it waits.
  asio::cancellation_signal cancel;
  asio::steady_timer timer(co_await asio::this_coro::executor, 100ms);
  timer.async_wait([&](boost::system::error_code) { cancel.emit(asio::cancellation_type::terminal); });
  try {
    co_await other.async_acquire(asio::bind_cancellation_slot(cancel.slot(), asio::use_awaitable));
    std::printf("cancelled acquire succeeded (unexpected)\n");
    ++failures;
  } catch (const boost::system::system_error& e) {
    std::printf("cancelled acquire: %s\n", e.code().message().c_str());
  }
  auto nodes = mutex.participant_nodes();
  std::printf("participants now: %zu (only the holder)\n", nodes.size());
  failures += nodes.size() == 1 ? 0 : 1;

  co_await lease.async_release();
}

int main(int argc, char** argv) {
  asio::io_context io;
  zkr::CuratorFramework client({.connect_string = argc > 1 ? argv[1] : "127.0.0.1:2181",
                                .retry_policy = std::make_shared<zkr::RetryNTimes>(3, zkr::Millis(100)),
                                .executor = io.get_executor()});  // handlers run on our io_context
  client.start();
  asio::co_spawn(io, demo(client), [](std::exception_ptr e) {
    if (e) {
      ++failures;
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        std::printf("error: %s\n", ex.what());
      }
    }
  });
  io.run();
  return failures == 0 ? 0 : 1;
}
