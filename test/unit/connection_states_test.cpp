// Unit tests of the connection states on their own (framework/src/connection_states.hpp), no session and no
// server: the test hands the part the session's events one by one on an I/O thread of its own, as the client
// does, and reads what its listeners and waits see. (framework_state_test.cpp checks the same states through
// the whole client over a fake session.)

#include "connection_states.hpp"

#include <spdlog/sinks/null_sink.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/thread_pool.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>
#include <zkr/test/eventually.hpp>

#include "run_on_io.hpp"

namespace {

using namespace std::chrono_literals;
using zkr::ConnectionState;
using zkr::detail::ConnectionStates;
using zkr::detail::Lifecycle;
using zkr::test::eventually;
using States = std::vector<ConnectionState>;
using Clock = std::chrono::steady_clock;

constexpr auto connected = ConnectionState::connected;
constexpr auto suspended = ConnectionState::suspended;
constexpr auto reconnected = ConnectionState::reconnected;
constexpr auto lost = ConnectionState::lost;
constexpr auto read_only = ConnectionState::read_only;

/// The connection states on an I/O thread of their own, with one listener of each kind recording what they
/// hear. A SUSPENDED that lasts its share of the session timeout is answered as the client does: LOST.
/// The users' listeners run on `listeners` (the bench's I/O thread when not given).
struct Bench {
  explicit Bench(std::chrono::milliseconds session_timeout = 10s, int expiration_percent = 100,
                 std::optional<boost::asio::any_io_executor> listeners = std::nullopt)
      : states({ioc, listeners ? *listeners : ioc.get_executor(), life, log, expiration_percent},
               session_timeout, [this] {
                 ++timeouts;
                 states.on_lost();
               }) {
    REQUIRE(life.start());
    on_io([&] {
      states.add_listener([this](ConnectionState s) {
        heard.push_back(s);
        heard_on.push_back(std::this_thread::get_id());
      });
    });
    states.add_public_listener([this](ConnectionState s) {
      std::lock_guard lk(mu);
      published.push_back(s);
    });
  }
  ~Bench() {
    work.reset();
    ioc.stop();
    io.join();
  }
  /// Runs `f` on the I/O thread and returns once it has run.
  template <class F>
  void on_io(F&& f) {
    zkr::test::run_on_io(ioc, std::forward<F>(f));
  }
  /// What the client's listener heard (read on the I/O thread).
  States internal() {
    States s;
    on_io([&] { s = heard; });
    return s;
  }
  /// The threads the client's listener was called on.
  std::vector<std::thread::id> internal_threads() {
    std::vector<std::thread::id> t;
    on_io([&] { t = heard_on; });
    return t;
  }
  /// Whether the users' listener heard exactly `want` (it runs posted, on the listener strand).
  bool published_eventually(const States& want) {
    return eventually([&] {
      std::lock_guard lk(mu);
      return published == want;
    });
  }
  /// Starts a "when connected" wait of `timeout`, whose outcome lands in `outcomes`; returns its id.
  std::uint64_t wait(std::chrono::milliseconds timeout) {
    std::uint64_t id = 0;
    on_io([&] {
      id = states.when_connected(timeout, [this](bool ok) {
        std::lock_guard lk(mu);
        outcomes.push_back(ok);
      });
    });
    return id;
  }
  std::vector<bool> outcomes_now() {
    std::lock_guard lk(mu);
    return outcomes;
  }

  boost::asio::io_context ioc{1};
  Lifecycle life;
  std::shared_ptr<spdlog::logger> log =
      std::make_shared<spdlog::logger>("states", std::make_shared<spdlog::sinks::null_sink_mt>());
  States heard;                           // I/O thread
  std::vector<std::thread::id> heard_on;  // I/O thread
  int timeouts = 0;                       // I/O thread
  std::mutex mu;                          // the rest
  States published;
  std::vector<bool> outcomes;
  ConnectionStates states;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{ioc.get_executor()};
  std::thread io{[this] { ioc.run(); }};
};

}  // namespace

TEST_CASE("connection states: CONNECTED, SUSPENDED, RECONNECTED, LOST from the session's events",
          "[framework][parts]") {
  Bench b;
  CHECK_FALSE(b.states.connected());
  CHECK(b.states.session_timeout() == 10s);  // the one asked for, until a session negotiates one
  b.on_io([&] { b.states.on_connected(0x11, 4000, false); });
  CHECK(b.states.connected());
  CHECK(b.states.session_id() == 0x11);
  CHECK(b.states.session_timeout() == 4s);
  b.on_io([&] {
    b.states.on_connecting();
    b.states.on_connecting();  // still connecting: one SUSPENDED
  });
  CHECK_FALSE(b.states.connected());
  CHECK(b.states.session_id() == 0x11);  // the session may still be alive
  b.on_io([&] { b.states.on_connected(0x11, 4000, false); });
  b.on_io([&] {
    b.states.on_lost();
    b.states.on_connecting();  // the fresh session connecting: no SUSPENDED after LOST
  });
  CHECK(b.states.session_id() == 0);
  b.on_io([&] { b.states.on_connected(0x22, 4000, false); });
  CHECK(b.states.session_id() == 0x22);
  const States want{connected, suspended, reconnected, lost, reconnected};
  CHECK(b.internal() == want);
  CHECK(b.published_eventually(want));
  int timeouts = -1;
  b.on_io([&] { timeouts = b.timeouts; });
  CHECK(timeouts == 0);
}

