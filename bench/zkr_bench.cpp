// zkr_bench: the zkrecipes (C++) driver of the lock benchmarks.
//
// Same command line and output as bench/java/CuratorBench.java and bench/python/kazoo_bench.py, so that
// bench/run_bench.py drives all three the same way:
//
//   zkr_bench --connect HOSTS --scenario S --path P [--clients K] [--ops N] [--waiters W] [--warmup N]
//             [--session-timeout-ms MS] [--timeout-s S] [--mntr HOST:PORT] [--lock-driver default|standard]
//             [--recipe latch|selector] [--mode close|kill] [--handler-executor io|thread|strand]
//             [--tls-ca FILE --tls-cert FILE --tls-key FILE [--tls-key-password TEXT]]
//
// Scenarios (defaults in brackets); every session is its own CuratorFramework:
//   uncontended      one session, N [2000] InterProcessMutex acquire+release pairs; latency per pair.
//   contended        K [8] sessions, one thread each using the blocking API (as Curator's driver), looping
//                    acquire/release on P until N [2000] handoffs are done in total; latency = acquire latency.
//   drain            one holder session holds P; W [200] waiters queue with async_acquire, spread over
//                    K [min(8,W)] sessions (no thread per waiter); once W nodes wait the holder releases and
//                    every waiter acquires and releases once. ops = W handoffs; latency = time between
//                    consecutive acquisitions; fifo_ok = acquisition order equals sequence order.
//   semaphore-mutex  one session, N [1000] InterProcessSemaphoreMutex acquire+release pairs.
//   rwlock           4 reader sessions + 1 writer session (InterProcessReadWriteLock), one thread each, looping
//                    for N [5000] milliseconds; ops = reads + writes; extra has reads/s and writes/s.
//   multilock        InterProcessMultiLock over K [4] mutex paths P/0 .. P/K-1; N [500] pairs.
//   async            (zkrecipes only; issue 26) K [1] sessions, one mutex each on P, every one looping
//                    async_acquire / async_release, the next acquire started from the release's handler, until
//                    N [2000] pairs are done in total; latency = pair (acquire started to release handler run).
//                    K=1: the uncontended case of the async API; K=8: contended handoffs of the async API.
//   slow-handler     (zkrecipes only; issue 26) one session, locks on P/slow and P/other. N [20] rounds: an
//                    async_acquire of P/slow whose handler sleeps 50 ms; while it sleeps, a blocking acquire of
//                    P/other is timed (latency), and in a second such window an async_acquire of P/other, from
//                    its start to its handler (extra.async_other_p50_us / _p99_us): what one slow handler costs
//                    the other locks of its client.
//   zkr_async10k     (zkrecipes only) N [10000] async_acquire waiters on one lock from this one process, over
//                    K sessions (clamped to [4, 8]; the first also holds the lock while the others queue), then
//                    a FIFO drain. extra: enqueue time, drain rate, fifo_ok, peak RSS (VmHWM) and the largest
//                    thread count seen (/proc/self/task).
//   failover         (issue 28) N [10] leader failovers. For each, this process starts a leader in a
//                    process of its own (this program, scenario failover-leader, on P/<i>), waits until it
//                    leads, queues its own participant behind it (--recipe: LeaderLatch or LeaderSelector)
//                    and ends the leader (--mode close: the leader closes its participant; kill: SIGKILL, the
//                    node goes at session expiry: give a short --session-timeout-ms, the leader's). Latency =
//                    from the leader's end (its clock just before close(), or the kill) to our is_leader /
//                    take_leadership. extra.failover_ms, notice_ms (from an observer session's node-deleted
//                    event to our leadership) and end_to_notice_ms (from the end to that event: in kill mode
//                    the expiry as the server acts on it) list every sample. The mntr window of a failover
//                    runs from just before the end to our leadership; the observer's own watch event (one
//                    per failover) is taken out of watch_events. In kill mode the leaders start spread evenly
//                    over the server's 2 s tick (a wait of (i + 1/2) / N ticks before the i-th one's start).
// --lock-driver: the LockDriver of the plain mutexes (uncontended, contended, drain, zkr_async10k, async): default
// (the mutex's own, PrewatchLockDriver) or standard (StandardLockDriver: Curator's request pattern). The runner
// reports the latter as library "zkrecipes-standard".
// --handler-executor: where asynchronous handlers without an executor of their own run (ClientConfig::executor):
// io (the default: the client's I/O thread), thread (a boost::asio::thread_pool(1) of its own per session) or
// strand (a strand of a thread_pool(2) of its own per session). The blocking API completes from the I/O thread
// directly; it depends on this only through what else runs there.
// --tls-*: every session of the run (and of the failover leaders it spawns) connects over TLS
// (ClientConfig::tls, docs/tls.md): CA, client certificate and key, all PEM, the key's passphrase when it is
// encrypted. The runner reports such a driver as library "zkrecipes-tls" (run_bench.py --tls).
// --warmup: unmeasured pairs/handoffs before the measured part [100; drain 0]; for rwlock it is milliseconds of
// unmeasured running [500].
//
// Output: exactly one JSON line on stdout:
//   {"library":"zkrecipes","scenario":...,"params":{...},"ops":n,"seconds":s,"ops_per_sec":x,
//    "p50_us":...,"p99_us":...,"cpu_seconds":c,"fifo_ok":true|false|null,"extra":{...}}
// cpu_seconds is the process's user+sys CPU time (CLOCK_PROCESS_CPUTIME_ID) during the measured part only
// (extra.cpu_seconds_total: the whole process, from getrusage). With --mntr, ZooKeeper's `mntr` counters are
// read just before and just after the measured part and extra.mntr holds the differences: reads
// (zk_cnt_readlatency), writes (zk_cnt_updatelatency), watch_events (the zk_sum_node_*_watch_count sums) and
// packets_received. extra.sessions and extra.total_ops let the runner estimate the same from counters read
// around the whole run. extra.peak_rss_mb and extra.max_threads are reported for every scenario.
// Exit status: 0 ok; 1 the run failed (message on stderr); 2 usage or unsupported scenario; 3 the --timeout-s
// watchdog [600] fired.

#include <zkr/framework/curator_framework.hpp>
#include <zkr/recipes/inter_process_multi_lock.hpp>
#include <zkr/recipes/inter_process_mutex.hpp>
#include <zkr/recipes/inter_process_read_write_lock.hpp>
#include <zkr/recipes/inter_process_semaphore_mutex.hpp>
#include <zkr/recipes/leader_latch.hpp>
#include <zkr/recipes/leader_selector.hpp>

#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <variant>
#include <vector>

extern char** environ;

