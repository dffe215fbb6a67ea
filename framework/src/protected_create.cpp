// create: the create operation with its parents and its protection (Curator's protection mode). A protected
// create names its node with a GUID; a try whose outcome is unknown is followed by a look for that GUID
// before the next try (the node found is adopted, unless it is an ephemeral node of an earlier session), and
// a create that fails for good after such a try has its orphan swept up in the background. The recipes use
// the same sweep (`sweep_protected`) for the nodes of a transaction whose reply was lost.

#include "core_impl.hpp"

namespace zkr::detail {

void CoreImpl::create(std::string path, CreateOptions options, CreateCallback cb, RequestOptions ro) {
  const bool sequential = is_sequential(options.mode);
  if (auto ec = gate(path, sequential)) return post_result(std::move(cb), ec, CreateResult{});
  std::string data = options.data ? *options.data : *cfg_.default_data;
  if (data.size() > cfg_.max_data_size)
    return post_result(std::move(cb), error_code(client_errc::data_too_large), CreateResult{});
  if ((options.mode == CreateMode::persistent_with_ttl ||
       options.mode == CreateMode::persistent_sequential_with_ttl) &&
      options.ttl.count() <= 0)
    return post_result(std::move(cb), error_code(client_errc::invalid_argument), CreateResult{});

  struct State {
    std::string full;
    std::string protected_id;
    std::string data;
    CreateOptions opts;
    int attempts = 0;
    std::optional<CreateResult> found;
    CreateResult result;
  };
  auto st = std::make_shared<State>();
  st->opts = std::move(options);
  st->data = std::move(data);
  st->full = ns_.fix(path);
  if (st->opts.protection) {
    st->protected_id = protected_names::new_protected_id();
    st->full = protected_names::to_protected_path(st->full, st->protected_id);
  }
  const bool parents = st->opts.creating_parents || st->opts.parents_as_containers;
  const bool containers = st->opts.parents_as_containers && cfg_.use_container_parents;

  auto attempt = std::make_shared<Attempt>([this, st, parents, containers](Done k) mutable {
    auto do_create = [this, st, parents, containers](Done k) mutable {
      zk::Create request{st->full, st->data, acl_for(st->full, st->opts.acl), st->opts.mode,
                         st->opts.ttl.count()};
      auto done = [st](zk::Reply r, Done& k) {
        if (!r.ec) st->result = CreateResult{std::move(r.path), r.stat};
        k(r.ec);
      };
      session_->submit(request, [this, st, parents, containers, request, done,
                                 k = std::move(k)](zk::Reply r) mutable {
        if (r.ec == zk_errc::no_node && parents) {
          // The parents are made and the create is sent again, once.
          return mkdirs({parent_path(st->full)}, containers, nullptr,
                        [this, request = std::move(request), done, k = std::move(k)](error_code ec) mutable {
                          if (ec) return k(ec);
                          session_->submit(std::move(request), [done, k = std::move(k)](zk::Reply r) mutable {
                            done(std::move(r), k);
                          });
                        });
        }
        done(std::move(r), k);
      });
    };
    if (st->attempts++ == 0) return do_create(std::move(k));
    if (st->protected_id.empty()) return do_create(std::move(k));
    // Protected mode, after a failed try: look for the node our earlier try may have created.
    find_protected(st->full, st->protected_id, is_ephemeral(st->opts.mode),
                   [st, do_create = std::move(do_create), k = std::move(k)](
                       error_code ec, std::optional<CreateResult> found) mutable {
                     if (ec) return k(ec);
                     if (found) {
                       st->result = std::move(*found);
                       return k({});
                     }
                     do_create(std::move(k));
                   });
  });
  std::function<bool(error_code)> root_gone;
  if (!parents && ns_.under_root(st->full)) root_gone = [](error_code ec) { return ec == zk_errc::no_node; };
  auto tried = in_namespace(std::move(attempt), std::move(root_gone));
  // A sequential create names its node on the server, and a protected one finds its own: no recheck.
  std::shared_ptr<Attempt> recheck;
  if (!sequential && st->protected_id.empty())
    recheck = lost_write_check(ro, st->full, [](const zkr::Stat* s) { return s == nullptr; });
  with_retry(
      ro, std::move(tried),
      [this, st, cb = std::move(cb)](error_code ec) mutable {
        if (ec) {
          // A try whose outcome is unknown may have made the node: find it by its protected id and delete it.
          // A stop after a failed try counts as unknown (the loop did not get to look). With no try sent
          // (never connected), there is nothing to look for.
          if (!st->protected_id.empty() && !life_.closed() && st->attempts > 0 &&
              (is_connection_loss(ec) || ec == client_errc::connection_timeout ||
               ec == asio::error::operation_aborted))
            deletes_.sweep(parent_path(st->full), protected_names::prefix_for(st->protected_id));
          return cb(ec, CreateResult{});
        }
        st->result.path = ns_.unfix(st->result.path);
        cb({}, std::move(st->result));
      },
      std::move(recheck));
}

void CoreImpl::find_protected(std::string full_path, std::string protected_id, bool ephemeral,
                              unique_function<void(error_code, std::optional<CreateResult>)> k) {
  auto parent = parent_path(full_path);
  session_->submit(zk::GetChildren{parent}, [this, parent, protected_id, ephemeral,
                                             k = std::move(k)](zk::Reply r) mutable {
    if (r.ec == zk_errc::no_node) return k({}, std::nullopt);
    if (r.ec) return k(r.ec, std::nullopt);
    const auto& names = r.children;
    const auto prefix = protected_names::prefix_for(protected_id);
    for (auto& n : names) {
      if (n.compare(0, prefix.size(), prefix) != 0) continue;
      auto path = make_path(parent, n);
      return session_->submit(
          zk::Exists{path}, [this, path, ephemeral, k = std::move(k)](zk::Reply r) mutable {
            if (r.ec == zk_errc::no_node) return k({}, std::nullopt);
            if (r.ec) return k(r.ec, std::nullopt);
            const auto& s = r.stat;
            // CURATOR-498/604: never adopt an ephemeral node of an earlier session.
            if (ephemeral && (s.ephemeral_owner != states_.session_id() || states_.session_id() == 0)) {
              log_->info("protected create: found {} of an earlier session; deleting it instead of adopting",
                         path);
              deletes_.remove(path);
              return k({}, std::nullopt);
            }
            k({}, CreateResult{path, s});
          });
    }
    k({}, std::nullopt);
  });
}

void CoreImpl::sweep_protected(std::string parent, std::string protected_prefix) {
  if (protected_prefix.empty() || gate(parent)) return;
  deletes_.sweep(ns_.fix(parent), std::move(protected_prefix));
}

}  // namespace zkr::detail
