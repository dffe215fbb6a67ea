#pragma once
// PersistentNode::Impl: the node's state machine (private to recipes/src). persistent_node_keeper.cpp keeps
// the node on the server (create, adopt, watch, writes), persistent_node_close.cpp ends it, and
// persistent_node.cpp is the public class over it.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>
#include <zkr/recipes/detail/callback_guard.hpp>
#include <zkr/recipes/nodes/persistent_node.hpp>

#include "../listener_list.hpp"

namespace zkr {

namespace detail {
/// The server's TTL range (ZooKeeper's `EphemeralType.TTL`: 1 .. 2^40-1 ms).
inline constexpr std::chrono::milliseconds max_ttl{(std::int64_t{1} << 40) - 1};
}  // namespace detail

struct PersistentNode::Impl : std::enable_shared_from_this<PersistentNode::Impl> {
  /// What a recipe built on a node (PersistentTtlNode) adds to it.
  struct Hooks {
    /// Runs (I/O thread) each time the node is known to be there: created, adopted or read back.
    std::function<void()> on_present;
    /// False: close leaves the node on the server (PersistentTtlNode's container).
    bool delete_on_close = true;
  };

  /// Where the node is (I/O thread). One request of the node's own is in flight in `creating`, `adopting`,
  /// `checking` and `waiting_parent` (an exists on the parent); none in the others.
  enum class Step {
    idle,            ///< not started
    creating,        ///< a create in flight
    adopting,        ///< the create found an existing node: our bytes are being written to it
    checking,        ///< an exists (with the watch) on the actual path in flight
    live,            ///< the node is there and watched
    waiting,         ///< a failure the retry policy gave up on: again once connected, or after a pause
    waiting_parent,  ///< the parent is missing and parent creation is off: its exists watch is set
    failed,          ///< stopped by a permanent error
    closing,         ///< closed; the delete (after the create in flight, if any) is under way
    closed,          ///< closed, and the delete done
  };

  /// A `set_data` waiting for its bytes (generation `gen`) to be on the node.
  struct DataWaiter {
    std::uint64_t gen;
    detail::VoidCallback cb;
  };

  Impl(std::shared_ptr<detail::Core> c, CreateMode m, bool protection, std::string path, std::string data,
       std::chrono::milliseconds ttl_, bool parents, Hooks h);

  // ---- persistent_node_keeper.cpp (I/O thread) ----
  void begin();
  /// Creates the node (or the same name again) with the current bytes.
  void round();
  /// Reads the actual path back with an exists watch.
  void check();
  void on_create_reply(const std::string& tried, std::uint64_t gen, error_code ec, CreateResult r);
  void adopt(const std::string& path);
  void on_present(const std::string& path, std::uint64_t gen, bool created);
  void on_watch(const WatchedEvent& ev);
  void on_state(ConnectionState s);
  /// A failure: transient (a connection reason) → `waiting`; otherwise → `failed`.
  void on_failure(error_code ec);
  void wait_for_parent();
  /// Writes the current bytes to the live node when they are newer than what it holds.
  void pump_writes();
  void complete_data_waiters(std::uint64_t up_to_gen, error_code ec);
  void complete_all_data_waiters(error_code ec);
  void drop_watch();
  void notify_created(const std::string& path);

  // ---- persistent_node_close.cpp (I/O thread) ----
  void shutdown(detail::VoidCallback done);
  /// The create in flight at close answered: delete what it may have made.
  void close_after_create(const std::string& tried, error_code ec, const CreateResult& r);
  void delete_then_finish(std::string path);
  void finish_close(error_code ec);

  // ---- any thread ----
  detail::CallbackGuard<Impl> guard() { return detail::CallbackGuard<Impl>::weak(shared_from_this()); }
  bool is_started() const {
    std::lock_guard lk(mu);
    return state == State::started;
  }
  /// latent/started -> closed; false when already closed.
  bool mark_closed();
  void wake_initial_waiters(error_code ec);

  const std::shared_ptr<detail::Core> core;
  const CreateMode mode;
  const bool use_protection;
  const std::string base_path;
  const std::chrono::milliseconds ttl;
  const bool use_parent_creation;
  const Hooks hooks;

  // I/O
  Step step = Step::idle;
  detail::WatchId watch_id = 0;
  detail::Epoch watches;  // a watch event counts only from the latest watch
  detail::StopPtr create_stop;
  std::string adopting_path;  // the node being adopted
  std::uint64_t written_gen = 0;
  bool write_in_flight = false;
  std::uint64_t failed_write_gen = 0;  // no new write of this generation until the next read back
  error_code last_error;               // why `waiting`
  std::uint64_t state_listener = 0;
  std::optional<boost::asio::steady_timer> retry_timer;
  std::vector<DataWaiter> data_waiters;
  std::vector<detail::VoidCallback> close_waiters;
  std::map<std::uint64_t, detail::VoidCallback> initial_waiters;
  std::uint64_t next_waiter = 0;

  // under mu
  mutable std::mutex mu;
  std::condition_variable cv;
  State state = State::latent;
  std::string data;
  std::uint64_t data_gen = 1;
  std::string actual_path;
  bool initial_created = false;
  error_code failure;

  detail::ListenerList<PersistentNodeListener> listeners;  // locked itself
};

/// Whether `ec` is a failure that time or a new connection may end (the node tries again): connection loss,
/// timeouts, an expired or moved session, a read-only server, a stop.
bool is_transient_node_failure(const error_code& ec) noexcept;

}  // namespace zkr
