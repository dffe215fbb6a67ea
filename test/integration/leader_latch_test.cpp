// Integration tests of LeaderLatch against a real server: the essential cases of Curator's TestLeaderLatch
// (curator-leader.md §3.1) and the cases issue 28 names (same-session reconnect, lost session without a split
// brain, a node deleted by someone else, close while the create is in flight). Every wait is bounded.

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <regex>

#include "fixture.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

/// One server for the tests that do not stop it (each uses its own path).
zkr::testing::TestingServer& latch_server() {
  static zkr::testing::TestingServer server;
  return server;
}

std::string latch_path(const std::string& tag) {
  static std::atomic<int> n{0};
  return "/leader-latch/" + tag + "-" + std::to_string(++n);
}

/// Counts the listener calls of one latch.
struct Calls {
  std::atomic<int> is_leader{0};
  std::atomic<int> not_leader{0};
  LeaderLatchListener listener() {
    return {[this] { ++is_leader; }, [this] { ++not_leader; }};
  }
};

int leaders(const std::vector<std::unique_ptr<LeaderLatch>>& latches) {
  return static_cast<int>(
      std::count_if(latches.begin(), latches.end(), [](const auto& l) { return l && l->has_leadership(); }));
}

/// Lets the client's pending events run and one more round trip pass (a "nothing more happens" check).
void settle(CuratorFramework& c, const std::string& path) {
  error_code ec;
  c.sync(path, ec);
  REQUIRE(drain_io(c));
  std::this_thread::sleep_for(200ms);
  REQUIRE(drain_io(c));
}

}  // namespace

TEST_CASE("leader latch: one leader at a time, in start order, then closing a waiter moves nobody up",
          "[leader][latch]") {
  auto client = make_client(latch_server().connect_string());
  const auto path = latch_path("basic");
  std::vector<std::unique_ptr<LeaderLatch>> latches;
  for (int i = 0; i < 4; ++i)
    latches.push_back(std::make_unique<LeaderLatch>(*client, path, std::to_string(i)));
  for (auto& l : latches) l->start();  // one client: the creates leave in this order

  REQUIRE(eventually([&] { return latches[0]->has_leadership(); }));
  REQUIRE(eventually([&] { return latches[3]->our_path() != ""; }));
  settle(*client, path);
  CHECK(leaders(latches) == 1);

  // Curator's testCorrectWatching: closing #2 (not the leader, not the last) must not make #1 leader.
  latches[2]->close();
  settle(*client, path);
  CHECK(latches[0]->has_leadership());
  CHECK_FALSE(latches[1]->has_leadership());
  CHECK_FALSE(latches[3]->has_leadership());

  // Leadership then follows the queue as each leader closes.
  latches[0]->close();
  REQUIRE(eventually([&] { return latches[1]->has_leadership(); }));
  CHECK(leaders(latches) == 1);
  latches[1]->close();
  REQUIRE(eventually([&] { return latches[3]->has_leadership(); }));
  CHECK(leaders(latches) == 1);
  latches[3]->close();
  REQUIRE(eventually([&] {
    error_code ec;
    auto c = client->get_children(path, {}, ec);
    return ec || c.empty();
  }));
}

