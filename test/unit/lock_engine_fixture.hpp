#pragma once
// The fixture of the lock engine's and the semaphore state machine's unit tests (lock_engine_*_test.cpp,
// semaphore_engine_test.cpp): one FakeCore, engines and semaphores over it, an acquire started on its I/O
// thread with what its completion saw. Cleanup is checked *inside* the completion (the tree as the
// completion saw it), since a cancelled or failed operation must delete its nodes before it completes.

#include <algorithm>
#include <atomic>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>
#include <zkr/drivers/read_write_lock_driver.hpp>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/lease_core.hpp>
#include <zkr/recipes/detail/lock_internals.hpp>
#include <zkr/recipes/inter_process_semaphore_v2.hpp>

#include "fault_steps.hpp"

namespace {

using namespace std::chrono_literals;
using fake::FakeCore;
using fake::Op;
using zkr::client_errc;
using zkr::error_code;
using zkr::Lease;
using zkr::LeaseStatus;
using zkr::zk_errc;
using Clock = std::chrono::steady_clock;
using CancelPtr = std::shared_ptr<zkr::detail::CancelState>;

const std::string dir = "/locks/m";
const std::string sem = "/sem";
const std::string sem_locks = "/sem/locks";
const std::string sem_leases = "/sem/leases";

/// What one acquire completed with, and the tree its completion saw.
struct Outcome {
  int calls = 0;
  error_code ec;
  Lease lease;
  std::vector<Lease> leases;
  std::vector<std::string> seen;   ///< children of the lock directory (or the lease directory) at completion
  std::vector<std::string> seen2;  ///< children of the semaphore's lock directory at completion
  std::size_t watches_seen = 0;    ///< watches registered at completion
  bool on_io_thread = false;
  bool done() const { return calls > 0; }
};

struct Fixture {
  std::shared_ptr<FakeCore> core = std::make_shared<FakeCore>();

  Fixture() = default;
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;
  ~Fixture() { core->shutdown(); }

  std::shared_ptr<zkr::detail::LockInternals> engine(std::size_t max_leases = 1) {
    return std::make_shared<zkr::detail::LockInternals>(core, dir, "lock-", max_leases, nullptr);
  }

  /// An engine over `PrewatchLockDriver`.
  std::shared_ptr<zkr::detail::LockInternals> prewatch_engine(std::size_t max_leases = 1) {
    return std::make_shared<zkr::detail::LockInternals>(core, dir, "lock-", max_leases,
                                                        std::make_shared<zkr::PrewatchLockDriver>());
  }

  /// Starts one engine attempt on the I/O thread.
  std::shared_ptr<Outcome> start(const std::shared_ptr<zkr::detail::LockInternals>& e,
                                 zkr::detail::AcquireOptions o = {}, CancelPtr cancel = nullptr) {
    auto out = std::make_shared<Outcome>();
    boost::asio::post(core->context(), [c = core, e, out, o = std::move(o), cancel]() mutable {
      e->attempt_lock(std::move(o), cancel, [c, out](error_code ec, Lease l) {
        ++out->calls;
        out->ec = ec;
        out->lease = std::move(l);
        out->seen = c->children(dir);
        out->watches_seen = c->watch_count();
        out->on_io_thread = c->running_in_io_thread();
      });
    });
    return out;
  }

  std::shared_ptr<zkr::detail::SemaphoreShared> semaphore(int max_leases) {
    return zkr::detail::make_semaphore_shared(core, sem, max_leases);
  }

  /// Starts one semaphore acquire of `qty` leases on the I/O thread.
  std::shared_ptr<Outcome> sem_start(const std::shared_ptr<zkr::detail::SemaphoreShared>& s, int qty,
                                     std::optional<Clock::time_point> deadline = std::nullopt,
                                     CancelPtr cancel = nullptr) {
    auto out = std::make_shared<Outcome>();
    boost::asio::post(core->context(), [c = core, s, qty, deadline, out, cancel]() mutable {
      zkr::detail::semaphore_acquire(s, qty, deadline, cancel, [c, out](error_code ec, std::vector<Lease> v) {
        ++out->calls;
        out->ec = ec;
        out->leases = std::move(v);
        out->seen = c->children(sem_leases);
        out->seen2 = c->children(sem_locks);
        out->watches_seen = c->watch_count();
        out->on_io_thread = c->running_in_io_thread();
      });
    });
    return out;
  }

  bool wait(const Outcome& o, std::chrono::milliseconds limit = 5s) {
    return core->run_until([&] { return o.done(); }, limit);
  }

  void fire(const CancelPtr& c) {
    boost::asio::post(core->context(), [c] { c->request(); });
  }

  error_code release(Lease& l) {
    const auto ec = fake::run_release(*core, l);
    REQUIRE(ec);
    return *ec;
  }

  /// A contender of another session, queued now (as another client would).
  std::string other(const std::string& parent = dir, const std::string& name = "lock-") {
    return core->put(zkr::make_path(parent, "_c_10000000-0000-4000-8000-000000000000-" + name),
                     zkr::CreateMode::ephemeral_sequential, FakeCore::other_session);
  }

  std::vector<std::string> kids(const std::string& path = dir) const { return core->children(path); }

  /// Deletes every node of ours (this session's) under `path`.
  void erase_ours(const std::string& path) {
    for (auto& n : core->children(path)) {
      auto p = zkr::make_path(path, n);
      if (core->stat(p)->ephemeral_owner == core->session_id()) core->erase(p);
    }
  }

  std::string name_of(const std::string& path) const { return zkr::node_name(path); }
};

/// The connection drops, comes back to a read-only server, then to a read-write one: the lease is maybe lost
/// (a read-only server is cut off from its quorum, which may expire the session), then held again.
inline void suspend_read_only_reconnect(FakeCore& core, const Lease& lease) {
  core.suspend();
  core.reconnect(/*read_only=*/true);
  core.settle();
  CHECK(lease.status() == LeaseStatus::maybe_lost);
  core.reconnect();
  core.settle();
  CHECK(lease.status() == LeaseStatus::held);
}

/// One run of an acquire scenario: what it completed with, and the names of the nodes the test itself put
/// (other clients' nodes; anything else in a directory is ours).
struct Run {
  std::shared_ptr<Outcome> out;
  std::vector<std::string> others;
};

/// `seen` without the names in `others`.
inline std::vector<std::string> ours(std::vector<std::string> seen, const std::vector<std::string>& others) {
  std::erase_if(
      seen, [&](const std::string& n) { return std::find(others.begin(), others.end(), n) != others.end(); });
  return seen;
}

inline std::vector<std::string> names(std::initializer_list<std::string> paths) {
  std::vector<std::string> v;
  for (auto& p : paths) v.push_back(zkr::node_name(p));
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace
