#pragma once
// One ZooKeeper server process (standalone or ensemble member): configuration, start-up and control.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include <zkr/testing/server_options.hpp>

#include "class_data_sharing.hpp"

namespace zkr::testing::detail {

class ChildProcess;

/// A port the server needs is taken (found before the start, or reported by a server that exited early).
class PortInUseError : public TestingError {
 public:
  using TestingError::TestingError;
};

struct QuorumPeer {
  int id = 0;
  std::uint16_t quorum_port = 0;
  std::uint16_t election_port = 0;
};

struct InstanceConfig {
  std::filesystem::path dir;      // zoo.cfg, server.log, data/
  std::uint16_t client_port = 0;  // 0: no plain client port (TLS only)
  int myid = 0;                   // 0 for a standalone server
  std::vector<QuorumPeer> peers;  // the whole ensemble (this member included); empty for standalone
  std::uint16_t secure_port = 0;  // the TLS client port; 0 without TLS
};

struct ClientPorts {
  std::uint16_t plain = 0;   // 0 when the plain port is disabled
  std::uint16_t secure = 0;  // 0 without TLS
};

/// The client ports of a new server, or of cluster member `member`: the fixed ports of `options` (plus
/// `member`), or free ones where those are 0.
ClientPorts pick_client_ports(const ServerOptions& options, std::size_t member = 0);
/// Whether every port `pick_client_ports` returns is picked (so a port clash is worth another try).
bool picks_client_ports(const ServerOptions& options);

using Clock = std::chrono::steady_clock;

class ServerInstance {
 public:
  ServerInstance(const ServerOptions& options, std::filesystem::path java, std::string classpath,
                 InstanceConfig config);
  /// Kills the process if running. Never throws.
  ~ServerInstance();
  ServerInstance(const ServerInstance&) = delete;
  ServerInstance& operator=(const ServerInstance&) = delete;

  /// Checks the ports, writes the configuration and starts the process (no wait). No-op if running.
  /// \throws PortInUseError, TestingError.
  void launch();
  /// Waits until the server answers `ruok` (and, with `serving`, until `srvr` shows it serves requests);
  /// kills it and throws if it exits first or `deadline` passes.
  void wait_until_answering(Clock::time_point deadline, bool serving);
  /// launch() then wait_until_answering(now + start_timeout, standalone).
  void start();
  void stop();
  void kill();
  void pause();
  void resume();
  bool is_running() const;
  int pid() const;

  std::string four_letter_word(std::string_view cmd, std::chrono::milliseconds timeout) const;
  /// The `Mode:` of `srvr` ("leader", "follower", "standalone", ...) or "" when not serving / not answering.
  std::string mode(std::chrono::milliseconds timeout) const;
  std::uint16_t client_port() const noexcept { return config_.client_port; }
  std::uint16_t secure_port() const noexcept { return config_.secure_port; }
  const std::filesystem::path& dir() const noexcept { return config_.dir; }
  std::filesystem::path log_file() const { return config_.dir / "server.log"; }
  /// "ZooKeeper server <id> on 127.0.0.1:<port> (pid <pid of the last process started>)".
  /// With TLS: "ZooKeeper server <id> on 127.0.0.1:<port> and TLS port <secure> (pid ...)".
  std::string describe(bool with_pid = true) const;
  /// The last lines of this start's part of the server log, framed for an error message.
  std::string log_tail() const;
  std::chrono::milliseconds start_timeout() const noexcept { return start_timeout_; }

 private:
  std::shared_ptr<ChildProcess> child() const;
  void write_config() const;
  void write_tls_config(std::ostream& cfg) const;
  void write_sasl_config(std::ostream& cfg) const;
  bool tls_ruok(std::chrono::milliseconds timeout) const;
  void wait_for_state(bool stopped) const;

  std::filesystem::path java_;
  std::string classpath_;
  InstanceConfig config_;
  std::chrono::milliseconds tick_time_;
  std::chrono::milliseconds container_check_interval_;
  std::chrono::milliseconds start_timeout_;
  bool force_sync_;
  std::vector<std::string> jvm_flags_;
  std::vector<std::string> extra_config_;
  std::optional<TlsServerOptions> tls_;
  std::optional<SaslServerOptions> sasl_;
  std::optional<ClassDataSharing> cds_;  // ServerOptions::class_data_sharing

  std::mutex control_mutex_;        // serializes start/stop/kill/pause/resume
  mutable std::mutex state_mutex_;  // guards child_
  std::shared_ptr<ChildProcess> child_;
};

}  // namespace zkr::testing::detail