TEST_CASE("leader latch: node names, data, participants and the leader as Curator writes and reads them",
          "[leader][latch]") {
  auto client = make_client(latch_server().connect_string());
  const auto path = latch_path("participants");

  // Curator's testUncreatedPathGetLeader (CURATOR-436): no path, no error, the dummy participant.
  {
    LeaderLatch idle(*client, path);
    CHECK(idle.get_leader() == Participant{});
    CHECK(idle.get_participants().empty());
  }
  CHECK_THROWS_AS(LeaderLatch(*client, "relative/path"), Error);  // testRelativePath

  std::vector<std::unique_ptr<LeaderLatch>> latches;
  for (int i = 0; i < 4; ++i)
    latches.push_back(std::make_unique<LeaderLatch>(*client, path, "id-" + std::to_string(i)));
  latches.push_back(std::make_unique<LeaderLatch>(*client, path));  // the default id ""
  for (auto& l : latches) l->start();
  REQUIRE(eventually([&] { return latches[0]->has_leadership() && latches[4]->our_path() != ""; }));

  const std::regex name(R"(_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-latch-[0-9]{10})");
  for (auto& l : latches) {
    const auto p = l->our_path();
    CHECK(std::regex_match(node_name(p), name));
    auto d = client->get_data(p);
    CHECK(d.data == l->id());  // the id as data; "" as 0 bytes, never the default data
    CHECK(d.stat.ephemeral_owner == client->session_id());
  }

  const auto expected_leader = Participant{"id-0", true};
  std::vector<Participant> first;
  for (auto& l : latches) {  // Participants.testBasic: every latch returns an equal list
    auto ps = l->get_participants();
    if (first.empty()) first = ps;
    CHECK(ps == first);
    CHECK(l->get_leader() == expected_leader);
  }
  REQUIRE(first.size() == 5);
  CHECK(std::count_if(first.begin(), first.end(), [](const Participant& p) { return p.is_leader; }) == 1);
  for (int i = 0; i < 4; ++i) CHECK(first[i] == Participant{"id-" + std::to_string(i), i == 0});
  CHECK(first[4] == Participant{"", false});
  auto async_ps = latches[1]->async_get_participants(boost::asio::use_future).get();
  CHECK(async_ps == first);
}

TEST_CASE("leader latch: listeners and close modes (testCallbackDontNotify)", "[leader][latch]") {
  auto client = make_client(latch_server().connect_string());
  const auto path = latch_path("callbacks");
  LeaderLatch a(*client, path, "a", LeaderLatch::CloseMode::silent);
  LeaderLatch b(*client, path, "b", LeaderLatch::CloseMode::notify_leader);
  Calls ca, cb;
  a.add_listener(ca.listener());
  b.add_listener(cb.listener());
  a.start();
  REQUIRE(eventually([&] { return a.has_leadership(); }));
  b.start();
  REQUIRE(eventually([&] { return b.our_path() != ""; }));
  REQUIRE(eventually([&] { return ca.is_leader == 1; }));

  // A NOTIFY_LEADER latch closed while not leader: no not_leader.
  b.close();
  settle(*client, path);
  CHECK(cb.is_leader == 0);
  CHECK(cb.not_leader == 0);

  // close(NOTIFY_LEADER) on a SILENT-configured leader: exactly one not_leader.
  a.close(LeaderLatch::CloseMode::notify_leader);
  settle(*client, path);
  CHECK(ca.is_leader == 1);
  CHECK(ca.not_leader == 1);
  CHECK_FALSE(a.has_leadership());

  // A silent close of a leader: no not_leader; a closed latch cannot be closed or started again.
  LeaderLatch c(*client, path, "c");
  Calls cc;
  c.add_listener(cc.listener());
  c.start();
  REQUIRE(eventually([&] { return c.has_leadership() && cc.is_leader == 1; }));
  c.close();
  settle(*client, path);
  CHECK(cc.not_leader == 0);
  error_code ec;
  c.close(ec);
  CHECK(ec == client_errc::closed);
  c.start(ec);
  CHECK(ec == client_errc::closed);
  LeaderLatch never(*client, path);
  never.close(ec);
  CHECK(ec == client_errc::not_started);
}

