// Cooperative revocation (Curator's Revocable / Revoker) against a real ZooKeeper, between zkrecipes clients
// and with Java Curator in both directions.

#include <atomic>
#include <catch2/catch.hpp>
#include <future>
#include <thread>

#include "curator_peer.hpp"
#include "fixture.hpp"

using namespace zkr;
using namespace zkr::test;

TEST_CASE("revocation: a revocable holder is asked to release (Curator's testRevoking)", "[revocation]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  InterProcessMutex holder(*c1, "/revoke/basic");
  std::promise<void> requested;
  std::atomic<int> calls{0};
  InterProcessMutex* seen = nullptr;
  holder.make_revocable([&](InterProcessMutex& m) {
    seen = &m;
    if (calls++ == 0) requested.set_value();
  });
  holder.acquire();
  const auto node = holder.lock_path();
  CHECK(c1->get_data(node).data.empty());  // a revocable node carries no data

  InterProcessMutex other(*c2, "/revoke/basic");
  const auto participants = other.participant_nodes();
  REQUIRE(participants.size() == 1);
  CHECK(participants[0] == node);
  Revoker::attempt_revoke(*c2, participants[0]);
  REQUIRE(requested.get_future().wait_for(10s) == std::future_status::ready);
  CHECK(seen == &holder);
  holder.release();  // the owner thread honours the request
  CHECK(other.acquire(10s));
  other.release();
  CHECK(calls == 1);
}

TEST_CASE("revocation: revocability is cleared by release, and revoking a missing node is not an error",
          "[revocation]") {
  ServerFixture fx;
  auto c = fx.client();
  InterProcessMutex m(*c, "/revoke/cleared");
  std::atomic<int> calls{0};
  m.make_revocable([&](InterProcessMutex&) { ++calls; });
  m.acquire();
  m.release();
  m.acquire();  // not revocable any more: default data, no watch
  const auto node = m.lock_path();
  CHECK_FALSE(c->get_data(node).data.empty());
  Revoker::attempt_revoke(*c, node);
  std::this_thread::sleep_for(500ms);
  CHECK(calls == 0);
  m.release();
  error_code ec;
  Revoker::attempt_revoke(*c, node, ec);  // gone: ignored, as Curator
  CHECK_FALSE(ec);
}

TEST_CASE("revocation: every request is reported while held, and the write lock is revocable",
          "[revocation]") {
  ServerFixture fx;
  auto c1 = fx.client();
  auto c2 = fx.client();
  InterProcessReadWriteLock lock(*c1, "/revoke/rw", std::string("data"));
  std::atomic<int> calls{0};
  std::atomic<bool> wrong_lock{false};
  lock.write_lock().make_revocable([&](InterProcessMutex& m) {
    if (&m != &lock.write_lock()) wrong_lock = true;
    ++calls;
  });
  lock.write_lock().acquire();
  const auto node = lock.write_lock().lock_path();
  CHECK(c1->get_data(node).data.empty());  // revocable: empty data instead of the lock data
  c2->set_data(node, "something else");    // a change that is not a revocation
  Revoker::attempt_revoke(*c2, node);
  CHECK(eventually([&] { return calls == 1; }, 10s));
  Revoker::attempt_revoke(*c2, node);  // the watch was re-armed
  CHECK(eventually([&] { return calls == 2; }, 10s));
  CHECK_FALSE(wrong_lock);
  lock.write_lock().release();
  // Released: the next hold is not revocable (and carries the lock data again).
  lock.write_lock().acquire();
  CHECK(c1->get_data(lock.write_lock().lock_path()).data == "data");
  lock.write_lock().release();
}

TEST_CASE("revocation interop: zkrecipes revokes a Java Curator holder", "[revocation][interop]") {
  if (!curator_peer_or_skip()) return;
  ServerFixture fx;
  auto c = fx.client();
  CuratorPeer java(fx.server.connect_string(), "mutex", {"/revoke/java"});
  REQUIRE(java.call("revocable") == "revocable");
  const auto got = java.call("acquire");
  REQUIRE(got.rfind("acquired ", 0) == 0);
  const auto node = got.substr(9);
  InterProcessMutex m(*c, "/revoke/java");
  CHECK_FALSE(m.acquire(300ms));
  const auto participants = m.participant_nodes();
  REQUIRE(participants.size() == 1);
  CHECK(participants[0] == node);
  Revoker::attempt_revoke(*c, participants[0]);
  CHECK(java.wait_async("revoke-requested", 10s) == "revoke-requested " + node);
  CHECK(java.wait_async("revoke-released", 10s) == "revoke-released " + node);
  CHECK(m.acquire(10s));
  m.release();
}

TEST_CASE("revocation interop: Java Curator revokes a zkrecipes holder", "[revocation][interop]") {
  if (!curator_peer_or_skip()) return;
  ServerFixture fx;
  auto c = fx.client();
  InterProcessMutex m(*c, "/revoke/cpp");
  std::promise<void> requested;
  m.make_revocable([&](InterProcessMutex&) { requested.set_value(); });
  m.acquire();
  CuratorPeer java(fx.server.connect_string(), "mutex", {"/revoke/cpp"});
  const auto participants = java.call("participants");
  CHECK(participants == "participants " + m.lock_path());
  CHECK(java.call("revoke " + m.lock_path()) == "revoke-sent");
  REQUIRE(requested.get_future().wait_for(10s) == std::future_status::ready);
  m.release();
  CHECK(java.call("acquire 10000").rfind("acquired", 0) == 0);
  CHECK(java.call("release") == "released");
}
