#pragma once
/// \file
/// Error codes of zkrecipes: one category for the ZooKeeper server/client codes (`ZOO_ERRORS`), one for the
/// library's own conditions, predicates over both, and the exception type thrown by the throwing twins.

#include <boost/system/error_code.hpp>
#include <boost/system/system_error.hpp>
#include <string>
#include <string_view>

namespace zkr {

using boost::system::error_code;

/// ZooKeeper's result codes, with the numeric values of the C client's `ZOO_ERRORS` (so they travel unchanged
/// between the wire, the C client and `error_code::value()`).
enum class zk_errc : int {
  ok = 0,
  system_error = -1,
  runtime_inconsistency = -2,
  data_inconsistency = -3,
  connection_loss = -4,
  marshalling_error = -5,
  unimplemented = -6,
  operation_timeout = -7,
  bad_arguments = -8,
  invalid_state = -9,
  new_config_no_quorum = -13,
  reconfig_in_progress = -14,
  api_error = -100,
  no_node = -101,
  no_auth = -102,
  bad_version = -103,
  no_children_for_ephemerals = -108,
  node_exists = -110,
  not_empty = -111,
  session_expired = -112,
  invalid_callback = -113,
  invalid_acl = -114,
  auth_failed = -115,
  closing = -116,
  nothing = -117,
  session_moved = -118,
  not_readonly = -119,
  ephemeral_on_local_session = -120,
  no_watcher = -121,
  reconfig_disabled = -123,
  session_closed_require_sasl_auth = -124,
  throttled_op = -127,
};

/// Conditions detected by zkrecipes itself.
enum class client_errc : int {
  invalid_path = 1,              ///< the path breaks Curator's path rules (see `validate_path`)
  data_too_large,                ///< node data over the configured limit (jute.maxbuffer, 1 MiB by default)
  not_started,                   ///< the client's `start()` was not called
  closed,                        ///< the client was closed
  invalid_connect_string,        ///< empty or malformed connect string
  connection_timeout,            ///< no connection within the connection timeout
  not_owner,                     ///< release by a thread or handle that does not hold the lock
  not_acquired,                  ///< release of a lock that is not held
  would_deadlock,                ///< a blocking call made on the client's own I/O thread, or a lock upgrade
  invalid_argument,              ///< e.g. a lease quantity of 0
  node_not_found_after_retries,  ///< our lock node vanished and the retry policy gave up ("session lost")
  lock_lost,                     ///< the lock was lost while an operation needed it
  tls_unsupported,               ///< TLS was asked for, but the transport has none (a C client built without
                                 ///< it, or the native transport)
  tls_file_error,                ///< a TLS file is missing, unreadable, not PEM of its kind, or expired
  tls_key_error,                 ///< the private key: the password does not open it, or it does not match
  tls_handshake_failed,          ///< a server refused the TLS handshake, failed its checks, or speaks no TLS
  timed_out,                     ///< not acquired within the timeout, where the form has no `false` to say so
                                 ///< (`Locker`'s timed constructor)
  unsupported_by_transport,      ///< the client's ZooKeeper transport cannot do it (a 3.6+ request, such as a
                                 ///< persistent watch, over the C client)
  malformed_reply,  ///< the server's bytes break the protocol (the native transport drops the connection)
  transport_unavailable,  ///< the transport asked for (`ClientConfig::transport`, `ZKR_ZOOKEEPER_TRANSPORT`)
                          ///< is not in this build, or the variable names none
  corrupted_data,     ///< a node's data cannot be what the recipe stored there (a shared count or an atomic
                      ///< counter whose bytes are not 4 or 8 long: written by someone else)
  sasl_unsupported,   ///< SASL was asked for, but the transport or this build has none for the mechanism
                      ///< (a build without Cyrus SASL; GSSAPI on the C client: docs/sasl.md)
  sasl_config_error,  ///< the SASL settings are incomplete, or the password file is missing or unreadable
  sasl_auth_failed,   ///< the server refused the SASL authentication (wrong password, unknown user, no
                      ///< common mechanism), or the exchange failed on the client's side
  outcome_unknown,    ///< a conditional write was sent, its answer was lost with the connection, and the node
                      ///< has changed since: it was applied once or not at all, and is not sent again (the
                      ///< writes of the atomic numbers and values, SharedValue's and SharedCount's try_set:
                      ///< docs/counters.md)
};

/// The name `client_errc` had before 0.2 (`zkr::errc` read too much like `std::errc`).
using errc [[deprecated("renamed zkr::client_errc")]] = client_errc;

const boost::system::error_category& zk_category() noexcept;
const boost::system::error_category& zkr_category() noexcept;

inline error_code make_error_code(zk_errc e) noexcept { return {static_cast<int>(e), zk_category()}; }
inline error_code make_error_code(client_errc e) noexcept { return {static_cast<int>(e), zkr_category()}; }

/// Wraps a raw C-client return code (0 means success).
inline error_code zk_error(int rc) noexcept { return rc == 0 ? error_code{} : error_code{rc, zk_category()}; }

/// True for the codes Curator's retry loop retries: connection loss, operation timeout, session moved and
/// session expired (the latter is refused again by `SessionFailedRetryPolicy`).
bool is_retryable(const error_code& ec) noexcept;
/// True when the session behind the operation is gone (expired, closed by the client, invalid handle, or
/// given up after the server refused the client's auth info).
bool is_session_lost(const error_code& ec) noexcept;
/// True for the connection-level failures that leave the session's fate unknown.
bool is_connection_loss(const error_code& ec) noexcept;

/// The exception thrown by the throwing twins. `what()` names the operation and the path.
class Error : public boost::system::system_error {
 public:
  Error(error_code ec, std::string operation, std::string path);
  const std::string& operation() const noexcept { return operation_; }
  const std::string& path() const noexcept { return path_; }

 private:
  std::string operation_;
  std::string path_;
};

/// Throws `Error(ec, operation, path)` when `ec` is set.
inline void throw_if(const error_code& ec, std::string_view operation, std::string_view path) {
  if (ec) throw Error(ec, std::string(operation), std::string(path));
}

}  // namespace zkr

namespace boost::system {
template <>
struct is_error_code_enum<zkr::zk_errc> : std::true_type {};
template <>
struct is_error_code_enum<zkr::client_errc> : std::true_type {};
}  // namespace boost::system
