#pragma once
/// \file
/// `SharedValue`: Curator's shared value, a byte string every client of one path sees and changes, kept
/// current by a data watch and changed with a versioned compare-and-set. Wire-compatible with Curator 5.x
/// (the node holds the raw bytes; it is created `PERSISTENT` with the seed, parents as containers, only when
/// missing at `start()`). docs/counters.md describes it against Curator.

#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <zkr/framework/connection_state.hpp>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/framework/detail/access.hpp>
#include <zkr/framework/detail/async.hpp>

namespace zkr {

/// Curator's `VersionedValue`: a value and the node version it was read at (`Stat::version`; -1 before the
/// first read). The version is what a compare-and-set (`try_set_value`, `try_set_count`) checks.
template <class T>
struct VersionedValue {
  std::int32_t version = -1;
  T value{};
  friend bool operator==(const VersionedValue&, const VersionedValue&) = default;
};

/// Curator's `SharedValueListener`: `value_has_changed` runs with the new value each time the local value
/// moves forward (a change read from the server, our own write included); `state_changed` with every
/// connection state of the client. Either may be empty.
struct SharedValueListener {
  std::function<void(const std::string& new_value)> value_has_changed;
  std::function<void(ConnectionState)> state_changed;
};

/// A shared value. `start()` creates the node with the seed if it is missing, then reads it and sets a data
/// watch; each change fires the watch, which reads the value again (and sets the watch again). On every
/// (re)connection the value is read again, as Curator does (CURATOR-311): a change missed meanwhile is seen.
/// The local value only moves forward: a read older than the one held (by `Stat::mzxid`, so Curator's
/// version-wrap bug CURATOR-688 cannot happen) is ignored.
///
/// If someone deletes the node, the value stays at its last reading and writes fail with `zk_errc::no_node`
/// (Curator's too: it never re-creates the node); a later re-creation is seen on the next (re)connection.
///
/// Thread-safety: every member is thread-safe. Listeners run on the client's completion executor (or the
/// one given), one call at a time per listener, never under the value's lock: they may call any member.
/// Lifetime: the destructor closes a started value; a listener call already running may still be running.
class SharedValue {
 public:
  enum class State { latent, started, closed };

  /// `path` is validated (`Error` with `client_errc::invalid_path`). `seed` is written only if the node is
  /// missing at `start()`; it is the local value until the first read.
  SharedValue(CuratorFramework& client, std::string path, std::string seed);
  ~SharedValue();
  SharedValue(const SharedValue&) = delete;
  SharedValue& operator=(const SharedValue&) = delete;

  /// Creates the node with the seed where it is missing (`node_exists` is not an error), then reads it with a
  /// watch. Errors: `client_errc::invalid_argument` when already started, `client_errc::closed` when closed,
  /// the client's (after its retry policy). A failed start leaves the object latent (it may be started
  /// again).
  void start();
  void start(error_code& ec);
  /// `start`, asynchronously. Handler: `void(error_code)`. Executor: the handler's, else the client's
  /// completion executor. Cancellation: terminal: completes at once with `operation_aborted`; the start goes
  /// on in the background (the value may still end up started). Errors: as `start`. Thread-safety: any
  /// thread.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_start(Token&& token = {}) {
    return detail::async_run<>(core(), {"SharedValue::start", path(), detail::Cancellation::write},
                               std::forward<Token>(token),
                               [i = impl_](auto cb) mutable { start_op(i, std::move(cb)); });
  }

  /// Stops following the node: listeners dropped (their pending calls too), the watch ignored. Idempotent.
  void close() noexcept;

  /// The local value (the seed before the first read). No I/O.
  std::string value() const;
  /// The local value and the version it was read at. No I/O.
  VersionedValue<std::string> versioned_value() const;

  /// Writes `v` whatever the node's version (Curator's `setValue`), and makes it the local value. Errors:
  /// `client_errc::not_started`, `client_errc::closed`, `zk_errc::no_node` (the node was deleted), the
  /// client's.
  void set_value(std::string v);
  void set_value(std::string v, error_code& ec);
  /// `set_value`, asynchronously. Handler: `void(error_code)`. Cancellation: terminal (a write already sent
  /// may still apply). Otherwise as `async_start`.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_set_value(std::string v, Token&& token = {}) {
    return detail::async_run<>(
        core(), {"SharedValue::set_value", path(), detail::Cancellation::write}, std::forward<Token>(token),
        [i = impl_, v = std::move(v)](auto cb) mutable { set_op(i, std::move(v), std::move(cb)); });
  }

  /// Curator's `trySetValue(previous, newValue)`: writes `v` only if `previous` is the local value (version
  /// and bytes) and the node is still at `previous.version`. False without I/O when `previous` is not the
  /// local value; false after a `bad_version` from the server (someone wrote first; the value is then read
  /// again, so that `versioned_value()` gives what to retry with). True: `v` is written and local. Errors:
  /// as `set_value`, and `client_errc::outcome_unknown`: the answer was lost with the connection and the node
  /// has changed since, by this write or another (docs/counters.md); never a false "not set".
  [[nodiscard]] bool try_set_value(const VersionedValue<std::string>& previous, std::string v);
  [[nodiscard]] bool try_set_value(const VersionedValue<std::string>& previous, std::string v,
                                   error_code& ec);
  /// `try_set_value`, asynchronously. Handler: `void(error_code, bool)`. Otherwise as `async_set_value`.
  template <boost::asio::completion_token_for<void(error_code, bool)> Token = default_completion_token_t>
  auto async_try_set_value(VersionedValue<std::string> previous, std::string v, Token&& token = {}) {
    return detail::async_run<bool>(
        core(), {"SharedValue::try_set_value", path(), detail::Cancellation::write},
        std::forward<Token>(token), [i = impl_, p = std::move(previous), v = std::move(v)](auto cb) mutable {
          try_set_op(i, std::move(p), std::move(v), std::move(cb));
        });
  }

  /// Adds a listener, called on the client's completion executor (or on `executor`); returns its id.
  /// `remove_listener` also drops its calls still pending.
  std::uint64_t add_listener(SharedValueListener listener);
  std::uint64_t add_listener(SharedValueListener listener, boost::asio::any_io_executor executor);
  void remove_listener(std::uint64_t id);

  State state() const;
  const std::string& path() const noexcept;

  struct Impl;
  friend struct detail::access;
  friend class SharedCount;

 private:
  /// Over any `detail::Core`.
  SharedValue(std::shared_ptr<detail::Core> core, std::string path, std::string seed);
  std::shared_ptr<detail::Core> core() const;
  static void start_op(const std::shared_ptr<Impl>& impl, detail::VoidCallback cb);
  static void set_op(const std::shared_ptr<Impl>& impl, std::string v, detail::VoidCallback cb);
  static void try_set_op(const std::shared_ptr<Impl>& impl, VersionedValue<std::string> previous,
                         std::string v, detail::unique_function<void(error_code, bool)> cb);
  std::shared_ptr<Impl> impl_;
};

}  // namespace zkr
