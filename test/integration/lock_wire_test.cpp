// The lock engine's requests as they pass on the wire, traced by FaultProxy (fault_proxy.hpp): a lock's
// listing is sent right behind its create, before the create's reply has come back (one round trip for both),
// for the mutex, the semaphore's lease and the multi-lock's transaction. And every request leaves in one
// piece: the C client writes a frame's length and body with two send() calls, which the framework corks
// together. The fake core of the unit tests cannot show this: it only sees the order of calls, not what is on
// the socket when a reply arrives. Last, a lock taken during an outage: what is sent, and what is not.

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <zkr/zkrecipes.hpp>

#include "client_support.hpp"
#include "completion_styles.hpp"
#include "fault_proxy.hpp"
#include "recorders.hpp"

using namespace zkr;
using namespace zkr::itest;

namespace {

// ZooKeeper opcodes (zookeeper.jute / ZooDefs.OpCode).
namespace opcode {
constexpr std::int32_t create = 1, get_children = 8, get_children2 = 12, multi = 14, create2 = 15;
}

bool is_listing(std::int32_t t) { return t == opcode::get_children || t == opcode::get_children2; }
bool is_create(std::int32_t t) { return t == opcode::create || t == opcode::create2; }

std::string describe(const std::vector<FaultProxy::WireEvent>& t) {
  std::string s;
  for (const auto& e : t) {
    if (e.xid < 0) continue;  // pings (-2) and watch events (-1)
    s += e.request ? "req " + std::to_string(e.type) + " " + e.path : std::string("reply");
    s += " #" + std::to_string(e.xid % 1000) + "\n";
  }
  return s;
}

/// For every request of a kind `is_first` in the trace: a listing request was sent after it and before its
/// reply. Returns how many such requests were found.
template <class Pred>
int listings_sent_before_reply(const std::vector<FaultProxy::WireEvent>& t, Pred is_first) {
  int found = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!t[i].request || t[i].xid < 0 || !is_first(t[i].type)) continue;
    ++found;
    std::size_t reply = t.size();
    for (std::size_t j = i + 1; j < t.size(); ++j)
      if (!t[j].request && t[j].xid == t[i].xid) {
        reply = j;
        break;
      }
    INFO("request #" << t[i].xid << " (opcode " << t[i].type << ")");
    REQUIRE(reply < t.size());
    bool listed = false;
    for (std::size_t j = i + 1; j < reply; ++j) listed = listed || (t[j].request && is_listing(t[j].type));
    CHECK(listed);
  }
  return found;
}

struct WireClient {
  FaultProxy proxy{shared_server().port()};
  std::unique_ptr<CuratorFramework> client;
  WireClient() {
    client = test_builder(proxy.connect_string()).build();
    client->start();
    REQUIRE(client->block_until_connected(10s));
  }
};

/// The frames of one acquire of `lock` (released afterwards, unrecorded).
template <class Lock>
std::vector<FaultProxy::WireEvent> traced_acquire(FaultProxy& proxy, Lock& lock) {
  proxy.record(true);
  lock.acquire();
  auto t = proxy.trace();
  proxy.record(false);
  lock.release();
  return t;
}

}  // namespace

// The lock directories are made persistent first: a container directory left empty by a release may be
// reaped (the test servers check often), and a create into a missing directory is retried after the parents
// are made, its pipelined listing rightly discarded.

TEST_CASE("wire: a mutex acquire sends its listing before the create's reply", "[wire][mutex]") {
  WireClient w;
  const auto path = unique_path("wire-mutex");
  w.client->create(path, {.creating_parents = true});
  InterProcessMutex m(*w.client, path);
  const auto t = traced_acquire(w.proxy, m);
  INFO(describe(t));
  CHECK(listings_sent_before_reply(t, is_create) == 1);
}

TEST_CASE("wire: a semaphore mutex pipelines the lock's and the lease's listings", "[wire][semaphore]") {
  WireClient w;
  const auto path = unique_path("wire-sem");
  w.client->create(path + "/locks", {.creating_parents = true});
  w.client->create(path + "/leases");
  InterProcessSemaphoreMutex m(*w.client, path);
  const auto t = traced_acquire(w.proxy, m);
  INFO(describe(t));
  CHECK(listings_sent_before_reply(t, is_create) == 2);  // the internal lock's node, then the lease
}

