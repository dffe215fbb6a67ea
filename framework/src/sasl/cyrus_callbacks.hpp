#pragma once
// Cyrus SASL's client callbacks for a SaslConfig (DIGEST-MD5: the user as authentication and authorisation
// name, the realm, the password; GSSAPI: no authorisation name, so the server authorises the principal): what
// the C client's zookeeper_init_sasl takes in its zoo_sasl_params_t, and what the native transport's exchange
// passes to sasl_client_new. The password is read from its file when Cyrus asks for it (once per connection),
// or beforehand by `load_password` (the native exchange, which reports an unreadable file as it starts); it
// is kept only until the next connection asks again, `wipe()` or the callbacks' end, and zeroed then. It is
// never logged.

#include <sasl/sasl.h>

#include <mutex>
#include <vector>
#include <zkr/framework/sasl.hpp>

#include "sasl_settings.hpp"

namespace zkr::detail {

/// Cyrus's client side, initialised once per process (sasl_client_init, which the C client leaves to its
/// caller) and never finalised (other code may use it too): SASL_OK or Cyrus's error.
int init_cyrus_client() noexcept;

class CyrusCallbacks {
 public:
  /// `cfg` must outlive the callbacks.
  explicit CyrusCallbacks(const SaslConfig& cfg);
  ~CyrusCallbacks();
  CyrusCallbacks(const CyrusCallbacks&) = delete;
  CyrusCallbacks& operator=(const CyrusCallbacks&) = delete;

  /// The list, ended by SASL_CB_LIST_END; valid as long as this object.
  const sasl_callback_t* list() const noexcept { return callbacks_.data(); }

  /// Whether a password callback failed to read the file (and why): the C client only sees the exchange fail.
  bool password_unreadable(std::string& reason) const;
  /// Reads the password now, for Cyrus's next ask (false, with `problem` set, when the file cannot be read).
  bool load_password(SaslProblem& problem);
  /// Zeroes the password held (Cyrus has what it needs once the mechanism is through).
  void wipe() noexcept;

 private:
  static int simple(void* ctx, int id, const char** result, unsigned* len);
  static int password(sasl_conn_t* conn, void* ctx, int id, sasl_secret_t** out);
  static int realm(void* ctx, int id, const char** available, const char** result);
  /// Holds `pw` as a sasl_secret_t, zeroing `pw` (mu_ held).
  void hold(std::string& pw);
  void clear_secret() noexcept;  // (mu_ held)

  const SaslConfig& cfg_;
  mutable std::mutex mu_;              // the callbacks run on the C client's I/O thread
  std::vector<unsigned char> secret_;  // a sasl_secret_t: its length, then the password and a zero
  bool loaded_ = false;                // secret_ was read by load_password, for Cyrus's next ask
  std::string unreadable_;
  std::vector<sasl_callback_t> callbacks_;
};

}  // namespace zkr::detail
