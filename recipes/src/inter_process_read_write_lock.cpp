#include <zkr/framework/paths.hpp>
#include <zkr/recipes/inter_process_read_write_lock.hpp>

namespace zkr {

namespace {

/// A shared driver without ownership (the drivers are function-local statics).
template <class D>
std::shared_ptr<const LockDriver> unowned(const D& d) {
  return std::shared_ptr<const LockDriver>(&d, [](const LockDriver*) {});
}

/// The read driver of one attempt made by a thread that holds the write lock of the same lock object: held at
/// once (Curator's `writeLock.isOwnedByCurrentThread()` branch). The fact is taken on the calling thread when
/// the attempt starts, since the engine runs on the client's I/O thread where thread identity means nothing.
class ReadDriverHoldingWrite : public ReadLockDriver {
 public:
  std::optional<PredicateResults> gets_the_lock(const std::vector<std::string>& children,
                                                std::string_view our_node, std::size_t) const override {
    return read_gets_the_lock(children, our_node, /*this_thread_owns_write=*/true);
  }
};

}  // namespace

/// The shared side (Curator's `ReadLock`): an `InterProcessMutex` making `__READ__` nodes.
class InterProcessReadWriteLock::ReadLock : public InterProcessMutex {
 protected:
  /// `participant_nodes` lists the reader nodes only (Curator: children containing "__READ__").
  std::string participant_kind() const override;
  /// Adds the downgrade (fixed sequence, "caller holds write" driver) when the calling thread holds the
  /// write lock.
  detail::AcquireOptions make_options(
      std::optional<std::chrono::steady_clock::time_point> deadline) const override;

 private:
  friend class InterProcessReadWriteLock;
  ReadLock(CuratorFramework& client, const std::string& path, const WriteLock& write);
  const WriteLock& write_;
};

/// The exclusive side (Curator's `WriteLock`): an `InterProcessMutex` making `__WRIT__` nodes.
class InterProcessReadWriteLock::WriteLock : public InterProcessMutex {
 protected:
  /// `participant_nodes` lists the writer nodes only (Curator: children containing "__WRIT__").
  std::string participant_kind() const override;
  /// `client_errc::would_deadlock` when the calling thread holds the read lock but not the write lock
  /// (upgrade).
  error_code acquire_precondition() const override;

 private:
  friend class InterProcessReadWriteLock;
  WriteLock(CuratorFramework& client, const std::string& path);
  const ReadLock* read_ = nullptr;
};

InterProcessReadWriteLock::InterProcessReadWriteLock(CuratorFramework& client, std::string path,
                                                     std::optional<std::string> lock_data)
    : write_(new WriteLock(client, path)), read_(new ReadLock(client, path, *write_)) {
  write_->read_ = read_.get();
  write_->set_node_data(lock_data);
  read_->set_node_data(std::move(lock_data));
}

InterProcessReadWriteLock::~InterProcessReadWriteLock() = default;

InterProcessMutex& InterProcessReadWriteLock::read_lock() noexcept { return *read_; }
const InterProcessMutex& InterProcessReadWriteLock::read_lock() const noexcept { return *read_; }
InterProcessMutex& InterProcessReadWriteLock::write_lock() noexcept { return *write_; }
const InterProcessMutex& InterProcessReadWriteLock::write_lock() const noexcept { return *write_; }
const std::string& InterProcessReadWriteLock::path() const noexcept { return write_->path(); }

InterProcessReadWriteLock::WriteLock::WriteLock(CuratorFramework& client, const std::string& path)
    : InterProcessMutex(client, path, std::string(write_lock_name), unowned(write_lock_driver())) {}

std::string InterProcessReadWriteLock::WriteLock::participant_kind() const {
  return std::string(write_lock_name);
}

error_code InterProcessReadWriteLock::WriteLock::acquire_precondition() const {
  // Re-entering the write lock never gets here; holding only the read lock means waiting for ourselves.
  if (read_ && read_->is_owned_by_current_thread()) return client_errc::would_deadlock;
  return {};
}

InterProcessReadWriteLock::ReadLock::ReadLock(CuratorFramework& client, const std::string& path,
                                              const WriteLock& write)
    : InterProcessMutex(client, path, std::string(read_lock_name), unowned(read_lock_driver())),
      write_(write) {}

std::string InterProcessReadWriteLock::ReadLock::participant_kind() const {
  return std::string(read_lock_name);
}

detail::AcquireOptions InterProcessReadWriteLock::ReadLock::make_options(
    std::optional<std::chrono::steady_clock::time_point> deadline) const {
  detail::AcquireOptions o = InterProcessMutex::make_options(deadline);
  if (!write_.is_owned_by_current_thread()) return o;
  const std::string write_path = write_.lock_path();
  if (write_path.empty()) return o;
  // Only a write grant that is still ours downgrades. A thread keeps its hold of a lost grant until it
  // releases it, but the write node went with its session (or was deleted): granting the read at once, with
  // a node sorted where that write node was, would let it read beside the next writer. Curator checks only
  // the thread. A grant known to be lost queues its read as any reader does; one found lost during the
  // downgrade (its node missing from the listing, or a new session) fails it with `client_errc::lock_lost`.
  const Lease* write_lease = write_.lease();
  if (!write_lease || write_lease->status() == LeaseStatus::lost ||
      write_lease->session_id() != detail::access::engine(*this)->core()->session_id())
    return o;
  static const ReadDriverHoldingWrite holding_write;
  o.driver = unowned(holding_write);
  // CURATOR-621: the read node takes the write node's sequence, as an EPHEMERAL non-sequential node, so it
  // sorts with the write node, ahead of any writer queued since.
  o.fixed_sequence = std::string(read_write_sort_key(node_name(write_path)));
  o.fixed_sequence_node = std::string(node_name(write_path));
  o.fixed_sequence_session = write_lease->session_id();
  return o;
}

}  // namespace zkr
