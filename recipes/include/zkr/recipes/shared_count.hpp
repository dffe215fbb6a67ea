#pragma once
/// \file
/// `SharedCount` and `SharedCountReader`: Curator's shared integer, a `SharedValue` whose bytes are a 32-bit
/// two's-complement number, 4 bytes big-endian (Java's `ByteBuffer.putInt`), byte-compatible with Curator.
/// docs/counters.md describes it against Curator.

#include <cstdint>
#include <string>
#include <zkr/recipes/detail/number_codec.hpp>
#include <zkr/recipes/shared_value.hpp>

namespace zkr {

/// Curator's `SharedCountListener`: `count_has_changed` runs with the new count each time the local value
/// moves forward to a valid count (a value of the wrong size, written by someone else, is logged as a
/// warning and not passed on: `count()` then reports it); `state_changed` with every connection state.
struct SharedCountListener {
  std::function<void(std::int32_t new_count)> count_has_changed;
  std::function<void(ConnectionState)> state_changed;
};

/// Curator's `SharedCountReader`: the read side of a shared count (what `InterProcessSemaphoreV2` follows).
class SharedCountReader {
 public:
  virtual ~SharedCountReader() = default;
  /// The local count. Errors: `client_errc::corrupted_data` when the node's bytes are not 4 long (someone
  /// else's write; Curator throws `BufferUnderflowException` for shorter data and silently truncates longer).
  virtual std::int32_t count() const = 0;
  virtual std::int32_t count(error_code& ec) const = 0;
  /// The local count and the version it was read at. Errors: as `count`.
  virtual VersionedValue<std::int32_t> versioned_count() const = 0;
  virtual VersionedValue<std::int32_t> versioned_count(error_code& ec) const = 0;
  /// Adds a listener, called on the client's completion executor (or on `executor`); returns its id.
  virtual std::uint64_t add_listener(SharedCountListener listener) = 0;
  virtual std::uint64_t add_listener(SharedCountListener listener, boost::asio::any_io_executor executor) = 0;
  virtual void remove_listener(std::uint64_t id) = 0;
};

/// A shared count: a `SharedValue` holding 4 bytes. Every member is as `SharedValue`'s, with counts for
/// values. Thread-safety and lifetimes: as `SharedValue`.
class SharedCount : public SharedCountReader {
 public:
  static constexpr std::size_t width = 4;

  /// `path` is validated (`Error` with `client_errc::invalid_path`). `seed` is written only if the node is
  /// missing at `start()`.
  SharedCount(CuratorFramework& client, std::string path, std::int32_t seed);

  /// As `SharedValue::start`.
  void start();
  void start(error_code& ec);
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_start(Token&& token = {}) {
    return value_.async_start(std::forward<Token>(token));
  }
  /// As `SharedValue::close`.
  void close() noexcept;

  std::int32_t count() const override;
  std::int32_t count(error_code& ec) const override;
  VersionedValue<std::int32_t> versioned_count() const override;
  VersionedValue<std::int32_t> versioned_count(error_code& ec) const override;

  /// Curator's `setCount`: as `SharedValue::set_value`.
  void set_count(std::int32_t n);
  void set_count(std::int32_t n, error_code& ec);
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_set_count(std::int32_t n, Token&& token = {}) {
    return value_.async_set_value(detail::encode_big_endian(n, width), std::forward<Token>(token));
  }

  /// Curator's `trySetCount(previous, newCount)`: a compare-and-set on the version seen (as
  /// `SharedValue::try_set_value`): false when someone else wrote since `previous` was read. An answer lost
  /// with the connection gives true, false (not applied) or `client_errc::outcome_unknown`, never a false
  /// "not set" (docs/counters.md).
  [[nodiscard]] bool try_set_count(const VersionedValue<std::int32_t>& previous, std::int32_t n);
  [[nodiscard]] bool try_set_count(const VersionedValue<std::int32_t>& previous, std::int32_t n,
                                   error_code& ec);
  template <boost::asio::completion_token_for<void(error_code, bool)> Token = default_completion_token_t>
  auto async_try_set_count(VersionedValue<std::int32_t> previous, std::int32_t n, Token&& token = {}) {
    return value_.async_try_set_value(as_bytes(previous), detail::encode_big_endian(n, width),
                                      std::forward<Token>(token));
  }

  std::uint64_t add_listener(SharedCountListener listener) override;
  std::uint64_t add_listener(SharedCountListener listener, boost::asio::any_io_executor executor) override;
  void remove_listener(std::uint64_t id) override;

  SharedValue::State state() const { return value_.state(); }
  const std::string& path() const noexcept { return value_.path(); }

 private:
  static VersionedValue<std::string> as_bytes(const VersionedValue<std::int32_t>& v) {
    return {v.version, detail::encode_big_endian(v.value, width)};
  }
  SharedValue value_;
};

}  // namespace zkr
