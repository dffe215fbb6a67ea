#include <zkr/framework/error.hpp>

namespace zkr {
namespace {

class ZkCategory final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "zookeeper"; }
  std::string message(int ev) const override {
    switch (static_cast<zk_errc>(ev)) {
      case zk_errc::ok:
        return "ok";
      case zk_errc::system_error:
        return "system error";
      case zk_errc::runtime_inconsistency:
        return "runtime inconsistency";
      case zk_errc::data_inconsistency:
        return "data inconsistency";
      case zk_errc::connection_loss:
        return "connection loss";
      case zk_errc::marshalling_error:
        return "marshalling error";
      case zk_errc::unimplemented:
        return "unimplemented";
      case zk_errc::operation_timeout:
        return "operation timeout";
      case zk_errc::bad_arguments:
        return "bad arguments";
      case zk_errc::invalid_state:
        return "invalid zhandle state";
      case zk_errc::new_config_no_quorum:
        return "no quorum for the new configuration";
      case zk_errc::reconfig_in_progress:
        return "reconfiguration in progress";
      case zk_errc::api_error:
        return "api error";
      case zk_errc::no_node:
        return "no node";
      case zk_errc::no_auth:
        return "not authenticated";
      case zk_errc::bad_version:
        return "bad version";
      case zk_errc::no_children_for_ephemerals:
        return "no children for ephemerals";
      case zk_errc::node_exists:
        return "node exists";
      case zk_errc::not_empty:
        return "not empty";
      case zk_errc::session_expired:
        return "session expired";
      case zk_errc::invalid_callback:
        return "invalid callback";
      case zk_errc::invalid_acl:
        return "invalid acl";
      case zk_errc::auth_failed:
        return "authentication failed";
      case zk_errc::closing:
        return "zookeeper is closing";
      case zk_errc::nothing:
        return "no server responses to process";
      case zk_errc::session_moved:
        return "session moved to another server";
      case zk_errc::not_readonly:
        return "state-changing request sent to a read-only server";
      case zk_errc::ephemeral_on_local_session:
        return "ephemeral node on a local session";
      case zk_errc::no_watcher:
        return "no such watcher";
      case zk_errc::reconfig_disabled:
        return "reconfiguration disabled";
      case zk_errc::session_closed_require_sasl_auth:
        return "session closed: SASL authentication required";
      case zk_errc::throttled_op:
        return "operation throttled by the server";
    }
    return "unknown zookeeper error " + std::to_string(ev);
  }
};

class ZkrCategory final : public boost::system::error_category {
 public:
  const char* name() const noexcept override { return "zkrecipes"; }
  std::string message(int ev) const override {
    switch (static_cast<client_errc>(ev)) {
      case client_errc::invalid_path:
        return "invalid path";
      case client_errc::data_too_large:
        return "node data is larger than the server accepts";
      case client_errc::not_started:
        return "the client is not started";
      case client_errc::closed:
        return "the client is closed";
      case client_errc::invalid_connect_string:
        return "invalid connect string";
      case client_errc::connection_timeout:
        return "could not connect within the connection timeout";
      case client_errc::not_owner:
        return "you do not own the lock";
      case client_errc::not_acquired:
        return "not acquired";
      case client_errc::would_deadlock:
        return "the operation would deadlock";
      case client_errc::invalid_argument:
        return "invalid argument";
      case client_errc::node_not_found_after_retries:
        return "sequential path not found: possible session loss";
      case client_errc::lock_lost:
        return "the lock was lost";
      case client_errc::tls_unsupported:
        return "TLS was asked for, but the transport has no TLS support";
      case client_errc::tls_file_error:
        return "a TLS file is missing, unreadable, not what it should be, or expired";
      case client_errc::tls_key_error:
        return "the TLS private key cannot be opened with the given password, or does not match the "
               "certificate";
      case client_errc::tls_handshake_failed:
        return "the TLS handshake with the ensemble failed (refused, certificate checks, or no TLS there)";
      case client_errc::timed_out:
        return "not acquired within the timeout";
      case client_errc::unsupported_by_transport:
        return "the ZooKeeper transport this build links does not support the request";
      case client_errc::malformed_reply:
        return "the server sent bytes that break the ZooKeeper protocol (truncated, oversized or out of "
               "order)";
      case client_errc::transport_unavailable:
        return "the ZooKeeper transport asked for is not in this build of zkrecipes (or "
               "ZKR_ZOOKEEPER_TRANSPORT names none: use c or native)";
      case client_errc::corrupted_data:
        return "the node's data is not a value of the recipe (wrong size: written by someone else)";
      case client_errc::sasl_unsupported:
        return "SASL was asked for, but the transport or this build has no SASL for the mechanism";
      case client_errc::sasl_config_error:
        return "the SASL settings are incomplete, or a SASL credential file is missing or unreadable";
      case client_errc::sasl_auth_failed:
        return "the ZooKeeper server refused the SASL authentication (wrong password, unknown user or no "
               "common mechanism)";
      case client_errc::outcome_unknown:
        return "the write's answer was lost with the connection and the node has changed since: it was "
               "applied once or not at all";
    }
    return "unknown zkrecipes error " + std::to_string(ev);
  }
};

}  // namespace

const boost::system::error_category& zk_category() noexcept {
  static const ZkCategory c;
  return c;
}
const boost::system::error_category& zkr_category() noexcept {
  static const ZkrCategory c;
  return c;
}

bool is_retryable(const error_code& ec) noexcept {
  if (ec.category() != zk_category()) return false;
  switch (static_cast<zk_errc>(ec.value())) {
    case zk_errc::connection_loss:
    case zk_errc::operation_timeout:
    case zk_errc::session_moved:
    case zk_errc::session_expired:
      return true;
    default:
      return false;
  }
}

bool is_session_lost(const error_code& ec) noexcept {
  if (ec.category() == zk_category())
    return ec.value() == static_cast<int>(zk_errc::session_expired) ||
           ec.value() == static_cast<int>(zk_errc::auth_failed) ||  // the client gives the session up
           ec.value() == static_cast<int>(zk_errc::invalid_state) ||
           ec.value() == static_cast<int>(zk_errc::closing);
  // A client that gave its session up for good after a TLS refusal (as for an auth failure).
  return ec == client_errc::closed || ec == client_errc::tls_handshake_failed ||
         ec == client_errc::tls_file_error || ec == client_errc::tls_key_error ||
         ec == client_errc::sasl_auth_failed || ec == client_errc::sasl_config_error;
}

bool is_connection_loss(const error_code& ec) noexcept {
  return ec.category() == zk_category() && (ec.value() == static_cast<int>(zk_errc::connection_loss) ||
                                            ec.value() == static_cast<int>(zk_errc::operation_timeout));
}

Error::Error(error_code ec, std::string operation, std::string path)
    : boost::system::system_error(ec, operation + (path.empty() ? "" : " " + path)),
      operation_(std::move(operation)),
      path_(std::move(path)) {}

}  // namespace zkr
