#pragma once
/// \file
/// `CachedAtomicLong` and `CachedAtomicInteger`: Curator's cached atomic numbers, values of a distributed
/// atomic number handed out in blocks (docs/counters.md).

#include <cstdint>
#include <memory>
#include <string>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/framework/detail/access.hpp>
#include <zkr/framework/detail/async.hpp>
#include <zkr/recipes/atomic_value.hpp>
#include <zkr/recipes/detail/atomic_engine.hpp>
#include <zkr/recipes/detail/number_codec.hpp>
#include <zkr/recipes/distributed_atomic_number.hpp>

namespace zkr {

namespace detail {
/// The blocks of a cached atomic number (recipes/src/cached_atomic_number.cpp): its state on the client's I/O
/// thread, one add in flight at a time, the calls waiting for it served in order.
class CachedBlocks;
std::shared_ptr<CachedBlocks> make_cached_blocks(std::shared_ptr<AtomicEngine> engine, int cache_factor);
/// What `take_cached_value` hands out: `pre_value` is the block's start plus the values handed out before
/// (not yet wrapped to the number's width); `post_value` is not set.
using CachedCallback = unique_function<void(error_code, AtomicValue<std::int64_t>)>;
/// Hands the next value of `blocks` to `cb` (I/O thread), taking a new block first if needed.
void take_cached_value(const std::shared_ptr<CachedBlocks>& blocks, CachedCallback cb);
const std::shared_ptr<AtomicEngine>& cached_engine(const CachedBlocks& blocks) noexcept;
int cached_factor(const CachedBlocks& blocks) noexcept;
}  // namespace detail

/// Curator's `CachedAtomicLong` / `CachedAtomicInteger`: takes `cache_factor` values of a
/// `DistributedAtomicNumber<T>` at once (one `add(cache_factor)`) and hands them out one by one with
/// `next()`, so that a process drawing ids talks to ZooKeeper once per block. `next()` gives the value before
/// its increment in `pre_value` (the id to use) and that value plus one in `post_value`, as Curator's
/// (wrapping around as Java's arithmetic does).
///
/// The values handed out are unique among every process that draws from the number (each block is a
/// successful versioned add), not contiguous and not in global order; the values of a block not yet handed
/// out when the object is destroyed are skipped for good, as in Curator.
///
/// Concurrent `next` calls (any thread, any twin) share the blocks: one `add` is in flight at a time, and its
/// outcome serves the calls waiting for it in the order they came. When the add fails (an error, or the
/// number's retry policies give up: `succeeded` false), every call waiting for that block gets that outcome,
/// and the next call tries again.
///
/// Twins: throwing, `error_code&`, and `async_next` (handler `void(error_code, AtomicValue<T>)`; executor:
/// the handler's, else the client's completion executor; cancellation: terminal only, completes at once with
/// `operation_aborted`, and the value it would have had is skipped). Errors: the number's. Never call the
/// blocking twins on the client's I/O thread (`client_errc::would_deadlock`).
template <class T>
class CachedAtomicNumber {
 public:
  /// `cache_factor` >= 1 (`Error` with `client_errc::invalid_argument` otherwise). The number is shared (a
  /// copy of a `DistributedAtomicNumber` uses the same engine).
  CachedAtomicNumber(const DistributedAtomicNumber<T>& number, int cache_factor) {
    if (cache_factor < 1)
      throw Error(client_errc::invalid_argument, "CachedAtomicNumber (cache_factor below 1)", number.path());
    blocks_ = detail::make_cached_blocks(detail::access::engine(number), cache_factor);
  }

  AtomicValue<T> next() {
    error_code ec;
    auto v = next(ec);
    throw_if(ec, "CachedAtomicNumber::next", path());
    return v;
  }
  AtomicValue<T> next(error_code& ec) {
    auto o = detail::run_blocking<AtomicValue<std::int64_t>>(
        *engine().core(),
        [b = blocks_](detail::CachedCallback cb) { detail::take_cached_value(b, std::move(cb)); }, ec);
    return narrow(o);
  }
  template <
      boost::asio::completion_token_for<void(error_code, AtomicValue<T>)> Token = default_completion_token_t>
  auto async_next(Token&& token = {}) {
    return detail::async_run<AtomicValue<T>>(
        engine().core(), {"CachedAtomicNumber::next", path(), detail::Cancellation::write},
        std::forward<Token>(token), [b = blocks_](auto cb) {
          detail::take_cached_value(b,
                                    [cb = std::move(cb)](error_code ec, AtomicValue<std::int64_t> o) mutable {
                                      cb(ec, narrow(o));
                                    });
        });
  }

  const std::string& path() const noexcept { return engine().path(); }
  int cache_factor() const noexcept { return detail::cached_factor(*blocks_); }

 private:
  static AtomicValue<T> narrow(const AtomicValue<std::int64_t>& o) {
    if (!o.succeeded) return {false, T{}, T{}, o.stats};
    const auto pre = detail::wrap_to_width(static_cast<std::uint64_t>(o.pre_value), sizeof(T));
    const auto post = detail::wrap_to_width(static_cast<std::uint64_t>(o.pre_value) + 1, sizeof(T));
    return {true, static_cast<T>(pre), static_cast<T>(post), o.stats};
  }
  const detail::AtomicEngine& engine() const noexcept { return *detail::cached_engine(*blocks_); }

  std::shared_ptr<detail::CachedBlocks> blocks_;
};

/// Curator's `CachedAtomicLong`.
using CachedAtomicLong = CachedAtomicNumber<std::int64_t>;
/// Curator's `CachedAtomicInteger`.
using CachedAtomicInteger = CachedAtomicNumber<std::int32_t>;

}  // namespace zkr
