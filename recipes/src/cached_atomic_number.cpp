// The blocks of a cached atomic number (CachedAtomicLong / CachedAtomicInteger): a distributed atomic
// number's values taken `factor` at a time and handed out one by one. Its state lives on the client's I/O
// thread: one add in flight at a time, the calls waiting for it queued in order.

#include <deque>
#include <memory>
#include <utility>
#include <zkr/recipes/cached_atomic_number.hpp>

namespace zkr::detail {

class CachedBlocks : public std::enable_shared_from_this<CachedBlocks> {
 public:
  CachedBlocks(std::shared_ptr<AtomicEngine> e, int f) : engine_(std::move(e)), factor_(f) {}

  void take(CachedCallback cb) {
    waiting_.push_back(std::move(cb));
    serve();
  }
  const std::shared_ptr<AtomicEngine>& engine() const noexcept { return engine_; }
  int factor() const noexcept { return factor_; }

 private:
  /// Serves the waiters from the block, and takes a new block while some remain.
  void serve() {
    while (!waiting_.empty() && handed_ < block_size_) {
      auto cb = std::move(waiting_.front());
      waiting_.pop_front();
      // Unsigned: Java's arithmetic wraps around (the public template wraps the value to the number's width).
      const auto v = static_cast<std::int64_t>(static_cast<std::uint64_t>(block_start_) + handed_++);
      cb({}, AtomicValue<std::int64_t>{true, v, 0, {}});
    }
    if (waiting_.empty() || refilling_) return;
    refilling_ = true;
    engine_->run({AtomicOp::Kind::add, {}, {}, factor_},
                 [self = shared_from_this()](error_code ec, AtomicOutcome o) { self->refilled(ec, o); });
  }
  void refilled(error_code ec, const AtomicOutcome& o) {
    refilling_ = false;
    if (ec || !o.succeeded) {
      // The waiters of this block share its outcome; the next call tries again.
      auto failed = std::exchange(waiting_, {});
      for (auto& cb : failed) cb(ec, AtomicValue<std::int64_t>{false, 0, 0, o.stats});
      return;
    }
    block_start_ = decode_big_endian(o.pre, engine_->width()).value_or(0);
    block_size_ = static_cast<std::uint64_t>(factor_);
    handed_ = 0;
    serve();
  }

  const std::shared_ptr<AtomicEngine> engine_;
  const int factor_;
  // I/O thread
  std::int64_t block_start_ = 0;
  std::uint64_t block_size_ = 0;  // 0 before the first block
  std::uint64_t handed_ = 0;      // values of the block handed out
  bool refilling_ = false;
  std::deque<CachedCallback> waiting_;
};

std::shared_ptr<CachedBlocks> make_cached_blocks(std::shared_ptr<AtomicEngine> engine, int cache_factor) {
  return std::make_shared<CachedBlocks>(std::move(engine), cache_factor);
}
void take_cached_value(const std::shared_ptr<CachedBlocks>& blocks, CachedCallback cb) {
  blocks->take(std::move(cb));
}
const std::shared_ptr<AtomicEngine>& cached_engine(const CachedBlocks& blocks) noexcept {
  return blocks.engine();
}
int cached_factor(const CachedBlocks& blocks) noexcept { return blocks.factor(); }

}  // namespace zkr::detail
