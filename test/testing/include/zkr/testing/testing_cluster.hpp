#pragma once
/// \file
/// `TestingCluster`: a real ZooKeeper ensemble on 127.0.0.1 for tests (Curator's `TestingCluster`).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>
#include <zkr/testing/server_options.hpp>

namespace zkr::testing {

namespace detail {
class ServerInstance;
class ScratchDir;
}  // namespace detail

/// An ensemble of `size` ZooKeeper servers on 127.0.0.1, each with its own client, quorum and election port
/// and its own directory (`member-<i>/` under `data_dir()`, with `zoo.cfg`, `server.log` and `data/myid`).
/// Members are indexed from 0; member `i` has ZooKeeper id `i + 1`. A cluster of size 1 is a standalone
/// server.
///
/// Thread-safety and process handling are as for `TestingServer`.
class TestingCluster {
 public:
  /// Starts every member and waits until each answers `ruok`, a leader is elected and every member serves.
  /// \throws TestingError as `TestingServer`'s constructor; `std::invalid_argument` if `size` is 0.
  explicit TestingCluster(std::size_t size = 3, ServerOptions options = {});
  /// Kills every member and removes the temporary directory. Never throws.
  ~TestingCluster();
  TestingCluster(TestingCluster&&) noexcept;
  TestingCluster& operator=(TestingCluster&&) noexcept;
  TestingCluster(const TestingCluster&) = delete;
  TestingCluster& operator=(const TestingCluster&) = delete;

  /// All members, comma separated: "127.0.0.1:<p0>,127.0.0.1:<p1>,...".
  /// \throws TestingError when the plain ports are disabled (`TlsServerOptions`).
  std::string connect_string() const;
  /// The members' TLS ports, as `connect_string()`. \throws TestingError without `ServerOptions::tls`.
  std::string secure_connect_string() const;
  std::size_t size() const;
  /// "127.0.0.1:<port of member i>". \throws std::out_of_range for a bad index (as every `i` below),
  /// TestingError as `connect_string()`.
  std::string member_connect_string(std::size_t i) const;
  /// The client port of member `i`; 0 when the plain ports are disabled.
  std::uint16_t member_port(std::size_t i) const;
  /// "127.0.0.1:<TLS port of member i>". \throws TestingError as `secure_connect_string()`.
  std::string member_secure_connect_string(std::size_t i) const;
  /// The TLS client port of member `i`; 0 without `ServerOptions::tls`.
  std::uint16_t member_secure_port(std::size_t i) const;

  /// SIGKILL member `i` and wait for its exit.
  void kill(std::size_t i);
  /// Stop member `i` gracefully (SIGTERM, SIGKILL after a few seconds).
  void stop(std::size_t i);
  /// Start member `i` again (same ports and data) and wait until it answers `ruok`; when a majority of the
  /// members is then running, also wait until it serves (has joined the quorum). Does nothing if it is
  /// running.
  void start(std::size_t i);
  /// `stop(i)` then `start(i)`.
  void restart(std::size_t i);
  /// SIGSTOP / SIGCONT member `i`. \throws TestingError if it is not running.
  void pause(std::size_t i);
  void resume(std::size_t i);
  /// Stop every running member.
  void stop_all();
  /// Start every stopped member and wait as the constructor does.
  void start_all();
  bool is_running(std::size_t i) const;
  /// The pid of member `i`, or -1 when it is not running.
  int pid(std::size_t i) const;

  /// The index of the running member whose `srvr` says "Mode: leader" (or "Mode: standalone"), if any; a
  /// member that does not answer within 2 s counts as not leading (use `wait_for_leader` to ride that out).
  std::optional<std::size_t> leader() const;
  /// Polls `leader()` until it has a value. \throws TestingError on timeout.
  std::size_t wait_for_leader(std::chrono::milliseconds timeout) const;
  /// Sends a four-letter word to member `i`; see `TestingServer::four_letter_word`.
  std::string four_letter_word(std::size_t i, std::string_view cmd,
                               std::chrono::milliseconds timeout = std::chrono::seconds{5}) const;
  /// The parsed `mntr` of member `i`.
  std::map<std::string, std::string> mntr(std::size_t i) const;
  /// The cluster's root directory.
  const std::filesystem::path& data_dir() const;
  /// Member `i`'s directory.
  std::filesystem::path member_data_dir(std::size_t i) const;

 private:
  void wait_until_serving(std::chrono::steady_clock::time_point deadline) const;
  void check_index(std::size_t i) const;

  std::chrono::milliseconds start_timeout_{};
  std::unique_ptr<detail::ScratchDir> dir_;
  std::vector<std::unique_ptr<detail::ServerInstance>> members_;
};

}  // namespace zkr::testing
