#pragma once
// Shared pieces of the zkr command-line tool: exit statuses, options common to every command, duration
// parsing, the client factory and the tool's messages on stderr.

#include <signal.h>
#include <spdlog/logger.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <zkr/framework/curator_framework.hpp>

namespace zkr::cli {

/// zkr's own exit statuses (a COMMAND that ran gives its own status instead). Listed in `zkr --help` and
/// docs/cli.md; the values follow <sysexits.h> where one fits.
namespace exit_status {
inline constexpr int ok = 0;
inline constexpr int usage = 64;            ///< EX_USAGE: bad command line
inline constexpr int unavailable = 69;      ///< EX_UNAVAILABLE: could not connect to ZooKeeper in time
inline constexpr int error = 70;            ///< EX_SOFTWARE: could not acquire / other error
inline constexpr int timed_out = 75;        ///< EX_TEMPFAIL: --timeout passed while waiting
inline constexpr int lock_lost = 76;        ///< the lock (or leadership) was lost while COMMAND ran
inline constexpr int revoked = 77;          ///< revocation requested while COMMAND ran (--revocable)
inline constexpr int config = 78;           ///< EX_CONFIG: TLS settings refused (file, key, no TLS support)
inline constexpr int cannot_execute = 126;  ///< COMMAND found but could not be executed
inline constexpr int not_found = 127;       ///< COMMAND not found
inline constexpr int signal_base = 128;     ///< 128+N: zkr got signal N while waiting, or COMMAND died of N
}  // namespace exit_status

/// The exit-status table printed by `--help` and kept in step with docs/cli.md.
std::string_view exit_status_help();

enum class OnLost { kill, ignore };

/// Options every command takes.
struct CommonOptions {
  std::string connect;  ///< default: $ZKR_CONNECT, else 127.0.0.1:2181
  std::chrono::milliseconds session_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds connection_timeout{std::chrono::seconds(15)};
  std::chrono::milliseconds handshake_timeout{std::chrono::seconds(1)};
  /// TLS to the ensemble (--tls-* or $ZKR_TLS_*); empty = plain text.
  std::optional<TlsConfig> tls;
  /// SASL to the ensemble (--sasl-* or $ZKR_SASL_*, sasl_options.hpp); empty = none.
  std::optional<SaslConfig> sasl;
  bool quiet = false;
  bool verbose = false;
};

/// Options of the commands that run COMMAND under a lock.
struct LockOptions {
  std::optional<std::chrono::milliseconds> timeout;  ///< nullopt: wait forever
  std::optional<std::string> data;                   ///< lock node data (nullopt: the client's default)
  OnLost on_lost = OnLost::kill;
  std::chrono::milliseconds kill_after{std::chrono::seconds(10)};
  bool revocable = false;
  /// `zkr lead`: a SUSPENDED (or READ_ONLY) connection ends the hold as a loss does (Curator's
  /// `LeaderSelectorListenerAdapter`), instead of only being reported.
  bool stop_on_suspended = false;
  /// `zkr lead --requeue`: after a loss (COMMAND terminated), give the node up and wait for the next term
  /// instead of exiting 76.
  bool requeue = false;
};

/// The largest --timeout and --kill-after: ten years (far from the overflow of a nanosecond clock).
inline constexpr std::chrono::milliseconds max_wait_duration{std::chrono::hours(24 * 3650)};
/// The largest --session-timeout, --connection-timeout and --handshake-timeout: INT_MAX ms (the C client
/// takes an int), ~24.8 days.
inline constexpr std::chrono::milliseconds max_client_duration{2'147'483'647};

/// Parses "500ms", "4s", "1.5s", "2m", "1h" or a bare number of seconds ("10", "0.25"). nullopt when
/// malformed, negative or above `max`.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text,
                                                        std::chrono::milliseconds max = max_wait_duration);
/// "1.2s", "350ms", "2m05s": a short human form.
std::string format_duration(std::chrono::milliseconds d);

/// Why `connect` is not a connect string `host:port[,host:port...][/chroot]`, or nullopt when it is one. Only
/// the syntax is checked: a host that cannot be resolved is a connection failure (status 69), not a usage
/// error.
std::optional<std::string> connect_string_error(std::string_view connect);

/// The default connect string: $ZKR_CONNECT, else "127.0.0.1:2181".
std::string default_connect_string();

/// `given`, else the environment variable `name`, else "".
std::string env_or(const std::string& given, const char* name);

/// The TLS settings from the --tls-* options, each defaulting to its environment variable (ZKR_TLS_CA,
/// ZKR_TLS_CERT, ZKR_TLS_KEY, ZKR_TLS_KEY_PASSWORD_FILE or ZKR_TLS_KEY_PASSWORD). nullopt and `error` empty:
/// plain text; `error` set: a usage error (some but not all of the files, an unreadable password file).
struct TlsOptionText {
  std::string ca, cert, key, key_password_file;
  bool no_verify_host = false;
};
std::optional<TlsConfig> tls_settings(const TlsOptionText& text, std::string& error);

/// The logger handed to the client and used for zkr's own diagnostics: stderr, "debug" with --verbose, "off"
/// with --quiet, else "error" (connection chatter of the C client is not shown by default).
std::shared_ptr<spdlog::logger> make_logger(const CommonOptions& o);

/// A started (not yet connected) client. `executor`: where handlers and lease listeners run (empty: the
/// client's own I/O thread).
std::unique_ptr<CuratorFramework> make_client(const CommonOptions& o, std::shared_ptr<spdlog::logger> logger,
                                              std::optional<boost::asio::any_io_executor> executor);

/// "zkr: <message>" on stderr, unless quiet (errors are printed even when quiet).
void say(const CommonOptions& o, std::string_view message);
void say_error(std::string_view message);

/// The exit status for an error of the library (unavailable for a connection timeout, else error).
int status_for(const error_code& ec);

/// Reports an error of `make_client` and returns its exit status. The connect string's syntax was checked
/// before (`connect_string_error`), so the client's `invalid_connect_string` there means that no host of it
/// could be resolved: unavailable (69).
int report_start_failure(const CommonOptions& o, const Error& e);

/// The signals zkr handles alike: they cancel a wait, are forwarded to COMMAND while it runs, end a release
/// early, or end `zkr watch`. A signal ignored when zkr started (nohup) is left ignored (`ignored_at_start`).
inline constexpr int handled_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};

/// Runs `ioc` one handler at a time until `finished` is set. False (with an internal error said) when the
/// loop ran out of work first.
bool run_until(boost::asio::io_context& ioc, const bool& finished);

/// "SIGINT", "SIGTERM", ... or "signal N".
std::string signal_name(int sig);

/// "0x" + 16 lower-case hex digits.
std::string hex_session(std::int64_t id);

}  // namespace zkr::cli