#ifndef ZKR_BENCH_VERSION
#define ZKR_BENCH_VERSION "unknown"
#endif

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* usage_text =
    "usage: zkr_bench --connect HOSTS --scenario S --path P [--clients K] [--ops N] [--waiters W]\n"
    "                 [--warmup N] [--session-timeout-ms MS] [--timeout-s S] [--mntr HOST:PORT]\n"
    "                 [--lock-driver default|standard] [--recipe latch|selector] [--mode close|kill]\n"
    "                 [--handler-executor io|thread|strand]\n"
    "                 [--tls-ca FILE --tls-cert FILE --tls-key FILE [--tls-key-password TEXT]]\n"
    "\n"
    "scenarios: uncontended, contended, drain, semaphore-mutex, rwlock, multilock, zkr_async10k, failover,\n"
    "           async, slow-handler\n"
    "  --clients K           sessions (contended [8], drain [min(8,W)], zkr_async10k [4, clamped to 4..8],\n"
    "                        async [1]),\n"
    "                        or mutex paths (multilock [4])\n"
    "  --ops N               measured pairs/handoffs; rwlock: measured milliseconds [5000];\n"
    "                        zkr_async10k: async waiters [10000]; failover: failovers [10]\n"
    "  --waiters W           drain: waiters [200]\n"
    "  --warmup N            unmeasured pairs/handoffs [100; drain 0]; rwlock: milliseconds [500]\n"
    "  --session-timeout-ms  [30000]\n"
    "  --timeout-s S         watchdog: exit 3 after S seconds [600]\n"
    "  --lock-driver D       the plain mutexes' LockDriver: default (PrewatchLockDriver) or standard\n"
    "  --recipe R            failover: latch (LeaderLatch) or selector (LeaderSelector) [latch]\n"
    "  --mode M              failover: close (the leader closes) or kill (SIGKILL to its process) [close]\n"
    "  --handler-executor E  the sessions' handler executor: io (their I/O thread), thread (a thread of its\n"
    "                        own per session) or strand (a strand of 2 threads of its own per session) [io]\n"
    "  --mntr HOST:PORT      read ZooKeeper's mntr counters just before and after the measured part\n"
    "                        (extra.mntr: reads, writes, watch_events, packets_received)\n"
    "  --tls-ca FILE         connect every session over TLS (ClientConfig::tls): the CA certificates (PEM)\n"
    "  --tls-cert FILE       TLS: the client certificate (PEM)\n"
    "  --tls-key FILE        TLS: the client's private key (PEM)\n"
    "  --tls-key-password T  TLS: the passphrase of an encrypted key (a throwaway test one: it shows in ps)\n"
    "Prints one JSON line. Exit status: 0 ok, 1 failed, 2 usage, 3 timed out.\n";

[[noreturn]] void die(int status, const std::string& message) {
  std::cerr << "zkr_bench: " << message << std::endl;
  std::exit(status);
}

// ------------------------------------------------------------------------------------------------------------
// Arguments

struct Args {
  std::string connect;
  std::string scenario;
  std::string path;
  int clients = -1;
  int ops = -1;
  int waiters = -1;
  int warmup = -1;
  int session_timeout_ms = 30000;
  int timeout_s = 600;
  std::string mntr;  // host:port, empty = none
  bool standard = false;  // --lock-driver standard
  std::string recipe = "latch";  // failover: latch | selector
  std::string mode = "close";    // failover: close | kill
  std::string handler_executor = "io";  // io | thread | strand
  std::string tls_ca, tls_cert, tls_key, tls_key_password;  // --tls-*; TLS when tls_ca is given
  bool tls() const { return !tls_ca.empty(); }
  /// The --tls-* options as given, for the processes this one spawns.
  std::vector<std::string> tls_argv() const {
    if (!tls()) return {};
    std::vector<std::string> v{"--tls-ca", tls_ca, "--tls-cert", tls_cert, "--tls-key", tls_key};
    if (!tls_key_password.empty()) v.insert(v.end(), {"--tls-key-password", tls_key_password});
    return v;
  }
};

int or_default(int value, int dflt) { return value >= 0 ? value : dflt; }

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      std::cout << usage_text;
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
    if (k == "--connect") a.connect = v;
    else if (k == "--scenario") a.scenario = v;
    else if (k == "--path") a.path = v;
    else if (k == "--clients") a.clients = number();
    else if (k == "--ops") a.ops = number();
    else if (k == "--waiters") a.waiters = number();
    else if (k == "--warmup") a.warmup = number();
    else if (k == "--session-timeout-ms") a.session_timeout_ms = number();
    else if (k == "--timeout-s") a.timeout_s = number();
    else if (k == "--mntr") a.mntr = v;
    else if (k == "--tls-ca") a.tls_ca = v;
    else if (k == "--tls-cert") a.tls_cert = v;
    else if (k == "--tls-key") a.tls_key = v;
    else if (k == "--tls-key-password") a.tls_key_password = v;
    else if (k == "--recipe") {
      if (v != "latch" && v != "selector") die(2, "--recipe: latch or selector, not " + v);
      a.recipe = v;
    } else if (k == "--mode") {
      if (v != "close" && v != "kill") die(2, "--mode: close or kill, not " + v);
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
    std::cerr << usage_text;
    std::exit(2);
  }
  if ((!a.tls_cert.empty() || !a.tls_key.empty() || !a.tls_key_password.empty()) && !a.tls())
    die(2, "--tls-cert, --tls-key and --tls-key-password need --tls-ca");
  if (a.tls() && !zkr::tls_supported())
    die(2, "--tls-ca: this zkrecipes is built without TLS (ZKR_ZOOKEEPER_TLS)");
  return a;
}

// ------------------------------------------------------------------------------------------------------------
// Watchdog: SIGALRM, no thread (the thread count is one of the measured quantities).

extern "C" void on_alarm(int) {
  static const char msg[] = "zkr_bench: timed out (--timeout-s)\n";
  (void)!::write(2, msg, sizeof msg - 1);
  ::_exit(3);
}

// ------------------------------------------------------------------------------------------------------------
// Measurement helpers

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

std::int64_t cpu_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

double rusage_cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/// VmHWM (peak resident set) in MiB, from /proc/self/status.
double peak_rss_mb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::strtod(line.c_str() + 6, nullptr) / 1024.0;
  }
  return -1;
}

int thread_count() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d)) {
      if (e->d_name[0] != '.') ++n;
    }
    ::closedir(d);
  }
  return n;
}

/// The largest thread count seen by `sample()` (called at the interesting moments and while waiting).
std::atomic<int> max_threads{0};
void sample_threads() {
  int n = thread_count();
  int m = max_threads.load();
  while (n > m && !max_threads.compare_exchange_weak(m, n)) {
  }
}

/// Nearest-rank percentile in microseconds (one decimal); nullopt without samples.
std::optional<double> percentile_us(const std::vector<std::int64_t>& sorted_ns, double p) {
  if (sorted_ns.empty()) return std::nullopt;
  auto rank = static_cast<long>(std::ceil(p * double(sorted_ns.size())));
  auto idx = std::min<long>(long(sorted_ns.size()) - 1, std::max<long>(0, rank - 1));
  return std::round(double(sorted_ns[std::size_t(idx)]) / 100.0) / 10.0;
}

std::vector<std::int64_t> merge_sorted(const std::vector<std::vector<std::int64_t>>& all) {
  std::vector<std::int64_t> out;
  for (const auto& v : all) out.insert(out.end(), v.begin(), v.end());
  std::sort(out.begin(), out.end());
  return out;
}

/// The sequence number at the end of a lock node's name.
std::int64_t sequence_of(const std::string& node) {
  if (node.size() < 10) return -1;
  return std::strtoll(node.c_str() + node.size() - 10, nullptr, 10);
}

// ------------------------------------------------------------------------------------------------------------
// A tiny JSON value, enough for the output line.

