// ZooKeeper 3.6+'s requests, where the session speaks them (`Session::speaks_3_6`): persistent watches
// (addWatch), multiRead, getEphemerals, getAllChildrenNumber and whoAmI. Each is one request under the
// namespace and the retry loop, as the plain operations are (operations.cpp). Over a transport that lacks
// them, each fails with `client_errc::unsupported_by_transport` before anything is sent.

#include "core_impl.hpp"

namespace zkr::detail {

bool CoreImpl::supports_persistent_watches() const noexcept { return session_->speaks_3_6(); }

template <class Request, class Result, class Fill>
void CoreImpl::request_3_6(std::string path, Request request, unique_function<void(error_code, Result)> cb,
                           RequestOptions ro, Fill fill) {
  if (!session_->speaks_3_6())
    return post_result(std::move(cb), error_code(client_errc::unsupported_by_transport), Result{});
  if (auto ec = gate(path)) return post_result(std::move(cb), ec, Result{});
  auto result = std::make_shared<Result>();
  auto attempt =
      std::make_shared<Attempt>([this, request = std::move(request), result, fill](Done k) mutable {
        session_->submit(request, [result, fill, k = std::move(k)](zk::Reply r) mutable {
          if (!r.ec) fill(*result, r);
          k(r.ec);
        });
      });
  with_retry(ro, in_namespace(std::move(attempt)), [result, cb = std::move(cb)](error_code ec) mutable {
    cb(ec, ec ? Result{} : std::move(*result));
  });
}

WatchId CoreImpl::add_persistent_watch(std::string path, AddWatchMode mode, WatchCallback watch,
                                       VoidCallback cb, RequestOptions ro) {
  if (!session_->speaks_3_6()) {
    post_result(std::move(cb), error_code(client_errc::unsupported_by_transport));
    return 0;
  }
  if (auto ec = gate(path)) {
    post_result(std::move(cb), ec);
    return 0;
  }
  const auto kind = mode == AddWatchMode::persistent_recursive ? zk::WatchKind::persistent_recursive
                                                               : zk::WatchKind::persistent;
  const WatchId id = watches_.add(std::move(watch), path, kind);
  auto full = ns_.fix(path);
  auto attempt = std::make_shared<Attempt>([this, full, mode, id](Done k) {
    session_->submit(zk::AddWatch{full, mode, id},
                     [this, id, gen = watches_.generation(), k = std::move(k)](zk::Reply r) mutable {
                       if (!r.ec) watch_answered(id, gen);  // see watch_registry.hpp
                       k(r.ec);
                     });
  });
  with_retry(ro, in_namespace(std::move(attempt)), [this, id, cb = std::move(cb)](error_code ec) mutable {
    if (ec) (void)watches_.forget(id);
    cb(ec);
  });
  return id;
}

void CoreImpl::multi_read(std::vector<ReadOp> ops, ReadsCallback cb, RequestOptions ro) {
  for (const auto& op : ops)
    if (auto ec = gate(op.path)) return post_result(std::move(cb), ec, std::vector<ReadResult>{});
  // As Java's client: an empty list is answered here (the server would refuse it).
  if (ops.empty() && session_->speaks_3_6())
    return post_result(std::move(cb), error_code{}, std::vector<ReadResult>{});
  for (auto& op : ops) op.path = ns_.fix(op.path);
  const auto first = ops.empty() ? std::string("/") : ns_.unfix(ops.front().path);
  request_3_6(first, zk::MultiRead{std::move(ops)}, std::move(cb), ro,
              [](std::vector<ReadResult>& out, zk::Reply& r) { out = std::move(r.reads); });
}

void CoreImpl::get_ephemerals(std::string path, PathsCallback cb, RequestOptions ro) {
  auto full = ns_.fix(path);
  request_3_6(std::move(path), zk::GetEphemerals{std::move(full)}, std::move(cb), ro,
              [this](std::vector<std::string>& out, zk::Reply& r) {
                // The server matches the prefix as a string: "/ns" finds "/ns2/x" too, outside the namespace.
                for (auto& p : r.children)
                  if (ns_.contains(p)) out.push_back(ns_.unfix(p));
              });
}

void CoreImpl::get_all_children_number(std::string path, CountCallback cb, RequestOptions ro) {
  auto full = ns_.fix(path);
  request_3_6(std::move(path), zk::GetAllChildrenNumber{std::move(full)}, std::move(cb), ro,
              [](std::int32_t& out, zk::Reply& r) { out = r.count; });
}

void CoreImpl::who_am_i(IdentitiesCallback cb, RequestOptions ro) {
  request_3_6(std::string("/"), zk::WhoAmI{}, std::move(cb), ro,
              [](std::vector<ClientIdentity>& out, zk::Reply& r) { out = std::move(r.identities); });
}

}  // namespace zkr::detail
