#pragma once
/// \file
/// `CuratorFramework`: a ZooKeeper client with Curator's semantics (retry policies, connection states,
/// protected create, guaranteed delete, container parents, namespaces, ACL providers) and a native Asio
/// interface. Every operation comes as three twins: throwing `op(args)`, non-throwing `op(args, error_code&)`
/// and asynchronous `async_op(args, token)` taking any Asio completion token (callbacks, `use_future`,
/// `use_awaitable`, ...).
///
/// Threading: the client runs its ZooKeeper session (any transport) on its own I/O thread. Every member
/// function is thread-safe. Asynchronous handlers run on their associated executor, or on the configured
/// `executor` (default: the client's I/O thread, where handlers must not block). The blocking twins may be
/// called from any thread except the client's I/O thread (they fail with `client_errc::would_deadlock`
/// there).
///
/// Asynchronous operations: with no token, `async_op(args)` returns a deferred operation
/// (`default_completion_token_t`, `with_diagnostics(boost::asio::deferred)`) whose `co_await` throws
/// `zkr::Error` with the operation and the path; the handler never runs inside the initiating call. The
/// contract (executors, cancellation per operation, late results) is in docs/async.md.

#include <spdlog/fwd.h>

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>
#include <zkr/framework/connection_state.hpp>
#include <zkr/framework/detail/access.hpp>
#include <zkr/framework/detail/async.hpp>
#include <zkr/framework/error.hpp>
#include <zkr/framework/paths.hpp>
#include <zkr/framework/retry.hpp>
#include <zkr/framework/sasl.hpp>
#include <zkr/framework/transport.hpp>
#include <zkr/framework/types.hpp>
#include <zkr/framework/with_diagnostics.hpp>

