#pragma once
// GSSAPI on the single-threaded C client (docs/sasl.md). The C client runs the exchange itself, inside
// zookeeper_process on the client's own I/O thread, and its Cyrus plugin asks GSS-API for the default
// credential: the default ticket cache of the calling thread. This points that thread's default at the
// client's own cache (gss_credentials.hpp; MIT's `gss_krb5_ccache_name` is per thread), so that two clients
// of one process authenticate as two principals, and keeps a ticket-granting ticket in that cache, which
// MIT's library would not get from the client's keytab by itself for a default credential. The login talks to
// the KDC, blocking: it runs on the pool of blocking calls (native/blocking_calls.hpp), and the session holds
// the server's answer to its session request (which starts the exchange) unread until it is done.

#include <boost/asio/io_context.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <zkr/framework/sasl.hpp>

#include "../native/blocking_calls.hpp"
#include "gss_credentials.hpp"
#include "sasl_settings.hpp"

namespace zkr::detail {

class CClientKerberos {
 public:
  /// Results of the logins go back to `ioc`'s thread (the session's I/O thread).
  CClientKerberos(boost::asio::io_context& ioc, const SaslConfig& cfg);

  /// On the I/O thread, before the C client may start an exchange: true when the cache holds a
  /// ticket-granting ticket valid for a while yet (then this thread's default ticket cache is now the
  /// client's). Else false: a login runs on the pool (one at a time, none after a failure), and `wake` runs
  /// on the I/O thread when it ends; `failure()` says whether it failed.
  bool ready(std::function<void()> wake);
  /// Why the last login failed (`client_errc::sasl_auth_failed`, Kerberos's reason); empty `ec`: it did not.
  const SaslProblem& failure() const noexcept { return failure_; }

 private:
  struct Login {
    std::optional<GssCredentials::Validity> tgt;
    SaslProblem problem;
  };

  std::shared_ptr<GssCredentials> creds_;  // shared with a login still running when the session ends
  native::BlockingCalls kdc_calls_;
  std::optional<GssCredentials::Validity> tgt_;
  bool logging_in_ = false;
  SaslProblem failure_;
};

}  // namespace zkr::detail
