// The locks over TLS (issue 27): the core of the lock contract (lock_contract_test.cpp, same adapters) with
// every client a TLS client of a TLS-only server, each other lock type taken once over TLS, and x509 ACLs on
// a lock directory keeping a second certificate (and a plain-text client) from touching the holder's lock.
// Skipped with a warning when this build has no TLS (tls_available()). Every wait is bounded.

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

#include "lock_adapters.hpp"
#include "tls_support.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

/// A TLS-only server (no plain port), and an independent TLS client that looks at the lock nodes.
struct TlsLockFixture : TlsServerFixture {
  TlsLockFixture() : TlsServerFixture(false) {}

  std::unique_ptr<CuratorFramework> admin = client("client-admin");

  /// Children of `path` as `admin` sees them (empty when it does not exist).
  std::vector<std::string> children(const std::string& path) {
    error_code ec;
    auto c = admin->get_children(path, {}, ec);
    return ec ? std::vector<std::string>{} : c;
  }
};

/// Mutual exclusion across sessions and threads, fencing tokens increasing in grant order, no node left.
template <class A>
void exclusion(TlsLockFixture& fx, const std::string& path) {
  INFO("mutual exclusion on " << path);
  constexpr int clients = 3, threads_per_client = 2, rounds = 4;
  std::vector<std::unique_ptr<CuratorFramework>> cs;
  std::vector<CuratorFramework*> raw;
  for (int i = 0; i < clients; ++i)
    raw.push_back(cs.emplace_back(fx.client(i % 2 ? "client-b" : "client-a")).get());
  check_exclusion<A>(raw, path, threads_per_client, rounds);
  CHECK(eventually([&] { return A::nodes(fx, path) == 0; }));
}

/// Waiters, each queued before the next starts, are granted in queue order.
template <class A>
void fifo(TlsLockFixture& fx, const std::string& path) {
  INFO("FIFO on " << path);
  auto holder_client = fx.client("client-a");
  auto holder = A::make(*holder_client, path);
  REQUIRE(holder->acquire(30s));
  constexpr int waiters = 3;
  std::vector<std::unique_ptr<CuratorFramework>> cs;
  std::vector<std::future<bool>> fs;
  std::mutex mu;
  std::vector<int> order;
  for (int i = 0; i < waiters; ++i) {
    cs.push_back(fx.client(i % 2 ? "client-a" : "client-b"));
    fs.push_back(std::async(std::launch::async, [&, i] {
      auto lock = A::make(*cs[std::size_t(i)], path);
      if (!lock->acquire(60s)) return false;
      {
        std::lock_guard lk(mu);
        order.push_back(i);
      }
      lock->release();
      return true;
    }));
    // Waiter i is queued before the next one starts.
    REQUIRE(eventually([&] { return A::nodes(fx, path) == A::expected_nodes(1, std::size_t(i) + 1); }));
  }
  holder->release();
  for (auto& f : fs) CHECK(f.get());
  CHECK(order == std::vector<int>{0, 1, 2});
}

/// A timed acquire against a holder returns false and leaves no node; it succeeds once the holder is gone.
template <class A>
void timed(TlsLockFixture& fx, const std::string& path) {
  INFO("timed acquire on " << path);
  auto c1 = fx.client("client-a");
  auto c2 = fx.client("client-b");
  auto a = A::make(*c1, path);
  auto b = A::make(*c2, path);
  REQUIRE(a->acquire(30s));
  CHECK_FALSE(b->acquire(300ms));
  CHECK_FALSE(b->acquire(0ms));
  CHECK_FALSE(b->is_acquired_in_this_process());
  CHECK(eventually([&] { return A::nodes(fx, path) == A::expected_nodes(1, 0); }));
  a->release();
  CHECK(b->acquire(10s));
  b->release();
}

/// The holder's session is killed: it loses the lock, and the waiter gets it with a larger token.
template <class A>
void killed_holder(TlsLockFixture& fx, const std::string& path) {
  INFO("killed holder on " << path);
  auto c1 = fx.client("client-a", {.session_timeout = 4s});
  auto c2 = fx.client("client-b");
  auto a = A::make(*c1, path);
  auto b = A::make(*c2, path);
  REQUIRE(a->acquire(30s));
  const auto first_token = A::token(*a);
  // A blocking hold belongs to its thread (the mutex): acquire, read the token and release there.
  auto fut = std::async(std::launch::async, [&]() -> std::int64_t {
    if (!b->acquire(60s)) return -1;
    auto token = A::token(*b);
    b->release();
    return token;
  });
  REQUIRE(eventually([&] { return A::nodes(fx, path) == A::expected_nodes(1, 1); }));
  c1->inject_session_expiration();
  CHECK(fut.get() > first_token);
  CHECK(eventually([&] { return a->lease_status() == LeaseStatus::lost; }, 30s));
  error_code ec;
  a->release(ec);  // the node went with the session
  CHECK(eventually([&] { return A::nodes(fx, path) == 0; }));
}