namespace zkr {

/// Curator's `ACLProvider`: the ACL for a full (namespaced) path.
using AclProvider = std::function<AclList(std::string_view path)>;

/// Authentication data (`zoo_add_auth`), e.g. {"digest", "user:password"}.
struct AuthInfo {
  std::string scheme;
  std::string auth;
};

/// TLS to the ensemble (ZooKeeper's `secureClientPort`) with a client certificate, as PEM files. Every
/// connection and reconnection uses it; there is no fallback to plain text. See docs/tls.md.
///
/// What zkrecipes checks itself, beyond the C client: the files, at `start()` and before every new session
/// (a missing or unreadable file, a key that the password does not open or that does not match the
/// certificate, an expired client certificate: `start()` fails with a typed error, where the C client would
/// spin); and before every new session, a TLS handshake of its own with the servers of the connect string,
/// trusting only `ca_file` and checking the host name, where the C client trusts the system's CA store too
/// and checks no host name. A refusal is a typed error (`client_errc::tls_handshake_failed`), never an
/// endless silent retry.
struct TlsConfig {
  /// The CA certificates (PEM) that sign the servers' certificates.
  std::string ca_file;
  /// The client certificate (PEM; its chain, leaf first). ZooKeeper's x509 provider makes its subject the
  /// client's ACL id (`x509:CN=...`).
  std::string cert_file;
  /// The client's private key (PEM, encrypted or not).
  std::string key_file;
  /// The passphrase of an encrypted key; empty for a plain one. Never logged.
  std::string key_password;
  /// Whether zkrecipes's own handshake checks that a server's certificate names the host it was reached by
  /// (its subjectAltName DNS or IP entry, as in the connect string): at the session's opening over the C
  /// client, on every connection over the native transport (docs/tls.md). Turn it off only for an ensemble
  /// whose certificates do not name their hosts; the chain is still checked against `ca_file`.
  bool verify_host_name = true;
};

/// Whether the default transport (`default_transport()`, transport.hpp) speaks TLS: the ZooKeeper C client
/// where this build links a TLS-capable one (`ZKR_ZOOKEEPER_TLS`), the native transport where the build
/// carries it with OpenSSL. Without it, `start()` of a client configured for TLS fails with
/// `client_errc::tls_unsupported`.
bool tls_supported() noexcept;

/// Everything a client is built from (Curator's `CuratorFrameworkFactory.Builder`).
struct ClientConfig {
  /// "host:port[,host:port...]"; required.
  std::string connect_string;
  /// The transport to speak through (transport.hpp): `automatic` takes `ZKR_ZOOKEEPER_TRANSPORT` from the
  /// environment, else the build's default. One this build does not carry fails `start()` with
  /// `client_errc::transport_unavailable`.
  Transport transport = Transport::automatic;
  /// Required (Curator has no default either).
  RetryPolicyPtr retry_policy;
  std::chrono::milliseconds session_timeout{60000};
  std::chrono::milliseconds connection_timeout{15000};
  /// How long one connection attempt may take, from its TCP connect to the server's answer to the session
  /// handshake, before the client gives it up and connects again (to the next server of the connect string).
  /// From the second attempt given up in a row on, it doubles with each, up to 16 times; a connection starts
  /// it over. The C client itself waits 2/3 of the session timeout. This protects against a server that
  /// accepts a connection and never answers it, as ZooKeeper 3.8.0 does to a client that reaches it while it
  /// starts up. Zero leaves the attempt to the C client's own timeout; negative makes `start()` fail with
  /// `client_errc::invalid_argument`.
  std::chrono::milliseconds handshake_timeout{1000};
  /// How long `close()` waits for pending guaranteed deletes.
  std::chrono::milliseconds max_close_wait{1000};
  /// Prefix applied to every path ("" = none); validated as "/" + namespace.
  std::string namespace_name;
  /// Data of nodes created without data; nullopt = the local host's IP address as text, as Curator.
  std::optional<std::string> default_data;
  /// ACL of created nodes, given the full namespaced path; empty = OPEN_ACL_UNSAFE everywhere.
  AclProvider acl_provider;
  /// Sent on every connection. Should the server refuse it (an unknown scheme, say), the client stops
  /// connecting for good: operations fail with `zk_errc::auth_failed`, and LOST follows an earlier state.
  std::vector<AuthInfo> auth;
  /// TLS to the ensemble; empty = plain text.
  std::optional<TlsConfig> tls;
  /// SASL authentication on every connection (sasl.hpp, docs/sasl.md); empty = none.
  std::optional<SaslConfig> sasl;
  /// The logger (the C client's log is routed into it too); null = a private stderr logger at `warn`.
  std::shared_ptr<spdlog::logger> logger;
  /// Executor for handlers without an associated executor and for connection-state listeners; empty = the
  /// client's own I/O thread.
  std::optional<boost::asio::any_io_executor> executor;
  bool can_be_read_only = false;
  /// Missing parents of recipes are created as containers (Curator's default).
  bool use_container_parents = true;
  /// The session is treated as LOST once this percentage of the session timeout has passed while SUSPENDED.
  int simulated_session_expiration_percent = 100;
  /// Node data larger than this is refused locally with `client_errc::data_too_large`.
  std::size_t max_data_size = default_max_data_size;
};

/// Options of a delete (Curator's delete builder).
struct DeleteOptions {
  int version = -1;
  /// Keep retrying in the background after a retryable failure, until success or close.
  bool guaranteed = false;
  /// Delete the children first (Curator's `deletingChildrenIfNeeded`). A node that was there when the delete
  /// began and is gone once its children are (a container parent, which the server reaps when it is empty;
  /// another deleter) counts as deleted, not as "no node".
  bool deleting_children = false;
  /// Treat "no node" as success (Curator's `quietly`).
  bool quietly = false;
};

/// A client listener of connection states; runs on the client's executor, one state at a time, in order.
using ConnectionStateListener = std::function<void(ConnectionState)>;
/// A watcher (one-shot, or persistent: `CuratorFramework::add_watch`); runs on the client's executor.
using Watcher = std::function<void(const WatchedEvent&)>;

/// A persistent watch added by `CuratorFramework::add_watch`; `remove_watch` ends it. Empty (false) when
/// none.
struct WatchHandle {
  std::uint64_t id = 0;
  explicit operator bool() const noexcept { return id != 0; }
};

namespace detail {
class CoreImpl;

/// The abandon hook of a cancelled read with a watcher: a late success set the watch, so remove it again;
/// the caller was told the read was cancelled and must not hear from its watcher. (Defined before the class
/// that uses it: clang refuses a member with a deduced return type used before its definition.)
template <class T>
auto forget_watch(const std::shared_ptr<Core>& core, std::shared_ptr<WatchId> id) {
  return [weak = std::weak_ptr<Core>(core), id = std::move(id)](error_code, T) {
    if (auto c = weak.lock(); c && *id != 0) c->remove_watch(*id);
  };
}
}  // namespace detail

/// The client (Curator's `CuratorFramework`). Not copyable; movable. The destructor closes it, and returns
/// once the handlers of the operations it ended (with `client_errc::closed`) have run on the I/O thread, or
/// been posted to their own executors.
class CuratorFramework {
 public:
  explicit CuratorFramework(ClientConfig config);
  CuratorFramework(CuratorFramework&&) noexcept;
  CuratorFramework& operator=(CuratorFramework&&) noexcept;
  ~CuratorFramework();