TEST_CASE("leader latch: await, timed await and async_await with cancellation, then close wakes waiters",
          "[leader][latch]") {
  auto client = make_client(latch_server().connect_string());
  const auto path = latch_path("await");
  LeaderLatch a(*client, path, "a");
  LeaderLatch b(*client, path, "b");

  error_code ec;
  b.await(ec);  // never started
  CHECK(ec == client_errc::not_started);
  CHECK_FALSE(b.await(10ms));

  a.start();
  a.await();
  CHECK(a.has_leadership());
  CHECK(a.await(0ms));
  b.start();
  CHECK_FALSE(b.await(100ms));

  // A cancelled async_await completes with operation_aborted and leaves the latch as it was.
  boost::asio::cancellation_signal sig;
  auto cancelled = b.async_await(boost::asio::bind_cancellation_slot(sig.slot(), boost::asio::use_future));
  REQUIRE(drain_io(*client));
  sig.emit(boost::asio::cancellation_type::terminal);
  REQUIRE(cancelled.wait_for(10s) == std::future_status::ready);
  try {
    cancelled.get();
    FAIL("a cancelled async_await completed without an error");
  } catch (const boost::system::system_error& e) {
    CHECK(e.code() == boost::asio::error::operation_aborted);
  }

  // A pending async_await completes when leadership comes; so does a blocking await on another thread.
  auto pending = b.async_await(boost::asio::use_future);
  auto blocking = std::async(std::launch::async, [&] {
    error_code e;
    b.await(e);
    return e;
  });
  CHECK(pending.wait_for(200ms) == std::future_status::timeout);
  const auto a_token = a.fencing_token();
  a.close();
  REQUIRE(pending.wait_for(20s) == std::future_status::ready);
  CHECK_NOTHROW(pending.get());
  REQUIRE(blocking.wait_for(20s) == std::future_status::ready);
  CHECK(!blocking.get());
  CHECK(b.has_leadership());
  CHECK(b.fencing_token() > a_token);  // a later leader's token is larger
  CHECK(b.last_path_is_leader() == b.our_path());
  CHECK(b.lease_status() == LeaseStatus::held);

  // Close wakes a waiter with client_errc::closed (Curator's EOFException).
  LeaderLatch c(*client, path, "c");
  c.start();
  REQUIRE(eventually([&] { return c.our_path() != ""; }));
  auto waiting = std::async(std::launch::async, [&] {
    error_code e;
    c.await(e);
    return e;
  });
  auto async_waiting = c.async_await(boost::asio::use_future);
  CHECK(waiting.wait_for(100ms) == std::future_status::timeout);
  c.close();
  REQUIRE(waiting.wait_for(20s) == std::future_status::ready);
  CHECK(waiting.get() == client_errc::closed);
  REQUIRE(async_waiting.wait_for(20s) == std::future_status::ready);
  CHECK_THROWS_AS(async_waiting.get(), boost::system::system_error);
  CHECK_FALSE(c.await(10ms));
}

TEST_CASE("leader latch: a leader whose node someone else deletes steps down and queues a new node",
          "[leader][latch]") {
  auto ca = make_client(latch_server().connect_string());
  auto cb = make_client(latch_server().connect_string());
  auto admin = make_client(latch_server().connect_string());
  const auto path = latch_path("deleted");
  LeaderLatch a(*ca, path, "a");
  LeaderLatch b(*cb, path, "b");
  Calls calls;
  a.add_listener(calls.listener());
  a.start();
  REQUIRE(eventually([&] { return a.has_leadership(); }));
  b.start();
  REQUIRE(eventually([&] { return b.our_path() != ""; }));
  const auto old_node = a.our_path();
  const auto old_token = a.fencing_token();

  admin->remove(old_node);
  REQUIRE(eventually([&] { return b.has_leadership(); }));
  // Curator 5.4's leader never notices (split brain); ours gives up and rejoins at the tail.
  REQUIRE(eventually([&] { return !a.has_leadership() && a.our_path() != "" && a.our_path() != old_node; }));
  REQUIRE(eventually([&] { return calls.not_leader == 1; }));
  CHECK(b.fencing_token() > old_token);
  settle(*ca, path);
  CHECK_FALSE(a.has_leadership());
  CHECK(admin->get_children(path).size() == 2);

  // A waiter's node deleted: the waiter rejoins too (its node gone is a lost grant only once granted; here
  // the engine sees the node missing at its next look). Closing the leader then makes it leader again.
  b.close();
  REQUIRE(eventually([&] { return a.has_leadership(); }));
  CHECK(a.fencing_token() > b.fencing_token());
}