/// A client with certificate `name` whose nodes get `acl` (Curator's ACLProvider).
std::unique_ptr<CuratorFramework> tls_client_with_acl(TlsServerFixture& f, const std::string& name,
                                                      AclList acl) {
  ClientConfig c;
  c.connect_string = f.server.secure_connect_string();
  c.retry_policy = std::make_shared<ExponentialBackoffRetry>(Millis(100), 10);
  c.session_timeout = 10s;
  c.connection_timeout = 5s;
  c.tls = tls_settings(f.files(name));
  c.acl_provider = [acl = std::move(acl)](std::string_view) { return acl; };
  auto client = std::make_unique<CuratorFramework>(std::move(c));
  client->start();
  if (!client->block_until_connected(20s)) throw std::runtime_error("client " + name + " could not connect");
  return client;
}

}  // namespace

// One server per lock type: the four cases run one after the other on their own paths.
TEMPLATE_TEST_CASE(
    "tls contract: mutual exclusion with increasing tokens + FIFO + timed acquire + killed holder", "[tls]",
    MutexAdapter, StandardMutexAdapter, SemaphoreMutexAdapter) {
  if (!tls_available()) return;
  TlsLockFixture fx;
  exclusion<TestType>(fx, "/tls-locks/exclusion");
  fifo<TestType>(fx, "/tls-locks/fifo");
  timed<TestType>(fx, "/tls-locks/timed");
  killed_holder<TestType>(fx, "/tls-locks/killed");
}

TEST_CASE("tls: every other lock type over TLS (read-write lock + semaphore + multi-lock + leader latch)",
          "[tls]") {
  if (!tls_available()) return;
  TlsLockFixture fx;
  auto ca = fx.client("client-a");
  auto cb = fx.client("client-b");

  {
    INFO("InterProcessReadWriteLock");
    InterProcessReadWriteLock rw_a(*ca, "/tls-rw");
    InterProcessReadWriteLock rw_b(*cb, "/tls-rw");
    REQUIRE(rw_a.read_lock().acquire(30s));
    REQUIRE(rw_b.read_lock().acquire(30s));  // readers share
    rw_b.read_lock().release();
    CHECK_FALSE(rw_b.write_lock().acquire(300ms));  // a writer waits for the other session's reader
    rw_a.read_lock().release();
    REQUIRE(rw_b.write_lock().acquire(30s));
    const auto write_token = rw_b.write_lock().fencing_token();
    CHECK_FALSE(rw_a.read_lock().acquire(300ms));  // the writer excludes readers
    CHECK_FALSE(rw_a.write_lock().acquire(0ms));
    rw_b.write_lock().release();
    REQUIRE(rw_a.write_lock().acquire(30s));
    CHECK(rw_a.write_lock().fencing_token() > write_token);
    rw_a.write_lock().release();
    CHECK(eventually([&] { return fx.children("/tls-rw").empty(); }));
  }
  {
    INFO("InterProcessSemaphoreV2");
    InterProcessSemaphoreV2 s_a(*ca, "/tls-sem", 2);
    InterProcessSemaphoreV2 s_b(*cb, "/tls-sem", 2);
    auto two = s_a.acquire(2, 30s);
    REQUIRE(two.size() == 2);
    CHECK_FALSE(s_b.acquire(300ms).valid());  // both leases taken
    CHECK(eventually([&] { return fx.children("/tls-sem/leases").size() == 2; }));
    s_a.return_lease(std::move(two[0]));
    auto one = s_b.acquire(30s);
    REQUIRE(one.valid());
    CHECK(one.fencing_token() > two[1].fencing_token());
    CHECK(s_a.participant_nodes().size() == 2);
    s_b.return_lease(std::move(one));
    s_a.return_lease(std::move(two[1]));
    CHECK(eventually([&] { return fx.children("/tls-sem/leases").empty(); }));
  }
  {
    INFO("InterProcessMultiLock");
    InterProcessMultiLock ml_a(*ca, {"/tls-multi/x", "/tls-multi/y"});
    InterProcessMultiLock ml_b(*cb, {"/tls-multi/y", "/tls-multi/z"});
    InterProcessMutex y_b(*cb, "/tls-multi/y");
    REQUIRE(ml_a.acquire(30s));
    CHECK(ml_a.fencing_tokens().size() == 2);
    CHECK_FALSE(y_b.acquire(300ms));   // one of its locks, alone
    CHECK_FALSE(ml_b.acquire(300ms));  // all or nothing: z is not kept
    CHECK(eventually([&] { return fx.children("/tls-multi/z").empty(); }));
    ml_a.release();
    REQUIRE(ml_b.acquire(30s));
    CHECK(fx.children("/tls-multi/y").size() == 1);
    CHECK(fx.children("/tls-multi/z").size() == 1);
    ml_b.release();
    CHECK(eventually(
        [&] { return fx.children("/tls-multi/y").empty() && fx.children("/tls-multi/z").empty(); }));
  }
  {
    INFO("LeaderLatch");
    LeaderLatch first(*ca, "/tls-latch", "a");
    LeaderLatch second(*cb, "/tls-latch", "b");
    first.start();
    REQUIRE(first.await(30s));
    second.start();
    REQUIRE(eventually([&] { return fx.children("/tls-latch").size() == 2; }));
    CHECK_FALSE(second.await(300ms));
    CHECK(second.get_leader() == Participant{"a", true});
    first.close();
    REQUIRE(second.await(30s));
    CHECK(second.has_leadership());
    CHECK_FALSE(first.has_leadership());
    second.close();
    CHECK(eventually([&] { return fx.children("/tls-latch").empty(); }));
  }
}

