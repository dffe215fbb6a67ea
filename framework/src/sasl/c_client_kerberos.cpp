// GSSAPI on the single-threaded C client (c_client_kerberos.hpp).

#include "c_client_kerberos.hpp"

#include <gssapi/gssapi_krb5.h>

#include <algorithm>
#include <chrono>
#include <utility>

namespace zkr::detail {

namespace {

// A ticket counts as valid while more than this is left of it: a quarter of its life, at most a minute, so
// that the exchange (and the service ticket it asks for) never starts on a ticket about to end.
std::chrono::system_clock::duration renewal_margin(const GssCredentials::Validity& v) {
  return std::min<std::chrono::system_clock::duration>(std::chrono::minutes(1), (v.end - v.start) / 4);
}

}  // namespace

CClientKerberos::CClientKerberos(boost::asio::io_context& ioc, const SaslConfig& cfg)
    : creds_(std::make_shared<GssCredentials>(cfg.principal, cfg.keytab)), kdc_calls_(ioc) {}

bool CClientKerberos::ready(std::function<void()> wake) {
  if (logging_in_ || failure_.ec) return false;
  if (!tgt_ || std::chrono::system_clock::now() + renewal_margin(*tgt_) >= tgt_->end) {
    logging_in_ = true;
    kdc_calls_.run(
        [creds = creds_] {
          Login out;
          out.tgt = creds->login(out.problem);
          return out;
        },
        [this, wake = std::move(wake)](Login result) {
          logging_in_ = false;
          tgt_ = result.tgt;
          failure_ = std::move(result.problem);
          wake();
        });
    return false;
  }
  OM_uint32 minor = 0;
  if (GSS_ERROR(gss_krb5_ccache_name(&minor, creds_->ccache().c_str(), nullptr))) {
    failure_ = {client_errc::sasl_auth_failed,
                "GSS-API cannot use the ticket cache " + creds_->ccache() + " on the I/O thread"};
    return false;
  }
  return true;
}

}  // namespace zkr::detail
