#pragma once
// zkr_bench's command line: the options every scenario shares, parsed once.

#include <string>
#include <vector>

namespace zkr_bench {

struct Options {
  std::string connect;
  std::string scenario;
  std::string path;
  int clients = -1;  // -1: the scenario's default
  int ops = -1;
  int waiters = -1;
  int warmup = -1;
  int nodes = -1;  // the cache scenarios' leaves
  int session_timeout_ms = 30000;
  int timeout_s = 600;
  std::string mntr;              // host:port, empty = none
  bool standard = false;         // --lock-driver standard
  std::string recipe = "latch";  // failover: latch | selector; cache-*: curator | tree (parse sets it)
  std::string mode = "close";    // failover: close | kill; increments: optimistic | promoted (parse sets it)
  std::string handler_executor = "io";                      // io | thread | strand
  std::string tls_ca, tls_cert, tls_key, tls_key_password;  // --tls-*; TLS when tls_ca is given
  // --sasl-*: SASL when sasl_mechanism is given (digest-md5 or gssapi)
  std::string sasl_mechanism, sasl_user, sasl_password_file, sasl_principal, sasl_keytab, sasl_server_host;

  bool tls() const { return !tls_ca.empty(); }
  bool sasl() const { return !sasl_mechanism.empty(); }
  /// The --tls-* and --sasl-* options as given, for the processes this one spawns.
  std::vector<std::string> security_argv() const;
};

/// `value` when given (>= 0), else the scenario's default.
inline int or_default(int value, int dflt) { return value >= 0 ? value : dflt; }

/// Parses argv; prints the usage and exits (0 for --help, 2 for a bad command line) as zkr_bench always has.
Options parse_options(int argc, char** argv);

/// Prints "zkr_bench: <message>" on stderr and exits with `status`.
[[noreturn]] void die(int status, const std::string& message);

}  // namespace zkr_bench
