// zkr: Curator-style ZooKeeper locks and leader election from the shell. See docs/cli.md.
//
//   zkr lock [OPTIONS] PATH -- COMMAND [ARGS...]
//   zkr read-lock | write-lock [OPTIONS] PATH -- COMMAND [ARGS...]
//   zkr semaphore --leases N [OPTIONS] PATH -- COMMAND [ARGS...]
//   zkr multi-lock [OPTIONS] PATH PATH... -- COMMAND [ARGS...]
//   zkr lead [--latch | --selector] [--requeue] [OPTIONS] PATH -- COMMAND [ARGS...]
//   zkr inspect [OPTIONS] PATH [--json]
//   zkr revoke [OPTIONS] NODE_PATH
//   zkr watch [--children | --tree] [--json] [--data] [--count N] [--changes-only] [OPTIONS] PATH

#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "admin.hpp"
#include "child.hpp"
#include "common.hpp"
#include "locks.hpp"
#include "run_locked.hpp"
#include "sasl_options.hpp"
#include "watch.hpp"

namespace {

using namespace zkr::cli;

/// Option values as typed, converted after parsing.
struct RawOptions {
  CommonOptions common;
  std::string session_timeout = "30s";
  std::string connection_timeout = "15s";
  std::string handshake_timeout = "1s";
  TlsOptionText tls;
  SaslOptionText sasl;
  std::string timeout;
  std::string kill_after = "10s";
  std::string on_lost = "kill";
  std::string data;
  bool data_given = false;  ///< --data was given, maybe as "" (empty data, not the default)
  bool revocable = false;
  int leases = 0;
  bool json = false;
  std::string type = "auto";
  bool latch = false;
  bool selector = false;
  bool requeue = false;
  std::vector<std::string> paths;
  std::vector<std::string> command;
  WatchOptions watch;
  bool watch_children = false;
  bool watch_tree = false;
};

/// A DURATION of at most `max` (`max_wait_duration` for -w and --kill-after, `max_client_duration` for the
/// client's timeouts, which the C client takes as an int of milliseconds).
CLI::Validator duration_validator(std::chrono::milliseconds max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        if (parse_duration(text, max)) return {};
        if (parse_duration(text, std::chrono::milliseconds::max()))
          return "duration too large (at most " + format_duration(max) + "): " + text;
        return "not a duration (examples: 500ms, 4s, 1.5s, 2m, 1h): " + text;
      },
      "DURATION");
}

