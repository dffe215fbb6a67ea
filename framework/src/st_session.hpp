#pragma once
// The session over the single-threaded ZooKeeper C client, driven from the client's Asio I/O thread (the
// pump), with the handshake bound (see docs/architecture.md). Its requests go through c_session.hpp.

#include <spdlog/logger.h>
#include <sys/stat.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <zkr/framework/curator_framework.hpp>

#include "c_session.hpp"
#include "sasl/sasl_settings.hpp"

namespace zkr::detail {

class CClientKerberos;

class StSession final : public CSession {
 public:
  /// `config`, `log` and `events` outlive the session; it runs on `ioc`'s (single) thread.
  StSession(boost::asio::io_context& ioc, const ClientConfig& config, spdlog::logger& log,
            SessionEvents& events);
  ~StSession() override;

  bool open() override;
  void close() override;
  void submit(zk::Request request, zk::ReplyCallback reply) override;
  bool submit_from_caller(zk::Request& request, zk::ReplyCallback& reply) override;

 private:
  void pump();
  void request_pump();
  void update_descriptor(int fd, bool connected);
  void release_descriptor();
  bool handshake_overdue(int fd, int state, std::chrono::steady_clock::time_point now);
  std::chrono::milliseconds handshake_bound() const;
  std::chrono::milliseconds tls_handshake_bound() const;
  std::string current_server();
  void cork_turn();
  void uncork();
  /// Arms one wait (read or write) on the socket unless `armed` says it is pending; its handler pumps.
  void arm_wait(boost::asio::posix::descriptor_base::wait_type type, bool& armed);
  /// GSSAPI: whether the C client may read the server's answers of a connection attempt in `state` now
  /// (c_client_kerberos.hpp); false while the client's ticket is being got, or for good once that failed,
  /// when `refusal` points at why (the pump reports it).
  bool kerberos_ready(int state, const SaslProblem*& refusal);

  boost::asio::posix::stream_descriptor sd_;
  int sd_fd_ = -1;
  ino_t sd_ino_ = 0;
  bool sd_connected_ = false;      // sd_ was checked while the client was connected, and it stayed connected
  bool pump_timer_armed_ = false;  // a wait on pump_timer_ is pending (its expiry is the next deadline)
  std::uint64_t sd_gen_ = 0;
  bool read_armed_ = false, write_armed_ = false;
  boost::asio::steady_timer pump_timer_;
  std::uint64_t pump_timer_gen_ = 0;
  bool pump_posted_ = false;
  bool in_pump_ = false;
  int corked_fd_ = -1;  // sd_'s descriptor while corked for the current turn (see cork_turn)
  // The handshake watch (see handshake_overdue): the socket of the connection attempt in progress (its inode;
  // 0 = none), when the pump first saw it or last saw the server answer on it, and how many attempts in a row
  // were abandoned.
  ino_t handshake_ino_ = 0;
  std::chrono::steady_clock::time_point handshake_since_{};
  int handshakes_abandoned_ = 0;
  // sd_'s own descriptor (our duplicate), for submit_from_caller on other threads: written on the I/O thread
  // under sd_mu_, which is held while sd_ is assigned or closed and while zh_ is written (never taken while
  // holding the C-client mutex).
  std::mutex sd_mu_;
  int sd_own_fd_ = -1;
  // GSSAPI's credentials (null for another mechanism, or without SASL), kept across the session's handles.
  std::unique_ptr<CClientKerberos, void (*)(CClientKerberos*)> kerberos_{nullptr, nullptr};
};

}  // namespace zkr::detail
