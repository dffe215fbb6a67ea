#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/atomic_engine.hpp>
#include <zkr/recipes/detail/lock_internals.hpp>
#include <zkr/recipes/detail/number_codec.hpp>

#include "atomic_update.hpp"

namespace zkr::detail {

AtomicEngine::AtomicEngine(std::shared_ptr<Core> core, std::string path, std::size_t width,
                           RetryPolicyPtr retry, std::optional<PromotedToLock> promoted)
    : core_(std::move(core)),
      path_(std::move(path)),
      width_(width),
      retry_(std::move(retry)),
      promoted_(std::move(promoted)) {
  if (auto why = path_error(path_)) throw Error(errc::invalid_path, "DistributedAtomic " + *why, path_);
  if (!retry_) throw Error(errc::invalid_argument, "DistributedAtomic: no retry policy", path_);
  if (promoted_) {
    if (!promoted_->retry_policy)
      throw Error(errc::invalid_argument, "PromotedToLock: no retry policy", promoted_->lock_path);
    lock_ = std::make_shared<LockInternals>(core_, promoted_->lock_path, "lock-", 1, default_mutex_driver());
  }
}

std::optional<std::int64_t> AtomicEngine::decode(const std::string& data) const {
  if (data.empty()) return 0;  // Curator: null or empty data reads as 0
  return decode_big_endian(data, width_);
}

CreateOptions AtomicEngine::create_options(std::int64_t v) const {
  CreateOptions o;
  o.mode = CreateMode::persistent;
  o.parents_as_containers = true;  // persistent parents when the client says so (`use_container_parents`)
  o.data = encode_big_endian(v, width_);
  return o;
}

void AtomicEngine::run(AtomicOp op, AtomicCallback cb) {
  using K = AtomicOp::Kind;
  switch (op.kind) {
    case K::get:
      return get(std::move(cb));
    case K::compare_and_set:
      return compare_and_set(op.a, op.b, std::move(cb));
    case K::force_set:
      return force_set(op.a, false, std::move(cb));
    case K::initialize:
      return initialize(op.a, std::move(cb));
    case K::add:
    case K::try_set: {
      const auto w = width_;
      auto next = op.kind == K::add
                      ? std::function<std::int64_t(std::int64_t)>(
                            [d = op.a, w](std::int64_t pre) { return add_wrapping(pre, d, w); })
                      : std::function<std::int64_t(std::int64_t)>([v = op.a](std::int64_t) { return v; });
      return AtomicUpdate::start(shared_from_this(), lock_, promoted_, retry_, std::move(next),
                                 std::move(cb));
    }
  }
}

void AtomicEngine::get(AtomicCallback cb) {
  core_->get_data(path_, nullptr,
                  [self = shared_from_this(), cb = std::move(cb)](error_code ec, NodeData d) mutable {
                    AtomicOutcome r;
                    if (ec == zk_errc::no_node) {  // nothing written yet: 0, and nothing is created
                      r.succeeded = true;
                      return cb({}, r);
                    }
                    if (ec) return cb(ec, r);
                    auto v = self->decode(d.data);
                    if (!v) return cb(errc::corrupted_data, r);
                    r.succeeded = true;
                    r.pre = r.post = *v;
                    cb({}, r);
                  });
}

void AtomicEngine::compare_and_set(std::int64_t expected, std::int64_t v, AtomicCallback cb) {
  core_->get_data(
      path_, nullptr,
      [self = shared_from_this(), expected, v, cb = std::move(cb)](error_code ec, NodeData d) mutable {
        AtomicOutcome r;
        r.stats.optimistic_tries = 1;
        if (ec == zk_errc::no_node) return cb({}, r);  // Curator: fails on a missing node
        if (ec) return cb(ec, r);
        auto cur = self->decode(d.data);
        if (!cur) return cb(errc::corrupted_data, r);
        r.pre = *cur;
        if (*cur != expected) return cb({}, r);
        self->core_->set_data(self->path_, encode_big_endian(v, self->width_), d.stat.version,
                              [r, v, cb = std::move(cb)](error_code ec, Stat) mutable {
                                if (ec == zk_errc::bad_version || ec == zk_errc::no_node) return cb({}, r);
                                if (ec) return cb(ec, r);
                                r.succeeded = true;
                                r.post = v;
                                cb({}, r);
                              });
      });
}

void AtomicEngine::force_set(std::int64_t v, bool created_once, AtomicCallback cb) {
  core_->set_data(
      path_, encode_big_endian(v, width_), -1,
      [self = shared_from_this(), v, created_once, cb = std::move(cb)](error_code ec, Stat) mutable {
        AtomicOutcome r;
        if (ec == zk_errc::no_node && !created_once) {
          return self->core_->create(self->path_, self->create_options(v),
                                     [self, v, cb = std::move(cb)](error_code ec, CreateResult) mutable {
                                       // Someone created it first: overwrite (once).
                                       if (ec == zk_errc::node_exists)
                                         return self->force_set(v, true, std::move(cb));
                                       AtomicOutcome r;
                                       r.succeeded = !ec;
                                       r.post = ec ? 0 : v;
                                       cb(ec, r);
                                     });
        }
        r.succeeded = !ec;
        r.post = ec ? 0 : v;
        cb(ec, r);
      });
}

void AtomicEngine::initialize(std::int64_t v, AtomicCallback cb) {
  core_->create(path_, create_options(v), [v, cb = std::move(cb)](error_code ec, CreateResult) mutable {
    AtomicOutcome r;
    if (ec == zk_errc::node_exists) return cb({}, r);
    r.succeeded = !ec;
    r.post = ec ? 0 : v;
    cb(ec, r);
  });
}

}  // namespace zkr::detail