TEST_CASE("connection states: a read-only connection counts, and the first read-write one is CONNECTED",
          "[framework][parts]") {
  Bench b;
  b.on_io([&] { b.states.on_connecting(); });  // never connected: nothing to suspend
  b.on_io([&] { b.states.on_connected(0x11, 4000, true); });
  CHECK(b.states.connected());
  b.on_io([&] { b.states.on_connecting(); });
  b.on_io([&] { b.states.on_connected(0x11, 4000, false); });
  b.on_io([&] { b.states.on_connecting(); });
  b.on_io([&] { b.states.on_connected(0x11, 4000, false); });  // read-write again: RECONNECTED
  b.on_io([&] { b.states.on_connected(0x11, 4000, true); });   // read-only again, with no disconnect between
  const States want{read_only, suspended, connected, suspended, reconnected, read_only};
  CHECK(b.internal() == want);
  CHECK(b.published_eventually(want));
}

TEST_CASE("connection states: a SUSPENDED that lasts its share of the session timeout is LOST",
          "[framework][parts]") {
  Bench b(10s, 50);  // 50 % of the negotiated 400 ms: LOST 200 ms after SUSPENDED
  b.on_io([&] { b.states.on_connected(0x11, 400, false); });
  const auto since = Clock::now();
  b.on_io([&] { b.states.on_connecting(); });
  REQUIRE(b.published_eventually({connected, suspended, lost}));
  CHECK(Clock::now() - since >= 200ms);  // a timer never fires early
  int timeouts = 0;
  b.on_io([&] { timeouts = b.timeouts; });
  CHECK(timeouts == 1);
  CHECK(b.states.session_id() == 0);
}

TEST_CASE("connection states: a reconnect or a close stops the SUSPENDED timer", "[framework][parts]") {
  Bench b(10s, 100);
  const bool close = GENERATE(false, true);
  b.on_io([&] { b.states.on_connected(0x11, 100, false); });
  b.on_io([&] {  // one handler: the timer cannot fire in between
    b.states.on_connecting();
    if (close) {
      (void)b.life.close();
      b.states.closed();
    } else {
      b.states.on_connected(0x11, 100, false);
    }
  });
  std::this_thread::sleep_for(300ms);  // three times the timer's
  int timeouts = -1;
  b.on_io([&] { timeouts = b.timeouts; });
  CHECK(timeouts == 0);
  CHECK(b.internal() == (close ? States{connected, suspended} : States{connected, suspended, reconnected}));
}

TEST_CASE("connection states: the waits for the connection end with it, with their timeout or when cancelled",
          "[framework][parts]") {
  Bench b;
  const auto early = b.wait(60s);
  const auto late = b.wait(60s);
  CHECK(early != 0);
  CHECK(late != early);
  b.on_io([&] { b.states.cancel_wait(late); });  // its continuation runs at once
  CHECK(b.outcomes_now() == std::vector<bool>{false});
  const auto since = Clock::now();
  (void)b.wait(50ms);
  REQUIRE(eventually([&] { return b.outcomes_now().size() == 2; }));
  CHECK(Clock::now() - since >= 50ms);
  b.on_io([&] { b.states.on_connected(0x11, 4000, false); });
  REQUIRE(eventually([&] { return b.outcomes_now().size() == 3; }));
  CHECK(b.outcomes_now() == std::vector<bool>{false, false, true});
  CHECK(b.wait(60s) == 0);  // connected already: posted at once
  REQUIRE(eventually([&] { return b.outcomes_now().size() == 4; }));
  CHECK(b.outcomes_now().back());
  b.on_io([&] { b.states.cancel_wait(early); });  // over already: nothing
  CHECK(b.outcomes_now().size() == 4);
}

TEST_CASE("connection states: a give-up ends every wait and reports LOST after an earlier state",
          "[framework][parts]") {
  Bench b;
  b.on_io([&] { b.states.on_connected(0x11, 4000, false); });
  b.on_io([&] { b.states.on_connecting(); });
  (void)b.wait(60s);
  auto blocked = std::async(std::launch::async, [&] { return b.states.wait_connected(60s); });
  bool gave_up = false;
  b.on_io([&] {
    gave_up = b.states.give_up(b.life, zkr::zk_errc::auth_failed);
    b.states.fail_waits();
    b.states.lost_after_earlier();
  });
  REQUIRE(gave_up);
  CHECK(b.life.reason() == zkr::zk_errc::auth_failed);
  REQUIRE(blocked.wait_for(30s) == std::future_status::ready);
  CHECK_FALSE(blocked.get());
  REQUIRE(eventually([&] { return b.outcomes_now().size() == 1; }));  // posted
  CHECK_FALSE(b.outcomes_now().back());
  CHECK(b.wait(60s) == 0);  // the client ended: refused at once
  REQUIRE(eventually([&] { return b.outcomes_now().size() == 2; }));
  CHECK_FALSE(b.outcomes_now().back());
  b.on_io([&] { gave_up = b.states.give_up(b.life, zkr::zk_errc::auth_failed); });
  CHECK_FALSE(gave_up);  // once
  CHECK(b.published_eventually({connected, suspended, lost}));
  CHECK_FALSE(b.states.connected());
  CHECK(b.states.session_id() == 0);
}