  /// Starts connecting (in the background). Errors: `invalid_connect_string`, `invalid_argument` (a negative
  /// `handshake_timeout`), `closed` (a closed client cannot be restarted).
  void start();
  void start(error_code& ec);
  /// Closes the session: ephemeral nodes and pending watches go, pending operations complete with
  /// `client_errc::closed`, pending guaranteed deletes get up to `max_close_wait`. Idempotent; never throws.
  void close() noexcept;
  /// Waits until connected; false on timeout (or when closed, or once the server refused the auth info).
  [[nodiscard]] bool block_until_connected(std::chrono::milliseconds timeout);
  /// `block_until_connected`, asynchronously.
  /// Handler: `void(error_code, bool connected)`. Executor: the handler's, else the client's completion
  /// executor. Cancellation: terminal, partial, total: completes at once with `operation_aborted` and stops
  /// waiting. Errors: none of its own (`false` on timeout or close). Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code, bool)> Token = default_completion_token_t>
  auto async_block_until_connected(std::chrono::milliseconds timeout, Token&& token = {}) {
    return detail::async_run<bool>(core(), {"block_until_connected", "", detail::Cancellation::read},
                                   std::forward<Token>(token),
                                   [impl = impl_, timeout](auto cb, detail::StopPtr stop) mutable {
                                     connected_start(impl, timeout, std::move(cb), std::move(stop));
                                   });
  }
  /// Started and not closed.
  bool is_started() const noexcept;
  bool is_connected() const noexcept;
  /// The current session id (0 when no session is established).
  std::int64_t session_id() const noexcept;
  const std::string& namespace_name() const noexcept;

  /// Adds a listener; returns an id for `remove_connection_state_listener`. As in Curator, a listener
  /// receives only the changes that happen after it was added, in order, one at a time, on the client's
  /// executor.
  std::uint64_t add_connection_state_listener(ConnectionStateListener listener);
  void remove_connection_state_listener(std::uint64_t id);

  // create
  // ---------------------------------------------------------------------------------------------------
  CreateResult create(const std::string& path, const CreateOptions& options = {});
  CreateResult create(const std::string& path, const CreateOptions& options, error_code& ec);
  /// `create`, asynchronously. Handler: `void(error_code, CreateResult)`. Executor: the handler's, else the
  /// client's completion executor. Cancellation: terminal only: completes at once with `operation_aborted`
  /// and is not tried again; a node the create makes after all is deleted in the background (if its version
  /// is unchanged; in protected mode also after a try whose outcome is unknown). Errors: as `create`.
  /// Thread-safety: any thread.
  template <
      boost::asio::completion_token_for<void(error_code, CreateResult)> Token = default_completion_token_t>
  auto async_create(std::string path, CreateOptions options, Token&& token = {}) {
    detail::OpInfo info{"create", path, detail::Cancellation::write};
    return detail::async_run<CreateResult>(
        core(), std::move(info), std::forward<Token>(token),
        [core = core(), path = std::move(path), options = std::move(options)](auto cb,
                                                                              detail::StopPtr stop) mutable {
          core->create(std::move(path), std::move(options), std::move(cb), {.stop = std::move(stop)});
        },
        [weak = std::weak_ptr<detail::Core>(core())](error_code ec, CreateResult r) {
          if (auto c = weak.lock(); c && !ec)
            c->remove(std::move(r.path), r.stat.version, true, true, [](error_code) {});
        });
  }

  // delete
  // ---------------------------------------------------------------------------------------------------
  void remove(const std::string& path, const DeleteOptions& options = {});
  void remove(const std::string& path, const DeleteOptions& options, error_code& ec);
  /// `remove`, asynchronously. Handler: `void(error_code)`. Executor: the handler's, else the client's
  /// completion executor. Cancellation: terminal only: completes at once with `operation_aborted`; a try
  /// already sent may still apply, and a guaranteed delete keeps its guarantee (it goes on in the
  /// background). Errors: as `remove`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_remove(std::string path, DeleteOptions options, Token&& token = {}) {
    detail::OpInfo info{"delete", path, detail::Cancellation::write};
    return detail::async_run<>(
        core(), std::move(info), std::forward<Token>(token),
        [this_core = core(), path = std::move(path), options](auto cb, detail::StopPtr stop) mutable {
          remove_start(this_core, std::move(path), options, std::move(cb), std::move(stop));
        });
  }

  // exists
  // ---------------------------------------------------------------------------------------------------
  /// nullopt when the node does not exist. With `watcher`: a one-shot watch for create, delete or change.
  std::optional<Stat> exists(const std::string& path, Watcher watcher = {});
  std::optional<Stat> exists(const std::string& path, Watcher watcher, error_code& ec);
  /// `exists`, asynchronously. Handler: `void(error_code, std::optional<Stat>)`. Executor: the handler's,
  /// else the client's completion executor. Cancellation: terminal, partial, total: completes at once with
  /// `operation_aborted`; a watch the read set after all is removed (the watcher never runs). Errors: as
  /// `exists`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code, std::optional<Stat>)> Token =
                default_completion_token_t>
  auto async_exists(std::string path, Watcher watcher, Token&& token = {}) {
    auto id = std::make_shared<detail::WatchId>(0);
    detail::OpInfo info{"exists", path, detail::Cancellation::read};
    return detail::async_run<std::optional<Stat>>(
        core(), std::move(info), std::forward<Token>(token),
        [this_core = core(), path = std::move(path), w = std::move(watcher), id](
            auto cb, detail::StopPtr stop) mutable {
          *id = exists_start(this_core, std::move(path), std::move(w), std::move(cb), std::move(stop));
        },
        detail::forget_watch<std::optional<Stat>>(core(), id));
  }