struct Json;
using JsonObject = std::vector<std::pair<std::string, Json>>;
using JsonArray = std::vector<Json>;
struct Json {
  std::variant<std::nullptr_t, bool, std::int64_t, double, std::string, JsonObject, JsonArray> v;
  Json() : v(nullptr) {}
  Json(std::nullptr_t) : v(nullptr) {}
  Json(bool b) : v(b) {}
  Json(int i) : v(std::int64_t(i)) {}
  Json(long i) : v(std::int64_t(i)) {}
  Json(long long i) : v(std::int64_t(i)) {}
  Json(unsigned long i) : v(std::int64_t(i)) {}
  Json(double d) : v(d) {}
  Json(const char* s) : v(std::string(s)) {}
  Json(std::string s) : v(std::move(s)) {}
  Json(JsonObject o) : v(std::move(o)) {}
  Json(JsonArray a) : v(std::move(a)) {}
  template <class T>
  Json(const std::optional<T>& o) : Json() {
    if (o) *this = Json(*o);
  }
};

void write_json(std::ostream& os, const Json& j) {
  struct Visitor {
    std::ostream& os;
    void operator()(std::nullptr_t) const { os << "null"; }
    void operator()(bool b) const { os << (b ? "true" : "false"); }
    void operator()(std::int64_t i) const { os << i; }
    void operator()(double d) const {
      if (!std::isfinite(d)) {
        os << "null";
        return;
      }
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.3f", d);
      std::string s = buf;  // trim trailing zeros, keep one digit after the point
      while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
      os << s;
    }
    void operator()(const std::string& s) const {
      os << '"';
      for (unsigned char c : s) {
        if (c == '"' || c == '\\') os << '\\' << c;
        else if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          os << buf;
        } else os << c;
      }
      os << '"';
    }
    void operator()(const JsonArray& a) const {
      os << '[';
      for (std::size_t i = 0; i < a.size(); ++i) {
        if (i) os << ',';
        write_json(os, a[i]);
      }
      os << ']';
    }
    void operator()(const JsonObject& o) const {
      os << '{';
      bool first = true;
      for (const auto& [k, v] : o) {
        if (!first) os << ',';
        first = false;
        (*this)(k);
        os << ':';
        write_json(os, v);
      }
      os << '}';
    }
  };
  std::visit(Visitor{os}, j.v);
}

// ------------------------------------------------------------------------------------------------------------
// ZooKeeper's own counters (`mntr`)

std::optional<std::map<std::string, double>> read_mntr(const std::string& address, std::string& error) {
  auto colon = address.rfind(':');
  if (colon == std::string::npos) {
    error = "bad --mntr address " + address;
    return std::nullopt;
  }
  std::string host = address.substr(0, colon), port = address.substr(colon + 1);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); rc != 0) {
    error = std::string("getaddrinfo: ") + ::gai_strerror(rc);
    return std::nullopt;
  }
  int fd = -1;
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    fd = ::socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) continue;
    timeval tv{5, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (::connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) break;
    ::close(fd);
    fd = -1;
  }
  ::freeaddrinfo(res);
  if (fd < 0) {
    error = "cannot connect to " + address + ": " + std::strerror(errno);
    return std::nullopt;
  }
  std::string data;
  if (::send(fd, "mntr", 4, MSG_NOSIGNAL) != 4) {
    error = std::string("send: ") + std::strerror(errno);
    ::close(fd);
    return std::nullopt;
  }
  char buf[8192];
  for (;;) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    data.append(buf, std::size_t(n));
  }
  ::close(fd);
  std::map<std::string, double> out;
  std::istringstream lines(data);
  std::string line;
  while (std::getline(lines, line)) {
    auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    char* end = nullptr;
    std::string value = line.substr(tab + 1);
    double d = std::strtod(value.c_str(), &end);
    if (end != value.c_str()) out[line.substr(0, tab)] = d;
  }
  if (out.empty()) {
    error = "empty mntr answer from " + address;
    return std::nullopt;
  }
  return out;
}

// ------------------------------------------------------------------------------------------------------------
// The benchmark

struct Result {
  long ops = 0;
  double seconds = 0;
  std::vector<std::int64_t> lat_ns;  // sorted
  std::optional<bool> fifo_ok;
  std::int64_t cpu_ns = 0;
  JsonObject extra;
};

/// Counts down to zero; waiters wake at zero. A tiny std::latch with a timed wait.
class Countdown {
 public:
  explicit Countdown(long n) : n_(n) {}
  void count_down(long k = 1) {
    std::lock_guard lk(m_);
    n_ -= k;
    if (n_ <= 0) cv_.notify_all();
  }
  /// True when zero was reached before `d` passed.
  bool wait_for(Clock::duration d) {
    std::unique_lock lk(m_);
    return cv_.wait_for(lk, d, [&] { return n_ <= 0; });
  }
  long left() const {
    std::lock_guard lk(m_);
    return n_;
  }

 private:
  mutable std::mutex m_;
  std::condition_variable cv_;
  long n_;
};

/// The first failure of any worker or handler.
class Failure {
 public:
  void set(std::string what) {
    std::lock_guard lk(m_);
    if (!what_) what_ = std::move(what);
  }
  std::optional<std::string> get() const {
    std::lock_guard lk(m_);
    return what_;
  }

 private:
  mutable std::mutex m_;
  std::optional<std::string> what_;
};

// ------------------------------------------------------------------------------------------------------------
// Leader failover: a moment recorded once, a selector term held until stopped, a leader in its own process

/// A moment (steady clock, ns) recorded once: the first `set` wins. `wait_for` waits for it.
class Stamp {
 public:
  void set() {
    const auto t = now_ns();
    std::lock_guard lk(m_);
    if (!ns_) {
      ns_ = t;
      cv_.notify_all();
    }
  }
  std::optional<std::int64_t> wait_for(Clock::duration d) {
    std::unique_lock lk(m_);
    cv_.wait_for(lk, d, [&] { return ns_.has_value(); });
    return ns_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::optional<std::int64_t> ns_;
};

/// The failover's LeaderSelector listener: stamps the start of its first term and keeps leadership until the
/// term is asked to stop (close).
class HoldingListener : public zkr::LeaderSelectorListenerAdapter {
 public:
  void take_leadership(zkr::CuratorFramework&, zkr::Leadership& l) override {
    {
      std::lock_guard lk(m_);
      node_ = l.lease().node_path();
    }
    started->set();
    std::mutex hold;
    std::unique_lock lk(hold);
    std::condition_variable_any cv;
    cv.wait(lk, l.stop_token(), [] { return false; });
  }
  std::string node() const {
    std::lock_guard lk(m_);
    return node_;
  }
  const std::shared_ptr<Stamp> started = std::make_shared<Stamp>();

 private:
  mutable std::mutex m_;
  std::string node_;
};

/// A leader in a process of its own: `argv` spawned with its stdin and stdout piped to us (its stderr is
/// ours). The destructor kills and reaps a process still running; if we die first, its stdin ends and it
/// exits.
class LeaderProcess {
 public:
  explicit LeaderProcess(const std::vector<std::string>& argv) {
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    if (::pipe2(out, O_CLOEXEC) != 0) {
      ::close(in[0]);
      ::close(in[1]);
      throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    }
    posix_spawn_file_actions_t fa;
    ::posix_spawn_file_actions_init(&fa);
    ::posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    ::posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const int rc = ::posix_spawn(&pid_, args[0], &fa, nullptr, args.data(), environ);
    ::posix_spawn_file_actions_destroy(&fa);
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = out[0];
    if (rc != 0) {
      pid_ = -1;
      throw std::runtime_error("cannot start " + argv[0] + ": " + std::strerror(rc));
    }
  }
  ~LeaderProcess() {
    kill();
    if (to_ >= 0) ::close(to_);
    if (from_ >= 0) ::close(from_);
  }
  LeaderProcess(const LeaderProcess&) = delete;
  LeaderProcess& operator=(const LeaderProcess&) = delete;

