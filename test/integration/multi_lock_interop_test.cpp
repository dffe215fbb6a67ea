// InterProcessMultiLock and Java Curator 5.4's InterProcessMultiLock on the same paths of a real ZooKeeper:
// they exclude each other, judged from both sides' START/END logs.

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "curator_peer.hpp"
#include "fixture.hpp"
#include "multi_lock_support.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

struct Interval {
  long long start, end;
  std::string who;
};

/// START/END pairs of a `loop` log (the Java peer's format).
std::vector<Interval> read_intervals(const std::string& file) {
  std::vector<Interval> out;
  std::ifstream in(file);
  std::string kind, who;
  long long t = 0, czxid = 0;
  Interval cur{};
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    ls >> kind >> t;
    if (kind == "START") {
      ls >> czxid >> who;
      cur = {t, 0, who};
    } else if (kind == "END") {
      cur.end = t;
      out.push_back(cur);
    }
  }
  return out;
}

long long epoch_nanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

TEST_CASE("multi interop: zkrecipes' batched multi-lock and Java Curator's MultiLock exclude each other",
          "[multi][interop]") {
  if (!curator_peer_or_skip()) return;
  ServerFixture fx;
  const auto paths = paths_of("/multi/interop", 3);
  auto c = fx.client();
  InterProcessMultiLock multi(*c, paths);
  CuratorPeer java(fx.server.connect_string(), "multi", paths);

  // Plain exclusion, both ways.
  const auto got = java.call("acquire");
  REQUIRE(got.rfind("acquired ", 0) == 0);
  CHECK(std::count(got.begin(), got.end(), ',') == 2);
  CHECK_FALSE(multi.acquire(500ms));
  for (const auto& p : paths) CHECK(eventually([&] { return fx.children(p).size() == 1; }));
  CHECK(java.call("release") == "released");
  REQUIRE(multi.acquire(10s));
  CHECK(java.call("acquire 500") == "timeout");
  multi.release();

  // Both loop on the same list at once: no deadlock, and the hold intervals never overlap.
  const auto log =
      (std::filesystem::temp_directory_path() / ("zkr-multi-interop-" + std::to_string(::getpid()) + ".log"))
          .string();
  std::filesystem::remove(log);
  constexpr int rounds = 20;
  java.send("loop " + std::to_string(rounds) + " 2000 " + log);
  std::vector<Interval> ours;
  for (int r = 0; r < rounds; ++r) {
    REQUIRE(multi.acquire(60s));
    const auto s = epoch_nanos();
    std::this_thread::sleep_for(2ms);
    ours.push_back({s, epoch_nanos(), "cpp"});
    multi.release();
  }
  CHECK(java.answer(120s) == "done " + std::to_string(rounds));
  auto all = read_intervals(log);
  CHECK(all.size() == rounds);
  all.insert(all.end(), ours.begin(), ours.end());
  std::sort(all.begin(), all.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  int overlaps = 0;
  for (std::size_t i = 1; i < all.size(); ++i)
    if (all[i].start < all[i - 1].end) ++overlaps;
  CHECK(overlaps == 0);
  std::filesystem::remove(log);
}