TEST_CASE("tls: x509 ACLs on the lock directory keep another certificate and plain text off the lock",
          "[tls][acl]") {
  if (!tls_available()) return;
  TlsServerFixture f(true);  // the plain port too, for a client without a certificate
  const auto a_id = f.files("client-a").x509_id;
  // ZooKeeper checks CREATE and DELETE of a child against the parent's ACL, READ (getChildren) against the
  // parent too, and WRITE (setData, what a revocation does) against the node's own. The lock directory gives
  // A everything and others only READ (they may see the queue); A's lock nodes give A everything and others
  // nothing, through A's ACL provider.
  const AclList a_only{{perms::all, {"x509", a_id}}};
  AclList dir_acl = a_only;
  dir_acl.push_back({perms::read, {"world", "anyone"}});
  auto a = tls_client_with_acl(f, "client-a", a_only);
  const std::string dir = "/x509-locks/guarded";
  a->create("/x509-locks", {});
  a->create(dir, {.acl = dir_acl});

  InterProcessMutex held(*a, dir);
  std::atomic<int> revoke_calls{0};
  held.make_revocable([&](InterProcessMutex&) { ++revoke_calls; });
  REQUIRE(held.acquire(30s));
  const auto node = held.lock_path();
  const auto token = held.fencing_token();

  auto b = f.client("client-b");
  auto plain = make_client(f.server.connect_string());
  for (auto* other : {b.get(), plain.get()}) {
    INFO((other == b.get() ? "client-b over TLS" : "plain text, no certificate"));
    error_code ec;
    // It sees the queue (READ on the directory) ...
    CHECK(other->get_children(dir) == std::vector<std::string>{node_name(node)});
    // ... but cannot delete the holder's node (DELETE on the directory),
    other->remove(node, {}, ec);
    CHECK(ec == zk_errc::no_auth);
    // nor add a node to the queue (CREATE on the directory),
    ec = {};
    other->create(dir + "/intruder", {}, ec);
    CHECK(ec == zk_errc::no_auth);
    // nor acquire: a typed error within the bound, not a wait,
    InterProcessMutex contender(*other, dir);
    ec = {};
    CHECK_FALSE(contender.acquire(20s, ec));
    CHECK(ec == zk_errc::no_auth);
    CHECK_FALSE(contender.is_acquired_in_this_process());
    // nor revoke (WRITE on the node),
    ec = {};
    Revoker::attempt_revoke(*other, node, ec);
    CHECK(ec == zk_errc::no_auth);
    ec = {};
    other->set_data(node, "__REVOKE__", -1, ec);
    CHECK(ec == zk_errc::no_auth);
    // nor read the node.
    ec = {};
    (void)other->get_data(node, {}, ec);
    CHECK(ec == zk_errc::no_auth);
    // The queue is as it was: A's node alone.
    CHECK(a->get_children(dir) == std::vector<std::string>{node_name(node)});
  }

  // A still holds, was never asked to revoke, and releases fine.
  CHECK(held.is_acquired_in_this_process());
  CHECK(held.lease_status() == LeaseStatus::held);
  CHECK(held.fencing_token() == token);
  CHECK(a->exists(node).has_value());
  CHECK(revoke_calls == 0);
  error_code ec;
  held.release(ec);
  CHECK_FALSE(ec);
  CHECK(a->get_children(dir).empty());
  CHECK(held.acquire(30s));  // and takes it again
  held.release();
}