  /// The next line the process prints (without the newline); throws at the deadline or when its output ends.
  std::string read_line(Clock::time_point deadline) {
    for (;;) {
      if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return line;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) throw std::runtime_error("the leader process printed no line in time");
      pollfd pfd{from_, POLLIN, 0};
      const int n = ::poll(&pfd, 1, int(std::min<long>(left, 1000)));
      if (n < 0 && errno != EINTR) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
      if (n <= 0) continue;
      char buf[512];
      const ssize_t got = ::read(from_, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) throw std::runtime_error("the leader process ended its output (it failed: see above)");
      buffer_.append(buf, std::size_t(got));
    }
  }
  void send(const std::string& line) {
    const std::string text = line + "\n";
    if (::write(to_, text.data(), text.size()) != ssize_t(text.size())) {
      throw std::runtime_error(std::string("cannot write to the leader process: ") + std::strerror(errno));
    }
  }
  /// SIGKILL, then reap.
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  /// Waits up to `d` for the process to exit by itself (killed after that); true when it exited with 0.
  bool wait_exit(Clock::duration d) {
    const auto dl = Clock::now() + d;
    int status = 0;
    while (pid_ > 0) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
      }
      if (Clock::now() > dl) {
        kill();
        return false;
      }
      std::this_thread::sleep_for(10ms);
    }
    return false;
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string buffer_;
};

std::string self_executable() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("cannot read /proc/self/exe");
  return std::string(buf, std::size_t(n));
}

class Bench {
 public:
  explicit Bench(Args a) : a_(std::move(a)) {
    auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    logger_ = std::make_shared<spdlog::logger>("zkr_bench", std::move(sink));
    logger_->set_level(spdlog::level::warn);
  }

  ~Bench() { close_sessions(); }

  /// A plain mutex on the benchmark's path, over the driver chosen with --lock-driver.
  std::unique_ptr<zkr::InterProcessMutex> mutex(zkr::CuratorFramework& c) const {
    if (a_.standard)
      return std::make_unique<zkr::InterProcessMutex>(c, a_.path, std::make_shared<zkr::StandardLockDriver>());
    return std::make_unique<zkr::InterProcessMutex>(c, a_.path);
  }

  int run() {
    Result r;
    const auto& s = a_.scenario;
    if (s == "failover-leader") return failover_leader();
    if (s == "uncontended") r = uncontended();
    else if (s == "contended") r = contended();
    else if (s == "drain") r = drain();
    else if (s == "semaphore-mutex") r = semaphore_mutex();
    else if (s == "rwlock") r = rwlock();
    else if (s == "multilock") r = multilock();
    else if (s == "zkr_async10k") r = async10k();
    else if (s == "async") r = async_pairs();
    else if (s == "slow-handler") r = slow_handler();
    else if (s == "failover")
      r = failover();
    else die(2, "unsupported scenario " + s);
    sample_threads();
    close_sessions();

    auto param = [](int v) { return v >= 0 ? Json(v) : Json(); };
    JsonObject params{{"clients", param(a_.clients)},
                      {"ops", param(a_.ops)},
                      {"waiters", param(a_.waiters)},
                      {"warmup", param(a_.warmup)},
                      {"path", a_.path},
                      {"lock_driver", a_.standard ? "standard" : "default"},
                      {"handler_executor", a_.handler_executor}};
    r.extra.emplace_back("cpu_seconds_total", rusage_cpu_seconds());
    r.extra.emplace_back("peak_rss_mb", peak_rss_mb());
    r.extra.emplace_back("max_threads", max_threads.load());
    if (!a_.mntr.empty()) r.extra.emplace_back("mntr", mntr_delta());
    r.extra.emplace_back("zkrecipes_version", ZKR_BENCH_VERSION);

    JsonObject out{{"library", "zkrecipes"},
                   {"scenario", a_.scenario},
                   {"params", std::move(params)},
                   {"ops", r.ops},
                   {"seconds", r.seconds},
                   {"ops_per_sec", r.seconds > 0 ? Json(double(r.ops) / r.seconds) : Json()},
                   {"p50_us", percentile_us(r.lat_ns, 0.50)},
                   {"p99_us", percentile_us(r.lat_ns, 0.99)},
                   {"cpu_seconds", double(r.cpu_ns) / 1e9},
                   {"fifo_ok", r.fifo_ok},
                   {"extra", std::move(r.extra)}};
    std::ostringstream os;
    write_json(os, Json(std::move(out)));
    std::cout << os.str() << std::endl;
    return 0;
  }

  void close_sessions() noexcept {
    std::lock_guard lk(sessions_mu_);
    for (auto& c : sessions_) c->close();
  }

  /// A failure while workers or asynchronous handlers still use this frame: report, close the sessions (pending
  /// operations complete with `closed`) and exit without unwinding (no joinable thread is destroyed, no handler
  /// outlives what it references).
  [[noreturn]] void fatal(const std::string& what) {
    std::cerr << "zkr_bench: " << a_.scenario << " failed: " << what << std::endl;
    close_sessions();
    std::_Exit(1);
  }

 private:
  // ----------------------------------------------------------------------------------------------------------
  // Sessions

  zkr::CuratorFramework& new_session() { return new_session(a_.session_timeout_ms); }
  zkr::CuratorFramework& new_session(int session_timeout_ms) {
    zkr::ClientConfig cfg;
    cfg.connect_string = a_.connect;
    cfg.retry_policy = std::make_shared<zkr::ExponentialBackoffRetry>(100ms, 3);
    cfg.session_timeout = std::chrono::milliseconds(session_timeout_ms);
    cfg.connection_timeout = std::chrono::milliseconds(std::min(15000, session_timeout_ms));
    cfg.logger = logger_;
    if (a_.handler_executor != "io") {
      std::lock_guard lk(sessions_mu_);
      const int threads = a_.handler_executor == "thread" ? 1 : 2;
      auto& pool = *pools_.emplace_back(std::make_unique<boost::asio::thread_pool>(threads));
      if (a_.handler_executor == "thread") cfg.executor = pool.get_executor();
      else cfg.executor = boost::asio::make_strand(pool.get_executor());
    }
    if (a_.tls())
      cfg.tls = zkr::TlsConfig{.ca_file = a_.tls_ca, .cert_file = a_.tls_cert, .key_file = a_.tls_key,
                               .key_password = a_.tls_key_password};
    auto c = std::make_unique<zkr::CuratorFramework>(std::move(cfg));
    auto& ref = *c;
    {
      std::lock_guard lk(sessions_mu_);
      sessions_.push_back(std::move(c));
    }
    ref.start();
    if (!ref.block_until_connected(20s)) throw std::runtime_error("could not connect to " + a_.connect);
    sample_threads();
    return ref;
  }

  /// One plain mutex on P for each of `k` new sessions (contended, async).
  std::vector<std::unique_ptr<zkr::InterProcessMutex>> mutexes_on_new_sessions(int k) {
    std::vector<std::unique_ptr<zkr::InterProcessMutex>> locks;
    for (int i = 0; i < k; ++i) locks.push_back(mutex(new_session()));
    return locks;
  }

  Clock::time_point deadline() const { return Clock::now() + std::chrono::seconds(std::max(1, a_.timeout_s - 5)); }

  // ----------------------------------------------------------------------------------------------------------
  // mntr around the measured part

