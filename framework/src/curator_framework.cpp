// CuratorFramework: the public twins (blocking with an error_code, throwing, and the asynchronous forms in
// the header) over the client's engine room, and the factory.

#include <zkr/framework/curator_framework.hpp>

#include "core_impl.hpp"

namespace zkr {

CuratorFramework::CuratorFramework(ClientConfig config)
    : impl_(std::make_shared<detail::CoreImpl>(std::move(config))), core_(impl_) {}
CuratorFramework::CuratorFramework(CuratorFramework&&) noexcept = default;
CuratorFramework& CuratorFramework::operator=(CuratorFramework&& o) noexcept {
  if (this != &o) {
    close();
    impl_ = std::move(o.impl_);
    core_ = std::move(o.core_);
  }
  return *this;
}
CuratorFramework::~CuratorFramework() { close(); }

const std::shared_ptr<detail::Core>& CuratorFramework::core() const { return core_; }

void CuratorFramework::start() {
  std::string subject;
  const auto ec = impl_->start(&subject);
  throw_if(ec, "start", subject.empty() ? impl_->config().connect_string : subject);
}
void CuratorFramework::start(error_code& ec) { ec = impl_->start(); }
void CuratorFramework::close() noexcept {
  if (impl_) impl_->close();
}
bool CuratorFramework::block_until_connected(std::chrono::milliseconds timeout) {
  return impl_->block_until_connected(timeout);
}
bool CuratorFramework::is_started() const noexcept { return impl_->is_open(); }
bool CuratorFramework::is_connected() const noexcept { return impl_->is_connected(); }
std::int64_t CuratorFramework::session_id() const noexcept { return impl_->session_id(); }
const std::string& CuratorFramework::namespace_name() const noexcept {
  return impl_->config().namespace_name;
}
std::uint64_t CuratorFramework::add_connection_state_listener(ConnectionStateListener l) {
  return impl_->add_public_listener(std::move(l));
}
void CuratorFramework::remove_connection_state_listener(std::uint64_t id) {
  impl_->remove_public_listener(id);
}
bool CuratorFramework::supports_persistent_watches() const noexcept {
  return core_->supports_persistent_watches();
}

void CuratorFramework::add_watch_start(const std::shared_ptr<detail::Core>& core, std::string path,
                                       AddWatchMode mode, Watcher w,
                                       const std::shared_ptr<detail::WatchId>& id,
                                       detail::unique_function<void(error_code, WatchHandle)> cb,
                                       detail::StopPtr stop) {
  *id = core->add_persistent_watch(
      std::move(path), mode, wrap_watcher(core, std::move(w)),
      [id, cb = std::move(cb)](error_code ec) mutable { cb(ec, ec ? WatchHandle{} : WatchHandle{*id}); },
      {.stop = std::move(stop)});
}
WatchHandle CuratorFramework::add_watch(const std::string& path, AddWatchMode mode, Watcher watcher,
                                        error_code& ec) {
  auto id = std::make_shared<detail::WatchId>(0);
  return detail::run_blocking<WatchHandle>(
      *core_,
      [&](detail::unique_function<void(error_code, WatchHandle)> cb) {
        add_watch_start(core_, path, mode, std::move(watcher), id, std::move(cb));
      },
      ec);
}
WatchHandle CuratorFramework::add_watch(const std::string& path, AddWatchMode mode, Watcher watcher) {
  error_code ec;
  auto r = add_watch(path, mode, std::move(watcher), ec);
  throw_if(ec, "add_watch", path);
  return r;
}
void CuratorFramework::remove_watch(WatchHandle watch) noexcept {
  if (!watch || !core_) return;
  boost::asio::post(core_->io_executor(), [weak = std::weak_ptr<detail::Core>(core_), id = watch.id] {
    if (auto c = weak.lock()) c->remove_watch(id);
  });
}

std::vector<ReadResult> CuratorFramework::multi_read(std::vector<ReadOp> ops, error_code& ec) {
  return detail::run_blocking<std::vector<ReadResult>>(
      *core_, [&](detail::ReadsCallback cb) { core_->multi_read(std::move(ops), std::move(cb)); }, ec);
}
std::vector<ReadResult> CuratorFramework::multi_read(std::vector<ReadOp> ops) {
  const auto first = ops.empty() ? std::string() : ops.front().path;
  error_code ec;
  auto r = multi_read(std::move(ops), ec);
  throw_if(ec, "multi_read", first);
  return r;
}

std::vector<std::string> CuratorFramework::get_ephemerals(const std::string& prefix, error_code& ec) {
  return detail::run_blocking<std::vector<std::string>>(
      *core_, [&](detail::PathsCallback cb) { core_->get_ephemerals(prefix, std::move(cb)); }, ec);
}
std::vector<std::string> CuratorFramework::get_ephemerals(const std::string& prefix) {
  error_code ec;
  auto r = get_ephemerals(prefix, ec);
  throw_if(ec, "get_ephemerals", prefix);
  return r;
}

std::int32_t CuratorFramework::get_all_children_number(const std::string& path, error_code& ec) {
  return detail::run_blocking<std::int32_t>(
      *core_, [&](detail::CountCallback cb) { core_->get_all_children_number(path, std::move(cb)); }, ec);
}
std::int32_t CuratorFramework::get_all_children_number(const std::string& path) {
  error_code ec;
  auto r = get_all_children_number(path, ec);
  throw_if(ec, "get_all_children_number", path);
  return r;
}

std::vector<ClientIdentity> CuratorFramework::who_am_i(error_code& ec) {
  return detail::run_blocking<std::vector<ClientIdentity>>(
      *core_, [&](detail::IdentitiesCallback cb) { core_->who_am_i(std::move(cb)); }, ec);
}
std::vector<ClientIdentity> CuratorFramework::who_am_i() {
  error_code ec;
  auto r = who_am_i(ec);
  throw_if(ec, "who_am_i", "");
  return r;
}

std::size_t CuratorFramework::pending_guaranteed_deletes() const { return impl_->pending_deletes(); }

void CuratorFramework::inject_session_expiration() {
  throw_if(impl_->inject_session_expiration(), "inject_session_expiration", "");
}

CreateResult CuratorFramework::create(const std::string& path, const CreateOptions& options, error_code& ec) {
  return detail::run_blocking<CreateResult>(
      *core_, [&](detail::CreateCallback cb) { core_->create(path, options, std::move(cb)); }, ec);
}
CreateResult CuratorFramework::create(const std::string& path, const CreateOptions& options) {
  error_code ec;
  auto r = create(path, options, ec);
  throw_if(ec, "create", path);
  return r;
}

void CuratorFramework::connected_start(const std::shared_ptr<detail::CoreImpl>& impl,
                                       std::chrono::milliseconds timeout,
                                       detail::unique_function<void(error_code, bool)> cb,
                                       detail::StopPtr stop) {
  const auto id =
      impl->states_.when_connected(timeout, [cb = std::move(cb)](bool ok) mutable { cb({}, ok); });
  if (id != 0 && stop)
    stop->on_request([weak = std::weak_ptr(impl), id] {
      if (auto i = weak.lock()) i->states_.cancel_wait(id);
    });
}

void CuratorFramework::remove_start(const std::shared_ptr<detail::Core>& core, std::string path,
                                    DeleteOptions options, detail::VoidCallback cb, detail::StopPtr stop) {
  auto* impl = static_cast<detail::CoreImpl*>(core.get());
  if (options.deleting_children)
    impl->delete_children_then(std::move(path), options.version, options.guaranteed, options.quietly,
                               std::move(cb), std::move(stop));
  else
    impl->remove(std::move(path), options.version, options.guaranteed, options.quietly, std::move(cb),
                 {.stop = std::move(stop)});
}
void CuratorFramework::remove(const std::string& path, const DeleteOptions& options, error_code& ec) {
  detail::run_blocking_void(
      *core_, [&](detail::VoidCallback cb) { remove_start(core_, path, options, std::move(cb)); }, ec);
}
void CuratorFramework::remove(const std::string& path, const DeleteOptions& options) {
  error_code ec;
  remove(path, options, ec);
  throw_if(ec, "delete", path);
}

detail::WatchCallback CuratorFramework::wrap_watcher(const std::shared_ptr<detail::Core>& core, Watcher w) {
  if (!w) return {};
  return [ex = core->completion_executor(), w = std::move(w)](const WatchedEvent& ev) {
    boost::asio::post(ex, [w, ev] { w(ev); });
  };
}

detail::WatchId CuratorFramework::exists_start(
    const std::shared_ptr<detail::Core>& core, std::string path, Watcher w,
    detail::unique_function<void(error_code, std::optional<Stat>)> cb, detail::StopPtr stop) {
  return core->exists(std::move(path), wrap_watcher(core, std::move(w)),
                      [cb = std::move(cb)](error_code ec, Stat s) {
                        if (ec == zk_errc::no_node) return cb({}, std::nullopt);
                        if (ec) return cb(ec, std::nullopt);
                        cb({}, s);
                      },
                      {.stop = std::move(stop)});
}
std::optional<Stat> CuratorFramework::exists(const std::string& path, Watcher watcher, error_code& ec) {
  return detail::run_blocking<std::optional<Stat>>(
      *core_,
      [&](detail::unique_function<void(error_code, std::optional<Stat>)> cb) {
        exists_start(core_, path, std::move(watcher), std::move(cb));
      },
      ec);
}
std::optional<Stat> CuratorFramework::exists(const std::string& path, Watcher watcher) {
  error_code ec;
  auto r = exists(path, std::move(watcher), ec);
  throw_if(ec, "exists", path);
  return r;
}

NodeData CuratorFramework::get_data(const std::string& path, Watcher watcher, error_code& ec) {
  return detail::run_blocking<NodeData>(
      *core_,
      [&](detail::DataCallback cb) {
        core_->get_data(path, wrap_watcher(core_, std::move(watcher)), std::move(cb));
      },
      ec);
}
NodeData CuratorFramework::get_data(const std::string& path, Watcher watcher) {
  error_code ec;
  auto r = get_data(path, std::move(watcher), ec);
  throw_if(ec, "get_data", path);
  return r;
}

std::vector<std::string> CuratorFramework::get_children(const std::string& path, Watcher watcher,
                                                        error_code& ec) {
  return detail::run_blocking<std::vector<std::string>>(
      *core_,
      [&](detail::unique_function<void(error_code, std::vector<std::string>)> cb) {
        core_->get_children(path, wrap_watcher(core_, std::move(watcher)),
                            [cb = std::move(cb)](error_code ec, Children c) { cb(ec, std::move(c.names)); });
      },
      ec);
}
std::vector<std::string> CuratorFramework::get_children(const std::string& path, Watcher watcher) {
  error_code ec;
  auto r = get_children(path, std::move(watcher), ec);
  throw_if(ec, "get_children", path);
  return r;
}

Stat CuratorFramework::set_data(const std::string& path, const std::string& data, int version,
                                error_code& ec) {
  return detail::run_blocking<Stat>(
      *core_, [&](detail::StatCallback cb) { core_->set_data(path, data, version, std::move(cb)); }, ec);
}
Stat CuratorFramework::set_data(const std::string& path, const std::string& data, int version) {
  error_code ec;
  auto r = set_data(path, data, version, ec);
  throw_if(ec, "set_data", path);
  return r;
}

AclResult CuratorFramework::get_acl(const std::string& path, error_code& ec) {
  return detail::run_blocking<AclResult>(
      *core_, [&](detail::AclCallback cb) { core_->get_acl(path, std::move(cb)); }, ec);
}
AclResult CuratorFramework::get_acl(const std::string& path) {
  error_code ec;
  auto r = get_acl(path, ec);
  throw_if(ec, "get_acl", path);
  return r;
}

Stat CuratorFramework::set_acl(const std::string& path, const AclList& acl, int version, error_code& ec) {
  return detail::run_blocking<Stat>(
      *core_, [&](detail::StatCallback cb) { core_->set_acl(path, acl, version, std::move(cb)); }, ec);
}
Stat CuratorFramework::set_acl(const std::string& path, const AclList& acl, int version) {
  error_code ec;
  auto r = set_acl(path, acl, version, ec);
  throw_if(ec, "set_acl", path);
  return r;
}

std::vector<OpResult> CuratorFramework::multi(const std::vector<Op>& ops, error_code& ec) {
  return detail::run_blocking<std::vector<OpResult>>(
      *core_, [&](detail::MultiCallback cb) { core_->multi(ops, std::move(cb)); }, ec);
}
std::vector<OpResult> CuratorFramework::multi(const std::vector<Op>& ops) {
  error_code ec;
  auto r = multi(ops, ec);
  throw_if(ec, "multi", ops.empty() ? "" : ops.front().path);
  return r;
}

void CuratorFramework::sync(const std::string& path, error_code& ec) {
  detail::run_blocking_void(
      *core_, [&](detail::VoidCallback cb) { core_->sync(path, std::move(cb)); }, ec);
}
void CuratorFramework::sync(const std::string& path) {
  error_code ec;
  sync(path, ec);
  throw_if(ec, "sync", path);
}

void CuratorFramework::remove_watches(const std::string& path, error_code& ec) {
  detail::run_blocking_void(
      *core_, [&](detail::VoidCallback cb) { impl_->remove_all_watches(path, std::move(cb)); }, ec);
}
void CuratorFramework::remove_watches(const std::string& path) {
  error_code ec;
  remove_watches(path, ec);
  throw_if(ec, "remove_watches", path);
}

std::unique_ptr<CuratorFramework> CuratorFrameworkFactory::new_client(std::string connect_string,
                                                                      RetryPolicyPtr retry_policy) {
  ClientConfig c;
  c.connect_string = std::move(connect_string);
  c.retry_policy = std::move(retry_policy);
  return std::make_unique<CuratorFramework>(std::move(c));
}
std::unique_ptr<CuratorFramework> CuratorFrameworkFactory::new_client(
    std::string connect_string, std::chrono::milliseconds session_timeout,
    std::chrono::milliseconds connection_timeout, RetryPolicyPtr retry_policy) {
  ClientConfig c;
  c.connect_string = std::move(connect_string);
  c.session_timeout = session_timeout;
  c.connection_timeout = connection_timeout;
  c.retry_policy = std::move(retry_policy);
  return std::make_unique<CuratorFramework>(std::move(c));
}

}  // namespace zkr