void add_common(CLI::App* cmd, RawOptions& o) {
  cmd->add_option("--connect", o.common.connect,
                  "ZooKeeper connect string host:port[,host:port...][/chroot] (default: $ZKR_CONNECT, else "
                  "127.0.0.1:2181)")
      ->option_text("HOSTS");
  cmd->add_option(
         "--session-timeout", o.session_timeout,
         "ZooKeeper session timeout: how long the lock outlives a zkr that vanished without releasing "
         "(default 30s; the server bounds it)")
      ->check(duration_validator(max_client_duration))
      ->option_text("DURATION");
  cmd->add_option("--connection-timeout", o.connection_timeout,
                  "give up (exit 69) when ZooKeeper cannot be reached for this long (default 15s)")
      ->check(duration_validator(max_client_duration))
      ->option_text("DURATION");
  cmd->add_option("--handshake-timeout", o.handshake_timeout,
                  "give a connection attempt up and try again when the server has not answered it within "
                  "this long (default 1s, doubling from the second in a row; 0 = the C client's 2/3 of the "
                  "session timeout)")
      ->check(duration_validator(max_client_duration))
      ->option_text("DURATION");
  cmd->add_option("--tls-ca", o.tls.ca,
                  "TLS to the ensemble: the CA certificates (PEM) that sign the servers' certificates "
                  "(default: $ZKR_TLS_CA); TLS needs --tls-ca, --tls-cert and --tls-key together")
      ->option_text("FILE");
  cmd->add_option("--tls-cert", o.tls.cert,
                  "the client certificate (PEM), its ACL identity x509:<subject> "
                  "(default: $ZKR_TLS_CERT)")
      ->option_text("FILE");
  cmd->add_option("--tls-key", o.tls.key, "the client's private key (PEM) (default: $ZKR_TLS_KEY)")
      ->option_text("FILE");
  cmd->add_option("--tls-key-password-file", o.tls.key_password_file,
                  "file whose first line is the key's passphrase (default: $ZKR_TLS_KEY_PASSWORD_FILE, else "
                  "the passphrase itself from $ZKR_TLS_KEY_PASSWORD)")
      ->option_text("FILE");
  cmd->add_flag("--tls-no-verify-host", o.tls.no_verify_host,
                "do not check that a server's certificate names the host it was reached by (the chain is "
                "still checked against --tls-ca)");
  cmd->add_option("--sasl-user", o.sasl.user,
                  "SASL (DIGEST-MD5) to the ensemble: the user, ACL identity sasl:<user> (default: "
                  "$ZKR_SASL_USER)")
      ->option_text("USER");
  cmd->add_option("--sasl-password-file", o.sasl.password_file,
                  "DIGEST-MD5: file holding the password, read at each connection (default: "
                  "$ZKR_SASL_PASSWORD_FILE)")
      ->option_text("FILE");
  cmd->add_option("--sasl-principal", o.sasl.principal,
                  "SASL (GSSAPI, Kerberos) to the ensemble: the client's principal, name@REALM, ACL identity "
                  "sasl:<principal> (default: $ZKR_SASL_PRINCIPAL); the realm's KDC comes from krb5.conf "
                  "($KRB5_CONFIG)")
      ->option_text("PRINCIPAL");
  cmd->add_option("--sasl-keytab", o.sasl.keytab,
                  "GSSAPI: the keytab holding the principal's keys (default: $ZKR_SASL_KEYTAB)")
      ->option_text("FILE");
  cmd->add_option("--sasl-mechanism", o.sasl.mechanism,
                  "DIGEST-MD5 or GSSAPI (default: $ZKR_SASL_MECHANISM, else GSSAPI with --sasl-principal, "
                  "DIGEST-MD5 with --sasl-user)")
      ->option_text("NAME");
  cmd->add_option("--sasl-service", o.sasl.service,
                  "the SASL service name (default: $ZKR_SASL_SERVICE, else zookeeper)")
      ->option_text("NAME");
  cmd->add_option("--sasl-host", o.sasl.host,
                  "the server's host name in the exchange (default: $ZKR_SASL_HOST, else zk-sasl-md5 for "
                  "DIGEST-MD5, the connect string's host for GSSAPI)")
      ->option_text("HOST");
  cmd->add_option("--sasl-realm", o.sasl.realm,
                  "the DIGEST-MD5 realm (default: $ZKR_SASL_REALM, else the one the server offers)")
      ->option_text("REALM");
  auto* quiet = cmd->add_flag("-q,--quiet", o.common.quiet, "no progress line and no messages except errors");
  cmd->add_flag("-v,--verbose", o.common.verbose, "debug log of zkr and of the ZooKeeper client on stderr")
      ->excludes(quiet);
  cmd->footer(std::string(exit_status_help()));
}

void add_timeout_options(CLI::App* cmd, RawOptions& o, const std::string& what) {
  cmd->add_option("-w,--timeout", o.timeout,
                  "give up waiting for " + what +
                      " after DURATION (exit 75), counted from the connection to ZooKeeper; 0 tries once "
                      "without waiting")
      ->check(duration_validator(max_wait_duration))
      ->option_text("DURATION");
  cmd->add_option("--kill-after", o.kill_after,
                  "grace period between SIGTERM and SIGKILL when COMMAND is terminated (default 10s)")
      ->check(duration_validator(max_wait_duration))
      ->option_text("DURATION");
}

