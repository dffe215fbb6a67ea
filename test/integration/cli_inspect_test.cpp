// `zkr inspect`, run as a separate process against a real ZooKeeper: mutex, read-write and semaphore
// directories as text and JSON, data that is not valid UTF-8, and leader elections (LeaderLatch,
// LeaderSelector) in Curator's order with their leader.

#include <atomic>
#include <boost/json/src.hpp>  // header-only Boost.JSON, to check that `zkr inspect --json` is valid JSON
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>
#include <zkr/recipes/leader_latch.hpp>
#include <zkr/recipes/leader_selector.hpp>

#include "cli_support.hpp"
#include "fixture.hpp"

using namespace zkr;
using namespace zkr::test;
using namespace zkr::test::cli;

namespace {

/// A member of a JSON object.
const boost::json::value& get(const boost::json::value& v, const char* key) { return v.as_object().at(key); }

/// A LeaderSelector participant that leads until it is asked to stop.
class HoldingLeader : public LeaderSelectorListenerAdapter {
 public:
  std::atomic<bool> leading{false};
  void take_leadership(CuratorFramework&, Leadership& l) override {
    leading = true;
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lk(m);
    cv.wait_for(lk, l.stop_token(), std::chrono::seconds(60), [] { return false; });
    leading = false;
  }
};

/// A session id as zkr shows it: "0x" and 16 lower-case hex digits.
std::string hex_session(std::int64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(id));
  return buf;
}
}  // namespace

TEST_CASE("zkr inspect: mutex, read-write and semaphore directories, as text and JSON", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  auto inspect = [&](const std::string& path, bool json) {
    auto args = cat(cat({"inspect"}, common_args(fx)), {path});
    if (json) args.push_back("--json");
    auto r = run_zkr(args, dir);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return r.out;
  };
  auto nodes_of = [](const boost::json::value& doc, std::size_t queue) {
    return get(get(doc, "queues").as_array().at(queue), "nodes").as_array();
  };

  SECTION("a directory that does not exist") {
    CHECK(inspect("/cli/none", false).find("does not exist") != std::string::npos);
    auto doc = boost::json::parse(inspect("/cli/none", true));
    CHECK(get(doc, "exists").as_bool() == false);
  }

  SECTION("mutex, with a foreign node") {
    Zkr holder(
        cat(cat({"lock"}, common_args(fx)), {"--data", "holder \"one\"", "/cli/m", "--", "sleep", "60"}),
        dir);
    REQUIRE(wait_children(fx, "/cli/m", 1));
    Zkr waiter(cat(cat({"lock"}, common_args(fx)), {"--data", "waiter", "/cli/m", "--", "true"}), dir);
    REQUIRE(wait_children(fx, "/cli/m", 2));
    CreateOptions eph;
    eph.mode = CreateMode::ephemeral;
    eph.data = "x";
    fx.admin->create("/cli/m/not-a-lock", eph);

    auto text = inspect("/cli/m", false);
    INFO(text);
    CHECK(text.find("mutex, 3 nodes") != std::string::npos);
    CHECK(text.find("holder \"one\"") != std::string::npos);
    CHECK(text.find("foreign") != std::string::npos);

    auto doc = boost::json::parse(inspect("/cli/m", true));
    CHECK(get(doc, "type").as_string() == "mutex");
    auto nodes = nodes_of(doc, 0);
    REQUIRE(nodes.size() == 3);
    CHECK(get(nodes[0], "position").as_int64() == 1);
    CHECK(get(nodes[0], "holds").as_bool());
    CHECK(get(nodes[0], "kind").as_string() == "lock");
    CHECK(get(nodes[0], "data").as_string() == "holder \"one\"");
    CHECK(get(nodes[0], "owner").as_string().size() == 18);
    CHECK(get(nodes[0], "age_ms").as_int64() >= 0);
    CHECK(!get(nodes[1], "holds").as_bool());
    CHECK(get(nodes[1], "data").as_string() == "waiter");
    CHECK(get(nodes[2], "foreign").as_bool());
    CHECK(get(nodes[0], "fencing_token").as_int64() < get(nodes[1], "fencing_token").as_int64());
    fx.admin->remove("/cli/m/not-a-lock");
    holder.signal(SIGTERM);
    CHECK(holder.wait() == 128 + SIGTERM);
    CHECK(waiter.wait() == 0);
  }

  SECTION("read-write lock") {
    Zkr r1(cat(cat({"read-lock"}, common_args(fx)), {"/cli/rw", "--", "sleep", "60"}), dir);
    REQUIRE(wait_children(fx, "/cli/rw", 1));
    Zkr r2(cat(cat({"read-lock"}, common_args(fx)), {"/cli/rw", "--", "sleep", "60"}), dir);
    REQUIRE(wait_children(fx, "/cli/rw", 2));
    // Two readers hold at once; a writer and a reader behind it wait.
    Zkr w(cat(cat({"write-lock"}, common_args(fx)), {"/cli/rw", "--", "true"}), dir);
    REQUIRE(wait_children(fx, "/cli/rw", 3));
    Zkr r3(cat(cat({"read-lock"}, common_args(fx)), {"/cli/rw", "--", "true"}), dir);
    REQUIRE(wait_children(fx, "/cli/rw", 4));

    auto text = inspect("/cli/rw", false);
    INFO(text);
    CHECK(text.find("read-write lock, 4 nodes") != std::string::npos);
    auto doc = boost::json::parse(inspect("/cli/rw", true));
    CHECK(get(doc, "type").as_string() == "read-write lock");
    auto nodes = nodes_of(doc, 0);
    REQUIRE(nodes.size() == 4);
    const char* kinds[] = {"read", "read", "write", "read"};
    const bool holds[] = {true, true, false, false};
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(get(nodes[i], "kind").as_string() == kinds[i]);
      CHECK(get(nodes[i], "holds").as_bool() == holds[i]);
    }
    // A reader arriving now may not pass the queued writer.
    CHECK(run_zkr(cat(cat({"read-lock"}, common_args(fx)), {"-w", "300ms", "/cli/rw", "--", "true"}), dir)
              .status == 75);
    r1.signal(SIGTERM);
    r2.signal(SIGTERM);
    CHECK(w.wait() == 0);
    CHECK(r3.wait() == 0);
  }

  SECTION("semaphore") {
    Zkr a(cat(cat({"semaphore"}, common_args(fx)), {"--leases", "2", "/cli/sem", "--", "sleep", "60"}), dir);
    Zkr b(cat(cat({"semaphore"}, common_args(fx)), {"--leases", "2", "/cli/sem", "--", "sleep", "60"}), dir);
    REQUIRE(wait_children(fx, "/cli/sem/leases", 2));
    Zkr c(cat(cat({"semaphore"}, common_args(fx)), {"--leases", "2", "/cli/sem", "--", "true"}), dir);
    REQUIRE(wait_children(fx, "/cli/sem/locks", 1));
    REQUIRE(wait_children(fx, "/cli/sem/leases", 3));

    auto text = inspect("/cli/sem", false);
    INFO(text);
    CHECK(text.find("semaphore") != std::string::npos);
    CHECK(text.find("/cli/sem/leases") != std::string::npos);
    CHECK(text.find("/cli/sem/locks") != std::string::npos);
    auto doc = boost::json::parse(inspect("/cli/sem", true));
    CHECK(get(doc, "type").as_string() == "semaphore");
    auto leases = nodes_of(doc, 0);
    auto locks = nodes_of(doc, 1);
    REQUIRE(leases.size() == 3);
    REQUIRE(locks.size() == 1);
    int holders = 0;
    for (auto& l : leases) {
      CHECK(get(l, "kind").as_string() == "lease");
      holders += get(l, "holds").as_bool() ? 1 : 0;
    }
    CHECK(holders == 2);
    CHECK(get(locks[0], "kind").as_string() == "lock");
    // The waiter's lease node is the one not holding, and it owns the internal lock.
    CHECK(get(leases[2], "owner") == get(locks[0], "owner"));
    CHECK(!get(leases[2], "holds").as_bool());
    // A third lease within 300 ms: no.
    CHECK(run_zkr(
              cat(cat({"semaphore"}, common_args(fx)), {"-n", "2", "-w", "300ms", "/cli/sem", "--", "true"}),
              dir)
              .status == 75);
    a.signal(SIGTERM);
    CHECK(c.wait() == 0);
    b.signal(SIGTERM);
    CHECK(b.wait() == 128 + SIGTERM);
    CHECK(wait_children(fx, "/cli/sem/leases", 0));
  }
}

