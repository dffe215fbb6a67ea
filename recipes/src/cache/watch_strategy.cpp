// The cache engine's two watch strategies (see WatchStrategy in zkr/recipes/detail/tree_sync.hpp).

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
    if (id_) core.remove_watch(id_);  // a watch of an earlier session, or one the transport is re-adding
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
    if (id_) core.remove_watch(id_);
    id_ = 0;
  }

 private:
  WatchId id_ = 0;
};

}  // namespace

std::unique_ptr<WatchStrategy> make_one_shot_strategy() { return std::make_unique<OneShot>(); }
std::unique_ptr<WatchStrategy> make_persistent_strategy() { return std::make_unique<Persistent>(); }

}  // namespace zkr::detail
