// PersistentTtlNode: a container PersistentNode that keeps its node on close, and the touch of its TTL
// child (set its data; create it when missing), on a timer and whenever the container is made.

#include <spdlog/logger.h>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/nodes/persistent_ttl_node.hpp>

#include "persistent_node_impl.hpp"

namespace asio = boost::asio;

namespace zkr {

/// The touch of the child (I/O thread, except the constants).
struct PersistentTtlNode::Impl : std::enable_shared_from_this<PersistentTtlNode::Impl> {
  Impl(std::shared_ptr<detail::Core> c, std::string child, std::chrono::milliseconds t,
       std::chrono::milliseconds every)
      : core(std::move(c)), child_path(std::move(child)), ttl(t), period(every), timer(core->io_executor()) {}

  /// The container is there: touch now, and from now on every period.
  void on_present() {
    if (stopped) return;
    touch();
    if (!ticking) tick();
  }
  void tick() {
    ticking = true;
    timer.expires_after(period);
    timer.async_wait([weak = weak_from_this()](error_code e) {
      auto self = weak.lock();
      if (e || !self || self->stopped) return;
      self->touch();
      self->tick();
    });
  }
  /// Curator's touch: set the child's data; when it is missing, create it (`orSetData`: an existing one is
  /// set). No parents: a missing container is being re-created, and its creation touches again.
  void touch() {
    if (in_flight) return;  // the last touch still runs (a slow connection): it counts for this one
    in_flight = true;
    core->set_data(child_path, core->default_data(), -1, [self = shared_from_this()](error_code ec, Stat) {
      if (ec == zk_errc::no_node && !self->stopped) return self->create_child();
      self->done(ec);
    });
  }
  void create_child() {
    CreateOptions o;
    o.mode = CreateMode::persistent_with_ttl;
    o.ttl = ttl;
    core->create(child_path, std::move(o), [self = shared_from_this()](error_code ec, CreateResult) {
      if (ec == zk_errc::node_exists && !self->stopped) {
        self->in_flight = false;
        return self->touch();
      }
      self->done(ec == zk_errc::no_node ? error_code{} : ec);
    });
  }
  void done(error_code ec) {
    in_flight = false;
    if (ec && !stopped)
      core->logger()->warn("PersistentTtlNode {}: touch failed: {}", child_path, ec.message());
  }

  const std::shared_ptr<detail::Core> core;
  const std::string child_path;
  const std::chrono::milliseconds ttl;
  const std::chrono::milliseconds period;
  std::shared_ptr<PersistentNode::Impl> node;
  asio::steady_timer timer;
  bool ticking = false;
  bool in_flight = false;
  bool stopped = false;
};

namespace {

std::shared_ptr<PersistentTtlNode::Impl> make_touch(const std::shared_ptr<detail::Core>& core,
                                                    const std::string& path, std::chrono::milliseconds ttl,
                                                    const std::string& child, int factor) {
  if (ttl.count() <= 0 || ttl > detail::max_ttl || factor < 1)
    throw Error(
        client_errc::invalid_argument,
        "PersistentTtlNode: TTL " + std::to_string(ttl.count()) + " ms, factor " + std::to_string(factor),
        path);
  if (child.empty() || child.find('/') != std::string::npos || path_error(make_path(path, child)))
    throw Error(client_errc::invalid_path, "PersistentTtlNode: child name '" + child + "'", path);
  return std::make_shared<PersistentTtlNode::Impl>(core, make_path(path, child), ttl,
                                                   std::max(ttl / factor, std::chrono::milliseconds(1)));
}

/// The container node, whose creation touches the child at once and whose close leaves it.
std::shared_ptr<PersistentNode::Impl> make_container(const std::shared_ptr<detail::Core>& core,
                                                     std::string path, std::string data, bool parents,
                                                     const std::shared_ptr<PersistentTtlNode::Impl>& touch) {
  if (auto why = path_error(path)) throw Error(client_errc::invalid_path, "PersistentTtlNode: " + *why, path);
  PersistentNode::Impl::Hooks hooks;
  hooks.on_present = [weak = std::weak_ptr(touch)] {
    if (auto t = weak.lock()) t->on_present();
  };
  hooks.delete_on_close = false;
  auto node = std::make_shared<PersistentNode::Impl>(core, CreateMode::container, false, std::move(path),
                                                     std::move(data), std::chrono::milliseconds(0), parents,
                                                     std::move(hooks));
  touch->node = node;
  return node;
}

}  // namespace

PersistentTtlNode::PersistentTtlNode(CuratorFramework& client, std::string path,
                                     std::chrono::milliseconds ttl, std::string init_data,
                                     bool use_parent_creation)
    : PersistentTtlNode(client, std::move(path), ttl, std::move(init_data),
                        std::string(default_child_node_name), default_touch_schedule_factor,
                        use_parent_creation) {}

PersistentTtlNode::PersistentTtlNode(CuratorFramework& client, std::string path,
                                     std::chrono::milliseconds ttl, std::string init_data,
                                     std::string child_node_name, int touch_schedule_factor,
                                     bool use_parent_creation)
    : impl_(make_touch(detail::access::core(client), path, ttl, child_node_name, touch_schedule_factor)),
      node_(make_container(detail::access::core(client), std::move(path), std::move(init_data),
                           use_parent_creation, impl_)) {}

PersistentTtlNode::~PersistentTtlNode() {
  asio::post(impl_->core->io_executor(), [i = impl_] {
    i->stopped = true;
    i->timer.cancel();
  });
}

void PersistentTtlNode::start(error_code& ec) { node_.start(ec); }
void PersistentTtlNode::start() { node_.start(); }

void PersistentTtlNode::close_start(const std::shared_ptr<Impl>& impl, detail::VoidCallback cb) {
  impl->stopped = true;
  impl->timer.cancel();
  PersistentNode::close_start(impl->node, [impl, cb = std::move(cb)](error_code ec) mutable {
    // A container that never had a child is never reaped (Curator's #1260): delete it while it is empty.
    impl->core->remove(impl->node->base_path, -1, /*guaranteed=*/false, /*quietly=*/true,
                       [ec, cb = std::move(cb)](error_code) mutable { cb(ec); });
  });
}
void PersistentTtlNode::close(error_code& ec) {
  ec = {};
  if (impl_->core->running_in_io_thread()) return close_start(impl_, [](error_code) {});
  detail::run_blocking_void(
      *impl_->core, [i = impl_](detail::VoidCallback cb) { close_start(i, std::move(cb)); }, ec);
}
void PersistentTtlNode::close() {
  error_code ec;
  close(ec);
  throw_if(ec, "PersistentTtlNode::close", path());
}

const std::string& PersistentTtlNode::child_path() const noexcept { return impl_->child_path; }
std::chrono::milliseconds PersistentTtlNode::ttl() const noexcept { return impl_->ttl; }

}  // namespace zkr
