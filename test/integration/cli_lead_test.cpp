// `zkr lead`, run as separate processes against a real ZooKeeper: one leader at a time running COMMAND with
// the fencing token, a library LeaderLatch ahead of it, leadership lost or suspended, --requeue, usage
// errors.

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>
#include <zkr/recipes/leader_latch.hpp>

#include "cli_support.hpp"
#include "fixture.hpp"

using namespace zkr;
using namespace zkr::test;
using namespace zkr::test::cli;

namespace {

std::vector<std::string> lead_args(ServerFixture& fx, std::vector<std::string> rest) {
  return cat(cat({"lead"}, common_args(fx)), rest);
}

}  // namespace

TEST_CASE("zkr lead: processes on one path run COMMAND one at a time, with the fencing token", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  const std::string log = dir.file("log");
  std::string flag, path;
  SECTION("LeaderLatch (the default)") {
    flag = "--latch";
    path = "/cli/lead-latch";
  }
  SECTION("LeaderSelector") {
    flag = "--selector";
    path = "/cli/lead-selector";
  }
  constexpr int n = 3;
  std::vector<std::unique_ptr<Zkr>> procs;
  for (int i = 0; i < n; ++i)
    procs.push_back(std::make_unique<Zkr>(
        lead_args(fx, {flag, "--id", "p" + std::to_string(i), path, "--", "sh", "-c", log_script, "sh", log}),
        dir));
  for (auto& p : procs) {
    auto st = p->wait();
    INFO(p->err());
    CHECK(st == 0);
  }
  check_exclusive_log(log, n);
  CHECK(fx.children(path).empty());

  // The node is the election's kind, carries the id, and COMMAND gets it and the token.
  auto r = run_zkr(lead_args(fx, {flag, "--id", "me", path, "--", "sh", "-c",
                                  "echo $ZKR_LOCK_PATH $ZKR_FENCING_TOKEN $ZKR_SESSION_ID"}),
                   dir);
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::istringstream in(r.out);
  std::string node, session;
  long long token = 0;
  in >> node >> token >> session;
  CHECK(node.rfind(path + "/_c_", 0) == 0);
  CHECK(node.find(flag == "--latch" ? "-latch-" : "-lock-") != std::string::npos);
  CHECK(token > 0);
  CHECK(session.rfind("0x", 0) == 0);
  CHECK(run_zkr(lead_args(fx, {flag, path, "--", "sh", "-c", "exit 42"}), dir).status == 42);
  CHECK(fx.children(path).empty());
}

TEST_CASE("zkr lead: a library LeaderLatch leads first, zkr lead only after it closes", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  auto c = fx.client();
  LeaderLatch latch(*c, "/cli/mixed", "library");
  latch.start();
  REQUIRE(latch.await(std::chrono::seconds(20)));
  const std::string started = dir.file("started");
  Zkr z(lead_args(fx, {"--id", "zkr", "/cli/mixed", "--", "touch", started}), dir);
  REQUIRE(wait_children(fx, "/cli/mixed", 2));
  CHECK(!z.wait(std::chrono::milliseconds(500)));
  CHECK(!fs::exists(started));
  CHECK(latch.get_participants().at(1).id == "zkr");
  latch.close();
  CHECK(z.wait() == 0);
  CHECK(fs::exists(started));
  CHECK(wait_children(fx, "/cli/mixed", 0));
}

