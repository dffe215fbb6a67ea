#pragma once
// Cyrus SASL's client callbacks for a SaslConfig (DIGEST-MD5: the user as authentication and authorisation
// name, the realm, the password): what the C client's zookeeper_init_sasl takes in its zoo_sasl_params_t.
// The password is read from its file when Cyrus asks for it (once per connection), kept only until the next
// connection asks again or the callbacks are destroyed, and zeroed then. It is never logged.

#include <sasl/sasl.h>

#include <mutex>
#include <vector>
#include <zkr/framework/sasl.hpp>

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

 private:
  static int simple(void* ctx, int id, const char** result, unsigned* len);
  static int password(sasl_conn_t* conn, void* ctx, int id, sasl_secret_t** out);
  static int realm(void* ctx, int id, const char** available, const char** result);
  void wipe() noexcept;

  const SaslConfig& cfg_;
  mutable std::mutex mu_;              // the callbacks run on the C client's I/O thread
  std::vector<unsigned char> secret_;  // a sasl_secret_t: its length, then the password and a zero
  std::string unreadable_;
  std::vector<sasl_callback_t> callbacks_;
};

}  // namespace zkr::detail
