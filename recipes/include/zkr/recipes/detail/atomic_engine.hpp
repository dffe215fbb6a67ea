#pragma once
/// \file
/// `detail::AtomicEngine`: the algorithm of Curator's `DistributedAtomicValue` over a number of 4 or 8 bytes
/// (docs/counters.md): a read, a versioned write (or a create for a missing node), again under the retry
/// policy while another writer wins, then again under the promoted lock. Not API: the public face is
/// `DistributedAtomicNumber<T>`.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <zkr/framework/detail/core.hpp>
#include <zkr/recipes/atomic_value.hpp>

namespace zkr::detail {

class LockInternals;

/// One operation, as data (what the public twins hand to the engine).
struct AtomicOp {
  enum class Kind { get, add, try_set, compare_and_set, force_set, initialize } kind = Kind::get;
  std::int64_t a = 0;  ///< the delta (add), the new value (try_set, force_set, initialize), the expected one
  std::int64_t b = 0;  ///< compare_and_set's new value
};

/// The outcome of an operation, in 64 bits (the public template narrows it). `initialize` reports whether
/// it created the node in `succeeded`.
struct AtomicOutcome {
  bool succeeded = false;
  std::int64_t pre = 0;
  std::int64_t post = 0;
  AtomicStats stats;
};
using AtomicCallback = unique_function<void(error_code, AtomicOutcome)>;

class AtomicEngine : public std::enable_shared_from_this<AtomicEngine> {
 public:
  /// `path` and a promoted lock's path are validated (`Error` with `errc::invalid_path`); a null retry
  /// policy is `errc::invalid_argument`. `width` is 4 or 8.
  AtomicEngine(std::shared_ptr<Core> core, std::string path, std::size_t width, RetryPolicyPtr retry,
               std::optional<PromotedToLock> promoted);

  /// Runs `op` (I/O thread); `cb` runs on the I/O thread.
  void run(AtomicOp op, AtomicCallback cb);

  const std::shared_ptr<Core>& core() const noexcept { return core_; }
  const std::string& path() const noexcept { return path_; }
  std::size_t width() const noexcept { return width_; }

 private:
  struct Update;
  void get(AtomicCallback cb);
  void compare_and_set(std::int64_t expected, std::int64_t v, AtomicCallback cb);
  void force_set(std::int64_t v, bool created_once, AtomicCallback cb);
  void initialize(std::int64_t v, AtomicCallback cb);
  /// The node's number: 0 for empty data, `errc::corrupted_data` for bytes of another size.
  std::optional<std::int64_t> decode(const std::string& data) const;
  CreateOptions create_options(std::int64_t v) const;

  std::shared_ptr<Core> core_;
  std::string path_;
  std::size_t width_;
  RetryPolicyPtr retry_;
  std::optional<PromotedToLock> promoted_;
  std::shared_ptr<LockInternals> lock_;
};

}  // namespace zkr::detail
