// Unit tests of the client's parts on their own (framework/src): the lifecycle's phases, the background
// deletes' one schedule, and the background deletes over a scripted session (test/unit/fake_session.hpp),
// with the connection and the client's life as the test sets them.

#include <spdlog/sinks/null_sink.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <future>
#include <thread>
#include <zkr/framework/curator_framework.hpp>

#include "background_deletes.hpp"
#include "fake_session.hpp"
#include "lifecycle.hpp"
#include "pauses.hpp"
#include "run_on_io.hpp"
#include "watch_registry.hpp"

namespace {

using namespace std::chrono_literals;
using zkr::zk_errc;
using zkr::detail::BackgroundDeletes;
using zkr::detail::Lifecycle;
namespace zk = zkr::detail::zk;

/// A session's listener that nothing listens with: the parts under test do not hear the session's events.
class NoEvents final : public zkr::detail::SessionEvents {
 public:
  explicit NoEvents(const Lifecycle& life) : life_(life) {}
  void on_session_state(zkr::detail::SessionState) override {}
  void on_watch_event(zkr::detail::WatchId, zkr::EventType, const std::string&) override {}
  void on_auth_failed() override {}
  bool believes_connected() const override { return true; }
  zkr::error_code no_session_ec() const override {
    return life_.closed() ? zkr::error_code(zkr::client_errc::closed)
                          : zkr::error_code(zk_errc::session_expired);
  }

 private:
  const Lifecycle& life_;
};

/// A connection that is up, or never comes (`up` false: every wait ends at once with false).
class Connection final : public zkr::detail::ConnectionWaits {
 public:
  explicit Connection(boost::asio::io_context& ioc) : ioc_(ioc) {}
  bool connected() const noexcept override { return up; }
  std::uint64_t when_connected(std::chrono::milliseconds,
                               zkr::detail::unique_function<void(bool)> k) override {
    boost::asio::post(ioc_, [k = std::move(k), ok = up]() mutable { k(ok); });
    return 0;
  }
  void cancel_wait(std::uint64_t) override {}
  bool up = true;

 private:
  boost::asio::io_context& ioc_;
};

/// The background deletes over a fake session, on an I/O thread of their own.
struct Bench {
  boost::asio::io_context ioc{1};
  zkr::ClientConfig config;
  Lifecycle life;
  NoEvents events{life};
  fake::FakeSession session{ioc, config, events};
  Connection connection{ioc};
  zkr::detail::Pauses pauses{ioc};
  spdlog::logger log{"parts", std::make_shared<spdlog::sinks::null_sink_mt>()};
  BackgroundDeletes deletes{{session, life, connection, pauses, log, 100ms}};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work{ioc.get_executor()};
  std::thread io{[this] { ioc.run(); }};

