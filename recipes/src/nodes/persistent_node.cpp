// PersistentNode: the public class over its state machine (persistent_node_impl.hpp): validation, the
// object's state, the blocking twins and the waiters.

#include <boost/asio/post.hpp>
#include <zkr/framework/paths.hpp>

#include "../start_once.hpp"
#include "persistent_node_impl.hpp"

namespace asio = boost::asio;

namespace zkr {

namespace {

constexpr bool is_ttl_mode(CreateMode m) noexcept {
  return m == CreateMode::persistent_with_ttl || m == CreateMode::persistent_sequential_with_ttl;
}

void validate(CreateMode mode, const std::string& base_path, std::chrono::milliseconds ttl) {
  if (auto why = path_error(base_path, is_sequential(mode)))
    throw Error(client_errc::invalid_path, "PersistentNode: " + *why, base_path);
  if (is_ttl_mode(mode) ? (ttl.count() <= 0 || ttl > detail::max_ttl) : ttl.count() > 0)
    throw Error(client_errc::invalid_argument, "PersistentNode: TTL " + std::to_string(ttl.count()) + " ms",
                base_path);
}

}  // namespace

PersistentNode::PersistentNode(CuratorFramework& client, CreateMode mode, bool use_protection,
                               std::string base_path, std::string init_data, bool use_parent_creation)
    : PersistentNode(detail::access::core(client), mode, use_protection, std::move(base_path),
                     std::move(init_data), std::chrono::milliseconds(0), use_parent_creation) {}

PersistentNode::PersistentNode(CuratorFramework& client, CreateMode mode, bool use_protection,
                               std::string base_path, std::string init_data, std::chrono::milliseconds ttl,
                               bool use_parent_creation)
    : PersistentNode(detail::access::core(client), mode, use_protection, std::move(base_path),
                     std::move(init_data), ttl, use_parent_creation) {}

PersistentNode::PersistentNode(std::shared_ptr<detail::Core> core, CreateMode mode, bool use_protection,
                               std::string base_path, std::string init_data, std::chrono::milliseconds ttl,
                               bool use_parent_creation) {
  validate(mode, base_path, ttl);
  impl_ = std::make_shared<Impl>(std::move(core), mode, use_protection, std::move(base_path),
                                 std::move(init_data), ttl, use_parent_creation, Impl::Hooks{});
}

PersistentNode::PersistentNode(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}

PersistentNode::~PersistentNode() {
  if (impl_ && impl_->mark_closed()) asio::post(impl_->core->io_executor(), [i = impl_] { i->shutdown({}); });
}

void PersistentNode::start(error_code& ec) {
  ec = detail::start_once(impl_->mu, impl_->state);
  if (!ec) asio::post(impl_->core->io_executor(), [i = impl_] { i->begin(); });
}
void PersistentNode::start() {
  error_code ec;
  start(ec);
  throw_if(ec, "PersistentNode::start", base_path());
}

bool PersistentNode::wait_for_initial_create(std::chrono::milliseconds timeout) {
  std::unique_lock lk(impl_->mu);
  if (!impl_->core->running_in_io_thread())
    impl_->cv.wait_for(lk, std::max(timeout, std::chrono::milliseconds(0)), [&] {
      return impl_->state != State::started || impl_->initial_created || impl_->failure;
    });
  return impl_->state == State::started && impl_->initial_created;
}

std::uint64_t PersistentNode::wait_start(const std::shared_ptr<Impl>& impl, detail::VoidCallback cb) {
  error_code ec;
  {
    std::lock_guard lk(impl->mu);
    if (impl->state == State::started && !impl->initial_created && !impl->failure) {
      auto id = ++impl->next_waiter;
      impl->initial_waiters.emplace(id, std::move(cb));
      return id;
    }
    ec = impl->state == State::latent   ? make_error_code(client_errc::not_started)
         : impl->state == State::closed ? make_error_code(client_errc::closed)
                                        : impl->failure;
  }
  cb(ec);
  return 0;
}
void PersistentNode::forget_waiter(const std::shared_ptr<Impl>& impl, std::uint64_t id) {
  impl->initial_waiters.erase(id);
}

void PersistentNode::close_start(const std::shared_ptr<Impl>& impl, detail::VoidCallback cb) {
  if (impl->mark_closed()) return impl->shutdown(std::move(cb));
  if (impl->step == Impl::Step::closed || impl->step == Impl::Step::idle) return cb({});
  impl->close_waiters.push_back(std::move(cb));  // a close under way: done with it
}
void PersistentNode::close(error_code& ec) {
  ec = {};
  if (impl_->core->running_in_io_thread()) {  // cannot wait here: the delete goes on
    if (impl_->mark_closed()) impl_->shutdown({});
    return;
  }
  detail::run_blocking_void(
      *impl_->core, [i = impl_](detail::VoidCallback cb) { close_start(i, std::move(cb)); }, ec);
}
void PersistentNode::close() {
  error_code ec;
  close(ec);
  throw_if(ec, "PersistentNode::close", base_path());
}

void PersistentNode::set_data_start(const std::shared_ptr<Impl>& impl, std::string data,
                                    detail::VoidCallback cb) {
  std::uint64_t gen = 0;
  State st;
  {
    std::lock_guard lk(impl->mu);
    st = impl->state;
    if (st != State::closed) {
      impl->data = std::move(data);
      gen = ++impl->data_gen;
    }
  }
  if (st == State::closed) return cb(client_errc::closed);
  if (st == State::latent) return cb({});  // the first create writes it
  using Step = Impl::Step;
  switch (impl->step) {
    case Step::failed:
      return cb(impl->failure);
    case Step::waiting:
    case Step::waiting_parent:
      return cb(impl->last_error);  // kept: written when the node is made
    default:
      impl->data_waiters.push_back({gen, std::move(cb)});
      impl->pump_writes();
  }
}
void PersistentNode::set_data(std::string data, error_code& ec) {
  ec = {};
  if (impl_->core->running_in_io_thread()) {
    ec = client_errc::would_deadlock;
    return;
  }
  detail::run_blocking_void(
      *impl_->core,
      [i = impl_, d = std::move(data)](detail::VoidCallback cb) mutable {
        set_data_start(i, std::move(d), std::move(cb));
      },
      ec);
}
void PersistentNode::set_data(std::string data) {
  error_code ec;
  set_data(std::move(data), ec);
  throw_if(ec, "PersistentNode::set_data", base_path());
}

std::string PersistentNode::get_data() const {
  std::lock_guard lk(impl_->mu);
  return impl_->data;
}
std::string PersistentNode::actual_path() const {
  std::lock_guard lk(impl_->mu);
  return impl_->actual_path;
}
const std::string& PersistentNode::base_path() const noexcept { return impl_->base_path; }
PersistentNode::State PersistentNode::state() const {
  std::lock_guard lk(impl_->mu);
  return impl_->state;
}
error_code PersistentNode::failure() const {
  std::lock_guard lk(impl_->mu);
  return impl_->failure;
}

std::uint64_t PersistentNode::add_listener(PersistentNodeListener listener) {
  return add_listener(std::move(listener), impl_->core->completion_executor());
}
std::uint64_t PersistentNode::add_listener(PersistentNodeListener listener,
                                           boost::asio::any_io_executor executor) {
  return impl_->listeners.add(std::move(listener), std::move(executor));
}
void PersistentNode::remove_listener(std::uint64_t id) { impl_->listeners.remove(id); }

std::shared_ptr<detail::Core> PersistentNode::core() const { return impl_->core; }

}  // namespace zkr