  // get_data
  // -------------------------------------------------------------------------------------------------
  NodeData get_data(const std::string& path, Watcher watcher = {});
  NodeData get_data(const std::string& path, Watcher watcher, error_code& ec);
  /// `get_data`, asynchronously. Handler: `void(error_code, NodeData)`. Executor: the handler's, else the
  /// client's completion executor. Cancellation: terminal, partial, total: completes at once with
  /// `operation_aborted`; a watch the read set after all is removed (the watcher never runs). Errors: as
  /// `get_data`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code, NodeData)> Token = default_completion_token_t>
  auto async_get_data(std::string path, Watcher watcher, Token&& token = {}) {
    auto id = std::make_shared<detail::WatchId>(0);
    detail::OpInfo info{"get_data", path, detail::Cancellation::read};
    return detail::async_run<NodeData>(
        core(), std::move(info), std::forward<Token>(token),
        [this_core = core(), path = std::move(path), w = std::move(watcher), id](
            auto cb, detail::StopPtr stop) mutable {
          *id = this_core->get_data(std::move(path), wrap_watcher(this_core, std::move(w)), std::move(cb),
                                    {.stop = std::move(stop)});
        },
        detail::forget_watch<NodeData>(core(), id));
  }

  // get_children
  // ---------------------------------------------------------------------------------------------
  std::vector<std::string> get_children(const std::string& path, Watcher watcher = {});
  std::vector<std::string> get_children(const std::string& path, Watcher watcher, error_code& ec);
  /// `get_children`, asynchronously. Handler: `void(error_code, std::vector<std::string>)`. Executor: the
  /// handler's, else the client's completion executor. Cancellation: terminal, partial, total: completes at
  /// once with `operation_aborted`; a watch the read set after all is removed (the watcher never runs).
  /// Errors: as `get_children`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code, std::vector<std::string>)> Token =
                default_completion_token_t>
  auto async_get_children(std::string path, Watcher watcher, Token&& token = {}) {
    auto id = std::make_shared<detail::WatchId>(0);
    detail::OpInfo info{"get_children", path, detail::Cancellation::read};
    return detail::async_run<std::vector<std::string>>(
        core(), std::move(info), std::forward<Token>(token),
        [this_core = core(), path = std::move(path), w = std::move(watcher), id](
            auto cb, detail::StopPtr stop) mutable {
          *id = this_core->get_children(
              std::move(path), wrap_watcher(this_core, std::move(w)),
              [cb = std::move(cb)](error_code ec, Children c) mutable { cb(ec, std::move(c.names)); },
              {.stop = std::move(stop)});
        },
        detail::forget_watch<std::vector<std::string>>(core(), id));
  }

  // set_data
  // -------------------------------------------------------------------------------------------------
  Stat set_data(const std::string& path, const std::string& data, int version = -1);
  Stat set_data(const std::string& path, const std::string& data, int version, error_code& ec);
  /// `set_data`, asynchronously. Handler: `void(error_code, Stat)`. Executor: the handler's, else the
  /// client's completion executor. Cancellation: terminal only: completes at once with `operation_aborted`
  /// and sends no further try; a try already sent may still apply. Errors: as `set_data`. Thread-safety: any
  /// thread.
  template <boost::asio::completion_token_for<void(error_code, Stat)> Token = default_completion_token_t>
  auto async_set_data(std::string path, std::string data, int version, Token&& token = {}) {
    detail::OpInfo info{"set_data", path, detail::Cancellation::write};
    return detail::async_run<Stat>(core(), std::move(info), std::forward<Token>(token),
                                   [this_core = core(), path = std::move(path), data = std::move(data),
                                    version](auto cb, detail::StopPtr stop) mutable {
                                     this_core->set_data(std::move(path), std::move(data), version,
                                                         std::move(cb), {.stop = std::move(stop)});
                                   });
  }

