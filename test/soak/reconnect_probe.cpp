// zkr_reconnect_probe: how long a client takes to reconnect after its server restarts, under CPU load.
//
//   zkr_reconnect_probe [--restarts N] [--seconds S] [--load K] [--session-timeout MS] [--down MS]
//                       [--max-gap MS] [--kill]
//
// One client on a standalone server (data kept across restarts, so the session survives); K threads spin on
// the CPU. The server is stopped (SIGTERM, or SIGKILL with --kill), left down for a random 0..MS ms, and
// started again, N times or until S seconds have passed, whichever comes first. For each restart the probe
// measures the gap from "the server serves again" (TestingServer::start() returned: it answers `ruok` and
// `srvr`) to the client's CONNECTED / RECONNECTED (0 when the client was back first). A gap over --max-gap
// (default 2000 ms) is printed with the client socket's TCP state (`ss -tanpie`) and the client's last log
// lines, taken while it lasts. Prints the distribution (p50, p90, p99, max) and how many connection attempts
// the client gave up unanswered (ClientConfig::handshake_timeout), and exits non-zero if any gap exceeded
// --max-gap or the session was lost.

#include <spdlog/logger.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
#include <zkr/testing/testing_server.hpp>
#include <zkr/zkrecipes.hpp>

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int restarts = 200;
  int seconds = 600;
  int load = 2;
  int session_timeout_ms = 30000;
  int down_ms = 1000;
  int max_gap_ms = 2000;
  bool kill = false;
};

Options parse(int argc, char** argv) {
  Options o;
  const char* usage =
      "usage: zkr_reconnect_probe [--restarts N] [--seconds S] [--load K] [--session-timeout MS] [--down "
      "MS]\n"
      "                           [--max-gap MS] [--kill]\n";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> int {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "zkr_reconnect_probe: %s needs a value\n%s", a.c_str(), usage);
        std::exit(2);
      }
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 0 || v > 100'000'000) {
        std::fprintf(stderr, "zkr_reconnect_probe: %s takes a non-negative integer\n", a.c_str());
        std::exit(2);
      }
      return static_cast<int>(v);
    };
    if (a == "--restarts")
      o.restarts = next();
    else if (a == "--seconds")
      o.seconds = next();
    else if (a == "--load")
      o.load = next();
    else if (a == "--session-timeout")
      o.session_timeout_ms = next();
    else if (a == "--down")
      o.down_ms = next();
    else if (a == "--max-gap")
      o.max_gap_ms = next();
    else if (a == "--kill")
      o.kill = true;
    else {
      std::fprintf(stderr, "%s", usage);
      std::exit(2);
    }
  }
  return o;
}

// The connection states the client reported, with their times.
class StateLog {
 public:
  void add(zkr::ConnectionState s) {
    {
      const std::lock_guard lock(mu_);
      events_.push_back({s, Clock::now()});
    }
    cv_.notify_all();
  }
  std::size_t size() {
    const std::lock_guard lock(mu_);
    return events_.size();
  }
  // The first CONNECTED / RECONNECTED at index >= from, waiting until `until`; also reports a LOST seen.
  std::optional<Clock::time_point> connected_after(std::size_t from, Clock::time_point until, bool& lost) {
    std::unique_lock lock(mu_);
    for (;;) {
      for (std::size_t i = from; i < events_.size(); ++i) {
        if (events_[i].state == zkr::ConnectionState::lost) lost = true;
        if (events_[i].state == zkr::ConnectionState::connected ||
            events_[i].state == zkr::ConnectionState::reconnected)
          return events_[i].at;
      }
      if (cv_.wait_until(lock, until) == std::cv_status::timeout) return std::nullopt;
    }
  }

 private:
  struct Event {
    zkr::ConnectionState state;
    Clock::time_point at;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Event> events_;
};

// Counts the client's log lines that say it gave a connection attempt up (the handshake bound).
class AbandonCounter : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::atomic<int> count{0};

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (std::string_view(msg.payload.data(), msg.payload.size())
            .find("no answer to the connection handshake") != std::string_view::npos)
      ++count;
  }
  void flush_() override {}
};

std::string run(const std::string& cmd) {
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

long percentile(std::vector<long> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(k, v.size() - 1)];
}

}  // namespace

