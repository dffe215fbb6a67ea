#include "atomic_update.hpp"

#include <spdlog/logger.h>

#include <boost/asio/bind_executor.hpp>
#include <zkr/recipes/detail/lock_internals.hpp>
#include <zkr/recipes/detail/number_codec.hpp>

namespace zkr::detail {

void AtomicUpdate::start(std::shared_ptr<AtomicEngine> engine, std::shared_ptr<LockInternals> lock,
                         std::optional<PromotedToLock> promoted, RetryPolicyPtr retry, Next next,
                         AtomicCallback cb) {
  auto u = std::make_shared<AtomicUpdate>(std::move(engine), std::move(lock), std::move(promoted),
                                          std::move(retry), std::move(next), std::move(cb));
  u->try_once();
}

AtomicUpdate::AtomicUpdate(std::shared_ptr<AtomicEngine> engine, std::shared_ptr<LockInternals> lock,
                           std::optional<PromotedToLock> promoted, RetryPolicyPtr retry, Next next,
                           AtomicCallback cb)
    : engine_(std::move(engine)),
      lock_(std::move(lock)),
      promoted_(std::move(promoted)),
      retry_(std::move(retry)),
      next_(std::move(next)),
      cb_(std::move(cb)),
      timer_(engine_->core()->io_executor()) {}

void AtomicUpdate::try_once() {
  ++(under_lock_ ? out_.stats.promoted_lock_tries : out_.stats.optimistic_tries);
  engine_->core()->get_data(engine_->path(), nullptr, [self = shared_from_this()](error_code ec, NodeData d) {
    if (ec == zk_errc::no_node) return self->write(true, 0);
    if (ec) return self->finish(ec);
    self->version_ = d.stat.version;
    if (d.data.empty()) return self->write(false, 0);  // Curator: empty data reads as 0
    auto pre = decode_big_endian(d.data, self->engine_->width());
    if (!pre) return self->finish(errc::corrupted_data);
    self->version_ = d.stat.version;
    self->write(false, *pre);
  });
}

void AtomicUpdate::write(bool missing, std::int64_t pre) {
  out_.pre = pre;
  const auto v = next_(pre);
  auto done = [self = shared_from_this(), v](error_code ec) {
    if (ec == zk_errc::bad_version || ec == zk_errc::node_exists || ec == zk_errc::no_node)
      return self->lost_race();
    if (ec) return self->finish(ec);
    self->out_.succeeded = true;
    self->out_.post = v;
    self->finish({});
  };
  auto& core = *engine_->core();
  if (missing) {
    CreateOptions o;
    o.mode = CreateMode::persistent;
    o.parents_as_containers = true;
    o.data = encode_big_endian(v, engine_->width());
    return core.create(engine_->path(), std::move(o),
                       [done = std::move(done)](error_code ec, CreateResult) { done(ec); });
  }
  core.set_data(engine_->path(), encode_big_endian(v, engine_->width()), version_,
                [done = std::move(done)](error_code ec, Stat) { done(ec); });
}

void AtomicUpdate::lost_race() {
  const auto& policy = under_lock_ ? promoted_->retry_policy : retry_;
  const auto elapsed = std::chrono::duration_cast<Millis>(Clock::now() - phase_start_);
  auto pause = policy->allow_retry(retries_++, elapsed);
  if (!pause) return phase_over();
  timer_.expires_after(*pause);
  timer_.async_wait([self = shared_from_this()](error_code) { self->try_once(); });
}

void AtomicUpdate::account() {
  const auto t = std::chrono::duration_cast<Millis>(Clock::now() - phase_start_);
  (under_lock_ ? out_.stats.promoted_time : out_.stats.optimistic_time) += t;
}

void AtomicUpdate::phase_over() {
  if (under_lock_ || !promoted_) return finish({});  // given up: succeeded stays false
  account();
  promote();
}

void AtomicUpdate::promote() {
  under_lock_ = true;
  retries_ = 0;
  phase_start_ = Clock::now();
  AcquireOptions o;
  if (promoted_->max_wait) o.deadline = Clock::now() + *promoted_->max_wait;
  lock_->attempt_lock(std::move(o), std::make_shared<CancelState>(),
                      [self = shared_from_this()](error_code ec, Lease l) {
                        if (ec) return self->finish(ec);
                        if (!l) return self->finish({});  // not had in time: not succeeded
                        self->lease_ = std::move(l);
                        self->try_once();
                      });
}

void AtomicUpdate::finish(error_code ec) {
  account();
  if (!out_.succeeded) out_.post = 0;
  if (!lease_) return cb_(ec, out_);
  // The release completes back on the I/O thread, where every step of the update runs.
  lease_.async_release(boost::asio::bind_executor(
      engine_->core()->io_executor(), [self = shared_from_this(), ec](error_code release_ec) {
        if (release_ec)
          self->engine_->core()->logger()->warn("DistributedAtomic {}: releasing the promoted lock: {}",
                                                self->engine_->path(), release_ec.message());
        self->cb_(ec, self->out_);
      }));
}

}  // namespace zkr::detail
