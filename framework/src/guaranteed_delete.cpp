// delete: the delete operation, with Curator's guarantee (a delete that failed for a connection reason is
// kept and retried in the background until it succeeds or the client closes: background_deletes.hpp), the
// delete of a whole tree, and
// the delete of several nodes at once (one transaction, else one guaranteed delete each), from the I/O thread
// (`remove_nodes`) or sent from the caller's thread to end a lock hold without waiting for the I/O thread.

#include "core_impl.hpp"

namespace zkr::detail {

void CoreImpl::remove(std::string path, int version, bool guaranteed, bool quietly, VoidCallback cb,
                      RequestOptions ro) {
  if (guaranteed) ro.stop.reset();  // a guaranteed delete keeps its guarantee when its caller stops waiting
  if (auto ec = gate(path)) return post_result(std::move(cb), ec);
  if (path == "/") return post_result(std::move(cb), error_code(client_errc::invalid_path));
  auto full = ns_.fix(path);
  auto attempt = std::make_shared<Attempt>([this, full, version](Done k) {
    session_->submit(zk::Delete{full, version}, [k = std::move(k)](zk::Reply r) mutable { k(r.ec); });
  });
  // A retryable failure to create the namespace keeps a guaranteed delete too.
  with_retry(
      ro, in_namespace(std::move(attempt)),
      [this, full, guaranteed, quietly, cb = std::move(cb)](error_code ec) mutable {
        if (ec == zk_errc::no_node && quietly) return cb({});
        if (ec && guaranteed && !life_.closed() &&
            (is_retryable(ec) || ec == client_errc::connection_timeout))
          deletes_.remove(full);
        cb(ec);
      },
      version_check(ro, full, version));
}

void remove_each(Core& core, std::vector<std::string> paths, VoidCallback cb) {
  if (paths.empty()) return cb({});
  struct Join {
    std::size_t left;
    error_code first;
    VoidCallback cb;
  };
  auto j = std::make_shared<Join>(Join{paths.size(), {}, std::move(cb)});
  for (auto& p : paths)
    core.remove(std::move(p), -1, /*guaranteed=*/true, /*quietly=*/true, [j](error_code e) {
      if (e && !j->first) j->first = e;
      if (--j->left == 0) j->cb(j->first);
    });
}

void remove_nodes(Core& core, std::vector<std::string> paths, VoidCallback cb) {
  if (paths.empty() || !core.is_open()) return cb({});
  if (paths.size() == 1)
    return core.remove(std::move(paths.front()), -1, /*guaranteed=*/true, /*quietly=*/true, std::move(cb));
  std::vector<Op> ops;
  ops.reserve(paths.size());
  for (const auto& p : paths) ops.push_back(Op::remove(p));
  core.multi(std::move(ops), [&core, paths = std::move(paths), cb = std::move(cb)](
                                 error_code ec, std::vector<OpResult>) mutable {
    if (!ec) return cb({});
    remove_each(core, std::move(paths), std::move(cb));
  });
}

bool CoreImpl::remove_from_caller(std::vector<std::string> paths, VoidCallback& cb) {
  if (paths.empty() || running_in_io_thread() || !is_open() || !states_.connected()) return false;
  for (const auto& p : paths)
    if (gate(p) || p == "/") return false;
  zk::Request request;
  if (paths.size() == 1) {
    request = zk::Delete{ns_.fix(paths.front())};
  } else {
    zk::Multi m;
    for (const auto& p : paths) m.ops.push_back(Op::remove(ns_.fix(p)));
    request = std::move(m);
  }
  // Held apart from the reply callback, so that it goes back to the caller untouched when nothing was sent.
  auto held = std::make_shared<VoidCallback>(std::move(cb));
  zk::ReplyCallback reply = [this, paths = std::move(paths), held](zk::Reply r) mutable {
    if (!r.ec || (r.ec == zk_errc::no_node && paths.size() == 1)) return (*held)({});
    // Anything else continues as the usual guaranteed, quiet removes, one per node (a multi fails whole when
    // one of its nodes is already gone).
    remove_each(*this, std::move(paths), std::move(*held));
  };
  if (session_->submit_from_caller(request, reply)) return true;
  cb = std::move(*held);
  return false;
}

void CoreImpl::delete_children_then(std::string path, int version, bool guaranteed, bool quietly,
                                    VoidCallback cb, StopPtr stop) {
  if (guaranteed) {
    // As Curator: the tree is deleted without the guarantee (and without the caller's stop, as in remove),
    // and a failure for a connection reason anywhere in it keeps the top path. The background delete removes
    // that node only, so it completes once the children are gone, or reports not_empty and gives up.
    return delete_children_then(
        path, version, false, quietly, [this, path, cb = std::move(cb)](error_code ec) mutable {
          if (ec && !life_.closed() && (is_retryable(ec) || ec == client_errc::connection_timeout))
            deletes_.remove(ns_.fix(path));
          cb(ec);
        });
  }
  get_children(path, nullptr,
               [this, path, version, quietly, stop, cb = std::move(cb)](error_code ec, Children c) mutable {
                 if (ec == zk_errc::no_node) return quietly ? cb({}) : cb(ec);
                 if (ec) return cb(ec);
                 auto names = std::make_shared<std::vector<std::string>>(std::move(c.names));
                 auto step = std::make_shared<unique_function<void(std::size_t)>>();
                 *step = [this, path, version, names, stop, weak = std::weak_ptr(step),
                          cb = std::move(cb)](std::size_t i) mutable {
                   // The listing proved the node there: gone now, it was deleted as asked (a container
                   // parent is reaped by the server once its last child goes, often before this delete).
                   if (i == names->size())
                     return remove(path, version, false, true, std::move(cb), {.stop = stop});
                   auto self = weak.lock();
                   delete_children_then(
                       make_path(path, (*names)[i]), -1, false, true,
                       [self, i, &cb](error_code ec) mutable {
                         if (ec) return cb(ec);
                         (*self)(i + 1);
                       },
                       stop);
                 };
                 (*step)(0);
               },
               {.stop = stop});
}

}  // namespace zkr::detail
