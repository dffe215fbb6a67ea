#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/atomic_engine.hpp>
#include <zkr/recipes/detail/lock_internals.hpp>
#include <zkr/recipes/detail/number_codec.hpp>

#include "atomic_update.hpp"

namespace zkr::detail {

namespace {

/// The outcome of an unconditional write of `v` that ended with `ec`.
AtomicOutcome written(error_code ec, std::string v) {
  AtomicOutcome r;
  r.succeeded = !ec;
  if (!ec) r.post = std::move(v);
  return r;
}

}  // namespace

AtomicEngine::AtomicEngine(std::shared_ptr<Core> core, std::string path, std::size_t width,
                           RetryPolicyPtr retry, std::optional<PromotedToLock> promoted)
    : core_(std::move(core)),
      path_(std::move(path)),
      width_(width),
      retry_(std::move(retry)),
      promoted_(std::move(promoted)) {
  if (auto why = path_error(path_))
    throw Error(client_errc::invalid_path, "DistributedAtomic " + *why, path_);
  if (!retry_) throw Error(client_errc::invalid_argument, "DistributedAtomic: no retry policy", path_);
  if (promoted_) {
    if (!promoted_->retry_policy)
      throw Error(client_errc::invalid_argument, "PromotedToLock: no retry policy", promoted_->lock_path);
    lock_ = std::make_shared<LockInternals>(core_, promoted_->lock_path, "lock-", 1, default_mutex_driver());
  }
}

std::optional<std::string> AtomicEngine::read(const std::string& data) const {
  if (width_ == 0) return data;
  if (data.empty()) return encode_big_endian(0, width_);  // Curator: null or empty data reads as 0
  if (data.size() != width_) return std::nullopt;
  return data;
}

CreateOptions AtomicEngine::create_options(std::string data) {
  CreateOptions o;
  o.mode = CreateMode::persistent;
  o.parents_as_containers = true;  // persistent parents when the client says so (`use_container_parents`)
  o.data = std::move(data);
  return o;
}

void AtomicEngine::run(AtomicOp op, AtomicCallback cb) {
  using K = AtomicOp::Kind;
  switch (op.kind) {
    case K::get:
      return get(std::move(cb));
    case K::compare_and_set:
      return compare_and_set(std::move(op.expected), std::move(op.value), std::move(cb));
    case K::force_set:
      return force_set(std::move(op.value), false, std::move(cb));
    case K::initialize:
      return initialize(std::move(op.value), std::move(cb));
    case K::add: {
      // What `read` gave is a number of `width` bytes.
      auto next = [d = op.delta, w = width_](bool, const std::string& pre) -> std::optional<std::string> {
        return encode_big_endian(add_wrapping(decode_big_endian(pre, w).value_or(0), d, w), w);
      };
      return AtomicUpdate::start(shared_from_this(), lock_, promoted_, retry_, std::move(next),
                                 std::move(cb));
    }
    case K::try_set: {
      auto next = [v = std::move(op.value)](bool, const std::string&) -> std::optional<std::string> {
        return v;
      };
      return AtomicUpdate::start(shared_from_this(), lock_, promoted_, retry_, std::move(next),
                                 std::move(cb));
    }
  }
}

error_code AtomicEngine::read_reply(error_code ec, const std::string& data, std::string& out) const {
  if (ec && ec != zk_errc::no_node) return ec;
  auto v = read(ec ? std::string() : data);  // a missing node (nothing written yet) reads as empty data
  if (!v) return client_errc::corrupted_data;
  out = std::move(*v);
  return {};
}

void AtomicEngine::get(AtomicCallback cb) {
  core_->get_data(path_, nullptr,
                  [self = shared_from_this(), cb = std::move(cb)](error_code ec, NodeData d) mutable {
                    AtomicOutcome r;
                    std::string v;
                    if (auto e = self->read_reply(ec, d.data, v)) return cb(e, r);
                    r.succeeded = true;
                    r.pre = r.post = std::move(v);
                    cb({}, r);
                  });
}

void AtomicEngine::compare_and_set(std::string expected, std::string v, AtomicCallback cb) {
  // One try, no promotion; fails on a missing node (as Curator's), on other bytes, and when another writer
  // wins the versioned write.
  static const RetryPolicyPtr one_try = std::make_shared<RetryNTimes>(0, Millis(0));
  auto next = [expected = std::move(expected), v = std::move(v)](
                  bool missing, const std::string& pre) -> std::optional<std::string> {
    if (missing || pre != expected) return std::nullopt;
    return v;
  };
  AtomicUpdate::start(shared_from_this(), nullptr, std::nullopt, one_try, std::move(next), std::move(cb));
}

void AtomicEngine::force_set(std::string v, bool created_once, AtomicCallback cb) {
  auto data = v;
  core_->set_data(path_, std::move(data), -1,
                  [self = shared_from_this(), v = std::move(v), created_once, cb = std::move(cb)](
                      error_code ec, Stat) mutable {
                    if (ec == zk_errc::no_node && !created_once) {
                      auto data = v;
                      return self->core_->create(
                          self->path_, create_options(std::move(data)),
                          [self, v = std::move(v), cb = std::move(cb)](error_code ec, CreateResult) mutable {
                            // Someone created it first: overwrite (once).
                            if (ec == zk_errc::node_exists)
                              return self->force_set(std::move(v), true, std::move(cb));
                            cb(ec, written(ec, std::move(v)));
                          });
                    }
                    cb(ec, written(ec, std::move(v)));
                  });
}

void AtomicEngine::initialize(std::string v, AtomicCallback cb) {
  auto data = v;
  core_->create(path_, create_options(std::move(data)),
                [v = std::move(v), cb = std::move(cb)](error_code ec, CreateResult) mutable {
                  if (ec == zk_errc::node_exists) return cb({}, AtomicOutcome{});
                  cb(ec, written(ec, std::move(v)));
                });
}

}  // namespace zkr::detail