TEST_CASE("wire: a multi-lock sends every listing before the transaction's reply", "[wire][multi]") {
  WireClient w;
  const auto base = unique_path("wire-multi");
  std::vector<std::string> paths;
  for (int i = 0; i < 4; ++i) {
    paths.push_back(base + "/m" + std::to_string(i));
    w.client->create(paths.back(), {.creating_parents = true});
  }
  InterProcessMultiLock m(*w.client, paths);
  const auto t = traced_acquire(w.proxy, m);
  INFO(describe(t));
  REQUIRE(listings_sent_before_reply(t, [](std::int32_t type) { return type == opcode::multi; }) == 1);
  // All four listings, not just one, precede the transaction's reply.
  std::size_t multi_at = 0, reply_at = 0;
  for (std::size_t i = 0; i < t.size(); ++i)
    if (t[i].request && t[i].type == opcode::multi) multi_at = i;
  for (std::size_t i = multi_at + 1; i < t.size(); ++i)
    if (!t[i].request && t[i].xid == t[multi_at].xid) reply_at = i;
  int listings = 0;
  for (std::size_t i = multi_at + 1; i < reply_at; ++i) listings += t[i].request && is_listing(t[i].type);
  CHECK(listings == 4);
}

TEST_CASE("wire: every request reaches the server in one piece, length and body together",
          "[wire][framework]") {
  if (on_mt_client()) {
    WARN(
        "skipped: the multi-threaded C client sends from its own thread, where the session cannot cork the "
        "socket (docs/architecture.md)");
    return;
  }
  // Without the framework's TCP_CORK, the C client's two send() calls put the 4-byte length of each frame in
  // a segment of its own, and the proxy (like the server) mostly reads it alone.
  WireClient w;
  const auto path = unique_path("wire-whole");
  w.client->create(path, {.creating_parents = true});
  w.proxy.record(true);
  for (int i = 0; i < 5; ++i) {
    InterProcessMutex m(*w.client, path);
    m.acquire();
    m.release();
    w.client->set_data(path, "v" + std::to_string(i));
    CHECK(w.client->get_data(path).data == "v" + std::to_string(i));
  }
  const auto t = w.proxy.trace();
  w.proxy.record(false);
  int requests = 0, split = 0;
  std::string which;
  for (const auto& e : t) {
    if (!e.request || e.xid < 0) continue;  // pings are the C client's own, sent from its timer
    ++requests;
    if (!e.one_read) ++split, which += " opcode " + std::to_string(e.type);
  }
  INFO(describe(t) << "split:" << which);
  CHECK(requests >= 5 * 5);  // per round: create, listing, delete, set_data, get_data
  CHECK(split == 0);
}