  void mark_start() {
    sample_threads();
    if (!a_.mntr.empty()) mntr_before_ = read_mntr(a_.mntr, mntr_error_);
    cpu0_ = cpu_ns();
    t0_ = now_ns();
  }
  void mark_end(Result& r) {
    auto t1 = now_ns();
    r.cpu_ns = cpu_ns() - cpu0_;
    r.seconds = double(t1 - t0_) / 1e9;
    if (!a_.mntr.empty()) mntr_after_ = read_mntr(a_.mntr, mntr_error_);
    sample_threads();
  }

  /// One counter of the server now (-1 when it cannot be read).
  double mntr_value(const char* key) {
    std::string error;
    auto m = read_mntr(a_.mntr, error);
    if (!m) return -1;
    auto it = m->find(key);
    return it == m->end() ? -1 : it->second;
  }

  Json mntr_delta() const {
    if (!mntr_before_ || !mntr_after_) return JsonObject{{"error", mntr_error_.empty() ? "no mntr sample" : mntr_error_}};
    auto d = [&](const char* k) -> long {
      auto a = mntr_before_->find(k), b = mntr_after_->find(k);
      return a == mntr_before_->end() || b == mntr_after_->end() ? 0 : std::lround(b->second - a->second);
    };
    return JsonObject{{"reads", d("zk_cnt_readlatency")},
                      {"writes", d("zk_cnt_updatelatency")},
                      {"watch_events", d("zk_sum_node_created_watch_count") + d("zk_sum_node_deleted_watch_count") +
                                           d("zk_sum_node_changed_watch_count") +
                                           d("zk_sum_node_children_watch_count")},
                      {"packets_received", d("zk_packets_received")}};
  }

  // ----------------------------------------------------------------------------------------------------------
  // Scenarios

  /// N timed pairs on one lock (uncontended, semaphore-mutex, multilock).
  Result pairs(zkr::InterProcessLock& lock, int n, int warm) {
    for (int i = 0; i < warm; ++i) {
      lock.acquire();
      lock.release();
    }
    std::vector<std::int64_t> lat;
    lat.reserve(std::size_t(n));
    Result r;
    mark_start();
    for (int i = 0; i < n; ++i) {
      auto s = now_ns();
      lock.acquire();
      lock.release();
      lat.push_back(now_ns() - s);
    }
    mark_end(r);
    r.ops = n;
    std::sort(lat.begin(), lat.end());
    r.lat_ns = std::move(lat);
    r.extra.emplace_back("total_ops", n + warm);
    return r;
  }

  Result uncontended() {
    auto& c = new_session();
    auto m = mutex(c);
    Result r = pairs(*m, or_default(a_.ops, 2000), or_default(a_.warmup, 100));
    r.extra.emplace_back("sessions", 1);
    return r;
  }

  Result semaphore_mutex() {
    auto& c = new_session();
    zkr::InterProcessSemaphoreMutex m(c, a_.path);
    Result r = pairs(m, or_default(a_.ops, 1000), or_default(a_.warmup, 100));
    r.extra.emplace_back("sessions", 1);
    return r;
  }

  Result multilock() {
    int k = std::max(1, or_default(a_.clients, 4));
    auto& c = new_session();
    std::vector<std::string> paths;
    for (int i = 0; i < k; ++i) paths.push_back(a_.path + "/" + std::to_string(i));
    zkr::InterProcessMultiLock m(c, paths);
    Result r = pairs(m, or_default(a_.ops, 500), or_default(a_.warmup, 100));
    r.extra.emplace_back("sessions", 1);
    r.extra.emplace_back("locks", k);
    return r;
  }

  Result contended() {
    const int k = std::max(1, or_default(a_.clients, 8));
    const int n = or_default(a_.ops, 2000);
    const int warm = or_default(a_.warmup, 100);
    auto locks = mutexes_on_new_sessions(k);
    std::vector<std::vector<std::int64_t>> lats(static_cast<std::size_t>(k));
    std::atomic<long> warm_left{warm}, left{n};
    Countdown warm_done(k);
    std::mutex go_m;
    std::condition_variable go_cv;
    bool go = false;
    Failure failure;
    std::vector<std::thread> crew;
    for (int i = 0; i < k; ++i) {
      crew.emplace_back([&, i] {
        try {
          auto& m = *locks[std::size_t(i)];
          while (warm_left.fetch_sub(1) > 0) {
            m.acquire();
            m.release();
          }
          warm_done.count_down();
          {
            std::unique_lock lk(go_m);
            go_cv.wait(lk, [&] { return go; });
          }
          auto& lat = lats[std::size_t(i)];
          lat.reserve(std::size_t(n / k + 16));
          while (left.fetch_sub(1) > 0) {
            auto s = now_ns();
            m.acquire();
            lat.push_back(now_ns() - s);
            m.release();
          }
        } catch (const std::exception& e) {
          failure.set(e.what());
          warm_done.count_down();
        }
      });
    }
    auto dl = deadline();
    while (!warm_done.wait_for(100ms)) {
      if (auto f = failure.get()) fatal("worker failed: " + *f);
      if (Clock::now() > dl) fatal("warmup did not finish in time");
    }
    sample_threads();
    Result r;
    mark_start();
    {
      std::lock_guard lk(go_m);
      go = true;
    }
    go_cv.notify_all();
    for (auto& t : crew) t.join();  // the SIGALRM watchdog bounds this
    mark_end(r);
    if (auto f = failure.get()) fatal("worker failed: " + *f);
    r.ops = n;
    r.lat_ns = merge_sorted(lats);
    r.extra.emplace_back("sessions", k);
    r.extra.emplace_back("total_ops", n + warm);
    return r;
  }

  /// K sessions, every one looping async_acquire / async_release on P, the next acquire started from the release's
  /// handler (so on the handler executor), until `n` pairs are done in total. Pair latencies go to `lat` (by
  /// session) when given.
  void async_loops(const std::vector<std::unique_ptr<zkr::InterProcessMutex>>& locks, long n,
                   std::vector<std::vector<std::int64_t>>* lat) {
    std::atomic<long> left{n};
    Countdown done(long(locks.size()));
    Failure failure;
    std::vector<std::function<void()>> step(locks.size());
    for (std::size_t i = 0; i < locks.size(); ++i) {
      step[i] = [&, i] {
        if (left.fetch_sub(1) <= 0) return done.count_down();
        const auto s = now_ns();
        locks[i]->async_acquire([&, i, s](zkr::error_code ec, zkr::Lease lease) {
          if (ec || !lease) {
            failure.set("async_acquire: " + (ec ? ec.message() : std::string("no lease")));
            return done.count_down();
          }
          lease.async_release([&, i, s](zkr::error_code rec) {
            if (rec) {
              failure.set("async_release: " + rec.message());
              return done.count_down();
            }
            if (lat) (*lat)[i].push_back(now_ns() - s);
            step[i]();
          });
        });
      };
    }
    for (auto& f : step) f();
    auto dl = deadline();
    while (!done.wait_for(100ms)) {
      if (auto f = failure.get()) fatal(*f);
      if (Clock::now() > dl) fatal("the async loops did not finish in time");
    }
    if (auto f = failure.get()) fatal(*f);
  }

  Result async_pairs() {
    const int k = std::max(1, or_default(a_.clients, 1));
    const int n = or_default(a_.ops, 2000);
    const int warm = or_default(a_.warmup, 100);
    auto locks = mutexes_on_new_sessions(k);
    async_loops(locks, warm, nullptr);
    std::vector<std::vector<std::int64_t>> lats(static_cast<std::size_t>(k));
    for (auto& l : lats) l.reserve(std::size_t(n / k + 16));
    Result r;
    mark_start();
    async_loops(locks, n, &lats);
    mark_end(r);
    r.ops = n;
    r.lat_ns = merge_sorted(lats);
    r.extra.emplace_back("sessions", k);
    r.extra.emplace_back("total_ops", n + warm);
    return r;
  }