int main(int argc, char** argv) {
  const auto opt = parse(argc, argv);
  std::printf(
      "zkr_reconnect_probe: up to %d restarts in %d s, %d busy threads, session timeout %d ms, down 0-%d ms,"
      " %s\n",
      opt.restarts, opt.seconds, opt.load, opt.session_timeout_ms, opt.down_ms,
      opt.kill ? "kill -9" : "graceful stop");
  std::fflush(stdout);

  std::atomic<bool> stop_load{false};
  std::vector<std::thread> load;
  for (int i = 0; i < opt.load; ++i)
    load.emplace_back([&] {
      volatile unsigned long x = 0;
      while (!stop_load.load(std::memory_order_relaxed))
        for (int k = 0; k < 100000; ++k) x = x + 1;
    });

  zkr::testing::TestingServer server;
  auto ring = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(60);
  auto abandoned = std::make_shared<AbandonCounter>();
  auto logger = std::make_shared<spdlog::logger>("probe", spdlog::sinks_init_list{ring, abandoned});
  logger->set_level(spdlog::level::info);
  logger->set_pattern("%H:%M:%S.%e %l %v");
  StateLog states;
  zkr::ClientConfig cfg;
  cfg.connect_string = server.connect_string();
  cfg.session_timeout = std::chrono::milliseconds(opt.session_timeout_ms);
  cfg.connection_timeout = 5s;
  cfg.logger = logger;
  zkr::CuratorFramework client(std::move(cfg));
  client.add_connection_state_listener([&](zkr::ConnectionState s) { states.add(s); });
  client.start();
  if (!client.block_until_connected(20s)) {
    std::fprintf(stderr, "zkr_reconnect_probe: the client did not connect\n");
    return 1;
  }

  std::mt19937 rng(12345);
  std::vector<long> gaps;
  int over = 0;
  bool lost = false;
  const auto end = Clock::now() + std::chrono::seconds(opt.seconds);
  const std::string port = std::to_string(server.port());
  for (int r = 0; r < opt.restarts && Clock::now() < end && !lost; ++r) {
    const auto mark = states.size();
    if (opt.kill)
      server.kill();
    else
      server.stop();
    if (opt.down_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(rng() % opt.down_ms));
    server.start();
    const auto serving = Clock::now();
    auto back = states.connected_after(mark, serving + std::chrono::milliseconds(opt.max_gap_ms), lost);
    if (!back) {
      // Stalled: take the evidence while it lasts, then wait for the rest of the session.
      std::printf("restart %d: not reconnected %d ms after the server served again; client sockets:\n%s",
                  r + 1, opt.max_gap_ms, run("ss -tanpie '( dport = :" + port + " )' 2>&1").c_str());
      std::printf("client log (last lines):\n");
      for (const auto& line : ring->last_formatted()) std::printf("  %s", line.c_str());
      std::fflush(stdout);
      back =
          states.connected_after(mark, serving + std::chrono::milliseconds(opt.session_timeout_ms * 2), lost);
    }
    const long gap =
        back ? std::max<long>(0,
                              std::chrono::duration_cast<std::chrono::milliseconds>(*back - serving).count())
             : 2L * opt.session_timeout_ms;
    gaps.push_back(gap);
    if (gap > opt.max_gap_ms) {
      ++over;
      std::printf("restart %d: gap %ld ms%s\n", r + 1, gap, back ? "" : " (never reconnected)");
    }
    if ((r + 1) % 20 == 0) {
      std::printf("  %d restarts, p50 %ld ms, max %ld ms\n", r + 1, percentile(gaps, 0.5),
                  percentile(gaps, 1.0));
      std::fflush(stdout);
    }
  }
  stop_load = true;
  for (auto& t : load) t.join();

  std::printf(
      "zkr_reconnect_probe: %zu restarts; gap server-serving -> client connected: p50 %ld ms, p90 %ld ms, "
      "p99 %ld ms, max %ld ms; %d over %d ms; %d connection attempts given up unanswered%s\n",
      gaps.size(), percentile(gaps, 0.5), percentile(gaps, 0.9), percentile(gaps, 0.99),
      percentile(gaps, 1.0), over, opt.max_gap_ms, abandoned->count.load(), lost ? "; SESSION LOST" : "");
  return over == 0 && !lost && !gaps.empty() ? 0 : 1;
}
