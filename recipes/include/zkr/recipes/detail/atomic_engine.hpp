#pragma once
/// \file
/// `detail::AtomicEngine`: the algorithm of Curator's `DistributedAtomicValue` (docs/counters.md): a read, a
/// versioned write (or a create for a missing node), again under the retry policy while another writer wins,
/// then again under the promoted lock. It works on the node's bytes: raw for `DistributedAtomicValue`, a
/// number of 4 or 8 bytes for `DistributedAtomicNumber<T>` (an add is computed on the number). Not API.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <zkr/framework/detail/core.hpp>
#include <zkr/recipes/atomic_value.hpp>

namespace zkr::detail {

class LockInternals;

/// One operation, as data (what the public twins hand to the engine). Values are the node's bytes (a
/// number's encoded as `number_codec.hpp` does).
struct AtomicOp {
  enum class Kind { get, add, try_set, compare_and_set, force_set, initialize };
  // Not an aggregate: the twins name only the fields an operation uses.
  AtomicOp(Kind k, std::string v = {}, std::string e = {}, std::int64_t d = 0)
      : kind(k), value(std::move(v)), expected(std::move(e)), delta(d) {}

  Kind kind;
  std::string value;     ///< the new value (try_set, compare_and_set, force_set, initialize)
  std::string expected;  ///< compare_and_set's expected value
  std::int64_t delta;    ///< add's (numbers only)
};

/// The outcome of an operation, in bytes (`pre`: the value read, empty data as the engine reads it; `post`:
/// the value written, empty when nothing was). `initialize` reports whether it created the node in
/// `succeeded`.
struct AtomicOutcome {
  bool succeeded = false;
  std::string pre;
  std::string post;
  AtomicStats stats;
};
using AtomicCallback = unique_function<void(error_code, AtomicOutcome)>;

class AtomicEngine : public std::enable_shared_from_this<AtomicEngine> {
 public:
  /// `path` and a promoted lock's path are validated (`Error` with `client_errc::invalid_path`); a null retry
  /// policy is `client_errc::invalid_argument`. `width` is 4 or 8 for a number, 0 for raw bytes.
  AtomicEngine(std::shared_ptr<Core> core, std::string path, std::size_t width, RetryPolicyPtr retry,
               std::optional<PromotedToLock> promoted);

  /// Runs `op` (I/O thread); `cb` runs on the I/O thread.
  void run(AtomicOp op, AtomicCallback cb);

  const std::shared_ptr<Core>& core() const noexcept { return core_; }
  const std::string& path() const noexcept { return path_; }
  std::size_t width() const noexcept { return width_; }
  /// The node's data as this engine reads it: raw bytes as they are; for a number, empty data as 0 (as
  /// Curator reads null or empty data) and `nullopt` for bytes of another size than the number's (written
  /// by someone else: `client_errc::corrupted_data`).
  std::optional<std::string> read(const std::string& data) const;
  /// A read of the node (`ec`, `data`) as `read` takes it, into `out`: a missing node as empty data. Errors:
  /// the read's, `client_errc::corrupted_data`.
  error_code read_reply(error_code ec, const std::string& data, std::string& out) const;
  /// How a write creates a missing node holding `data`: persistent, parents as containers.
  static CreateOptions create_options(std::string data);

 private:
  void get(AtomicCallback cb);
  void compare_and_set(std::string expected, std::string v, AtomicCallback cb);
  void force_set(std::string v, bool created_once, AtomicCallback cb);
  void initialize(std::string v, AtomicCallback cb);

  std::shared_ptr<Core> core_;
  std::string path_;
  std::size_t width_;
  RetryPolicyPtr retry_;
  std::optional<PromotedToLock> promoted_;
  std::shared_ptr<LockInternals> lock_;
};

}  // namespace zkr::detail
