#pragma once
/// \file
/// `TestingServer`: a real standalone ZooKeeper server for tests (Curator's `TestingServer`).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <zkr/testing/server_options.hpp>

namespace zkr::testing {

namespace detail {
class ServerInstance;
class ScratchDir;
}  // namespace detail

/// A standalone ZooKeeper server (Debian's `zookeeper` package, run by `java`) listening on 127.0.0.1 only;
/// with `ServerOptions::tls`, also (or only) on a TLS port (see `TestCertificates`).
///
/// The server is a child process started with the jars of `/usr/share/java` (or of the directory named by the
/// environment variable `ZKR_ZOOKEEPER_LIB_DIR`); its output goes to `server.log` in `data_dir()`. Only the
/// process this object started is ever signalled, by its pid, and it is always reaped. The server is also
/// killed by the kernel if the test process dies (so a crashed or timed-out test leaves no server behind).
///
/// Thread-safety: all members may be called concurrently; control calls (`stop`, `start`, ...) are
/// serialized. A moved-from object may only be destroyed or assigned to.
class TestingServer {
 public:
  /// Starts the server and waits until it answers `ruok` with `imok` and serves requests (`srvr` reports
  /// "Mode: standalone"), so a client can connect at once.
  /// \throws TestingError when Java or the jars are missing, a file named by `options.tls` is missing (at
  ///         once), the port is in use, the server exits during start-up or does not answer within
  ///         `options.start_timeout` (it is killed first).
  explicit TestingServer(ServerOptions options = {});
  /// Kills the server (SIGKILL, by its own pid), reaps it and removes its temporary directory. Never throws.
  ~TestingServer();
  TestingServer(TestingServer&&) noexcept;
  TestingServer& operator=(TestingServer&&) noexcept;
  TestingServer(const TestingServer&) = delete;
  TestingServer& operator=(const TestingServer&) = delete;

  /// "127.0.0.1:<port>". \throws TestingError when the plain port is disabled (`TlsServerOptions`).
  std::string connect_string() const;
  /// The plain client port; 0 when it is disabled.
  std::uint16_t port() const;
  /// "127.0.0.1:<secure port>" for TLS clients. \throws TestingError when the server runs without TLS.
  std::string secure_connect_string() const;
  /// The TLS client port (`secureClientPort`); 0 without `ServerOptions::tls`.
  std::uint16_t secure_port() const;

  /// Graceful stop: SIGTERM, then SIGKILL if the server has not exited after a few seconds. Does nothing if
  /// the server is not running. A paused server is resumed first.
  void stop();
  /// Starts the server again on the same port and data directory (the data survives) and waits until it
  /// serves, as the constructor. Does nothing if it is running.
  /// \throws TestingError as the constructor (the port is not picked again).
  void start();
  /// `stop()` then `start()`.
  void restart();
  /// SIGKILL (`kill -9`) and wait for the exit: a crash, without a clean shutdown. Does nothing if not
  /// running.
  void kill();
  /// SIGSTOP: the server stays up but answers nothing (sessions time out, four-letter words time out).
  /// \throws TestingError if the server is not running.
  void pause();
  /// SIGCONT after `pause()`. \throws TestingError if the server is not running.
  void resume();
  /// Whether the server process is alive (a paused server is running).
  bool is_running() const;
  /// The pid of the server process, or -1 when it is not running.
  int pid() const;

  /// Sends a four-letter word (`ruok`, `srvr`, `stat`, `mntr`, `cons`, `dump`, ...) and returns the whole
  /// answer. Without a plain port it goes over TLS (`openssl s_client` with `TlsServerOptions::probe`).
  /// \throws TestingError if the server cannot be reached or does not answer within `timeout`.
  std::string four_letter_word(std::string_view cmd,
                               std::chrono::milliseconds timeout = std::chrono::seconds{5}) const;
  /// The `mntr` answer parsed into key/value pairs (`zk_znode_count`, `zk_server_state`, ...).
  std::map<std::string, std::string> mntr() const;
  /// The server's directory: `zoo.cfg`, `server.log` and `data/` (the ZooKeeper `dataDir`).
  const std::filesystem::path& data_dir() const;

 private:
  std::unique_ptr<detail::ScratchDir> dir_;
  std::unique_ptr<detail::ServerInstance> server_;
};

/// Parses the `key<TAB>value` lines of a `mntr` answer.
std::map<std::string, std::string> parse_mntr(std::string_view answer);

}  // namespace zkr::testing