  // get_acl / set_acl
  // ----------------------------------------------------------------------------------------
  /// The node's ACL and Stat (Curator's `getACL()`); `stat.aversion` is the ACL's version. Errors: `no_node`,
  /// `no_auth` (reading an ACL needs READ or ADMIN permission on the node), `invalid_path`, and those of the
  /// retry loop (`connection_timeout`, `closed`, ...). Thread-safe, as every member.
  AclResult get_acl(const std::string& path);
  AclResult get_acl(const std::string& path, error_code& ec);
  /// `get_acl`, asynchronously. Handler: `void(error_code, AclResult)`. Executor: the handler's, else the
  /// client's completion executor. Cancellation: terminal, partial, total: completes at once with
  /// `operation_aborted`. Errors: as `get_acl`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code, AclResult)> Token = default_completion_token_t>
  auto async_get_acl(std::string path, Token&& token = {}) {
    detail::OpInfo info{"get_acl", path, detail::Cancellation::read};
    return detail::async_run<AclResult>(
        core(), std::move(info), std::forward<Token>(token),
        [this_core = core(), path = std::move(path)](auto cb, detail::StopPtr stop) mutable {
          this_core->get_acl(std::move(path), std::move(cb), {.stop = std::move(stop)});
        });
  }
  /// Replaces the node's ACL (Curator's `setACL()`) when its ACL version (`Stat::aversion`) is `version` (-1:
  /// any) and returns the node's Stat, read right behind the change in the same round trip (the C client's
  /// reply to a setACL carries none; another client's change in between shows in it too). `acl` is sent as
  /// given, the client's ACL provider is not asked: the server refuses an empty list. Errors: `no_node`,
  /// `bad_version`, `no_auth` (ADMIN permission needed), `invalid_acl` (an empty list, an unknown scheme, an
  /// `auth` id without authenticated users), `invalid_path`, and those of the retry loop. As with `set_data`,
  /// a try whose reply was lost is tried again; with a `version`, the second try may then fail with
  /// `bad_version` although the first applied.
  Stat set_acl(const std::string& path, const AclList& acl, int version = -1);
  Stat set_acl(const std::string& path, const AclList& acl, int version, error_code& ec);
  /// `set_acl`, asynchronously. Handler: `void(error_code, Stat)`. Executor: the handler's, else the client's
  /// completion executor. Cancellation: terminal only: completes at once with `operation_aborted` and sends
  /// no further try; a try already sent may still apply. Errors: as `set_acl`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code, Stat)> Token = default_completion_token_t>
  auto async_set_acl(std::string path, AclList acl, int version, Token&& token = {}) {
    detail::OpInfo info{"set_acl", path, detail::Cancellation::write};
    return detail::async_run<Stat>(core(), std::move(info), std::forward<Token>(token),
                                   [this_core = core(), path = std::move(path), acl = std::move(acl),
                                    version](auto cb, detail::StopPtr stop) mutable {
                                     this_core->set_acl(std::move(path), std::move(acl), version,
                                                        std::move(cb), {.stop = std::move(stop)});
                                   });
  }

  // multi
  // ----------------------------------------------------------------------------------------------------
  /// A transaction: all operations or none. On failure the error is the first failing operation's and the
  /// per-operation results say which one failed. Container and TTL creates are refused
  /// (`client_errc::invalid_argument`): the C client 3.8 misreads their replies inside a transaction. As in
  /// Curator, a try whose reply was lost to a connection loss is retried, and the retry cannot know whether
  /// that try committed. It then fails
  /// (`node_exists`, `bad_version`) or applies again. Give `set_data`, `remove` and `check` a version where
  /// applying twice would matter.
  std::vector<OpResult> multi(const std::vector<Op>& ops);
  std::vector<OpResult> multi(const std::vector<Op>& ops, error_code& ec);
  /// `multi`, asynchronously. Handler: `void(error_code, std::vector<OpResult>)`. Executor: the handler's,
  /// else the client's completion executor. Cancellation: terminal only: completes at once with
  /// `operation_aborted` and sends no further try; a try already sent may still apply. Errors: as `multi`.
  /// Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code, std::vector<OpResult>)> Token =
                default_completion_token_t>
  auto async_multi(std::vector<Op> ops, Token&& token = {}) {
    detail::OpInfo info{"multi", ops.empty() ? std::string() : ops.front().path, detail::Cancellation::write};
    return detail::async_run<std::vector<OpResult>>(
        core(), std::move(info), std::forward<Token>(token),
        [this_core = core(), ops = std::move(ops)](auto cb, detail::StopPtr stop) mutable {
          this_core->multi(std::move(ops), std::move(cb), {.stop = std::move(stop)});
        });
  }