  /// One slow handler (50 ms of sleep) on P/slow's grant, and what it costs a lock on P/other of the same session.
  Result slow_handler() {
    const int n = std::max(1, or_default(a_.ops, 20));
    const int warm = or_default(a_.warmup, 2);
    auto& c = new_session();
    zkr::InterProcessMutex slow(c, a_.path + "/slow"), other(c, a_.path + "/other");
    std::vector<std::int64_t> blocking_lat, async_lat;
    Failure failure;
    auto check = [&](Countdown& d, const char* what) {
      if (!d.wait_for(deadline() - Clock::now())) fatal(std::string(what) + " timed out");
      if (auto f = failure.get()) fatal(*f);
    };
    // Starts P/slow's acquire, whose handler signals `sleeping`, sleeps 50 ms, then releases and signals `done`.
    auto start_slow = [&](Countdown& sleeping, Countdown& done) {
      slow.async_acquire([&](zkr::error_code ec, zkr::Lease lease) {
        if (ec || !lease) failure.set("slow async_acquire: " + (ec ? ec.message() : std::string("no lease")));
        sleeping.count_down();
        std::this_thread::sleep_for(50ms);
        if (!lease) return done.count_down();
        lease.async_release([&](zkr::error_code) { done.count_down(); });
      });
    };
    Result r;
    for (int round = 0; round < warm + n; ++round) {
      if (round == warm) mark_start();
      {  // the blocking API on the other lock
        Countdown sleeping(1), done(1);
        start_slow(sleeping, done);
        check(sleeping, "slow handler");
        const auto s = now_ns();
        other.acquire();
        const auto d = now_ns() - s;
        other.release();
        if (round >= warm) blocking_lat.push_back(d);
        check(done, "slow release");
      }
      {  // the async API on the other lock
        Countdown sleeping(1), done(1), other_done(1);
        start_slow(sleeping, done);
        check(sleeping, "slow handler");
        const auto s = now_ns();
        other.async_acquire([&](zkr::error_code ec, zkr::Lease lease) {
          const auto d = now_ns() - s;
          if (ec || !lease) failure.set("other async_acquire: " + (ec ? ec.message() : std::string("no lease")));
          else if (round >= warm) async_lat.push_back(d);
          if (!lease) return other_done.count_down();
          lease.async_release([&](zkr::error_code) { other_done.count_down(); });
        });
        check(other_done, "other async acquire");
        check(done, "slow release");
      }
    }
    mark_end(r);
    std::sort(blocking_lat.begin(), blocking_lat.end());
    std::sort(async_lat.begin(), async_lat.end());
    r.ops = n;
    r.lat_ns = std::move(blocking_lat);
    r.extra.emplace_back("slow_handler_ms", 50);
    r.extra.emplace_back("async_other_p50_us", percentile_us(async_lat, 0.50));
    r.extra.emplace_back("async_other_p99_us", percentile_us(async_lat, 0.99));
    r.extra.emplace_back("sessions", 1);
    r.extra.emplace_back("total_ops", 4 * (n + warm));
    return r;
  }

  /// Shared by drain and zkr_async10k: W async waiters spread over `waiter_sessions`, queued behind a lock held
  /// through `holder`; measured from the holder's release until every waiter acquired and released once.
  struct DrainOutcome {
    Result r;
    double enqueue_seconds = 0;
    long release_errors = 0;
    long watches_before_release = -1;  // new server-side watches seen before the release (-1: no --mntr)
  };

  DrainOutcome async_drain(zkr::InterProcessMutex& holder, const std::vector<zkr::CuratorFramework*>& waiter_sessions,
                           long w, Clock::duration poll_every) {
    holder.acquire();
    std::vector<std::unique_ptr<zkr::InterProcessMutex>> mutexes;
    for (auto* s : waiter_sessions) mutexes.push_back(mutex(*s));

    std::vector<std::int64_t> acquired_at(std::size_t(w), 0);  // by acquisition order
    std::vector<std::int64_t> seq_by_order(std::size_t(w), -1);
    std::atomic<long> order{0};
    std::atomic<long> release_errors{0};
    Countdown finished(w);
    Failure failure;

    const long watch_base = a_.mntr.empty() ? -1 : long(mntr_value("zk_watch_count"));
    const auto e0 = now_ns();
    for (long i = 0; i < w; ++i) {
      auto& m = *mutexes[std::size_t(i) % mutexes.size()];
      m.async_acquire([&](zkr::error_code ec, zkr::Lease lease) {
        if (ec || !lease) {
          failure.set("async_acquire: " + (ec ? ec.message() : std::string("no lease")));
          finished.count_down();
          return;
        }
        // Exact: we hold the lock, and the next holder can only be granted after our release below.
        long pos = order.fetch_add(1);
        if (pos < w) {
          acquired_at[std::size_t(pos)] = now_ns();
          seq_by_order[std::size_t(pos)] = sequence_of(lease.node_path());
        }
        lease.async_release([&](zkr::error_code rec) {
          if (rec) release_errors.fetch_add(1);
          finished.count_down();
        });
      });
    }

    // Wait until every waiter's node is queued (plus the holder's): the parent's child count (a stat, not a
    // listing, so the probe stays cheap with 10,000 children).
    auto dl = deadline();
    auto& probe = *waiter_sessions.front();
    for (;;) {
      if (auto f = failure.get()) fatal(*f);
      long have = 0;
      zkr::error_code ec;
      if (auto st = probe.exists(a_.path, {}, ec); !ec && st) have = st->num_children;
      if (have >= w + 1) break;
      if (Clock::now() > dl) {
        fatal("only " + std::to_string(have) + " of " + std::to_string(w + 1) + " nodes queued in time");
      }
      sample_threads();
      std::this_thread::sleep_for(poll_every);
    }
    // Every node exists, but the last waiters may still be listing the children and setting their watch. With
    // --mntr, wait until the server holds W more watches than before the enqueue (each waiter watches its
    // predecessor); otherwise give them a moment. (A waiter not yet watching is still correct: it only lists
    // again when its get_data returns; this keeps the measured part to the drain itself.)
    long watches = -1;
    if (watch_base >= 0) {
      const auto settle_dl = std::min(dl, Clock::now() + 60s);
      for (;;) {
        if (auto f = failure.get()) fatal(*f);
        watches = long(mntr_value("zk_watch_count")) - watch_base;
        if (watches >= w || Clock::now() > settle_dl) break;
        sample_threads();
        std::this_thread::sleep_for(poll_every);
      }
    } else {
      std::this_thread::sleep_for(std::min<Clock::duration>(poll_every * 10, 500ms));
    }
    DrainOutcome out;
    out.enqueue_seconds = double(now_ns() - e0) / 1e9;
    out.watches_before_release = watches;

    Result& r = out.r;
    mark_start();
    const auto t0 = t0_;
    holder.release();
    while (!finished.wait_for(10ms)) {
      sample_threads();
      if (Clock::now() > dl) fatal(std::to_string(finished.left()) + " waiters left at the deadline");
    }
    mark_end(r);
    if (auto f = failure.get()) fatal(*f);

    std::vector<std::int64_t> gaps;
    gaps.reserve(std::size_t(w));
    bool fifo = order.load() == w;
    for (long i = 0; i < w && i < order.load(); ++i) {
      gaps.push_back(acquired_at[std::size_t(i)] - (i == 0 ? t0 : acquired_at[std::size_t(i) - 1]));
      if (i > 0 && seq_by_order[std::size_t(i)] <= seq_by_order[std::size_t(i) - 1]) fifo = false;
    }
    std::sort(gaps.begin(), gaps.end());
    r.ops = w;
    r.lat_ns = std::move(gaps);
    r.fifo_ok = fifo;
    out.release_errors = release_errors.load();
    return out;
  }

