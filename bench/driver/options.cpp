#include "options.hpp"

#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <zkr/framework/curator_framework.hpp>

#include "scenario.hpp"

namespace zkr_bench {

namespace {

constexpr const char* usage_head =
    "usage: zkr_bench --connect HOSTS --scenario S --path P [--clients K] [--ops N] [--waiters W]\n"
    "                 [--warmup N] [--session-timeout-ms MS] [--timeout-s S] [--mntr HOST:PORT]\n"
    "                 [--lock-driver default|standard] [--recipe latch|selector|curator|tree] [--nodes N]\n"
    "                 [--mode close|kill|optimistic|promoted]\n"
    "                 [--handler-executor io|thread|strand]\n"
    "                 [--tls-ca FILE --tls-cert FILE --tls-key FILE [--tls-key-password TEXT]]\n"
    "                 [--sasl-mechanism digest-md5|gssapi [--sasl-user U --sasl-password-file FILE]\n"
    "                  [--sasl-principal P --sasl-keytab FILE] [--sasl-server-host H]]\n"
    "\n";

constexpr const char* usage_options =
    "  --clients K           sessions (contended, increments [8], drain [min(8,W)], zkr_async10k [4, "
    "clamped\n"
    "                        to 4..8], async [1]),\n"
    "                        or mutex paths (multilock [4])\n"
    "  --ops N               measured pairs/handoffs/increments; rwlock: measured milliseconds [5000];\n"
    "                        zkr_async10k: async waiters [10000]; failover: failovers [10]\n"
    "  --waiters W           drain: waiters [200]\n"
    "  --warmup N            unmeasured pairs/handoffs [100; drain 0]; rwlock: milliseconds [500]\n"
    "  --session-timeout-ms  [30000]\n"
    "  --timeout-s S         watchdog: exit 3 after S seconds [600]\n"
    "  --lock-driver D       the plain mutexes' LockDriver: default (PrewatchLockDriver) or standard\n"
    "  --recipe R            failover: latch (LeaderLatch) or selector (LeaderSelector) [latch];\n"
    "                        cache-init, cache-events: curator (CuratorCache) or tree (TreeCache) [curator]\n"
    "  --nodes N             cache-*: leaves of the cached tree [10000; cache-events 1000]\n"
    "  --mode M              failover: close (the leader closes) or kill (SIGKILL to its process) [close];\n"
    "                        increments: optimistic (retried versioned writes) or promoted (one try, then\n"
    "                        under PromotedToLock on P-lock) [optimistic]\n"
    "  --handler-executor E  the sessions' handler executor: io (their I/O thread), thread (a thread of its\n"
    "                        own per session) or strand (a strand of 2 threads of its own per session) [io]\n"
    "  --mntr HOST:PORT      read ZooKeeper's mntr counters just before and after the measured part\n"
    "                        (extra.mntr: reads, writes, watch_events, packets_received)\n"
    "  --tls-ca FILE         connect every session over TLS (ClientConfig::tls): the CA certificates (PEM)\n"
    "  --tls-cert FILE       TLS: the client certificate (PEM)\n"
    "  --tls-key FILE        TLS: the client's private key (PEM)\n"
    "  --tls-key-password T  TLS: the passphrase of an encrypted key (a throwaway test one: it shows in ps)\n"
    "  --sasl-mechanism M    authenticate every session with SASL (ClientConfig::sasl): digest-md5 or "
    "gssapi\n"
    "  --sasl-user U         DIGEST-MD5: the user\n"
    "  --sasl-password-file F  DIGEST-MD5: the file holding the password\n"
    "  --sasl-principal P    GSSAPI: the client's principal (krb5.conf from $KRB5_CONFIG)\n"
    "  --sasl-keytab F       GSSAPI: the keytab holding the principal's keys\n"
    "  --sasl-server-host H  the server's host name in the exchange (SaslConfig::server_host)\n"
    "Prints one JSON line. Exit status: 0 ok, 1 failed, 2 usage, 3 timed out.\n";

/// The usage: the scenario names come from the registry, wrapped under "scenarios: ".
std::string usage() {
  return std::string(usage_head) + scenario_names_wrapped("scenarios: ", 104) + usage_options;
}

/// The registry's scenarios, one a line with the options each reads and what it measures.
std::string scenario_listing() {
  std::string out;
  for (const auto& s : scenarios()) {
    out += std::string(s.name) + "\n    " + s.help + "\n    options:";
    for (const char* o : s.options) out += std::string(" --") + o;
    out += "\n";
  }
  return out;
}

}  // namespace

[[noreturn]] void die(int status, const std::string& message) {
  std::cerr << "zkr_bench: " << message << std::endl;
  std::exit(status);
}

std::vector<std::string> Options::security_argv() const {
  std::vector<std::string> v;
  if (tls()) {
    v.insert(v.end(), {"--tls-ca", tls_ca, "--tls-cert", tls_cert, "--tls-key", tls_key});
    if (!tls_key_password.empty()) v.insert(v.end(), {"--tls-key-password", tls_key_password});
  }
  if (sasl()) {
    v.insert(v.end(), {"--sasl-mechanism", sasl_mechanism});
    for (const auto& [flag, value] : {std::pair{"--sasl-user", &sasl_user},
                                      {"--sasl-password-file", &sasl_password_file},
                                      {"--sasl-principal", &sasl_principal},
                                      {"--sasl-keytab", &sasl_keytab},
                                      {"--sasl-server-host", &sasl_server_host}}) {
      if (!value->empty()) v.insert(v.end(), {flag, *value});
    }
  }
  return v;
}

Options parse_options(int argc, char** argv) {
  Options a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      std::cout << usage();
      std::exit(0);
    }
    if (k == "--list-scenarios") {
      std::cout << scenario_listing();
      std::exit(0);
    }
    if (i + 1 >= argc) die(2, "missing value after " + k);
    std::string v = argv[++i];
    auto number = [&]() {
      try {
        std::size_t used = 0;
        int n = std::stoi(v, &used);
        if (used != v.size()) throw std::invalid_argument(v);
        return n;
      } catch (const std::exception&) {
        die(2, "bad number for " + k + ": " + v);
      }
    };
    if (k == "--connect")
      a.connect = v;
    else if (k == "--scenario")
      a.scenario = v;
    else if (k == "--path")
      a.path = v;
    else if (k == "--clients")
      a.clients = number();
    else if (k == "--ops")
      a.ops = number();
    else if (k == "--waiters")
      a.waiters = number();
    else if (k == "--warmup")
      a.warmup = number();
    else if (k == "--nodes")
      a.nodes = number();
    else if (k == "--session-timeout-ms")
      a.session_timeout_ms = number();
    else if (k == "--timeout-s")
      a.timeout_s = number();
    else if (k == "--mntr")
      a.mntr = v;
    else if (k == "--tls-ca")
      a.tls_ca = v;
    else if (k == "--tls-cert")
      a.tls_cert = v;
    else if (k == "--tls-key")
      a.tls_key = v;
    else if (k == "--tls-key-password")
      a.tls_key_password = v;
    else if (k == "--sasl-mechanism")
      a.sasl_mechanism = v;
    else if (k == "--sasl-user")
      a.sasl_user = v;
    else if (k == "--sasl-password-file")
      a.sasl_password_file = v;
    else if (k == "--sasl-principal")
      a.sasl_principal = v;
    else if (k == "--sasl-keytab")
      a.sasl_keytab = v;
    else if (k == "--sasl-server-host")
      a.sasl_server_host = v;
    else if (k == "--recipe") {
      if (v != "latch" && v != "selector" && v != "curator" && v != "tree")
        die(2, "--recipe: latch, selector, curator or tree, not " + v);
      a.recipe = v;
    } else if (k == "--mode") {
      if (v != "close" && v != "kill" && v != "optimistic" && v != "promoted")
        die(2, "--mode: close, kill, optimistic or promoted, not " + v);
      a.mode = v;
    } else if (k == "--handler-executor") {
      if (v != "io" && v != "thread" && v != "strand")
        die(2, "--handler-executor: io, thread or strand, not " + v);
      a.handler_executor = v;
    } else if (k == "--lock-driver") {
      if (v != "default" && v != "standard") die(2, "--lock-driver: default or standard, not " + v);
      a.standard = v == "standard";
    } else
      die(2, "unknown option " + k);
  }
  if (a.connect.empty() || a.scenario.empty() || a.path.empty()) {
    std::cerr << usage();
    std::exit(2);
  }
  const bool counter_mode = a.mode == "optimistic" || a.mode == "promoted";
  if (a.scenario == "increments" && !counter_mode) {
    if (a.mode != "close") die(2, "--mode: increments takes optimistic or promoted, not " + a.mode);
    a.mode = "optimistic";  // the default (Options::mode's "close" is failover's)
  }
  const bool cache_recipe = a.recipe == "curator" || a.recipe == "tree";
  if (a.scenario.rfind("cache-", 0) == 0 && !cache_recipe) {
    if (a.recipe != "latch") die(2, "--recipe: the cache scenarios take curator or tree, not " + a.recipe);
    a.recipe = "curator";  // the default (Options::recipe's "latch" is failover's)
  }
  if (a.scenario == "failover" && cache_recipe)
    die(2, "--recipe: failover takes latch or selector, not " + a.recipe);
  if (a.scenario == "failover" && counter_mode) die(2, "--mode: failover takes close or kill, not " + a.mode);
  if ((!a.tls_cert.empty() || !a.tls_key.empty() || !a.tls_key_password.empty()) && !a.tls())
    die(2, "--tls-cert, --tls-key and --tls-key-password need --tls-ca");
  if (a.tls() && !zkr::tls_supported())
    die(2, "--tls-ca: this zkrecipes is built without TLS (ZKR_ZOOKEEPER_TLS)");
  if (a.sasl() && a.sasl_mechanism != "digest-md5" && a.sasl_mechanism != "gssapi")
    die(2, "--sasl-mechanism: digest-md5 or gssapi, not " + a.sasl_mechanism);
  if (!a.sasl() &&
      !(a.sasl_user + a.sasl_password_file + a.sasl_principal + a.sasl_keytab + a.sasl_server_host).empty())
    die(2,
        "--sasl-user, --sasl-password-file, --sasl-principal, --sasl-keytab and --sasl-server-host need "
        "--sasl-mechanism");
  return a;
}

}  // namespace zkr_bench
