// The session over the multi-threaded ZooKeeper C client (see mt_session.hpp).
//
// The C client's zoo_a* calls are thread-safe in this flavour: they queue the request and wake the C client's
// I/O thread, which sends it. No call here takes the process-wide C-client mutex (zk_glue.hpp): it guards the
// single-threaded client's shared buffers against our I/O threads, while this flavour's own threads use them
// without it in any case.

#include "mt_session.hpp"

#include <boost/asio/post.hpp>

namespace asio = boost::asio;

namespace zkr::detail {

std::unique_ptr<Session> make_default_session(asio::io_context& ioc, const ClientConfig& config,
                                              spdlog::logger& log, SessionEvents& events) {
  return std::make_unique<MtSession>(ioc, config, log, events);
}

MtSession::MtSession(asio::io_context& ioc, const ClientConfig& config, spdlog::logger& log,
                     SessionEvents& events)
    : CSession(ioc, config, log, events) {}

MtSession::~MtSession() { close(); }

bool MtSession::open() {
  add_log_fallback(&log_);        // before the C client's threads start logging
  zhandle_t* zh = init_handle();  // starts the C client's threads; it connects in the background
  if (!zh) {
    remove_log_fallback(&log_);
    return false;
  }
  const std::lock_guard lock(handle_mu_);
  zh_ = zh;
  return true;
}

void MtSession::close() {
  if (!zh_) return;
  zhandle_t* zh = zh_;
  {
    const std::lock_guard lock(handle_mu_);
    zh_ = nullptr;  // late callbacks of this handle are dropped (CSession::on_c_session_event)
  }
  // Sends the session's close if connected, stops and joins the C client's threads, then completes every
  // pending request (ZCLOSING) on this thread; their results are posted. No callback of the handle runs
  // after it returns.
  zookeeper_close(zh);
  free_handle_ctx();
  remove_log_fallback(&log_);
  // The requests whose completion the C client dropped (mt_session.hpp).
  auto left = in_flight_.take_all();
  if (!left.empty() && log_.should_log(spdlog::level::debug))
    log_.debug("the C client closed with {} request(s) not completed: completing them (ZCLOSING)",
               left.size());
  for (auto& p : left) deliver(std::move(p), ZCLOSING);
}

void MtSession::submit(zk::Request request, zk::ReplyCallback reply) {
  auto p = make_pending(ioc_, std::move(request), std::move(reply), &in_flight_);
  if (!zh_) return deliver(std::move(p), events_.no_session_rc());
  const int rc = send_pending(zh_, p);
  if (rc != ZOK) deliver(std::move(p), refused_rc(rc));
}

bool MtSession::submit_from_caller(zk::Request& request, zk::ReplyCallback& reply) {
  auto p = make_pending(ioc_, std::move(request), std::move(reply), &in_flight_);
  int rc = ZINVALIDSTATE;
  {
    const std::lock_guard lock(handle_mu_);
    if (zh_) rc = send_pending(zh_, p);
  }
  if (rc != ZOK) {
    take_back(std::move(p), request, reply);
    return false;
  }
  return true;
}

}  // namespace zkr::detail
