// The plain operations: the reads (exists, get_data, get_children, each with its optional one-shot watch, and
// the watches' removal and events), and set_data, multi, sync, get_acl and set_acl. Each is one request under
// the namespace and the retry loop (set_acl: two, its Stat read behind it); create and delete, which carry
// more, are in protected_create.cpp and guaranteed_delete.cpp.

#include "core_impl.hpp"

namespace zkr::detail {

template <class Request, class Result, class Fill>
WatchId CoreImpl::read(std::string path, WatchCallback watch, zk::WatchKind kind, bool keep_watch_on_no_node,
                       unique_function<void(error_code, Result)> cb, RequestOptions ro, Fill fill) {
  if (auto ec = gate(path)) {
    post_result(std::move(cb), ec, Result{});
    return 0;
  }
  const WatchId id = watches_.add(std::move(watch), path, kind);
  auto full = ns_.fix(path);
  auto result = std::make_shared<Result>();
  auto attempt = std::make_shared<Attempt>([this, full, id, keep_watch_on_no_node, result, fill](Done k) {
    session_->submit(Request{full, id}, [this, id, gen = watches_.generation(), keep_watch_on_no_node, result,
                                         fill, k = std::move(k)](zk::Reply r) mutable {
      if (id && (!r.ec || (keep_watch_on_no_node && r.ec == zk_errc::no_node))) watch_answered(id, gen);
      fill(*result, r);
      k(r.ec);
    });
  });
  with_retry(ro, in_namespace(std::move(attempt)),
             [this, id, keep_watch_on_no_node, result, cb = std::move(cb)](error_code ec) mutable {
               if (ec && !(keep_watch_on_no_node && ec == zk_errc::no_node)) (void)watches_.forget(id);
               cb(ec, std::move(*result));
             });
  return id;
}

WatchId CoreImpl::exists(std::string path, WatchCallback watch, StatCallback cb, RequestOptions ro) {
  // An exists watch stays on no-node: it waits for the node's create.
  return read<zk::Exists>(std::move(path), std::move(watch), zk::WatchKind::data, true, std::move(cb), ro,
                          [](zkr::Stat& s, zk::Reply& r) { s = r.stat; });
}

WatchId CoreImpl::get_data(std::string path, WatchCallback watch, DataCallback cb, RequestOptions ro) {
  return read<zk::GetData>(std::move(path), std::move(watch), zk::WatchKind::data, false, std::move(cb), ro,
                           [](NodeData& d, zk::Reply& r) {
                             d.data = std::move(r.data);
                             d.stat = r.stat;
                           });
}

WatchId CoreImpl::get_children(std::string path, WatchCallback watch, ChildrenCallback cb,
                               RequestOptions ro) {
  return read<zk::GetChildren>(std::move(path), std::move(watch), zk::WatchKind::children, false,
                               std::move(cb), ro, [](Children& c, zk::Reply& r) {
                                 c.names = std::move(r.children);
                                 c.stat = r.stat;
                               });
}

void CoreImpl::set_data(std::string path, std::string data, int version, StatCallback cb, RequestOptions ro) {
  if (auto ec = gate(path)) return post_result(std::move(cb), ec, zkr::Stat{});
  if (data.size() > cfg_.max_data_size)
    return post_result(std::move(cb), error_code(client_errc::data_too_large), zkr::Stat{});
  auto full = ns_.fix(path);
  auto result = std::make_shared<zkr::Stat>();
  auto d = std::make_shared<std::string>(std::move(data));
  auto attempt = std::make_shared<Attempt>([this, full, d, version, result](Done k) {
    session_->submit(zk::SetData{full, *d, version}, [result, k = std::move(k)](zk::Reply r) mutable {
      *result = r.stat;
      k(r.ec);
    });
  });
  with_retry(
      ro, in_namespace(std::move(attempt)),
      [result, cb = std::move(cb)](error_code ec) mutable { cb(ec, *result); },
      version_check(ro, full, version));
}

void CoreImpl::multi(std::vector<Op> ops, MultiCallback cb, RequestOptions ro) {
  if (auto ec = life_.gate()) return post_result(std::move(cb), ec, std::vector<OpResult>{});
  for (auto& op : ops) {
    // The C client 3.8 misreads multi replies for container and TTL creates: refuse them here.
    if (op.kind == Op::Kind::create &&
        (op.mode == CreateMode::container || op.mode == CreateMode::persistent_with_ttl ||
         op.mode == CreateMode::persistent_sequential_with_ttl))
      return post_result(std::move(cb), error_code(client_errc::invalid_argument), std::vector<OpResult>{});
    if (path_error(op.path, op.kind == Op::Kind::create && is_sequential(op.mode)))
      return post_result(std::move(cb), error_code(client_errc::invalid_path), std::vector<OpResult>{});
    if (op.data.size() > cfg_.max_data_size)
      return post_result(std::move(cb), error_code(client_errc::data_too_large), std::vector<OpResult>{});
  }
  if (ops.empty()) return post_result(std::move(cb), error_code{}, std::vector<OpResult>{});
  struct MultiState {
    std::vector<Op> ops;            // as given (un-namespaced)
    std::vector<std::string> full;  // their full paths
    std::vector<OpResult> out;
    std::vector<error_code> errors;  // the last try's per-op errors (none when it was never sent)
  };
  auto st = std::make_shared<MultiState>();
  st->ops = std::move(ops);
  for (const auto& op : st->ops) st->full.push_back(ns_.fix(op.path));
  auto attempt = std::make_shared<Attempt>([this, st](Done k) {
    zk::Multi request;
    request.ops.reserve(st->ops.size());
    for (std::size_t i = 0; i < st->ops.size(); ++i) {
      auto& op = request.ops.emplace_back(st->ops[i]);
      op.path = st->full[i];
      op.acl = acl_for(op.path, st->ops[i].acl);  // asked again on each try
    }
    st->errors.clear();
    session_->submit(std::move(request), [st, k = std::move(k)](zk::Reply r) mutable {
      if (!r.results.empty()) {
        for (const auto& o : r.results) st->errors.push_back(o.ec);
        st->out = std::move(r.results);
      }
      k(r.ec);
    });
  });
  // A transaction fails as a whole with the first failing operation's error: the root may be gone when that
  // operation is a create right under it.
  std::function<bool(error_code)> root_gone = [this, st](error_code ec) {
    if (ec != zk_errc::no_node) return false;
    for (std::size_t i = 0; i < st->errors.size(); ++i)
      if (st->errors[i] == zk_errc::no_node)
        return st->ops[i].kind == Op::Kind::create && ns_.under_root(st->full[i]);
    return false;
  };
  auto tried = in_namespace(std::move(attempt), std::move(root_gone));
  with_retry(ro, std::move(tried), [this, st, cb = std::move(cb)](error_code ec) mutable {
    for (auto& o : st->out)
      if (!o.path.empty()) o.path = ns_.unfix(o.path);
    cb(ec, std::move(st->out));
  });
}

void CoreImpl::get_acl(std::string path, AclCallback cb, RequestOptions ro) {
  if (auto ec = gate(path)) return post_result(std::move(cb), ec, AclResult{});
  auto full = ns_.fix(path);
  auto result = std::make_shared<AclResult>();
  auto attempt = std::make_shared<Attempt>([this, full, result](Done k) {
    session_->submit(zk::GetAcl{full}, [result, k = std::move(k)](zk::Reply r) mutable {
      result->acl = std::move(r.acl);
      result->stat = r.stat;
      k(r.ec);
    });
  });
  with_retry(ro, in_namespace(std::move(attempt)),
             [result, cb = std::move(cb)](error_code ec) mutable { cb(ec, std::move(*result)); });
}

// The C client drops the Stat of a setACL reply (its completion has none), so an `exists` is sent right
// behind it: one round trip, read after our change (a session's requests are applied in order), though a
// change by another client in between shows in it too. A try whose set applied but whose read failed does not
// set the ACL again: the Stat is read once more under the retry loop, and that read's error is the result.
void CoreImpl::set_acl(std::string path, AclList acl, int version, StatCallback cb, RequestOptions ro) {
  if (auto ec = gate(path)) return post_result(std::move(cb), ec, zkr::Stat{});
  struct State {
    std::string full;
    AclList acl;
    zkr::Stat stat;
    error_code read_ec;  // the last try's read
  };
  auto st = std::make_shared<State>(State{ns_.fix(path), std::move(acl), {}, {}});
  auto read = [this, st](Done k) {
    session_->submit(zk::Exists{st->full}, [st, k = std::move(k)](zk::Reply r) mutable {
      st->read_ec = r.ec;
      st->stat = !r.ec ? r.stat : zkr::Stat{};
      if (k) k(r.ec);
    });
  };
  auto attempt = std::make_shared<Attempt>([this, st, version, read](Done k) {
    // `k` runs once both replies are in (a session answers in order, but nothing here relies on it).
    struct Pair {
      Done k;
      std::optional<error_code> set_ec;
      bool read_done = false;
      void maybe_done() {
        if (set_ec && read_done) k(*set_ec);
      }
    };
    auto pair = std::make_shared<Pair>();
    pair->k = std::move(k);
    session_->submit(zk::SetAcl{st->full, st->acl, version}, [pair](zk::Reply r) {
      pair->set_ec = r.ec;
      pair->maybe_done();
    });
    read([pair](error_code) {
      pair->read_done = true;
      pair->maybe_done();
    });
  });
  with_retry(
      ro, in_namespace(std::move(attempt)), [this, st, ro, read, cb = std::move(cb)](error_code ec) mutable {
        if (ec || !st->read_ec) return cb(ec, !ec ? st->stat : zkr::Stat{});
        auto read_again = read;
        with_retry(ro, std::make_shared<Attempt>(std::move(read_again)),
                   [st, cb = std::move(cb)](error_code ec) mutable { cb(ec, !ec ? st->stat : zkr::Stat{}); });
      });
}

void CoreImpl::sync(std::string path, VoidCallback cb, RequestOptions ro) {
  if (auto ec = gate(path)) return post_result(std::move(cb), ec);
  auto full = ns_.fix(path);
  auto attempt = std::make_shared<Attempt>([this, full](Done k) {
    session_->submit(zk::Sync{full}, [k = std::move(k)](zk::Reply r) mutable { k(r.ec); });
  });
  with_retry(ro, in_namespace(std::move(attempt)), std::move(cb));
}

// The watches the reads and addWatch set (watch_registry.hpp): removed on request (locally at once, on the
// server in the background), fired by the session's events, failed at once (session_lost) when the session
// goes: the ones the server had set; one whose read is in flight is set by the read's retry in the next
// session, so the reader's watch id stays live.

void CoreImpl::remove_watch(WatchId id) {
  auto w = watches_.forget(id);
  // The server keeps one watch per path, kind and session: while another of ours needs it (set, or being set
  // by a read in flight), the removal stays local. A lock's waiter that moves its watch onto the node it
  // pre-watched sends the new read first; had the removal of the pre-watch followed it to the server, the
  // node's deletion would have woken nobody.
  if (w && watches_.watching(w->first, w->second)) return;
  // The server-side registration goes in the background; the reply is not waited for.
  if (w && session_->is_open() && states_.connected())
    session_->submit(zk::RemoveWatches{ns_.fix(w->first), w->second, id}, {});
}

void CoreImpl::remove_all_watches(std::string path, VoidCallback cb) {
  if (auto ec = gate(path)) return post_result(std::move(cb), ec);
  watches_.forget_path(path);
  if (!session_->is_open())
    return post_result(std::move(cb), life_.given_up() ? life_.reason() : error_code(client_errc::closed));
  session_->submit(
      zk::RemoveWatches{ns_.fix(path), zk::WatchKind::any},
      [cb = std::move(cb)](zk::Reply r) mutable { cb(r.ec == zk_errc::no_watcher ? error_code{} : r.ec); });
}

void CoreImpl::on_watch_event(WatchId id, EventType type, const std::string& path) {
  watches_.fire(id, type, ns_.unfix(path));
}

void CoreImpl::watch_answered(WatchId id, std::uint64_t generation) {
  if (generation == watches_.generation()) return watches_.mark_set(id);
  // Answered by a session that went meanwhile (a reply delivered as the session closed, after its watches
  // were failed): the watch is as dead as theirs.
  if (auto w = watches_.take_one(id)) post_session_lost(std::move(*w));
}

void CoreImpl::fail_watches(bool all) {
  for (auto& w : all ? watches_.take_all() : watches_.take_set()) post_session_lost(std::move(w));
}

void CoreImpl::post_session_lost(WatchRegistry::Watch w) {
  post([cb = std::move(w.cb), path = std::move(w.path)]() mutable {
    cb(WatchedEvent{EventType::session_lost, std::move(path)});
  });
}

}  // namespace zkr::detail