TEST_CASE("leader latch: a reconnect that kept the session keeps the node and the leadership",
          "[leader][latch]") {
  ServerFixture fx;
  auto client = fx.client({.session_timeout = 30s});
  const auto path = "/leader/reconnect";
  LeaderLatch a(*client, path, "a");
  LeaderLatch b(*client, path, "b");
  std::mutex m;
  std::vector<std::string> events;
  a.add_listener({[&] {
                    std::lock_guard lk(m);
                    events.push_back("true");
                  },
                  [&] {
                    std::lock_guard lk(m);
                    events.push_back("false");
                  }});
  a.start();
  REQUIRE(eventually([&] { return a.has_leadership(); }));
  b.start();
  REQUIRE(eventually([&] { return b.our_path() != ""; }));
  const auto before = fx.children(path);
  const auto session = client->session_id();

  fx.server.stop();
  REQUIRE(eventually([&] { return !a.has_leadership(); }));  // SUSPENDED: maybe not leader
  CHECK(a.lease_status() == LeaseStatus::maybe_lost);
  fx.server.start();
  REQUIRE(eventually([&] { return a.has_leadership(); }, 40s));
  REQUIRE(client->session_id() == session);
  CHECK(fx.children(path) == before);  // the same nodes: no re-queue at the tail (Curator 5.4)
  CHECK_FALSE(b.has_leadership());
  CHECK(a.lease_status() == LeaseStatus::held);
  REQUIRE(eventually([&] {
    std::lock_guard lk(m);
    return events.size() == 3;
  }));
  std::lock_guard lk(m);
  CHECK(events == std::vector<std::string>{"true", "false", "true"});
}

TEST_CASE("leader latch: after a lost session the old leader gets a new node and never leads on the old one",
          "[leader][latch]") {
  auto ca = make_client(latch_server().connect_string());
  auto cb = make_client(latch_server().connect_string());
  const auto path = latch_path("expiry");
  LeaderLatch a(*ca, path, "a");
  LeaderLatch b(*cb, path, "b");
  a.start();
  REQUIRE(eventually([&] { return a.has_leadership(); }));
  b.start();
  REQUIRE(eventually([&] { return b.our_path() != ""; }));
  const auto old_node = a.our_path();
  const auto old_token = a.fencing_token();
  const auto old_session = ca->session_id();

  ca->inject_session_expiration();
  REQUIRE(eventually([&] { return b.has_leadership(); }));
  REQUIRE(eventually(
      [&] { return ca->session_id() != old_session && a.our_path() != "" && a.our_path() != old_node; }));
  CHECK(a.lease_status() != LeaseStatus::held);  // the old grant is lost; the new node is not granted

  // While b leads, a must not lead (CURATOR-696: Curator 5.4 claims on the dead session's node).
  for (int i = 0; i < 20; ++i) {
    CHECK_FALSE(a.has_leadership());
    std::this_thread::sleep_for(25ms);
  }
  auto d = ca->get_data(a.our_path());
  CHECK(d.stat.ephemeral_owner == ca->session_id());
  CHECK(b.fencing_token() > old_token);

  const auto b_token = b.fencing_token();
  b.close();
  REQUIRE(eventually([&] { return a.has_leadership(); }));
  CHECK(a.fencing_token() > b_token);
  CHECK(a.last_path_is_leader() == a.our_path());
}

TEST_CASE("leader latch: close while the node create is in flight leaves no node (CURATOR-18)",
          "[leader][latch]") {
  ServerFixture fx;
  auto client = fx.client({.session_timeout = 30s});
  const auto path = "/leader/create-race";
  fx.admin->create(path, {.creating_parents = true});  // so that an orphan would show as a child
  LeaderLatch a(*client, path, "a");
  fx.server.pause();  // the create is sent, its reply held back
  a.start();
  std::this_thread::sleep_for(300ms);
  a.close();
  fx.server.resume();
  // Once the reply arrives the engine deletes the node it made; nothing remains, and nothing comes later.
  REQUIRE(eventually([&] { return client->is_connected(); }, 40s));
  settle(*client, path);
  REQUIRE(eventually([&] { return fx.children(path).empty(); }, 30s));
  settle(*client, path);
  CHECK(fx.children(path).empty());
  CHECK_FALSE(a.has_leadership());
}

