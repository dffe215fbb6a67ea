#pragma once
/// \file
/// `detail::TreeSync`: the one engine behind every cache (CuratorCache, NodeCache, PathChildrenCache,
/// TreeCache). It keeps `path -> ChildData` for a root in step with the server and reports the difference as
/// created / changed / deleted events, then `initialized` once per start. Not API: docs/caches.md describes
/// its guarantees. Every member but the storage readers (`get`, `size`, `snapshot`, `children_of`) runs on
/// the client's I/O thread; so do the sink's calls.

#include <atomic>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>
#include <zkr/framework/detail/core.hpp>
#include <zkr/recipes/cache/child_data.hpp>
#include <zkr/recipes/detail/tree_store.hpp>

namespace zkr::detail {

/// What a cache keeps.
struct TreeSyncOptions {
  std::string root;
  /// Levels below the root that are cached: 0 = the root only (Curator's SINGLE_NODE_CACHE, NodeCache), 1 =
  /// the root and its children (PathChildrenCache).
  int max_depth = std::numeric_limits<int>::max();
  /// Whether to list the children of a node (TreeCacheSelector::traverseChildren); empty: all.
  std::function<bool(const std::string&)> traverse_children;
  /// Whether to cache a child (TreeCacheSelector::acceptChild); empty: all.
  std::function<bool(const std::string&)> accept_child;
  /// Keep the nodes' bytes in the storage (the events carry them either way).
  bool cache_data = true;
  /// Keep the storage's contents after `close()` (Curator's DO_NOT_CLEAR_ON_CLOSE).
  bool keep_on_close = false;
  /// Use one persistent recursive watch where the core supports it (else one-shot watches per node).
  bool allow_persistent_watch = true;
  /// The pause before a node whose read failed after the client's retry policy gave up is read again (while
  /// connected; a new connection's resync reads everything anyway).
  std::chrono::milliseconds retry_pause{500};
};

/// One thing the engine reports.
struct SyncEvent {
  enum class Kind { created, changed, deleted, initialized, connection };
  Kind kind = Kind::created;
  std::optional<ChildData> old_data;                   ///< changed, deleted
  std::optional<ChildData> data;                       ///< created, changed
  ConnectionState state = ConnectionState::connected;  ///< connection
};
using SyncSink = std::function<void(SyncEvent)>;

class TreeSync;

/// One re-read asked for by the cache's user (a rebuild). Each read it causes holds it, and so do the reads
/// those cause (a new child's data after a listing); when the last lets go, `done` runs with the first error
/// met. Lives on the I/O thread.
class RereadPass {
 public:
  explicit RereadPass(VoidCallback done) : done_(std::move(done)) {}
  ~RereadPass() {
    if (done_) done_(ec_);
  }
  RereadPass(const RereadPass&) = delete;
  RereadPass& operator=(const RereadPass&) = delete;
  void fail(error_code ec) noexcept {
    if (!ec_) ec_ = ec;
  }

 private:
  VoidCallback done_;
  error_code ec_;
};
/// The passes a read serves (usually none: a watch's or a resync's read).
using Passes = std::vector<std::shared_ptr<RereadPass>>;

/// How the engine learns of changes: one-shot data and children watches on every node, or one persistent
/// (recursive) watch for the whole tree. The engine asks the strategy which it is and lets it arm and disarm
/// the tree-wide watch.
class WatchStrategy {
 public:
  virtual ~WatchStrategy() = default;
  /// True when each read sets a one-shot watch on its node.
  virtual bool per_node() const noexcept = 0;
  /// Sets what watches the whole tree (for a new session too); `done` runs on the I/O thread.
  virtual void arm(TreeSync& sync, VoidCallback done) = 0;
  /// Removes it (close).
  virtual void disarm(Core& core) = 0;
  /// The tree-wide watches it holds now (any thread).
  virtual std::size_t watches() const noexcept { return 0; }
};
std::unique_ptr<WatchStrategy> make_one_shot_strategy();
std::unique_ptr<WatchStrategy> make_persistent_strategy();

class TreeSync : public std::enable_shared_from_this<TreeSync> {
 public:
  TreeSync(std::shared_ptr<Core> core, TreeSyncOptions options, SyncSink sink);
  ~TreeSync();
  TreeSync(const TreeSync&) = delete;
  TreeSync& operator=(const TreeSync&) = delete;

  /// Where the events go (before `start`).
  void set_sink(SyncSink sink) { sink_ = std::move(sink); }
  /// Starts reading (I/O thread): arms the strategy, reads the root, follows the tree.
  void start();
  /// Stops (I/O thread): removes every watch and the state listener; no event after it. Clears the storage
  /// unless `keep_on_close`.
  void close();