  Result drain() {
    const long w = std::max(1, or_default(a_.waiters, 200));
    const int k = int(std::max<long>(1, std::min<long>(w, or_default(a_.clients, 8))));
    auto& holder_session = new_session();
    std::vector<zkr::CuratorFramework*> cs;
    for (int i = 0; i < k; ++i) cs.push_back(&new_session());
    auto holder = mutex(holder_session);
    auto d = async_drain(*holder, cs, w, 5ms);
    d.r.extra.emplace_back("sessions", k + 1);
    d.r.extra.emplace_back("waiters", w);
    d.r.extra.emplace_back("total_ops", w + 1);
    d.r.extra.emplace_back("enqueue_seconds", d.enqueue_seconds);
    d.r.extra.emplace_back("release_errors", d.release_errors);
    d.r.extra.emplace_back("watches_before_release", d.watches_before_release);
    return std::move(d.r);
  }

  Result async10k() {
    const long n = std::max(1, or_default(a_.ops, 10000));
    const int k = std::clamp(or_default(a_.clients, 4), 4, 8);
    std::vector<zkr::CuratorFramework*> cs;
    for (int i = 0; i < k; ++i) cs.push_back(&new_session());
    // The holder shares the first session: no extra I/O thread.
    auto holder = mutex(*cs.front());
    auto d = async_drain(*holder, cs, n, 20ms);
    Result r = std::move(d.r);
    r.extra.emplace_back("sessions", k);
    r.extra.emplace_back("waiters", n);
    r.extra.emplace_back("total_ops", n + 1);
    r.extra.emplace_back("enqueue_seconds", d.enqueue_seconds);
    r.extra.emplace_back("enqueue_per_sec", d.enqueue_seconds > 0 ? Json(double(n) / d.enqueue_seconds) : Json());
    r.extra.emplace_back("drain_per_sec", r.seconds > 0 ? Json(double(n) / r.seconds) : Json());
    r.extra.emplace_back("release_errors", d.release_errors);
    r.extra.emplace_back("watches_before_release", d.watches_before_release);
    return r;
  }

  /// The leader process of `failover` (scenario failover-leader): leads on --path, prints "LEADING <node>";
  /// on the input line "close" closes its participant and prints "CLOSING <steady ns just before close()>";
  /// exits on "exit" or at the end of its input (its session closed then, not before: no closeSession in the
  /// parent's measured window).
  int failover_leader() {
    auto& c = new_session();
    std::unique_ptr<zkr::LeaderLatch> latch;
    std::unique_ptr<zkr::LeaderSelector> selector;
    std::string node;
    if (a_.recipe == "latch") {
      latch = std::make_unique<zkr::LeaderLatch>(c, a_.path, "leader");
      latch->start();
      if (!latch->await(30s)) fatal("no leadership within 30 s");
      node = latch->our_path();
    } else {
      auto listener = std::make_shared<HoldingListener>();
      selector = std::make_unique<zkr::LeaderSelector>(c, a_.path, listener);
      selector->set_id("leader");
      selector->start();
      if (!listener->started->wait_for(30s)) fatal("no leadership within 30 s");
      node = listener->node();
    }
    std::cout << "LEADING " << node << std::endl;
    std::string line;
    while (std::getline(std::cin, line) && line != "exit") {
      if (line != "close") continue;
      const auto t = now_ns();
      if (latch)
        latch->close();
      else
        selector->close();
      std::cout << "CLOSING " << t << std::endl;
    }
    selector.reset();
    latch.reset();
    close_sessions();
    return 0;
  }

  /// The server's tickTime (run_bench.py's zoo.cfg), over which failover spreads its kills.
  static constexpr int expiry_tick_ms = 2000;

  Result failover() {
    static const char* const counters[] = {"zk_cnt_readlatency",
                                           "zk_cnt_updatelatency",
                                           "zk_sum_node_created_watch_count",
                                           "zk_sum_node_deleted_watch_count",
                                           "zk_sum_node_changed_watch_count",
                                           "zk_sum_node_children_watch_count",
                                           "zk_packets_received"};
    const int n = std::max(1, or_default(a_.ops, 10));
    const bool kill = a_.mode == "kill";
    const auto lead_within = std::chrono::milliseconds(a_.session_timeout_ms) * 3 + 30s;
    // --session-timeout-ms is the leader's. Ours are long: the server counts pings as reads, and a short
    // timeout would have our two sessions ping during the window of a kill (a third of the timeout idle).
    auto& observer = new_session(30000);  // the node-deleted notice
    auto& follower = new_session(30000);
    const std::string self = self_executable();
    std::map<std::string, double> sums;
    for (const char* k : counters) sums[k] = 0;
    std::vector<std::int64_t> lat;
    JsonArray failover_ms, notice_ms, end_to_notice_ms;
    auto ms = [](std::int64_t ns) { return Json(std::round(double(ns) / 1e3) / 1e3); };
    Result r;
    for (int i = 0; i < n; ++i) {
      // A kill's failover waits for the server's expiry, which comes in buckets of its tick (2 s in
      // run_bench.py) counted from the dead session's last packet. Started right after the last failover's
      // expiry, every leader would send its packets at one phase of the tick and the figures would carry that
      // phase: start the leaders spread evenly over a tick instead.
      if (kill)
        std::this_thread::sleep_for(std::chrono::milliseconds((2 * i + 1) * expiry_tick_ms / (2 * n)));
      const std::string path = a_.path + "/" + std::to_string(i);
      std::vector<std::string> leader_argv{self, "--connect", a_.connect, "--scenario", "failover-leader",
                                           "--path", path, "--recipe", a_.recipe, "--session-timeout-ms",
                                           std::to_string(a_.session_timeout_ms), "--timeout-s",
                                           std::to_string(a_.timeout_s)};
      for (auto& v : a_.tls_argv()) leader_argv.push_back(std::move(v));
      LeaderProcess leader(leader_argv);
      const std::string leading = leader.read_line(Clock::now() + 60s);
      if (leading.rfind("LEADING /", 0) != 0)
        fatal("leader process: expected LEADING, got '" + leading + "'");
      const std::string node = leading.substr(8);
      auto deleted = std::make_shared<Stamp>();
      if (!observer.exists(node, [deleted](const zkr::WatchedEvent& e) {
            if (e.type == zkr::EventType::node_deleted) deleted->set();
          })) {
        fatal("the leader's node " + node + " is gone before the failover");
      }
      const double watches0 = a_.mntr.empty() ? -1 : mntr_value("zk_watch_count");

      std::unique_ptr<zkr::LeaderLatch> latch;
      std::unique_ptr<zkr::LeaderSelector> selector;
      std::shared_ptr<Stamp> leads;
      if (a_.recipe == "latch") {
        leads = std::make_shared<Stamp>();
        latch = std::make_unique<zkr::LeaderLatch>(follower, path, "follower");
        latch->add_listener({.is_leader = [leads] { leads->set(); }, .not_leader = {}});
        latch->start();
      } else {
        auto listener = std::make_shared<HoldingListener>();
        leads = listener->started;
        selector = std::make_unique<zkr::LeaderSelector>(follower, path, listener);
        selector->set_id("follower");
        selector->start();
      }
      // Queued: the server holds one more watch (ours, on the leader's node). Without --mntr, a moment.
      if (watches0 >= 0) {
        const auto dl = Clock::now() + 10s;
        while (mntr_value("zk_watch_count") < watches0 + 1 && Clock::now() < dl)
          std::this_thread::sleep_for(5ms);
      } else {
        std::this_thread::sleep_for(500ms);
      }

      std::optional<std::map<std::string, double>> before, after;
      if (!a_.mntr.empty()) before = read_mntr(a_.mntr, mntr_error_);
      const auto cpu0 = cpu_ns();
      std::int64_t end = 0;
      if (kill) {
        end = now_ns();
        leader.kill();
      } else {
        leader.send("close");
        const std::string closing = leader.read_line(Clock::now() + lead_within);
        if (closing.rfind("CLOSING ", 0) != 0)
          fatal("leader process: expected CLOSING, got '" + closing + "'");
        end = std::strtoll(closing.c_str() + 8, nullptr, 10);
      }
      const auto led = leads->wait_for(lead_within);
      if (!led) fatal("failover " + std::to_string(i) + ": the follower did not lead in time");
      if (!a_.mntr.empty()) after = read_mntr(a_.mntr, mntr_error_);
      r.cpu_ns += cpu_ns() - cpu0;
      if (before && after) {
        for (const char* k : counters) sums[k] += (*after)[k] - (*before)[k];
        sums["zk_sum_node_deleted_watch_count"] -= 1;  // the observer's own watch
      } else {
        mntr_error_ = mntr_error_.empty() ? "no mntr sample" : mntr_error_;
      }
      const auto noticed = deleted->wait_for(5s);
      lat.push_back(*led - end);
      r.seconds += double(*led - end) / 1e9;
      failover_ms.push_back(ms(*led - end));
      notice_ms.push_back(noticed ? ms(*led - *noticed) : Json());
      end_to_notice_ms.push_back(noticed ? ms(*noticed - end) : Json());

      if (!kill) {
        leader.send("exit");
        leader.wait_exit(20s);
      }
      if (latch)
        latch->close();
      else
        selector->close();
    }
    if (mntr_error_.empty() && !a_.mntr.empty()) {
      mntr_before_.emplace();
      for (const char* k : counters) (*mntr_before_)[k] = 0;
      mntr_after_ = sums;
    }
    std::sort(lat.begin(), lat.end());
    r.ops = n;
    r.lat_ns = std::move(lat);
    r.extra.emplace_back("sessions", 2);
    r.extra.emplace_back("recipe", a_.recipe);
    r.extra.emplace_back("mode", a_.mode);
    r.extra.emplace_back("session_timeout_ms", a_.session_timeout_ms);
    r.extra.emplace_back("failover_ms", std::move(failover_ms));
    r.extra.emplace_back("notice_ms", std::move(notice_ms));
    r.extra.emplace_back("end_to_notice_ms", std::move(end_to_notice_ms));
    return r;
  }

