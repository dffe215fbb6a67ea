// `zkr watch`, run as a separate process against a real ZooKeeper: a subtree as JSON lines with data and
// --count, a missing node waited for (and not created), --changes-only, --children across a server restart
// (the connection states, then only the difference) ended by SIGTERM, and the usage errors and an
// unreachable server. Each change is made only once the previous event was printed: the
// caches report the difference, so two quick changes of one node may be reported as one.

#include <boost/json.hpp>  // compiled once, by cli_inspect_test.cpp (boost/json/src.hpp)
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "fixture.hpp"

using namespace zkr;
using namespace zkr::test;
using namespace zkr::test::cli;

namespace {

CreateOptions with_data(std::string data) {
  CreateOptions o;
  o.data = std::move(data);
  return o;
}

/// Waits until `z` has printed at least `n` lines; returns them.
std::vector<std::string> await_lines(Zkr& z, std::size_t n) {
  std::vector<std::string> lines;
  const bool got = eventually(
      [&] {
        lines = lines_of(z.out());
        return lines.size() >= n;
      },
      std::chrono::seconds(30));
  INFO(z.out() << z.err());
  REQUIRE(got);
  return lines;
}

/// Waits until `z` has printed `text`.
void await_output(Zkr& z, const std::string& text) {
  const bool got =
      eventually([&] { return z.out().find(text) != std::string::npos; }, std::chrono::seconds(60));
  INFO(text << " in " << z.out() << z.err());
  REQUIRE(got);
}

struct PrintedEvent {
  std::string event, path, data;
  std::int64_t version = -1, data_length = -1;
};

PrintedEvent parse_line(const std::string& line) {
  INFO(line);
  auto v = boost::json::parse(line).as_object();
  PrintedEvent e;
  e.event = v.at("event").as_string().c_str();
  if (auto* p = v.if_contains("path")) e.path = p->as_string().c_str();
  if (auto* d = v.if_contains("data")) e.data = d->as_string().c_str();
  if (auto* n = v.if_contains("version")) e.version = n->as_int64();
  if (auto* n = v.if_contains("data_length")) e.data_length = n->as_int64();
  return e;
}

}  // namespace

TEST_CASE("zkr watch --tree --json --count: nested creates, changes and deletes", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  Zkr z(cat(cat({"watch"}, common_args(fx)), {"--tree", "--json", "--data", "--count", "5", "/w"}), dir);
  // The root does not exist yet: the first load is empty.
  auto lines = await_lines(z, 1);
  CHECK(parse_line(lines[0]).event == "initialized");

  fx.admin->create("/w", with_data(""));
  await_lines(z, 2);
  fx.admin->create("/w/a", with_data("A"));
  await_lines(z, 3);
  fx.admin->create("/w/a/b", with_data("x"));
  await_lines(z, 4);
  fx.admin->set_data("/w/a/b", "q\"uote\n");
  await_lines(z, 5);
  fx.admin->remove("/w/a/b");

  INFO(z.out() << z.err());
  REQUIRE(z.wait() == 0);  // after the fifth node event
  lines = lines_of(z.out());
  REQUIRE(lines.size() == 6);
  std::vector<PrintedEvent> ev;
  for (auto& l : lines) ev.push_back(parse_line(l));
  CHECK(ev[1].event == "created");
  CHECK(ev[1].path == "/w");
  CHECK(ev[2].event == "created");
  CHECK(ev[2].path == "/w/a");
  CHECK(ev[2].data == "A");
  CHECK(ev[3].event == "created");
  CHECK(ev[3].path == "/w/a/b");
  CHECK(ev[3].version == 0);
  CHECK(ev[4].event == "changed");
  CHECK(ev[4].path == "/w/a/b");
  CHECK(ev[4].version == 1);
  CHECK(ev[4].data == "q\"uote\n");
  CHECK(ev[4].data_length == 7);
  CHECK(ev[5].event == "deleted");
  CHECK(ev[5].path == "/w/a/b");
  CHECK(ev[5].version == 1);  // as last seen
}

