#pragma once
// What both C-client sessions share (st_session.hpp: the single-threaded client driven by our pump;
// mt_session.hpp: the multi-threaded client with its own threads): the handle's creation with our watchers,
// auth and resolution settings; the C client's session and watch callbacks turned into `SessionEvents`; and
// the one submit path, a request description handed to the matching zoo_a* call (`send_pending`) whose
// completion adapter turns the C client's answer into a `zk::Reply` posted to the I/O thread. The adapters
// only post, so they may run on any thread: inside zookeeper_process on the I/O thread (st) or on the C
// client's completion thread (mt).

#include <spdlog/logger.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_set>
#include <vector>
#include <zkr/framework/curator_framework.hpp>

#include "session.hpp"
#include "zk_glue.hpp"

namespace zkr::detail {

/// ZOO_SSL_CONNECTING_STATE: the C client exports it but its header does not declare it (docs/tls.md).
inline constexpr int kSslConnectingState = 7;

/// The handshake bound of a connection attempt (docs/architecture.md, "the handshake bound"): `timeout`, and
/// from the second attempt abandoned in a row on, doubled with each, up to 16 times, so that a server that is
/// merely slow still gets its answer through. Both sessions' watches use it.
std::chrono::milliseconds handshake_bound(std::chrono::milliseconds timeout, int abandoned_in_a_row);

/// A request in flight: everything the C client may read until its completion (defined in c_session.cpp).
struct Pending;
struct PendingDeleter {
  void operator()(Pending* p) const noexcept;
};
using PendingPtr = std::unique_ptr<Pending, PendingDeleter>;

/// The requests a session has handed to the C client and whose completion has not run yet, for a session
/// that completes the C client's leftovers itself (MtSession::close). Thread-safe.
class InFlight {
 public:
  void add(Pending* p);
  void remove(Pending* p);
  /// Every request still registered, now the caller's.
  std::vector<PendingPtr> take_all();

 private:
  std::mutex mu_;
  std::unordered_set<Pending*> pending_;
};

/// A request whose reply is to be posted to `ioc`; registered in `in_flight` (if any) while the C client
/// holds it.
PendingPtr make_pending(boost::asio::io_context& ioc, zk::Request request, zk::ReplyCallback reply,
                        InFlight* in_flight = nullptr);
/// Hands `p`'s request to the C client. ZOK: `p` is released to the completion, which posts the reply.
/// Anything else: the C client refused it, will not call the completion, and `p` is still the caller's.
int send_pending(zhandle_t* zh, PendingPtr& p);
/// Posts `p`'s reply with the C client's `rc` (never inline).
void deliver(PendingPtr p, int rc);
/// Posts `p`'s reply with `ec` (never inline).
void deliver(PendingPtr p, error_code ec);
/// Gives an unsent request and its callback back to the caller.
void take_back(PendingPtr p, zk::Request& request, zk::ReplyCallback& reply);

class CyrusCallbacks;

class CSession : public Session {
 public:
  bool is_open() const override { return zh_ != nullptr; }
  std::int64_t session_id() const override;
  int negotiated_timeout_ms() const override;

  /// The C client's callbacks (any thread): the state or event is mapped and posted to the I/O thread,
  /// where a closed handle's (an older generation's) is dropped.
  void on_c_session_event(std::uint64_t generation, int state);
  void on_c_watch_event(std::uint64_t generation, WatchId id, int type, std::string path);

  /// What the C client's callbacks carry as their context; the generation tells a closed handle's events
  /// apart from the current one's. Read by the C client's threads: written only before the handle exists.
  struct HandleCtx {
    CSession* session;
    std::uint64_t generation;
  };

 protected:
  CSession(boost::asio::io_context& ioc, const ClientConfig& config, spdlog::logger& log,
           SessionEvents& events);

  /// A new handle with our watchers, the configured auth and resolution settings; null (logged) when the C
  /// client refused. The caller publishes it as `zh_`.
  zhandle_t* init_handle();
  /// After the handle is closed (its callbacks done): frees its context.
  void free_handle_ctx() noexcept;
  /// A zoo_a* call's refusal as the caller's result: ZINVALIDSTATE means the session is gone, or the server
  /// refused our auth info.
  int refused_rc(int rc) const;
  /// Whether `state` (zoo_state) is a live connection.
  static bool is_connected_state(int state) noexcept;
  /// The C client is in AUTH_FAILED for good: with SASL, the client gives up with
  /// `client_errc::sasl_auth_failed` (or `sasl_config_error` when the password file could not be read), else
  /// with ZooKeeper's auth failure.
  void report_auth_failed();
  /// A session event of the current handle, on the I/O thread, before `events_` hears of it.
  virtual void on_session_event(int state) { (void)state; }

  boost::asio::io_context& ioc_;
  const ClientConfig& cfg_;
  spdlog::logger& log_;
  SessionEvents& events_;
  zhandle_t* zh_ = nullptr;
  std::uint64_t generation_ = 0;

 private:
  HandleCtx* handle_ctx_ = nullptr;
  /// The Cyrus callbacks zookeeper_init_sasl was given (it keeps the pointer): made at the first handle,
  /// kept as long as the session (cyrus_callbacks.hpp; null without SASL).
  std::unique_ptr<CyrusCallbacks, void (*)(CyrusCallbacks*)> sasl_callbacks_{nullptr, nullptr};
};

}  // namespace zkr::detail
