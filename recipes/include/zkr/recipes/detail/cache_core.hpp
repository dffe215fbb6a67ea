#pragma once
/// \file
/// `detail::CacheCore`: what every public cache class is made of: the engine (`TreeSync`), the cache's state
/// (latent, started, closed), its listeners (each on a strand of its executor) and the waiters of
/// `initialized`. Not API.

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <zkr/recipes/detail/tree_sync.hpp>

namespace zkr::detail {

class CacheCore : public std::enable_shared_from_this<CacheCore> {
 public:
  enum class State { latent, started, closed };
  using Listener = std::function<void(const SyncEvent&)>;

  /// `quiet_initial_load`: the events of the first load are not dispatched (NodeCache's `start(true)`,
  /// PathChildrenCache's BUILD_INITIAL_CACHE); `initialized` still is.
  CacheCore(std::shared_ptr<Core> core, TreeSyncOptions options);
  ~CacheCore();

  /// latent -> started; the engine starts on the I/O thread. `client_errc::invalid_argument` when already
  /// started, `client_errc::closed` when closed.
  error_code start(bool quiet_initial_load = false);
  /// -> closed (idempotent): listeners and pending calls dropped, waiters completed with
  /// `client_errc::closed`, the engine closed on the I/O thread (its watches removed). Then waits until no
  /// listener call of this cache is running, but those up the calling thread's stack, and those blocked in a
  /// close() themselves; not on the client's I/O thread (see `BasicCache::close`).
  void close();
  State state() const;

  std::uint64_t add_listener(Listener l, boost::asio::any_io_executor ex);
  void remove_listener(std::uint64_t id);

  /// Blocks until the first load is complete (true), the timeout passes or the cache is closed (false).
  /// `ec`: not_started, closed, would_deadlock (on the I/O thread).
  bool await_initialized(std::optional<std::chrono::milliseconds> timeout, error_code& ec);
  /// Registers `cb` (runs on the I/O thread, or at once with the outcome); returns an id for `forget`.
  std::uint64_t await_start(VoidCallback cb);
  void forget(std::uint64_t id);

  /// The error of a call on a cache that is not started (`not_started`) or closed (`closed`); none when
  /// started.
  error_code not_running() const;
  /// Reads again on the engine (I/O thread): the whole tree (`node` empty) or one node; `clear_first` drops
  /// the cached nodes below the root first (no events). `done` gets `not_running()`'s error at once, else
  /// the engine's rebuild outcome.
  void reread(const std::string& node, bool clear_first, VoidCallback done);
  /// Drops the cached nodes below the root, without events: on the I/O thread (at once when called there,
  /// else waits for it). Nothing when not started or closed.
  void clear();
  /// `TreeSync::clear_data_bytes` (any thread); false when not started or closed.
  bool clear_data_bytes(const std::string& path, std::int32_t if_version);

  std::optional<ChildData> get(const std::string& path) const;
  std::size_t size() const;
  std::vector<ChildData> snapshot() const;
  std::optional<std::vector<ChildData>> children_of(const std::string& path) const;

  const std::shared_ptr<Core>& core() const noexcept { return core_; }
  const std::string& path() const noexcept { return sync_->options().root; }
  TreeSync& sync() noexcept { return *sync_; }

 private:
  struct Entry {
    Listener fn;
    boost::asio::strand<boost::asio::any_io_executor> strand;
    std::shared_ptr<std::atomic<bool>> active;
  };
  void on_event(SyncEvent ev);  // I/O thread
  /// Around each listener call (its strand): false when it must not run (closed, or the listener removed).
  bool enter_listener(const std::atomic<bool>& active);
  void leave_listener();
  void wait_for_listeners();
  bool hidden() const;  // closed and cleared: the storage reads as empty

  std::shared_ptr<Core> core_;
  std::shared_ptr<TreeSync> sync_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  State state_ = State::latent;
  bool initialized_ = false;
  bool quiet_ = false;
  std::map<std::uint64_t, Entry> listeners_;
  std::map<std::uint64_t, VoidCallback> waiters_;
  std::uint64_t next_id_ = 0;
  std::size_t running_ = 0;         // listener calls in progress
  std::size_t closing_inside_ = 0;  // of those, the ones blocked in close()
};

}  // namespace zkr::detail