TEST_CASE(
    "zkr watch: a missing node is waited for, and --children follows the children across a server restart",
    "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;

  {
    Zkr z(cat(cat({"watch"}, common_args(fx)), {"--count", "1", "/n/late"}), dir);
    auto lines = await_lines(z, 1);
    CHECK(lines[0] == "initialized");
    CHECK_FALSE(fx.admin->exists("/n").has_value());  // watching created nothing, not even the parent
    CreateOptions o = with_data("hello");
    o.creating_parents = true;
    fx.admin->create("/n/late", o);
    INFO(z.out() << z.err());
    REQUIRE(z.wait() == 0);
    lines = lines_of(z.out());
    REQUIRE(lines.size() == 2);
    CHECK(lines[1] == "created /n/late version=0 data_length=5");
  }
  {
    // --changes-only: the node found at start is not printed, its next change is.
    Zkr z(cat(cat({"watch"}, common_args(fx)), {"--changes-only", "--data", "--count", "1", "/n/late"}), dir);
    await_lines(z, 1);
    fx.admin->set_data("/n/late", "bye");
    INFO(z.out() << z.err());
    REQUIRE(z.wait() == 0);
    CHECK(lines_of(z.out()) ==
          std::vector<std::string>{"initialized", "changed /n/late version=1 data_length=3 data=bye"});
  }
  {
    fx.admin->create("/p", with_data(""));
    fx.admin->create("/p/c1", with_data("1"));
    Zkr z(cat(cat({"watch"}, common_args(fx)), {"--children", "--json", "/p"}), dir);
    auto lines = await_lines(z, 2);  // c1, then initialized
    CHECK(parse_line(lines[0]).event == "created");
    CHECK(parse_line(lines[0]).path == "/p/c1");
    CHECK(parse_line(lines[1]).event == "initialized");
    // Neither the parent's own change nor a grandchild is a child event.
    fx.admin->set_data("/p", "root");
    fx.admin->create("/p/c2", with_data("2"));
    await_lines(z, 3);
    fx.admin->create("/p/c2/deep", with_data("3"));
    fx.admin->remove("/p/c1");
    await_lines(z, 4);
    // A server restart: the connection states, then only the difference (none: no event for c2 again).
    fx.server.stop();
    await_output(z, "SUSPENDED");
    fx.server.start();
    await_output(z, "RECONNECTED");
    fx.admin->remove("/p/c2/deep");
    fx.admin->remove("/p/c2");
    await_output(z, "\"deleted\",\"path\":\"/p/c2\"");
    z.signal(SIGTERM);
    INFO(z.out() << z.err());
    REQUIRE(z.wait() == 128 + SIGTERM);
    std::vector<std::string> node_events;
    for (auto& l : lines_of(z.out())) {
      auto e = parse_line(l);
      if (e.event == "created" || e.event == "changed" || e.event == "deleted")
        node_events.push_back(e.event + " " + e.path);
    }
    CHECK(node_events ==
          std::vector<std::string>{"created /p/c1", "created /p/c2", "deleted /p/c1", "deleted /p/c2"});
  }
}

TEST_CASE("zkr watch: usage errors and an unreachable server", "[cli]") {
  if (!have_zkr()) return;
  TempDir dir;
  for (std::vector<std::string> args : {std::vector<std::string>{"watch", "relative/path"},
                                        {"watch", "/a/"},
                                        {"watch", "--children", "--tree", "/a"},
                                        {"watch", "--count", "0", "/a"},
                                        {"watch"}}) {
    auto r = run_zkr(args, dir);
    INFO(args.back() << ": " << r.err);
    CHECK(r.status == 64);
    CHECK(r.out.empty());
  }
  // Nothing listens on port 1.
  auto r = run_zkr({"watch", "--connect", "127.0.0.1:1", "--connection-timeout", "1s", "/a"}, dir);
  INFO(r.err);
  CHECK(r.status == 69);
  CHECK(r.out.empty());
}