  Bench() {
    REQUIRE(life.start());
    REQUIRE(session.open());
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
  fake::Call expect(std::string_view kind, const std::string& path) {
    auto c = session.next();
    REQUIRE(c);
    CHECK(c->kind() == kind);
    CHECK(c->path() == path);
    return *c;
  }
};

}  // namespace

TEST_CASE("lifecycle: each transition once, in its order", "[framework][parts]") {
  Lifecycle life;
  CHECK(life.gate() == zkr::client_errc::not_started);
  CHECK_FALSE(life.is_open());
  CHECK_FALSE(life.give_up(zk_errc::auth_failed));  // not started: nothing to give up
  REQUIRE(life.start());
  CHECK_FALSE(life.start());
  CHECK(life.is_open());
  CHECK_FALSE(life.gate());
  REQUIRE(life.give_up(zk_errc::auth_failed));
  CHECK_FALSE(life.give_up(zkr::client_errc::tls_handshake_failed));
  CHECK(life.given_up());
  CHECK(life.is_open());  // a given-up client still answers, with the reason
  CHECK(life.ended());
  CHECK(life.reason() == zk_errc::auth_failed);
  CHECK(life.close() == Lifecycle::Phase::given_up);
  CHECK(life.close() == Lifecycle::Phase::closed);  // only the first close finishes the client
  CHECK(life.gate() == zkr::client_errc::closed);
  CHECK_FALSE(life.start());
}

TEST_CASE("lifecycle: a close before the start leaves nothing to finish, and the start fails",
          "[framework][parts]") {
  Lifecycle life;
  REQUIRE(life.close_if_idle());
  CHECK(life.closed());
  CHECK_FALSE(life.start());
  Lifecycle started;
  REQUIRE(started.start());
  CHECK_FALSE(started.close_if_idle());
  started.start_failed();
  CHECK(started.phase() == Lifecycle::Phase::idle);
}

TEST_CASE("background deletes: one schedule, 50 ms doubling to 1 s", "[framework][parts]") {
  using std::chrono::milliseconds;
  CHECK(BackgroundDeletes::pause(0) == milliseconds(50));
  CHECK(BackgroundDeletes::pause(1) == milliseconds(100));
  CHECK(BackgroundDeletes::pause(4) == milliseconds(800));
  CHECK(BackgroundDeletes::pause(5) == milliseconds(1000));
  CHECK(BackgroundDeletes::pause(40) == milliseconds(1000));
  CHECK(BackgroundDeletes::pause(-1) == milliseconds(50));
}

TEST_CASE("background deletes: a delete is tried again until the server answers, counted meanwhile",
          "[framework][parts]") {
  Bench b;
  b.on_io([&] { b.deletes.remove("/a"); });
  CHECK(b.deletes.pending() == 1);
  REQUIRE(b.session.reply(b.expect("delete", "/a"), zk_errc::connection_loss));
  REQUIRE(b.session.reply(b.expect("delete", "/a"), zk_errc::closing));  // a session replaced under it
  const auto last = GENERATE(zk_errc::ok, zk_errc::no_node, zk_errc::not_empty);  // not_empty: for good
  REQUIRE(b.session.reply(b.expect("delete", "/a"), last));
  CHECK(b.deletes.wait_idle(std::chrono::steady_clock::now() + 5s));
  CHECK(b.session.sent() == 3);
}

TEST_CASE("background deletes: the end of the client ends them, and a new one is not started",
          "[framework][parts]") {
  Bench b;
  b.connection.up = GENERATE(true, false);  // false: waiting for a connection that does not come
  b.on_io([&] { b.deletes.remove("/a"); });
  if (b.connection.up) REQUIRE(b.session.reply(b.expect("delete", "/a"), zk_errc::connection_loss));
  b.on_io([&] {
    (void)b.life.close();  // as the client's close does: its pauses end, its session with it
    b.pauses.wake_all();
    b.session.close();
  });
  CHECK(b.deletes.wait_idle(std::chrono::steady_clock::now() + 5s));
  b.on_io([&] { b.deletes.remove("/b"); });
  CHECK(b.deletes.pending() == 0);  // not started: nothing keeps a closing client waiting for it
}

TEST_CASE("background deletes: a sweep lists the parent again after a loss and deletes each match",
          "[framework][parts]") {
  Bench b;
  b.on_io([&] { b.deletes.sweep("/p", "_c_id-"); });
  REQUIRE(b.session.reply(b.expect("get_children", "/p"), zk_errc::connection_loss));
  REQUIRE(b.session.reply(b.expect("get_children", "/p"),
                          fake::with_children({"_c_id-n1", "other", "_c_id-n2"})));
  auto d1 = b.expect("delete", "/p/_c_id-n1");
  auto d2 = b.expect("delete", "/p/_c_id-n2");
  REQUIRE(b.session.reply(d1, zk_errc::ok));
  REQUIRE(b.session.reply(d2, zk_errc::no_node));
  CHECK(b.deletes.wait_idle(std::chrono::steady_clock::now() + 5s));
}

TEST_CASE("background deletes: a close waiting for them is ended by end_waits", "[framework][parts]") {
  Bench b;
  b.on_io([&] { b.deletes.remove("/a"); });
  (void)b.expect("delete", "/a");  // never answered
  auto waiting = std::async(std::launch::async,
                            [&] { return b.deletes.wait_idle(std::chrono::steady_clock::now() + 60s); });
  b.deletes.end_waits();
  REQUIRE(waiting.wait_for(30s) == std::future_status::ready);
  CHECK_FALSE(waiting.get());  // still pending
}

TEST_CASE("watch registry: a watch stays on the server while another of ours of its kind needs the path",
          "[framework][parts]") {
  using zkr::detail::WatchRegistry;
  namespace zk = zkr::detail::zk;
  WatchRegistry reg;
  int fired = 0;
  auto cb = [&] { return [&](const zkr::WatchedEvent&) { ++fired; }; };
  const auto pre = reg.add(cb(), "/lock/n1", zk::WatchKind::data);  // a pre-watch of n1
  const auto main =
      reg.add(cb(), "/lock/n1", zk::WatchKind::data);  // the wait moved onto n1 (read in flight)
  const auto kids = reg.add(cb(), "/lock", zk::WatchKind::children);
  CHECK(reg.watching("/lock/n1", zk::WatchKind::data));
  CHECK_FALSE(reg.watching("/lock/n1", zk::WatchKind::children));
  REQUIRE(reg.forget(pre));
  CHECK(reg.watching("/lock/n1", zk::WatchKind::data));  // the other still needs the server's watch
  CHECK_FALSE(reg.forget(pre));                          // once only
  reg.fire(main, zkr::EventType::node_deleted, "/p");
  CHECK(fired == 1);
  CHECK_FALSE(reg.watching("/lock/n1", zk::WatchKind::data));
  CHECK(reg.watching("/lock", zk::WatchKind::any));
  reg.forget_path("/lock");
  CHECK_FALSE(reg.watching("/lock", zk::WatchKind::children));
  (void)kids;
  reg.add(cb(), "/a", zk::WatchKind::data);
  CHECK(reg.take_all().size() == 1);
  CHECK_FALSE(reg.watching("/a", zk::WatchKind::any));
}

TEST_CASE("watch registry: a persistent watch fires on every event with the event's path and stays",
          "[framework][parts]") {
  using zkr::detail::WatchRegistry;
  namespace zk = zkr::detail::zk;
  WatchRegistry reg;
  std::vector<zkr::WatchedEvent> seen;
  const auto tree = reg.add([&](const zkr::WatchedEvent& e) { seen.push_back(e); }, "/tree",
                            zk::WatchKind::persistent_recursive);
  reg.fire(tree, zkr::EventType::node_created, "/tree/a/b");
  reg.fire(tree, zkr::EventType::node_data_changed, "/tree");
  REQUIRE(seen.size() == 2);
  CHECK(seen[0].path == "/tree/a/b");
  CHECK(seen[1].type == zkr::EventType::node_data_changed);
  // A 3.8 server keeps a persistent watch in its data and child tables and removes it only by `any`: no
  // removal of another kind of ours on that path may reach it while the persistent watch stays.
  CHECK(reg.watching("/tree", zk::WatchKind::data));
  CHECK(reg.watching("/tree", zk::WatchKind::children));
  const auto one_shot = reg.add([](const zkr::WatchedEvent&) {}, "/tree", zk::WatchKind::data);
  REQUIRE(reg.forget(one_shot));
  CHECK(reg.watching("/tree", zk::WatchKind::data));  // the persistent one is still there
  // A watcher that removes its own watch while it runs.
  zkr::detail::WatchId self = 0;
  int runs = 0;
  self = reg.add(
      [&](const zkr::WatchedEvent&) {
        ++runs;
        (void)reg.forget(self);
      },
      "/x", zk::WatchKind::persistent);
  reg.fire(self, zkr::EventType::node_deleted, "/x");
  reg.fire(self, zkr::EventType::node_created, "/x");
  CHECK(runs == 1);
  REQUIRE(reg.forget(tree));
  CHECK_FALSE(reg.watching("/tree", zk::WatchKind::any));
  reg.fire(tree, zkr::EventType::node_created, "/tree/c");
  CHECK(seen.size() == 2);
}
