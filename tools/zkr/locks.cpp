#include "locks.hpp"

#include <boost/asio/bind_cancellation_slot.hpp>
#include <memory>
#include <string>
#include <zkr/recipes/inter_process_multi_lock.hpp>
#include <zkr/recipes/inter_process_mutex.hpp>
#include <zkr/recipes/inter_process_read_write_lock.hpp>
#include <zkr/recipes/inter_process_semaphore_v2.hpp>
#include <zkr/recipes/leader_latch.hpp>

namespace zkr::cli {

namespace asio = boost::asio;

namespace {

/// One term of a LeaderLatch election as a mutex: the latch's nodes (lock name "latch-", protected
/// ephemeral-sequential, the first leads, Curator's standard policy as LeaderLatch's own engine), through
/// the mutex's protected constructor taking a lock name, as a Curator subclass would.
class LatchTermMutex final : public InterProcessMutex {
 public:
  LatchTermMutex(CuratorFramework& client, std::string path)
      : InterProcessMutex(client, std::move(path), std::string(LeaderLatch::lock_name),
                          std::make_shared<StandardLockDriver>()) {}
};

/// The acquire of one InterProcessMutex (or read / write lock), keeping `owner` alive meanwhile.
template <class Owner>
LockSpec mutex_like(std::shared_ptr<Owner> owner, InterProcessMutex& lock, std::string description,
                    std::string dir) {
  LockSpec s;
  s.start = [owner, &lock](std::optional<std::chrono::milliseconds> timeout, asio::cancellation_slot slot,
                           AcquireHandler handler) {
    auto done = asio::bind_cancellation_slot(slot, [h = std::move(handler)](error_code ec, Lease lease) {
      std::vector<Lease> leases;
      if (lease) leases.push_back(std::move(lease));
      h(ec, std::move(leases));
    });
    if (timeout)
      lock.async_try_acquire_for(*timeout, std::move(done));
    else
      lock.async_acquire(std::move(done));
  };
  s.status.description = std::move(description);
  s.status.queue_dirs = {std::move(dir)};
  return s;
}

}  // namespace

SpecFactory mutex_spec(std::string path, LockOptions options) {
  return [path = std::move(path), options](CuratorFramework& client) {
    auto m = std::make_shared<InterProcessMutex>(client, path);
    if (options.data) m->set_node_data(options.data);
    return mutex_like(m, *m, "lock " + path, path);
  };
}

SpecFactory read_write_spec(std::string path, bool write, LockOptions options) {
  return [path = std::move(path), write, options](CuratorFramework& client) {
    auto rw = std::make_shared<InterProcessReadWriteLock>(client, path, options.data);
    InterProcessMutex& lock = write ? rw->write_lock() : rw->read_lock();
    return mutex_like(rw, lock, (write ? "write lock " : "read lock ") + path, path);
  };
}

SpecFactory semaphore_spec(std::string path, int max_leases, LockOptions options) {
  return [path = std::move(path), max_leases, options](CuratorFramework& client) {
    auto sem = std::make_shared<InterProcessSemaphoreV2>(client, path, max_leases);
    if (options.data) sem->set_node_data(options.data);
    LockSpec s;
    s.start = [sem](std::optional<std::chrono::milliseconds> timeout, asio::cancellation_slot slot,
                    AcquireHandler handler) {
      auto done = asio::bind_cancellation_slot(
          slot,
          [h = std::move(handler)](error_code ec, std::vector<Lease> leases) { h(ec, std::move(leases)); });
      if (timeout)
        sem->async_try_acquire_for(1, *timeout, std::move(done));
      else
        sem->async_acquire(1, std::move(done));
    };
    s.status.description = "a lease of semaphore " + path + " (" + std::to_string(max_leases) +
                           (max_leases == 1 ? " lease)" : " leases)");
    s.status.queue_dirs = {make_path(path, InterProcessSemaphoreV2::lock_parent)};
    s.status.leases_dir = make_path(path, InterProcessSemaphoreV2::lease_parent);
    s.status.max_leases = max_leases;
    s.revocable_kind = false;  // Curator's semaphores are not revocable
    return s;
  };
}

SpecFactory multi_lock_spec(std::vector<std::string> paths, LockOptions options) {
  return [paths = std::move(paths), options](CuratorFramework& client) {
    auto multi = std::make_shared<InterProcessMultiLock>(client, paths);
    if (options.data) multi->set_node_data(options.data);
    LockSpec s;
    s.start = [multi](std::optional<std::chrono::milliseconds> timeout, asio::cancellation_slot slot,
                      AcquireHandler handler) {
      auto done = asio::bind_cancellation_slot(
          slot, [h = std::move(handler)](error_code ec, MultiLease lease) { h(ec, lease.take()); });
      if (timeout)
        multi->async_try_acquire_for(*timeout, std::move(done));
      else
        multi->async_acquire(std::move(done));
    };
    std::string list;
    for (auto& p : paths) list += (list.empty() ? "" : ", ") + p;
    s.status.description = "locks " + list;
    s.status.queue_dirs = paths;
    return s;
  };
}

SpecFactory leader_spec(std::string path, Election election, LockOptions options) {
  if (election == Election::selector) {
    return [path = std::move(path), options](CuratorFramework& client) {
      auto m = std::make_shared<InterProcessMutex>(client, path);
      if (options.data) m->set_node_data(options.data);
      auto s = mutex_like(m, *m, "leadership of " + path + " (LeaderSelector election)", path);
      s.revocable_kind = false;  // Curator's leader recipes are not revocable
      s.held = "leadership";
      return s;
    };
  }
  return [path = std::move(path), options](CuratorFramework& client) {
    // One term of a LeaderLatch held as a mutex grant, so that the term has a Lease (fencing token, loss
    // signal) and ends with it.
    auto m = std::make_shared<LatchTermMutex>(client, path);
    if (options.data) m->set_node_data(options.data);
    auto s = mutex_like(m, *m, "leadership of " + path + " (LeaderLatch election)", path);
    s.revocable_kind = false;
    s.held = "leadership";
    return s;
  };
}

}  // namespace zkr::cli