TEST_CASE("leader latch: no latch leads while the session is lost, then after the restart exactly one does",
          "[leader][latch]") {
  ServerFixture fx;
  auto client = fx.client({.session_timeout = 4s});
  const auto path = "/leader/lost";
  std::vector<std::unique_ptr<LeaderLatch>> latches;
  for (int i = 0; i < 4; ++i)
    latches.push_back(std::make_unique<LeaderLatch>(*client, path, std::to_string(i)));
  for (auto& l : latches) l->start();
  REQUIRE(eventually([&] { return leaders(latches) == 1; }));

  fx.server.stop();
  REQUIRE(eventually([&] { return leaders(latches) == 0; }));
  std::this_thread::sleep_for(6s);  // beyond the session timeout: LOST
  CHECK(leaders(latches) == 0);
  fx.server.start();
  REQUIRE(eventually([&] { return leaders(latches) == 1; }, 60s));
  REQUIRE(eventually([&] { return fx.children(path).size() == 4; }, 30s));
  settle(*client, path);
  CHECK(leaders(latches) == 1);
  CHECK(fx.children(path).size() == 4);  // one node per latch: none left over from the dead session
}

TEST_CASE(
    "leader latch: started before the server is up, it leads once the server comes (testNoServerAtStart)",
    "[leader][latch]") {
  ServerFixture fx;
  const auto connect = fx.server.connect_string();
  fx.admin->close();
  fx.server.stop();
  ClientConfig cfg;
  cfg.connect_string = connect;
  cfg.retry_policy = std::make_shared<RetryNTimes>(5, Millis(1000));
  cfg.session_timeout = 10s;
  cfg.connection_timeout = 2s;
  CuratorFramework client(cfg);
  client.start();
  LeaderLatch latch(client, "/leader/no-server", "a");
  Calls calls;
  latch.add_listener(calls.listener());
  latch.start();  // never blocks, touches nothing yet
  std::this_thread::sleep_for(500ms);
  CHECK_FALSE(latch.has_leadership());
  fx.server.start();
  REQUIRE(eventually([&] { return latch.has_leadership(); }, 60s));
  REQUIRE(eventually([&] { return calls.is_leader == 1; }));
  settle(client, "/leader/no-server");
  CHECK(calls.is_leader == 1);
  CHECK(calls.not_leader == 0);
  CHECK(latch.get_participants().size() == 1);
}

TEST_CASE("leader latch: a listener may close its own latch from is_leader (testCallbackSanity)",
          "[leader][latch]") {
  auto client = make_client(latch_server().connect_string());
  const auto path = latch_path("callback-close");
  constexpr int n = 5;
  std::vector<std::unique_ptr<LeaderLatch>> latches;
  std::atomic<int> gained{0}, lost{0};
  for (int i = 0; i < n; ++i) {
    latches.push_back(std::make_unique<LeaderLatch>(*client, path, std::to_string(i)));
    auto* l = latches.back().get();
    l->add_listener({[&gained, l] {
                       ++gained;
                       l->close();  // SILENT: no not_leader; the next latch leads
                     },
                     [&lost] { ++lost; }});
  }
  for (auto& l : latches) l->start();
  REQUIRE(eventually([&] { return gained == n; }));
  REQUIRE(eventually([&] {
    error_code ec;
    auto c = client->get_children(path, {}, ec);
    return ec || c.empty();
  }));
  settle(*client, path);
  CHECK(gained == n);
  CHECK(lost == 0);
  for (auto& l : latches) CHECK(l->state() == LeaderLatch::State::closed);
}