TEST_CASE("zkr inspect --json: data that is not valid UTF-8 comes out as valid UTF-8 with U+FFFD", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  const std::string r = "\xef\xbf\xbd";  // U+FFFD
  const std::vector<std::pair<std::string, std::string>> cases{
      {"a\xff\x80\x80"
       "b \xed\xa0\x80",
       "a" + r + r + r + "b " + r + r + r},  // bad lead; surrogate
      {"\xc0\x80", r + r},                   // overlong 2-byte
      {"\xe0\x80\xaf", r + r + r},           // overlong 3-byte
      {"\xf0\x8f\xbf\xbf", r + r + r + r},   // overlong 4-byte
      {"\xf4\x90\x80\x80", r + r + r + r},   // above U+10FFFF
      {"x\xe2\x82", "x" + r + r},            // truncated
      {"\xf0\x9f\x98\x80 ok \xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf",
       "\xf0\x9f\x98\x80 ok \xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf"},
  };
  CreateOptions opts;
  opts.creating_parents = true;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    opts.data = cases[i].first;
    fx.admin->create("/cli/utf8/n" + std::to_string(i), opts);
  }
  auto res = run_zkr(cat(cat({"inspect"}, common_args(fx)), {"/cli/utf8", "--json"}), dir);
  REQUIRE(res.status == 0);
  INFO(res.out);
  boost::json::value doc;
  REQUIRE_NOTHROW(doc = boost::json::parse(res.out));  // Boost.JSON rejects invalid UTF-8
  auto nodes = get(get(doc, "queues").as_array().at(0), "nodes").as_array();
  REQUIRE(nodes.size() == cases.size());
  for (auto& n : nodes) {
    const std::string name(get(n, "name").as_string());
    const std::size_t i = std::stoul(name.substr(1));
    INFO(name);
    CHECK(std::string(get(n, "data").as_string()) == cases.at(i).second);
  }
}