void add_lock_options(CLI::App* cmd, RawOptions& o, bool revocable) {
  add_timeout_options(cmd, o, "the lock");
  cmd->add_option("--data", o.data,
                  "data of the lock node (default: this host's IP address, as Curator; \"\" for none)")
      ->option_text("TEXT");
  cmd->add_option("--on-lost", o.on_lost,
                  "when the lock is lost while COMMAND runs (session expired, node deleted): kill = SIGTERM "
                  "COMMAND, SIGKILL after --kill-after, exit 76; ignore = warn and let it run")
      ->check(CLI::IsMember({"kill", "ignore"}))
      ->option_text("kill|ignore");
  if (revocable)
    cmd->add_flag("--revocable", o.revocable,
                  "honour Curator revocation requests (zkr revoke, Revoker.attemptRevoke) on our lock node: "
                  "terminate COMMAND like a lost lock, release, exit 77");
}

void add_command_positionals(CLI::App* cmd, RawOptions& o) {
  cmd->add_option("COMMAND", o.command, "the command to run while holding (put -- before it)");
}

std::vector<std::string> split_command(int argc, char** argv, std::vector<const char*>& zkr_args) {
  std::vector<std::string> command;
  bool after = false;
  for (int i = 0; i < argc; ++i) {
    if (!after && i > 0 && std::strcmp(argv[i], "--") == 0) {
      after = true;
      continue;
    }
    if (after)
      command.emplace_back(argv[i]);
    else
      zkr_args.push_back(argv[i]);
  }
  return command;
}

bool finish_common(RawOptions& o) {
  if (o.common.connect.empty()) o.common.connect = default_connect_string();
  o.common.session_timeout = *parse_duration(o.session_timeout, max_client_duration);
  o.common.connection_timeout = *parse_duration(o.connection_timeout, max_client_duration);
  o.common.handshake_timeout = *parse_duration(o.handshake_timeout, max_client_duration);
  if (auto why = connect_string_error(o.common.connect)) {
    say_error("invalid connect string " + o.common.connect + ": " + *why +
              " (expected host:port[,host:port...][/chroot])");
    return false;
  }
  std::string tls_error;
  o.common.tls = tls_settings(o.tls, tls_error);
  if (!tls_error.empty()) {
    say_error(tls_error);
    return false;
  }
  std::string sasl_error;
  o.common.sasl = sasl_settings(o.sasl, sasl_error);
  if (!sasl_error.empty()) {
    say_error(sasl_error);
    return false;
  }
  return true;
}

LockOptions lock_options(const RawOptions& o) {
  LockOptions l;
  if (!o.timeout.empty()) l.timeout = parse_duration(o.timeout);
  if (o.data_given) l.data = o.data;
  l.on_lost = o.on_lost == "ignore" ? OnLost::ignore : OnLost::kill;
  l.kill_after = *parse_duration(o.kill_after);
  l.revocable = o.revocable;
  l.requeue = o.requeue;
  return l;
}

}  // namespace