  // sync / remove_watches
  // ------------------------------------------------------------------------------------
  void sync(const std::string& path);
  void sync(const std::string& path, error_code& ec);
  /// `sync`, asynchronously. Handler: `void(error_code)`. Executor: the handler's, else the client's
  /// completion executor. Cancellation: terminal, partial, total: completes at once with `operation_aborted`.
  /// Errors: as `sync`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_sync(std::string path, Token&& token = {}) {
    detail::OpInfo info{"sync", path, detail::Cancellation::read};
    return detail::async_run<>(
        core(), std::move(info), std::forward<Token>(token),
        [this_core = core(), path = std::move(path)](auto cb, detail::StopPtr stop) mutable {
          this_core->sync(std::move(path), std::move(cb), {.stop = std::move(stop)});
        });
  }
  /// Removes every watch this client holds on `path` (server side and local; their watchers never run). A
  /// path without watches is not an error.
  void remove_watches(const std::string& path);
  void remove_watches(const std::string& path, error_code& ec);
  /// `remove_watches`, asynchronously. Handler: `void(error_code)`. Executor: the handler's, else the
  /// client's completion executor. Cancellation: terminal only: completes at once with `operation_aborted`
  /// and sends no further try; a try already sent may still apply. Errors: as `remove_watches`.
  /// Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code)> Token = default_completion_token_t>
  auto async_remove_watches(std::string path, Token&& token = {}) {
    detail::OpInfo info{"remove_watches", path, detail::Cancellation::write};
    return detail::async_run<>(core(), std::move(info), std::forward<Token>(token),
                               [this_core = core(), path = std::move(path)](auto cb) mutable {
                                 this_core->remove_all_watches(std::move(path), std::move(cb));
                               });
  }

  // ZooKeeper 3.6+: persistent watches and the newer reads
  // ------------------------------------------------------------------------------------
  // Over a transport that lacks them (the ZooKeeper C client, whose newest release still speaks the 3.5
  // protocol) each of these fails with `client_errc::unsupported_by_transport`: never a one-shot watch or
  // separate reads instead. `supports_persistent_watches()` says beforehand. See docs/native-transport.md.

  /// Whether this client's transport speaks ZooKeeper 3.6+'s requests (the native transport does).
  bool supports_persistent_watches() const noexcept;
  /// Adds a watch that stays until removed (Curator's `watchers().add().withMode(mode).usingWatcher(w)`):
  /// `persistent` hears every event of `path` (created, deleted, data and children changed);
  /// `persistent_recursive` the created, deleted and data-changed events of `path` and of every descendant,
  /// each with the event's own path. A missing node may be watched. The watch is set again on every new
  /// connection of the session (events while disconnected are not replayed: read again after RECONNECTED);
  /// when the session is lost the watcher hears `session_lost` once and the watch is gone. A ZooKeeper 3.8
  /// server keeps one watch mode per path and session: a one-shot watch this client sets on the same path
  /// turns the persistent watch there into a one-shot one (ZOOKEEPER-4466, fixed in 3.9). Errors:
  /// `unsupported_by_transport`, `invalid_path`, and those of the retry loop.
  WatchHandle add_watch(const std::string& path, AddWatchMode mode, Watcher watcher);
  WatchHandle add_watch(const std::string& path, AddWatchMode mode, Watcher watcher, error_code& ec);
  /// `add_watch`, asynchronously. Handler: `void(error_code, WatchHandle)`. Executor: the handler's, else the
  /// client's completion executor. Cancellation: terminal, partial, total: completes at once with
  /// `operation_aborted`; a watch the server set after all is removed (the watcher never runs). Errors: as
  /// `add_watch`. Thread-safety: any thread.
  template <
      boost::asio::completion_token_for<void(error_code, WatchHandle)> Token = default_completion_token_t>
  auto async_add_watch(std::string path, AddWatchMode mode, Watcher watcher, Token&& token = {}) {
    detail::OpInfo info{"add_watch", path, detail::Cancellation::read};
    auto id = std::make_shared<detail::WatchId>(0);
    return detail::async_run<WatchHandle>(
        core(), std::move(info), std::forward<Token>(token),
        [this_core = core(), path = std::move(path), mode, w = std::move(watcher), id](
            auto cb, detail::StopPtr stop) mutable {
          add_watch_start(this_core, std::move(path), mode, std::move(w), id, std::move(cb), std::move(stop));
        },
        detail::forget_watch<WatchHandle>(core(), id));
  }
  /// Ends a watch `add_watch` made: its watcher will not run again (one already posted may still run), and
  /// the server's watch is removed in the background. Unknown or empty handles are ignored.
  void remove_watch(WatchHandle watch) noexcept;

  /// Several reads in one request (ZooKeeper 3.6+'s multiRead): one result per op, in order, each read
  /// succeeding or failing on its own (`ReadResult::ec`: `no_node`, `no_auth`, ...). The reads are not one
  /// snapshot: writes may land between them. An empty list returns an empty list. Errors (of the request,
  /// not of an op): `unsupported_by_transport`, `invalid_path`, and those of the retry loop.
  std::vector<ReadResult> multi_read(std::vector<ReadOp> ops);
  std::vector<ReadResult> multi_read(std::vector<ReadOp> ops, error_code& ec);
  /// `multi_read`, asynchronously. Handler: `void(error_code, std::vector<ReadResult>)`. Executor: the
  /// handler's, else the client's completion executor. Cancellation: terminal, partial, total: completes at
  /// once with `operation_aborted`. Errors: as `multi_read`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code, std::vector<ReadResult>)> Token =
                default_completion_token_t>
  auto async_multi_read(std::vector<ReadOp> ops, Token&& token = {}) {
    detail::OpInfo info{"multi_read", ops.empty() ? std::string() : ops.front().path,
                        detail::Cancellation::read};
    return detail::async_run<std::vector<ReadResult>>(
        core(), std::move(info), std::forward<Token>(token),
        [this_core = core(), ops = std::move(ops)](auto cb, detail::StopPtr stop) mutable {
          this_core->multi_read(std::move(ops), std::move(cb), {.stop = std::move(stop)});
        });
  }
  /// This session's ephemeral nodes whose path starts with `prefix` (ZooKeeper's getEphemerals: a string
  /// prefix, so "/a" finds "/a", "/a/x" and "/ab"; "/" finds all), without the namespace. Errors:
  /// `unsupported_by_transport`, `invalid_path`, and those of the retry loop.
  std::vector<std::string> get_ephemerals(const std::string& prefix = "/");
  std::vector<std::string> get_ephemerals(const std::string& prefix, error_code& ec);
  /// `get_ephemerals`, asynchronously. Handler: `void(error_code, std::vector<std::string>)`. Executor: the
  /// handler's, else the client's completion executor. Cancellation: terminal, partial, total: completes at
  /// once with `operation_aborted`. Errors: as `get_ephemerals`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code, std::vector<std::string>)> Token =
                default_completion_token_t>
  auto async_get_ephemerals(std::string prefix, Token&& token = {}) {
    detail::OpInfo info{"get_ephemerals", prefix, detail::Cancellation::read};
    return detail::async_run<std::vector<std::string>>(
        core(), std::move(info), std::forward<Token>(token),
        [this_core = core(), prefix = std::move(prefix)](auto cb, detail::StopPtr stop) mutable {
          this_core->get_ephemerals(std::move(prefix), std::move(cb), {.stop = std::move(stop)});
        });
  }
  /// The number of the node's descendants, all levels (ZooKeeper's getAllChildrenNumber). Errors: `no_node`,
  /// `unsupported_by_transport`, `invalid_path`, and those of the retry loop.
  std::int32_t get_all_children_number(const std::string& path);
  std::int32_t get_all_children_number(const std::string& path, error_code& ec);
  /// `get_all_children_number`, asynchronously. Handler: `void(error_code, std::int32_t)`. Executor: the
  /// handler's, else the client's completion executor. Cancellation: terminal, partial, total: completes at
  /// once with `operation_aborted`. Errors: as `get_all_children_number`. Thread-safety: any thread.
  template <
      boost::asio::completion_token_for<void(error_code, std::int32_t)> Token = default_completion_token_t>
  auto async_get_all_children_number(std::string path, Token&& token = {}) {
    detail::OpInfo info{"get_all_children_number", path, detail::Cancellation::read};
    return detail::async_run<std::int32_t>(
        core(), std::move(info), std::forward<Token>(token),
        [this_core = core(), path = std::move(path)](auto cb, detail::StopPtr stop) mutable {
          this_core->get_all_children_number(std::move(path), std::move(cb), {.stop = std::move(stop)});
        });
  }
  /// The identities the server holds for this session (ZooKeeper 3.7+'s whoAmI): the client's address
  /// (`ip`), and each accepted auth (`digest` user, `x509` subject, `sasl` principal). Errors:
  /// `unsupported_by_transport`, and those of the retry loop.
  std::vector<ClientIdentity> who_am_i();
  std::vector<ClientIdentity> who_am_i(error_code& ec);
  /// `who_am_i`, asynchronously. Handler: `void(error_code, std::vector<ClientIdentity>)`. Executor: the
  /// handler's, else the client's completion executor. Cancellation: terminal, partial, total: completes at
  /// once with `operation_aborted`. Errors: as `who_am_i`. Thread-safety: any thread.
  template <boost::asio::completion_token_for<void(error_code, std::vector<ClientIdentity>)> Token =
                default_completion_token_t>
  auto async_who_am_i(Token&& token = {}) {
    detail::OpInfo info{"who_am_i", "", detail::Cancellation::read};
    return detail::async_run<std::vector<ClientIdentity>>(
        core(), std::move(info), std::forward<Token>(token),
        [this_core = core()](auto cb, detail::StopPtr stop) {
          this_core->who_am_i(std::move(cb), {.stop = std::move(stop)});
        });
  }

  /// Guaranteed deletes still being retried in the background.
  std::size_t pending_guaranteed_deletes() const;

  /// Ends this client's session as an expiry would (Curator's `injectSessionExpiration()`): the session is
  /// closed on the server (its ephemeral nodes go at once), listeners see LOST, and a new session is started.
  /// For tests.
  void inject_session_expiration();

  friend struct detail::access;

 private:
  /// The engine room, for the recipes layer (`detail::access::core`).
  const std::shared_ptr<detail::Core>& core() const;
  static void connected_start(const std::shared_ptr<detail::CoreImpl>& impl,
                              std::chrono::milliseconds timeout,
                              detail::unique_function<void(error_code, bool)> cb, detail::StopPtr stop);
  static void remove_start(const std::shared_ptr<detail::Core>& core, std::string path, DeleteOptions options,
                           detail::VoidCallback cb, detail::StopPtr stop = {});
  static detail::WatchId exists_start(const std::shared_ptr<detail::Core>& core, std::string path, Watcher w,
                                      detail::unique_function<void(error_code, std::optional<Stat>)> cb,
                                      detail::StopPtr stop = {});
  static void add_watch_start(const std::shared_ptr<detail::Core>& core, std::string path, AddWatchMode mode,
                              Watcher w, const std::shared_ptr<detail::WatchId>& id,
                              detail::unique_function<void(error_code, WatchHandle)> cb,
                              detail::StopPtr stop = {});
  static detail::WatchCallback wrap_watcher(const std::shared_ptr<detail::Core>& core, Watcher w);

  std::shared_ptr<detail::CoreImpl> impl_;
  std::shared_ptr<detail::Core> core_;
};