TEST_CASE("zkr inspect: leader elections show their participants in Curator order and the leader", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  auto inspect = [&](std::vector<std::string> args) {
    auto r = run_zkr(cat(cat({"inspect"}, common_args(fx)), args), dir);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return r.out;
  };
  auto nodes_of = [](const boost::json::value& doc) {
    return get(get(doc, "queues").as_array().at(0), "nodes").as_array();
  };

  SECTION("LeaderLatch") {
    auto c1 = fx.client();
    auto c2 = fx.client();
    LeaderLatch first(*c1, "/cli/latch", "alpha");
    first.start();
    REQUIRE(first.await(std::chrono::seconds(20)));
    LeaderLatch second(*c2, "/cli/latch", "beta");
    second.start();
    REQUIRE(wait_children(fx, "/cli/latch", 2));

    auto text = inspect({"/cli/latch"});
    INFO(text);
    CHECK(text.find("leader latch, 2 nodes") != std::string::npos);
    CHECK(text.find("LeaderLatch election") != std::string::npos);
    CHECK(text.find("leader: alpha") != std::string::npos);
    CHECK(text.find("beta") != std::string::npos);

    auto doc = boost::json::parse(inspect({"/cli/latch", "--json"}));
    CHECK(get(doc, "type").as_string() == "leader latch");
    auto nodes = nodes_of(doc);
    REQUIRE(nodes.size() == 2);
    CHECK(get(nodes[0], "id").as_string() == "alpha");
    CHECK(get(nodes[0], "leader").as_bool());
    CHECK(get(nodes[0], "kind").as_string() == "latch");
    CHECK(get(nodes[1], "id").as_string() == "beta");
    CHECK(!get(nodes[1], "leader").as_bool());
    CHECK(get(nodes[0], "sequence").as_int64() < get(nodes[1], "sequence").as_int64());
    CHECK(get(nodes[0], "owner").as_string() == hex_session(c1->session_id()));
    CHECK(get(nodes[1], "owner").as_string() == hex_session(c2->session_id()));
    CHECK(get(get(doc, "leader"), "id").as_string() == "alpha");
    CHECK(get(nodes[0], "path").as_string() == first.our_path());

    // The leader leaves: the next one in Curator's order leads, as LeaderLatch itself sees it.
    first.close();
    REQUIRE(second.await(std::chrono::seconds(20)));
    auto after = boost::json::parse(inspect({"/cli/latch", "--json"}));
    CHECK(get(get(after, "leader"), "id").as_string() == "beta");
    CHECK(nodes_of(after).size() == 1);
    second.close();
  }

  SECTION("LeaderSelector, named with --type selector") {
    auto c1 = fx.client();
    auto c2 = fx.client();
    auto l1 = std::make_shared<HoldingLeader>();
    auto l2 = std::make_shared<HoldingLeader>();
    LeaderSelector first(*c1, "/cli/selector", l1);
    first.set_id("sel-one");
    first.start();
    REQUIRE(eventually([&] { return l1->leading.load(); }));
    LeaderSelector second(*c2, "/cli/selector", l2);
    second.set_id("sel-two");
    second.start();
    REQUIRE(wait_children(fx, "/cli/selector", 2));

    auto text = inspect({"--type", "selector", "/cli/selector"});
    INFO(text);
    CHECK(text.find("leader selector, 2 nodes") != std::string::npos);
    CHECK(text.find("LeaderSelector (mutex) election") != std::string::npos);
    CHECK(text.find("leader: sel-one") != std::string::npos);

    auto doc = boost::json::parse(inspect({"--type", "selector", "--json", "/cli/selector"}));
    CHECK(get(doc, "type").as_string() == "leader selector");
    auto nodes = nodes_of(doc);
    REQUIRE(nodes.size() == 2);
    CHECK(get(nodes[0], "id").as_string() == "sel-one");
    CHECK(get(nodes[0], "leader").as_bool());
    CHECK(get(nodes[1], "id").as_string() == "sel-two");
    CHECK(!get(nodes[1], "leader").as_bool());
    CHECK(get(get(doc, "leader"), "id").as_string() == first.get_leader().id);

    // Untyped, the same nodes read as the mutex they are.
    CHECK(get(boost::json::parse(inspect({"--json", "/cli/selector"})), "type").as_string() == "mutex");
    first.close();
    second.close();
  }

  SECTION("an election without participants") {
    auto doc = boost::json::parse(inspect({"--type", "latch", "--json", "/cli/nobody"}));
    CHECK(get(doc, "leader").is_null());
    CHECK(inspect({"--type", "latch", "/cli/nobody"}).find("does not exist") != std::string::npos);
  }
}