TEST_CASE("zkr lead: leadership lost or suspended terminates COMMAND", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  const std::string marker = dir.file("marker");
  const std::string script =
      "echo START $ZKR_FENCING_TOKEN >> \"$1\"; "
      "trap 'echo TERM >> \"$1\"; kill $! 2>/dev/null; exit 0' TERM; sleep 60 & wait";
  auto count = [&](const std::string& word) {
    auto text = slurp(marker);
    std::size_t k = 0;
    for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++k;
    return k;
  };

  SECTION("the server stops: the connection is suspended, exit 76") {
    Zkr leader(lead_args(fx, {"/cli/lost", "--", "sh", "-c", script, "sh", marker}), dir);
    REQUIRE(wait_children(fx, "/cli/lost", 1));
    REQUIRE(eventually([&] { return count("START") == 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let COMMAND install its trap
    fx.server.stop();
    auto st = leader.wait(std::chrono::seconds(40));
    INFO(leader.err());
    CHECK(st == 76);
    CHECK(count("TERM") == 1);
    // Ended on SUSPENDED, as Curator's LeaderSelectorListenerAdapter does, not only once the session is lost.
    CHECK(leader.err().find("suspended: leadership may be lost: terminating COMMAND") != std::string::npos);
    fx.server.start();
  }
  SECTION("our node is deleted: exit 76") {
    Zkr leader(lead_args(fx, {"--selector", "/cli/lost", "--", "sh", "-c", script, "sh", marker}), dir);
    REQUIRE(wait_children(fx, "/cli/lost", 1));
    REQUIRE(eventually([&] { return count("START") == 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    fx.admin->remove("/cli/lost/" + fx.children("/cli/lost").front());
    auto st = leader.wait(std::chrono::seconds(30));
    INFO(leader.err());
    CHECK(st == 76);
    CHECK(count("TERM") == 1);
    CHECK(leader.err().find("leadership was lost") != std::string::npos);
  }
  SECTION("--requeue: COMMAND runs again once leading again") {
    Zkr leader(lead_args(fx, {"--requeue", "/cli/lost", "--", "sh", "-c", script, "sh", marker}), dir);
    REQUIRE(wait_children(fx, "/cli/lost", 1));
    REQUIRE(eventually([&] { return count("START") == 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    fx.server.stop();
    REQUIRE(eventually([&] { return count("TERM") == 1; }, std::chrono::seconds(30)));
    CHECK(leader.running());
    fx.server.start();
    REQUIRE(eventually([&] { return count("START") == 2; }, std::chrono::seconds(40)));
    INFO(leader.err());
    CHECK(leader.running());
    // The new term's node is a new one: a larger fencing token.
    std::vector<long long> tokens;
    for (auto& line : lines_of(slurp(marker))) {
      std::istringstream in(line);
      std::string word;
      long long token = 0;
      if (in >> word >> token && word == "START") tokens.push_back(token);
    }
    REQUIRE(tokens.size() == 2);
    CHECK(tokens[0] > 0);
    CHECK(tokens[1] > tokens[0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    leader.signal(SIGTERM);  // forwarded to COMMAND, which exits 0
    CHECK(leader.wait() == 0);
    CHECK(leader.err().find("waiting to lead again") != std::string::npos);
  }
  // Nothing is left behind (a node of a session that outlived the server's stop goes when it expires).
  CHECK(wait_children(fx, "/cli/lost", 0));
}

TEST_CASE("zkr lead: usage errors", "[cli]") {
  if (!have_zkr()) return;
  TempDir dir;
  auto help = run_zkr({"lead", "--help"}, dir);
  CHECK(help.status == 0);
  for (const char* s : {"--latch", "--selector", "--requeue", "--id", "Exit status"})
    CHECK(help.out.find(s) != std::string::npos);
  auto empty = run_zkr({"lead", "/a", "--"}, dir);
  CHECK(empty.status == 64);
  CHECK(empty.err.find("missing COMMAND") != std::string::npos);
  CHECK(run_zkr({"lead", "/a"}, dir).status == 64);
  CHECK(run_zkr({"lead"}, dir).status == 64);
  auto bad = run_zkr({"lead", "relative/path", "--", "true"}, dir);
  CHECK(bad.status == 64);
  CHECK(bad.err.find("invalid path") != std::string::npos);
  CHECK(run_zkr({"lead", "/a/", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"lead", "--latch", "--selector", "/a", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"lead", "--revocable", "/a", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"lead", "--on-lost", "ignore", "/a", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"lead", "-w", "soon", "/a", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"inspect", "--type", "leader", "/a"}, dir).status == 64);
}