  Result rwlock() {
    constexpr int readers = 4;
    const long duration_ms = or_default(a_.ops, 5000);
    const long warm_ms = or_default(a_.warmup, 500);
    std::vector<std::unique_ptr<zkr::InterProcessReadWriteLock>> rws;
    std::vector<zkr::InterProcessMutex*> locks;
    for (int i = 0; i < readers + 1; ++i) {
      rws.push_back(std::make_unique<zkr::InterProcessReadWriteLock>(new_session(), a_.path));
      if (i < readers) locks.push_back(&rws.back()->read_lock());
      else locks.push_back(&rws.back()->write_lock());
    }
    std::atomic<bool> measuring{false}, stop{false};
    std::vector<std::vector<std::int64_t>> lats(readers + 1);
    std::vector<long> warm_ops(readers + 1, 0), timeouts(readers + 1, 0);
    Failure failure;
    std::vector<std::thread> crew;
    for (int i = 0; i < readers + 1; ++i) {
      crew.emplace_back([&, i] {
        try {
          auto& m = *locks[std::size_t(i)];
          auto& lat = lats[std::size_t(i)];
          while (!stop.load()) {
            bool counted = measuring.load();
            auto s = now_ns();
            if (!m.acquire(10s)) {
              ++timeouts[std::size_t(i)];
              continue;
            }
            m.release();
            auto d = now_ns() - s;
            if (counted && !stop.load()) lat.push_back(d);
            else ++warm_ops[std::size_t(i)];
          }
        } catch (const std::exception& e) {
          failure.set(e.what());
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(warm_ms));
    if (auto f = failure.get()) fatal("worker failed: " + *f);
    Result r;
    mark_start();
    measuring = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(duration_ms));
    stop = true;
    mark_end(r);
    for (auto& t : crew) t.join();
    if (auto f = failure.get()) fatal("worker failed: " + *f);

    std::vector<std::vector<std::int64_t>> read_parts(lats.begin(), lats.begin() + readers);
    auto read_lat = merge_sorted(read_parts);
    auto write_lat = merge_sorted({lats[readers]});
    auto all = merge_sorted(lats);
    long warm_total = 0, timeout_total = 0;
    for (int i = 0; i < readers + 1; ++i) warm_total += warm_ops[std::size_t(i)], timeout_total += timeouts[std::size_t(i)];
    r.ops = long(all.size());
    r.lat_ns = std::move(all);
    r.extra.emplace_back("sessions", readers + 1);
    r.extra.emplace_back("readers", readers);
    r.extra.emplace_back("writers", 1);
    r.extra.emplace_back("duration_ms", duration_ms);
    r.extra.emplace_back("reads", long(read_lat.size()));
    r.extra.emplace_back("writes", long(write_lat.size()));
    r.extra.emplace_back("reads_per_sec", double(read_lat.size()) / r.seconds);
    r.extra.emplace_back("writes_per_sec", double(write_lat.size()) / r.seconds);
    r.extra.emplace_back("read_p50_us", percentile_us(read_lat, 0.50));
    r.extra.emplace_back("read_p99_us", percentile_us(read_lat, 0.99));
    r.extra.emplace_back("write_p50_us", percentile_us(write_lat, 0.50));
    r.extra.emplace_back("write_p99_us", percentile_us(write_lat, 0.99));
    r.extra.emplace_back("timeouts", timeout_total);
    r.extra.emplace_back("total_ops", r.ops + warm_total);
    return r;
  }

  Args a_;
  std::shared_ptr<spdlog::logger> logger_;
  std::mutex sessions_mu_;
  std::vector<std::unique_ptr<boost::asio::thread_pool>> pools_;  // --handler-executor; outlive the sessions
  std::vector<std::unique_ptr<zkr::CuratorFramework>> sessions_;
  std::optional<std::map<std::string, double>> mntr_before_, mntr_after_;
  std::string mntr_error_;
  std::int64_t cpu0_ = 0, t0_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Args args = parse(argc, argv);
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGALRM, on_alarm);
  ::alarm(unsigned(std::max(1, args.timeout_s)));
  sample_threads();
  const std::string scenario = args.scenario;
  try {
    Bench b(std::move(args));
    return b.run();
  } catch (const std::exception& e) {
    std::cerr << "zkr_bench: " << scenario << " failed: " << e.what() << std::endl;
    return 1;
  }
}
