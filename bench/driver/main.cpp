// zkr_bench: the zkrecipes (C++) driver of the lock benchmarks.
//
// Same command line and output as bench/java/CuratorBench.java and bench/python/kazoo_bench.py, so that
// bench/run_bench.py drives all three the same way:
//
//   zkr_bench --connect HOSTS --scenario S --path P [--clients K] [--ops N] [--waiters W] [--warmup N]
//             [--session-timeout-ms MS] [--timeout-s S] [--mntr HOST:PORT] [--lock-driver default|standard]
//             [--recipe latch|selector] [--mode close|kill] [--handler-executor io|thread|strand]
//             [--tls-ca FILE --tls-cert FILE --tls-key FILE [--tls-key-password TEXT]]
//             [--sasl-mechanism digest-md5|gssapi [--sasl-user U --sasl-password-file FILE]
//              [--sasl-principal P --sasl-keytab FILE] [--sasl-server-host H]]
//   zkr_bench --help | --list-scenarios
//
// Scenarios: one per file under scenarios/, listed in registry.cpp (zkr_bench --list-scenarios prints them
// with the options each reads); each file's first comment says what it measures. Every session is its own
// CuratorFramework. The failover scenario's leader processes run this program in the child mode
// failover-leader (scenarios/failover_leader.cpp).
//
// --lock-driver: the LockDriver of the plain mutexes (uncontended, contended, drain, zkr_async10k, async):
// default (the mutex's own, PrewatchLockDriver) or standard (StandardLockDriver: Curator's request pattern).
// The runner reports the latter as library "zkrecipes-standard".
// --handler-executor: where asynchronous handlers without an executor of their own run
// (ClientConfig::executor): io (the default: the client's I/O thread), thread (a boost::asio::thread_pool(1)
// of its own per session) or strand (a strand of a thread_pool(2) of its own per session). The blocking API
// completes from the I/O thread directly; it depends on this only through what else runs there.
// --tls-*: every session of the run (and of the failover leaders it spawns) connects over TLS
// (ClientConfig::tls, docs/tls.md): CA, client certificate and key, all PEM, the key's passphrase when it is
// encrypted. The runner reports such a driver as library "zkrecipes-tls" (run_bench.py --tls).
// --sasl-*: every session authenticates with SASL (ClientConfig::sasl, docs/sasl.md): DIGEST-MD5 with a user
// and a password file, or GSSAPI with a principal and a keytab (the realm's krb5.conf from $KRB5_CONFIG). The
// runner reports such a driver as library "zkrecipes-sasl" or "zkrecipes-native-sasl" (run_bench.py --sasl).
// --warmup: unmeasured pairs/handoffs before the measured part [100; drain 0]; for rwlock it is milliseconds
// of unmeasured running [500].
//
// Output: exactly one JSON line on stdout:
//   {"library":"zkrecipes","scenario":...,"params":{...},"ops":n,"seconds":s,"ops_per_sec":x,
//    "p50_us":...,"p99_us":...,"cpu_seconds":c,"fifo_ok":true|false|null,"extra":{...}}
// cpu_seconds is the process's user+sys CPU time (CLOCK_PROCESS_CPUTIME_ID) during the measured part only
// (extra.cpu_seconds_total: the whole process, from getrusage); extra.context_switches the process's context
// switches (every thread's, voluntary and not, from getrusage) during the same part. With --mntr, ZooKeeper's
// `mntr` counters are read just before and just after the measured part and extra.mntr holds the differences:
// reads (zk_cnt_readlatency), writes (zk_cnt_updatelatency), watch_events (the zk_sum_node_*_watch_count
// sums) and packets_received. extra.sessions and extra.total_ops let the runner estimate the same from
// counters read around the whole run. extra.peak_rss_mb and extra.max_threads are reported for every
// scenario. Exit status: 0 ok; 1 the run failed (message on stderr); 2 usage or unsupported scenario; 3 the
// --timeout-s watchdog [600] fired.

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <exception>
#include <iostream>

#include "context.hpp"
#include "options.hpp"
#include "report.hpp"
#include "scenario.hpp"
#include "scenarios/failover_leader.hpp"

namespace {

// The watchdog: SIGALRM, no thread (the thread count is one of the measured quantities).
extern "C" void on_alarm(int) {
  static const char msg[] = "zkr_bench: timed out (--timeout-s)\n";
  (void)!::write(2, msg, sizeof msg - 1);
  ::_exit(3);
}

int run(zkr_bench::Context& ctx) {
  const std::string& name = ctx.options().scenario;
  if (name == zkr_bench::failover_leader_mode) return zkr_bench::run_failover_leader(ctx);
  const auto* scenario = zkr_bench::find_scenario(name);
  if (!scenario) zkr_bench::die(2, "unsupported scenario " + name);
  zkr_bench::Result r = scenario->run(ctx);
  zkr_bench::sample_threads();
  ctx.close_sessions();
  zkr_bench::write_result_line(std::cout, ctx, std::move(r));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  zkr_bench::Options options = zkr_bench::parse_options(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGALRM, on_alarm);
  ::alarm(unsigned(std::max(1, options.timeout_s)));
  zkr_bench::sample_threads();
  const std::string scenario = options.scenario;
  try {
    zkr_bench::Context ctx(std::move(options));
    return run(ctx);
  } catch (const std::exception& e) {
    std::cerr << "zkr_bench: " << scenario << " failed: " << e.what() << std::endl;
    return 1;
  }
}