int main(int argc, char** argv) {
  record_inherited_descriptors();
  record_signal_dispositions();
  // A closed pipe is an error to report, not a reason to die with the lock node left behind. COMMAND gets the
  // default back (unless SIGPIPE was ignored already when zkr started).
  if (!ignored_at_start(SIGPIPE)) ::signal(SIGPIPE, SIG_IGN);

  RawOptions o;
  CLI::App app{
      "zkr: Apache Curator-compatible ZooKeeper locks and leader election for shell scripts. Runs COMMAND "
      "while holding a lock (fair, FIFO) or leading an election, then releases it; every lock and election "
      "interoperates with Java Curator on the same path. `zkr watch` prints the changes of a node or a tree.",
      "zkr"};
  app.require_subcommand(1);
  app.footer(
      std::string(exit_status_help()) +
      "\nEnvironment of COMMAND: ZKR_LOCK_PATH (our lock node), ZKR_FENCING_TOKEN (its czxid, larger for "
      "every later holder), ZKR_SESSION_ID.\nRun `zkr COMMAND --help` for the options of a command; "
      "docs/cli.md has the details.");

  auto* lock = app.add_subcommand("lock", "run COMMAND while holding an InterProcessMutex on PATH");
  auto* read_lock = app.add_subcommand(
      "read-lock", "run COMMAND while holding the read side of an InterProcessReadWriteLock");
  auto* write_lock = app.add_subcommand(
      "write-lock", "run COMMAND while holding the write side of an InterProcessReadWriteLock");
  auto* semaphore = app.add_subcommand(
      "semaphore", "run COMMAND while holding one lease of an InterProcessSemaphoreV2 on PATH");
  auto* multi =
      app.add_subcommand("multi-lock", "run COMMAND while holding an InterProcessMultiLock over PATHs");
  for (auto* cmd : {lock, read_lock, write_lock}) {
    cmd->add_option("PATH", o.paths, "the lock's ZooKeeper path, e.g. /locks/backup")
        ->required()
        ->expected(1);
    add_command_positionals(cmd, o);
    add_common(cmd, o);
    add_lock_options(cmd, o, true);
  }
  semaphore->add_option("PATH", o.paths, "the semaphore's ZooKeeper path")->required()->expected(1);
  add_command_positionals(semaphore, o);
  semaphore
      ->add_option("-n,--leases", o.leases,
                   "number of leases of the semaphore (every participant must use the same number)")
      ->required()
      ->check(CLI::Range(1, 1 << 30));
  add_common(semaphore, o);
  add_lock_options(semaphore, o, false);
  multi->add_option("PATH", o.paths, "the locks, taken in this order (at least two)")->required();
  add_common(multi, o);
  add_lock_options(multi, o, true);

  auto* lead = app.add_subcommand(
      "lead",
      "run COMMAND while leading the Curator leader election on PATH (LeaderLatch, or LeaderSelector with "
      "--selector); terminate it when leadership is lost or the connection suspended");
  lead->add_option("PATH", o.paths, "the election's ZooKeeper path, e.g. /leader/scheduler")
      ->required()
      ->expected(1);
  add_command_positionals(lead, o);
  auto* latch_flag = lead->add_flag(
      "--latch", o.latch, "join a LeaderLatch election: latch- nodes, the first leads (the default)");
  lead->add_flag("--selector", o.selector,
                 "join a LeaderSelector election: an InterProcessMutex's lock- nodes, leadership passes in "
                 "queue order")
      ->excludes(latch_flag);
  lead->add_option("--id", o.data,
                   "participant id, the data of our node (default: this host's IP address; \"\" for none)")
      ->option_text("TEXT");
  lead->add_flag("--requeue", o.requeue,
                 "after leadership is lost (COMMAND terminated), wait to lead again and run COMMAND anew "
                 "instead of exiting 76");
  add_common(lead, o);
  add_timeout_options(lead, o, "leadership");

  auto* inspect = app.add_subcommand(
      "inspect",
      "show the queue of a lock directory (position, node, kind, holder, owner session, age, data), or the "
      "participants and the leader of a leader election");
  inspect
      ->add_option(
          "PATH", o.paths,
          "a mutex, read-write lock, semaphore or leader election (LeaderLatch, LeaderSelector) path")
      ->required()
      ->expected(1);
  inspect->add_flag("--json", o.json, "print one JSON object instead of a table");
  inspect
      ->add_option("--type", o.type,
                   "how to read PATH (default auto: from the node names; a LeaderSelector election looks "
                   "like a mutex, name it with --type selector)")
      ->check(CLI::IsMember({"auto", "mutex", "read-write", "semaphore", "latch", "selector"}))
      ->option_text("auto|mutex|read-write|semaphore|latch|selector");
  add_common(inspect, o);

  auto* revoke = app.add_subcommand(
      "revoke",
      "ask the holder of NODE_PATH to release it (Curator's Revoker: sets the node's data to "
      "__REVOKE__); honoured by holders that made their lock revocable");
  revoke->add_option("NODE_PATH", o.paths, "the full path of a lock node, as `zkr inspect` shows")
      ->required()
      ->expected(1);
  add_common(revoke, o);

  auto* watch = app.add_subcommand(
      "watch",
      "print each change of a node, of its children (--children) or of its subtree (--tree) as it happens, "
      "one line per event; a missing node is waited for, nothing is created");
  watch->add_option("PATH", o.paths, "the node to watch, e.g. /config")->required()->expected(1);
  auto* children_flag = watch->add_flag("--children", o.watch_children,
                                        "watch the direct children of PATH (PathChildrenCache)");
  watch->add_flag("--tree", o.watch_tree, "watch PATH and its whole subtree (TreeCache)")
      ->excludes(children_flag);
  watch->add_flag("--json", o.watch.json, "print one JSON object per line (docs/cli.md has the fields)");
  watch->add_flag("--data", o.watch.data, "print each node's data too (escaped)");
  watch
      ->add_option("-c,--count", o.watch.count,
                   "exit 0 after N created, changed or deleted events (default: run until a signal)")
      ->check(CLI::Range(std::uint64_t{1}, std::numeric_limits<std::uint64_t>::max()))
      ->option_text("N");
  watch->add_flag("--changes-only", o.watch.changes_only,
                  "do not print the nodes found at start, only `initialized` and the changes after it");
  add_common(watch, o);

  std::vector<const char*> zkr_args;
  auto after_dashes = split_command(argc, argv, zkr_args);
  try {
    app.parse(static_cast<int>(zkr_args.size()), zkr_args.data());
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? exit_status::ok : exit_status::usage;
  }
  if (!finish_common(o)) return exit_status::usage;
  for (const char* name : {"--data", "--id"})
    if (const auto* data = app.get_subcommands().front()->get_option_no_throw(name))
      o.data_given = o.data_given || data->count() > 0;

  const bool runs_command = lock->parsed() || read_lock->parsed() || write_lock->parsed() ||
                            semaphore->parsed() || multi->parsed() || lead->parsed();
  if (!runs_command && !after_dashes.empty()) {
    say_error("unexpected arguments after --");
    return exit_status::usage;
  }
  if (runs_command) {
    if (multi->parsed() && after_dashes.empty()) {
      say_error("multi-lock: put -- between the paths and COMMAND");
      return exit_status::usage;
    }
    o.command.insert(o.command.end(), after_dashes.begin(), after_dashes.end());
    if (o.command.empty()) {
      say_error("missing COMMAND: zkr " + app.get_subcommands().front()->get_name() +
                " [OPTIONS] PATH -- COMMAND [ARGS...]");
      return exit_status::usage;
    }
    for (auto& p : o.paths) {
      if (auto why = zkr::path_error(p)) {
        say_error("invalid path " + p + ": " + *why);
        return exit_status::usage;
      }
    }
  }

  auto options = lock_options(o);
  if (lock->parsed()) return run_locked(o.common, options, mutex_spec(o.paths.front(), options), o.command);
  if (read_lock->parsed())
    return run_locked(o.common, options, read_write_spec(o.paths.front(), false, options), o.command);
  if (write_lock->parsed())
    return run_locked(o.common, options, read_write_spec(o.paths.front(), true, options), o.command);
  if (semaphore->parsed())
    return run_locked(o.common, options, semaphore_spec(o.paths.front(), o.leases, options), o.command);
  if (multi->parsed()) {
    if (o.paths.size() < 2) {
      say_error("multi-lock needs at least two paths");
      return exit_status::usage;
    }
    return run_locked(o.common, options, multi_lock_spec(o.paths, options), o.command);
  }
  if (lead->parsed()) {
    options.stop_on_suspended = true;  // as Curator's LeaderSelectorListenerAdapter
    return run_locked(
        o.common, options,
        leader_spec(o.paths.front(), o.selector ? Election::selector : Election::latch, options), o.command);
  }
  if (inspect->parsed()) {
    LockKind kind = o.type == "mutex"        ? LockKind::mutex
                    : o.type == "read-write" ? LockKind::read_write
                    : o.type == "semaphore"  ? LockKind::semaphore
                    : o.type == "latch"      ? LockKind::latch
                    : o.type == "selector"   ? LockKind::selector
                                             : LockKind::automatic;
    return zkr::cli::inspect(o.common, o.paths.front(), kind, o.json);
  }
  if (revoke->parsed()) return zkr::cli::revoke(o.common, o.paths.front());
  if (watch->parsed()) {
    o.watch.path = o.paths.front();
    o.watch.scope = o.watch_tree       ? WatchScope::tree
                    : o.watch_children ? WatchScope::children
                                       : WatchScope::node;
    return zkr::cli::watch(o.common, o.watch);
  }
  return exit_status::usage;
}
