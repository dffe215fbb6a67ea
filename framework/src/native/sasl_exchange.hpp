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

  /// `local` and `remote` are the connection's "ip;port" (Cyrus's form).
  SaslExchange(const SaslConfig& cfg, std::string local, std::string remote);
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
