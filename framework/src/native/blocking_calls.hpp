#pragma once
// Calls that block on I/O outside the library's control, made away from a session's I/O thread: GSS-API
// asking a KDC for tickets (a KDC that does not answer holds MIT's library for about 27 s per request). They
// run one at a time per session (its calls share the client's credentials) on a process-wide pool of two
// threads that exists only once a call is made; each result is handed back to the session's I/O thread,
// unless the session has been destroyed by then. At exit the pool waits for a call
// still running, which krb5's own timeouts bound.

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

namespace zkr::detail::native {

/// The pool the blocking calls of every session run on (made at the first call, joined at exit).
boost::asio::thread_pool& blocking_pool();

class BlockingCalls {
 public:
  /// Results go back to `ioc`'s thread; `ioc` outlives this object.
  explicit BlockingCalls(boost::asio::io_context& ioc) : mailbox_(std::make_shared<Mailbox>(ioc)) {}
  /// Results not yet handed back are dropped (calls still running finish on the pool).
  ~BlockingCalls() {
    std::lock_guard lock(mailbox_->mu);
    mailbox_->open = false;
  }
  BlockingCalls(const BlockingCalls&) = delete;
  BlockingCalls& operator=(const BlockingCalls&) = delete;

  /// Runs `call()` on the pool, after this object's earlier calls, then `then(result)` on the I/O thread.
  /// `call` must own (or share) everything it touches: it may outlive this object.
  template <class Call, class Then>
  void run(Call call, Then then) {
    if (!strand_) strand_.emplace(boost::asio::make_strand(blocking_pool().get_executor()));
    boost::asio::post(
        *strand_, [mailbox = mailbox_, call = std::move(call), then = std::move(then)]() mutable {
          auto result = call();
          std::lock_guard lock(mailbox->mu);
          if (!mailbox->open) return;
          boost::asio::post(mailbox->ioc, [then = std::move(then), result = std::move(result)]() mutable {
            then(std::move(result));
          });
        });
  }

 private:
  struct Mailbox {
    explicit Mailbox(boost::asio::io_context& c) : ioc(c) {}
    std::mutex mu;
    bool open = true;
    boost::asio::io_context& ioc;
  };
  std::shared_ptr<Mailbox> mailbox_;
  std::optional<boost::asio::strand<boost::asio::thread_pool::executor_type>> strand_;
};

}  // namespace zkr::detail::native