TEST_CASE("connection states: the blocking wait ends on the connection or with its timeout",
          "[framework][parts]") {
  Bench b;
  CHECK_FALSE(b.states.wait_connected(50ms));
  auto blocked = std::async(std::launch::async, [&] { return b.states.wait_connected(60s); });
  b.on_io([&] { b.states.on_connected(0x11, 4000, false); });
  REQUIRE(blocked.wait_for(30s) == std::future_status::ready);
  CHECK(blocked.get());
  CHECK(b.states.wait_connected(0ms));
}

TEST_CASE("connection states: a listener may remove itself or another while it is called",
          "[framework][parts]") {
  int once = 0;
  int removed = 0;
  std::uint64_t self = 0;
  std::uint64_t other = 0;
  Bench b;
  b.on_io([&] {
    self = b.states.add_listener([&](ConnectionState) {
      ++once;
      b.states.remove_listener(self);
      b.states.remove_listener(other);  // not called yet in this round: not called at all
    });
    other = b.states.add_listener([&](ConnectionState) { ++removed; });
  });
  b.on_io([&] { b.states.on_connected(0x11, 4000, false); });
  b.on_io([&] { b.states.on_connecting(); });
  int calls = -1;
  int other_calls = -1;
  b.on_io([&] {
    calls = once;
    other_calls = removed;
  });
  CHECK(calls == 1);
  CHECK(other_calls == 0);
  CHECK(b.internal() == States{connected, suspended});  // the first listener heard both
}

TEST_CASE("connection states: a users' listener that throws is logged, the others still hear the state",
          "[framework][parts]") {
  States after;  // before the bench: its listener may run until the bench is gone
  std::mutex mu;
  Bench b;
  const auto thrower =
      b.states.add_public_listener([](ConnectionState) { throw std::runtime_error("listener failed"); });
  b.states.add_public_listener([&](ConnectionState s) {
    std::lock_guard lk(mu);
    after.push_back(s);
  });
  b.on_io([&] { b.states.on_connected(0x11, 4000, false); });
  CHECK(eventually([&] {
    std::lock_guard lk(mu);
    return after == States{connected};
  }));
  b.states.remove_public_listener(thrower);
  CHECK(b.published_eventually({connected}));
}

TEST_CASE(
    "connection states: the client's listeners are called at once on the I/O thread, the users' in order "
    "on their executor",
    "[framework][parts]") {
  boost::asio::thread_pool users(2);  // two threads: only the strand keeps the users' listeners in order
  std::mutex mu;
  std::vector<std::thread::id> users_on;
  {
    Bench b(10s, 100, users.get_executor());
    b.states.add_public_listener([&](ConnectionState) {
      std::lock_guard lk(mu);
      users_on.push_back(std::this_thread::get_id());
    });
    States right_after;  // what the client's listener had heard when each event's handler returned
    for (int step = 0; step < 5; ++step) {
      b.on_io([&] {
        switch (step) {
          case 0:
            b.states.on_connected(0x11, 4000, false);
            break;
          case 1:
            b.states.on_connecting();
            break;
          case 2:
            b.states.on_connected(0x11, 4000, false);
            break;
          case 3:
            b.states.on_lost();
            break;
          default:
            b.states.on_connected(0x22, 4000, false);
            break;
        }
        right_after.push_back(b.heard.back());
      });
    }
    const States want{connected, suspended, reconnected, lost, reconnected};
    CHECK(right_after == want);
    CHECK(b.internal() == want);
    for (auto id : b.internal_threads()) CHECK(id == b.io.get_id());
    REQUIRE(b.published_eventually(want));
    REQUIRE(eventually([&] {
      std::lock_guard lk(mu);
      return users_on.size() == want.size();
    }));
    std::lock_guard lk(mu);
    for (auto id : users_on) {
      CHECK(id != b.io.get_id());
      CHECK(id != std::this_thread::get_id());
    }
  }
  users.join();
}

TEST_CASE("connection states: a give-up before any state, or right after LOST, reports no LOST",
          "[framework][parts]") {
  Bench b;
  const bool after_lost = GENERATE(false, true);
  if (after_lost) {
    b.on_io([&] { b.states.on_connected(0x11, 4000, false); });
    b.on_io([&] { b.states.on_lost(); });
  }
  bool gave_up = false;
  b.on_io([&] {
    gave_up = b.states.give_up(b.life, zkr::zk_errc::auth_failed);
    b.states.fail_waits();
    b.states.lost_after_earlier();
  });
  CHECK(gave_up);
  CHECK(b.life.given_up());
  CHECK(b.internal() == (after_lost ? States{connected, lost} : States{}));
  if (after_lost) CHECK(b.published_eventually({connected, lost}));
}