TEST_CASE("lock: a timed-out or cancelled acquire during an outage completes at once and leaves no node",
          "[lock][outage]") {
  // The create of a lock node waits for the connection (up to the connection timeout, then again for every
  // retry). A timeout or a cancellation must not wait for all that: the create is stopped before it is sent.
  FaultProxy proxy(shared_server().port());
  StateRecorder states;
  auto c = test_builder(proxy.connect_string()).session_timeout(30s).connection_timeout(20s).build();
  c->add_connection_state_listener(states.sink());
  c->start();
  REQUIRE(c->block_until_connected(10s));
  auto admin = connect_shared();
  const auto path = unique_path("outage");
  admin->create(path);

  proxy.set_refuse(true);
  proxy.drop_connections();
  REQUIRE(states.wait_for(ConnectionState::suspended, 10s));
  InterProcessMutex mutex(*c, path);
  InterProcessSemaphoreMutex semaphore(*c, path + "-semaphore");
  InterProcessReadWriteLock rw(*c, path + "-rw");
  InterProcessMultiLock multi(*c, {path + "-multi/a", path + "-multi/b"});
  const std::pair<const char*, InterProcessLock*> locks[] = {{"mutex", &mutex},
                                                             {"semaphore mutex", &semaphore},
                                                             {"write lock", &rw.write_lock()},
                                                             {"multi-lock", &multi}};
  for (auto [name, lock] : locks) {
    INFO(name);
    const auto t0 = Clock::now();
    error_code ec;
    CHECK_FALSE(lock->acquire(300ms, ec));
    CHECK_FALSE(ec);
    CHECK(ms_since(t0) < 5000);  // a bound far below the 20 s connection timeout, not a speed test
  }

  auto t0 = Clock::now();
  asio::cancellation_signal sig;
  auto f = mutex.async_acquire(asio::bind_cancellation_slot(sig.slot(), asio::use_future));
  std::this_thread::sleep_for(100ms);
  t0 = Clock::now();
  sig.emit(asio::cancellation_type::terminal);
  CHECK(from_future(std::move(f), 5s).ec == asio::error::operation_aborted);
  CHECK(ms_since(t0) < 5000);

  // Connected again: no node was made, and the lock works.
  proxy.set_refuse(false);
  REQUIRE(c->block_until_connected(10s));
  c->sync(path);
  std::this_thread::sleep_for(300ms);
  CHECK(admin->get_children(path).empty());
  CHECK(admin->exists(path)->cversion == 0);  // no node was ever created in it
  for (const auto* p : {"-semaphore", "-rw", "-multi/a", "-multi/b", "-multi"})
    CHECK_FALSE(admin->exists(path + p));
  CHECK(mutex.acquire(10s));
  mutex.release();
  CHECK(eventually([&] { return c->pending_guaranteed_deletes() == 0; }, 5s));
}

TEST_CASE("lock: a semaphore's lease create cut by an outage is never sent after its deadline",
          "[lock][outage]") {
  // The internal mutex is granted, then the connection is cut on the lease's create (swallowed, and new
  // connections refused until 1.5 s later). The create's retry loop waits for the connection; the deadline
  // (0.5 s) stops it, so once connected again the create is not sent: no lease node is ever made.
  FaultProxy proxy(shared_server().port());
  auto c = started(test_builder(proxy.connect_string())
                       .session_timeout(30s)
                       .connection_timeout(20s)
                       .retry_policy(std::make_shared<RetryNTimes>(5, Millis(100))));
  auto admin = connect_shared();
  const auto path = unique_path("outage-lease");
  const auto leases_dir = path + "/" + std::string(InterProcessSemaphoreV2::lease_parent);
  const auto locks_dir = path + "/" + std::string(InterProcessSemaphoreV2::lock_parent);
  InterProcessSemaphoreV2 semaphore(*c, path, 1);
  proxy.arm_cut_on_create("/" + std::string(InterProcessSemaphoreV2::lease_parent) + "/", /*forward=*/false,
                          0ms,
                          /*refuse_after=*/true);
  std::thread reopen([&] {
    if (proxy.wait_fired(20s)) std::this_thread::sleep_for(1500ms);
    proxy.set_refuse(false);
  });
  const auto t0 = Clock::now();
  error_code ec;
  auto leases = semaphore.acquire(1, 500ms, ec);
  reopen.join();
  REQUIRE(proxy.wait_fired(0ms));
  CHECK_FALSE(ec);
  CHECK(leases.empty());
  CHECK(ms_since(t0) < 15000);  // a hang bound, not a speed test

  REQUIRE(c->block_until_connected(10s));
  c->sync(path);
  std::this_thread::sleep_for(300ms);  // time for a create that should not be sent to arrive
  // Nothing was ever created under the lease directory (not even the directory, made with the first lease).
  if (auto st = admin->exists(leases_dir)) CHECK(st->cversion == 0);
  CHECK(eventually(  // the internal mutex was given back (its container directory may be reaped too)
      [&] {
        error_code e;
        return admin->get_children(locks_dir, {}, e).empty();
      },
      10s));
  CHECK(eventually([&] { return c->pending_guaranteed_deletes() == 0; }, 10s));
  auto again = semaphore.acquire(1, 10s);
  CHECK(again.size() == 1);
}
