#pragma once
/// \file
/// Options shared by `TestingServer` and `TestingCluster`, the error they throw, and `free_port()`.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>
#include <zkr/testing/sasl_options.hpp>
#include <zkr/testing/tls_options.hpp>

namespace zkr::testing {

/// How a test ZooKeeper server is configured and started. Every field has a default suited to fast tests.
struct ServerOptions {
  /// ZooKeeper's `tickTime`. The server accepts session timeouts from 2 ticks (`minSessionTimeout`) to 60 s
  /// (`maxSessionTimeout`); an ensemble uses `initLimit=10` and `syncLimit=5` ticks.
  std::chrono::milliseconds tick_time{500};
  /// `-Dznode.container.checkIntervalMs`: how often the server deletes empty container and expired TTL nodes
  /// (ZooKeeper's default is one minute; short here so tests see the deletion promptly).
  std::chrono::milliseconds container_check_interval{100};
  /// `forceSync`: off by default for test speed (nothing is fsynced); benchmarks set it to true.
  bool force_sync = false;
  /// How long to wait for a started server to answer `ruok` with `imok` (and, for an ensemble, to elect a
  /// leader). On timeout the server is killed and `TestingError` is thrown; a zero timeout fails at once.
  std::chrono::milliseconds start_timeout{std::chrono::seconds{40}};
  /// The client port on 127.0.0.1; 0 picks a free one (and picks again if it is taken during start-up).
  /// For a `TestingCluster`, member `i` uses `port + i` when non-zero; quorum and election ports are always
  /// picked.
  std::uint16_t port = 0;
  /// The `java` executable. Default: `$JAVA_HOME/bin/java`, then `java` on `PATH`.
  std::optional<std::filesystem::path> java;
  /// Where the configuration, the data and the server log go. Default: a fresh directory under the system
  /// temporary directory, removed on destruction (kept when the environment variable `ZKR_TESTING_KEEP_DIRS`
  /// is set to a non-empty value other than `0`); the directories left behind by test processes that crashed
  /// or were killed are removed by the next process that creates one. A directory given here is created if
  /// needed and never removed.
  std::optional<std::filesystem::path> data_dir;
  /// Extra `zoo.cfg` lines ("key=value"), appended after the defaults (a later line wins), e.g.
  /// "localSessionsEnabled=true", which a read-only server needs to open sessions.
  std::vector<std::string> extra_config;
  /// Extra JVM flags, placed before the class path. The defaults keep each server small and light on CPU.
  std::vector<std::string> jvm_flags{"-Xmx512m", "-XX:+UseSerialGC", "-XX:-UsePerfData"};
  /// Whether the server's JVM maps the classes an earlier server loaded (AppCDS, JDK 13+: an archive under
  /// the system temporary directory, one per user, JVM and class path, dumped by the first server stopped):
  /// about a third less CPU per start. The JVM starts without an archive it cannot use.
  bool class_data_sharing = true;
  /// When set, the server also (or, with `plain_port` off, only) serves TLS clients on a secure port; see
  /// `TlsServerOptions` and `TestCertificates`, which makes the stores and client certificates.
  std::optional<TlsServerOptions> tls;
  /// When set, the server requires SASL of every client; see `SaslServerOptions`.
  std::optional<SaslServerOptions> sasl;
};

/// Thrown for every set-up or control failure of a test server: Java or the ZooKeeper jars missing, a port in
/// use, a server that exits during start-up or does not answer in time (the message then ends with the tail
/// of the server's log), a four-letter word that gets no answer.
class TestingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A TCP port on 127.0.0.1 that is free at the time of the call (nothing bound or listening on it). Ports are
/// chosen at random outside the kernel's ephemeral range (so client connections cannot take them later), and
/// never twice in one process. Throws `TestingError` if none is found.
std::uint16_t free_port();

}  // namespace zkr::testing
