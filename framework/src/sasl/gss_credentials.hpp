#pragma once
// One client's Kerberos credentials for GSSAPI (MIT krb5's GSS-API): its principal's keys from its keytab,
// and a ticket cache of its own in memory ("MEMORY:zkr-<pid>-<n>"), never the process's default cache or
// $KRB5CCNAME, so that two clients of one process authenticate as two principals. The cache keeps the
// ticket-granting ticket and the service tickets across the client's connections (a reconnection needs the
// KDC only once they expire, when MIT's library gets new ones from the keytab by itself: the native
// transport's credential from `acquire`; the C client's exchange uses the cache as GSS-API's default
// credential, for which `login` keeps the ticket-granting ticket, c_client_kerberos.hpp), and is destroyed
// with this object. The realm and its KDC come from krb5.conf ($KRB5_CONFIG), which is process-wide.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <zkr/framework/sasl.hpp>

#include "sasl_settings.hpp"

namespace zkr::detail {

/// Whether `keytab` holds keys of `principal` (a local look-up, no KDC): empty `ec`, or
/// `client_errc::sasl_config_error` naming the keytab and the principal.
SaslProblem check_gssapi_keytab(const std::string& principal, const std::string& keytab);

class GssCredentials {
 public:
  GssCredentials(std::string principal, std::string keytab);
  /// Destroys the ticket cache. Never throws.
  ~GssCredentials();
  GssCredentials(const GssCredentials&) = delete;
  GssCredentials& operator=(const GssCredentials&) = delete;

  /// A credential for one exchange (a `gss_cred_id_t`, released with the last copy): the principal's, from
  /// the cache or, when it has no valid ticket, from the keytab at the exchange's first step (which talks to
  /// the KDC then). Null with `problem` set (`client_errc::sasl_auth_failed`, GSS-API's reason) when it
  /// cannot be had.
  std::shared_ptr<void> acquire(SaslProblem& problem) const;

  /// The ticket cache's name: what the C client's exchange is pointed at (`gss_krb5_ccache_name` on its
  /// thread, c_client_kerberos.hpp), where GSS-API's default credential is used and nothing gets tickets
  /// from the keytab by itself.
  const std::string& ccache() const noexcept { return ccache_; }

  /// The ticket-granting ticket's validity, as `login` stored it.
  struct Validity {
    std::chrono::system_clock::time_point start, end;
  };
  /// Logs the principal in with the keytab's keys: a ticket-granting ticket from the KDC (blocking, on the
  /// caller's thread), which replaces whatever the cache held. Empty, with `problem` set
  /// (`client_errc::sasl_auth_failed`, Kerberos's reason), when the KDC refuses or cannot be reached.
  std::optional<Validity> login(SaslProblem& problem) const;

 private:
  std::string principal_, keytab_, ccache_;
};

}  // namespace zkr::detail
