#pragma once
// One connection's SASL exchange over Cyrus SASL's client API, as a state machine without I/O: it says what
// to send and when it is done; the native session frames the tokens (records.hpp: GetSASLRequest with a
// normal xid, SetSASLResponse) and holds every other packet until the exchange ends. A new exchange per
// connection: ZooKeeper authenticates connections, so every reconnection authenticates again.
//
// DIGEST-MD5: the client opens with an empty token (the mechanism is server-first), answers the server's
// challenge, and checks the server's rspauth; the server adds the id `sasl:<user>` once it has checked the
// response. The password is read from its file when the exchange starts, handed to Cyrus through the
// password callback, and wiped when the exchange ends; it is never logged.
//
// GSSAPI: the client opens with its Kerberos AP-REQ for `<service>/<host>` (getting the tickets from the KDC
// first when the client's cache has none), checks the server's AP-REP, answers the server's wrapped offer
// of security layers with "none" (authentication only, as ZooKeeper's clients do), and ends on the server's
// empty answer. The credentials are the client's own (sasl/gss_credentials.hpp), handed to Cyrus with
// SASL_GSS_CREDS, kept in a ticket cache that outlives the connection (ClientState).

#include <memory>
#include <string>
#include <string_view>
#include <zkr/framework/error.hpp>
#include <zkr/framework/sasl.hpp>

namespace zkr::detail::native {

class SaslExchange {
 public:
  /// What the session does next.
  struct Step {
    enum class Kind { send, done, failed } kind = Kind::failed;
    std::string token;   // send: the token to send (may be empty)
    error_code ec;       // failed: sasl_config_error or sasl_auth_failed
    std::string reason;  // failed: why, for the log (no secret)
  };

  /// What one client keeps from one connection's exchange to the next (GSSAPI: its ticket cache). Made by the
  /// first exchange that needs it, in the session's `std::shared_ptr`; ends with the session.
  struct ClientState;

  /// `local` and `remote` are the connection's "ip;port" (Cyrus's form); `host` the connect string's host
  /// being connected to (GSSAPI's default server host); `state` the client's, kept across connections.
  SaslExchange(const SaslConfig& cfg, std::string local, std::string remote, std::string_view host,
               std::shared_ptr<ClientState>& state);
  ~SaslExchange();
  SaslExchange(const SaslExchange&) = delete;
  SaslExchange& operator=(const SaslExchange&) = delete;

  /// Reads the password and starts the mechanism: the first token to send, or a failure.
  Step start();
  /// The server's answer to the last token (a reply without error).
  Step on_server_token(std::string_view token);

  struct Impl;  // Cyrus's connection and the callbacks' data (sasl_exchange.cpp)

 private:
  Step next(int rc, const char* out, unsigned out_len);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zkr::detail::native