  bool persistent() const noexcept { return strategy_ && !strategy_->per_node(); }
  bool initialized() const noexcept { return initialized_; }
  /// Watches registered on the core by this engine (one-shot ones per node, plus the root's exists watch).
  std::size_t watches() const noexcept;
  const TreeSyncOptions& options() const noexcept { return opt_; }
  Core& core() noexcept { return *core_; }

  // ---- storage, any thread ----
  std::optional<ChildData> get(const std::string& path) const;
  std::size_t size() const;
  /// Every entry, in path order.
  std::vector<ChildData> snapshot() const;
  /// The cached children of `path`, in name order (nullopt when `path` is not cached).
  std::optional<std::vector<ChildData>> children_of(const std::string& path) const;

  // ---- on demand, I/O thread ----
  /// Reads the cached tree again now, with the code of the resync after a reconnect: every cached node read,
  /// every cached parent listed, the difference reported as events (none for what did not change; bytes
  /// dropped by `clear_data_bytes` come back silently). `done` runs on the I/O thread once every read it
  /// caused is answered, with the first error met (`client_errc::closed` when closed meanwhile); a read that
  /// failed for a connection reason is still repeated later, as after any failure.
  void rebuild(VoidCallback done);
  /// `rebuild` for one path: cached, changed or dropped as the server has it now.
  void rebuild_node(const std::string& path, VoidCallback done);
  /// Drops every cached node below the root, and their watches, without events (PathChildrenCache's
  /// `clear`). The root's watches stay: its next listing brings the children back as created.
  void clear();
  // any thread
  /// Drops the bytes of a cached node, keeping its Stat, when `if_version` is negative or its version; false
  /// when the node is not cached or has another version.
  bool clear_data_bytes(const std::string& path, std::int32_t if_version);

  /// A persistent watch's event (the strategy's callback).
  void on_watch_event(const WatchedEvent& ev);

 private:
  /// Requests in flight for one path, so that a path is read at most once at a time.
  struct Flight {
    bool data = false, data_again = false;
    bool children = false, children_again = false;
    WatchId data_watch = 0;               // the watch the data read in flight sets, if any
    WatchId children_watch = 0;           // the watch the listing in flight sets, if any
    Passes data_passes, children_passes;  // the passes waiting for the read `*_again` asks for
  };
  enum class Read { data, children };

  int depth(const std::string& path) const;
  bool descends(const std::string& path) const;
  bool accepted(const std::string& path) const;
  bool live() const noexcept { return running_; }

  void read_data(const std::string& path, Passes passes = {});
  void read_children(const std::string& path, Passes passes = {});
  void on_data(const std::string& path, error_code ec, NodeData nd, Passes passes);
  void on_children(const std::string& path, error_code ec, Children c, Passes passes);
  void on_node_watch(const std::string& path, Read kind, const WatchedEvent& ev);
  void watch_root_exists();
  void on_root_exists(error_code ec);
  /// Drops `path` and everything below it (deepest first), each with its deleted event and its watches.
  void remove_subtree(const std::string& path);
  void apply(const std::string& path, WatchId watch, NodeData nd, const Passes& passes);
  void failed(const std::string& path, Read kind, error_code ec, const Passes& passes);
  void retry_later();
  void on_state(ConnectionState s);
  void resync(bool new_session);
  /// What a resync and a rebuild read: the root, every cached node, every cached parent's children.
  void reread_all(const Passes& passes);
  std::shared_ptr<RereadPass> new_pass(VoidCallback done);
  void arm_strategy();
  void flush_dirty();
  void issued() noexcept { ++outstanding_; }
  void answered();
  void emit(SyncEvent ev);
  WatchCallback node_watch(const std::string& path, Read kind);

  std::shared_ptr<Core> core_;
  TreeSyncOptions opt_;
  SyncSink sink_;
  std::unique_ptr<WatchStrategy> strategy_;

  // I/O thread
  bool running_ = false;
  bool initialized_ = false;
  bool armed_ = false;  // the strategy's tree-wide watch is set in this session
  std::int64_t session_ = 0;
  std::uint64_t state_listener_ = 0;
  std::size_t outstanding_ = 0;
  std::atomic<WatchId> root_exists_watch_{0};  // atomic: watches() reads it from any thread
  bool root_exists_pending_ = false;
  std::map<std::string, Flight> flights_;
  std::set<std::pair<std::string, Read>> dirty_;
  std::optional<boost::asio::steady_timer> retry_timer_;
  bool retry_armed_ = false;
  std::vector<std::weak_ptr<RereadPass>> passes_;  // failed with client_errc::closed by close()

  // written on the I/O thread under mu_; read anywhere under mu_
  mutable std::mutex mu_;
  TreeStore nodes_;
};

}  // namespace zkr::detail
