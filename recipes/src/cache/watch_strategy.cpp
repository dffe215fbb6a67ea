// The cache engine's two watch strategies (see WatchStrategy in zkr/recipes/detail/tree_sync.hpp).

#include <atomic>
#include <boost/asio/post.hpp>
#include <zkr/recipes/detail/tree_sync.hpp>

namespace zkr::detail {

namespace {

/// One-shot data and children watches, set by the engine's own reads on every node: nothing tree-wide.
class OneShot final : public WatchStrategy {
 public:
  bool per_node() const noexcept override { return true; }
  void arm(TreeSync& sync, VoidCallback done) override {
    boost::asio::post(sync.core().io_executor(), [done = std::move(done)]() mutable { done({}); });
  }
  void disarm(Core&) override {}
};

/// One persistent watch on the root, recursive unless only the root is cached (ZooKeeper 3.6+'s addWatch):
/// one server watch for the whole tree, whatever its size.
class Persistent final : public WatchStrategy {
 public:
  bool per_node() const noexcept override { return false; }
  void arm(TreeSync& sync, VoidCallback done) override {
    auto& core = sync.core();
    if (const auto old = id_.exchange(0)) core.remove_watch(old);  // an earlier session's, or being re-added
    const auto mode =
        sync.options().max_depth == 0 ? AddWatchMode::persistent : AddWatchMode::persistent_recursive;
    id_ = core.add_persistent_watch(
        sync.options().root, mode,
        [weak = sync.weak_from_this()](const WatchedEvent& ev) {
          if (auto s = weak.lock()) s->on_watch_event(ev);
        },
        std::move(done));
  }
  void disarm(Core& core) override {
    if (const auto id = id_.exchange(0)) core.remove_watch(id);
  }
  std::size_t watches() const noexcept override { return id_.load() != 0 ? 1 : 0; }

 private:
  std::atomic<WatchId> id_{0};  // written on the I/O thread, read by `watches()` from any
};

}  // namespace

std::unique_ptr<WatchStrategy> make_one_shot_strategy() { return std::make_unique<OneShot>(); }
std::unique_ptr<WatchStrategy> make_persistent_strategy() { return std::make_unique<Persistent>(); }

}  // namespace zkr::detail