/// Curator's `CuratorFrameworkFactory`: `CuratorFrameworkFactory::new_client(connect, retry)` or the builder.
class CuratorFrameworkFactory {
 public:
  static std::unique_ptr<CuratorFramework> new_client(std::string connect_string,
                                                      RetryPolicyPtr retry_policy);
  static std::unique_ptr<CuratorFramework> new_client(std::string connect_string,
                                                      std::chrono::milliseconds session_timeout,
                                                      std::chrono::milliseconds connection_timeout,
                                                      RetryPolicyPtr retry_policy);

  /// Fluent builder over `ClientConfig`.
  class Builder {
   public:
    Builder& connect_string(std::string v) {
      c_.connect_string = std::move(v);
      return *this;
    }
    Builder& transport(Transport v) {
      c_.transport = v;
      return *this;
    }
    Builder& retry_policy(RetryPolicyPtr v) {
      c_.retry_policy = std::move(v);
      return *this;
    }
    Builder& session_timeout(std::chrono::milliseconds v) {
      c_.session_timeout = v;
      return *this;
    }
    Builder& connection_timeout(std::chrono::milliseconds v) {
      c_.connection_timeout = v;
      return *this;
    }
    Builder& handshake_timeout(std::chrono::milliseconds v) {
      c_.handshake_timeout = v;
      return *this;
    }
    Builder& max_close_wait(std::chrono::milliseconds v) {
      c_.max_close_wait = v;
      return *this;
    }
    Builder& namespace_name(std::string v) {
      c_.namespace_name = std::move(v);
      return *this;
    }
    Builder& default_data(std::string v) {
      c_.default_data = std::move(v);
      return *this;
    }
    Builder& acl_provider(AclProvider v) {
      c_.acl_provider = std::move(v);
      return *this;
    }
    Builder& authorization(std::string scheme, std::string auth) {
      c_.auth.push_back({std::move(scheme), std::move(auth)});
      return *this;
    }
    Builder& tls(TlsConfig v) {
      c_.tls = std::move(v);
      return *this;
    }
    Builder& sasl(SaslConfig v) {
      c_.sasl = std::move(v);
      return *this;
    }
    Builder& logger(std::shared_ptr<spdlog::logger> v) {
      c_.logger = std::move(v);
      return *this;
    }
    Builder& executor(boost::asio::any_io_executor v) {
      c_.executor = std::move(v);
      return *this;
    }
    Builder& can_be_read_only(bool v) {
      c_.can_be_read_only = v;
      return *this;
    }
    Builder& dont_use_container_parents() {
      c_.use_container_parents = false;
      return *this;
    }
    Builder& simulated_session_expiration_percent(int v) {
      c_.simulated_session_expiration_percent = v;
      return *this;
    }
    /// Node data larger than this is refused locally (`client_errc::data_too_large`); set it to the server's
    /// `jute.maxbuffer` less some headroom when that differs from ZooKeeper's default.
    Builder& max_data_size(std::size_t v) {
      c_.max_data_size = v;
      return *this;
    }
    const ClientConfig& config() const noexcept { return c_; }
    std::unique_ptr<CuratorFramework> build() const { return std::make_unique<CuratorFramework>(c_); }

   private:
    ClientConfig c_;
  };
  static Builder builder() { return {}; }
};

}  // namespace zkr
