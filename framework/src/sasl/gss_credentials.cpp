// One client's Kerberos credentials for GSSAPI (gss_credentials.hpp).

#include "gss_credentials.hpp"

#include <gssapi/gssapi.h>
#include <gssapi/gssapi_ext.h>
#include <gssapi/gssapi_krb5.h>
#include <krb5/krb5.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace zkr::detail {

namespace {

// GSS-API's words for a status (major, then the mechanism's minor), for the log: names no secret.
std::string gss_reason(OM_uint32 major, OM_uint32 minor) {
  std::string out;
  auto append = [&](OM_uint32 code, int type) {
    OM_uint32 ctx = 0, min = 0;
    do {
      gss_buffer_desc msg = GSS_C_EMPTY_BUFFER;
      if (GSS_ERROR(gss_display_status(&min, code, type, GSS_C_NO_OID, &ctx, &msg))) break;
      if (!out.empty()) out += "; ";
      out.append(static_cast<const char*>(msg.value), msg.length);
      gss_release_buffer(&min, &msg);
    } while (ctx != 0);
  };
  append(major, GSS_C_GSS_CODE);
  if (minor != 0) append(minor, GSS_C_MECH_CODE);
  return out;
}

// A krb5 context for one call, freed with it.
struct Krb5Context {
  krb5_context ctx = nullptr;
  krb5_error_code rc = krb5_init_context(&ctx);
  ~Krb5Context() {
    if (ctx) krb5_free_context(ctx);
  }
  std::string message(krb5_error_code code) const {
    const char* m = krb5_get_error_message(ctx, code);
    std::string s = m ? m : "error " + std::to_string(code);
    krb5_free_error_message(ctx, m);
    return s;
  }
};

}  // namespace

SaslProblem check_gssapi_keytab(const std::string& principal, const std::string& keytab) {
  Krb5Context k;
  if (k.rc != 0)
    return {client_errc::sasl_config_error,
            "Kerberos cannot start (krb5.conf, $KRB5_CONFIG): error " + std::to_string(k.rc)};
  krb5_principal p = nullptr;
  if (krb5_error_code rc = krb5_parse_name(k.ctx, principal.c_str(), &p); rc != 0)
    return {client_errc::sasl_config_error,
            "the principal '" + principal + "' is not valid: " + k.message(rc)};
  krb5_keytab kt = nullptr;
  krb5_error_code rc = krb5_kt_resolve(k.ctx, ("FILE:" + keytab).c_str(), &kt);
  krb5_keytab_entry entry{};
  if (rc == 0) rc = krb5_kt_get_entry(k.ctx, kt, p, 0, 0, &entry);
  if (rc == 0) krb5_free_keytab_entry_contents(k.ctx, &entry);
  SaslProblem problem;
  if (rc != 0)
    problem = {client_errc::sasl_config_error,
               "the keytab '" + keytab + "' holds no key of '" + principal + "': " + k.message(rc)};
  if (kt) krb5_kt_close(k.ctx, kt);
  krb5_free_principal(k.ctx, p);
  return problem;
}

GssCredentials::GssCredentials(std::string principal, std::string keytab)
    : principal_(std::move(principal)), keytab_(std::move(keytab)) {
  static std::atomic<unsigned long> counter{0};
  ccache_ = "MEMORY:zkr-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
}

GssCredentials::~GssCredentials() {
  Krb5Context k;
  krb5_ccache cc = nullptr;
  if (k.rc == 0 && krb5_cc_resolve(k.ctx, ccache_.c_str(), &cc) == 0) krb5_cc_destroy(k.ctx, cc);
}

std::shared_ptr<void> GssCredentials::acquire(SaslProblem& problem) const {
  OM_uint32 minor = 0;
  gss_buffer_desc name_buf{principal_.size(), const_cast<char*>(principal_.data())};
  gss_name_t name = GSS_C_NO_NAME;
  OM_uint32 major = gss_import_name(&minor, &name_buf, GSS_KRB5_NT_PRINCIPAL_NAME, &name);
  if (GSS_ERROR(major)) {
    problem = {client_errc::sasl_config_error,
               "the principal '" + principal_ + "' is not valid: " + gss_reason(major, minor)};
    return nullptr;
  }
  const gss_key_value_element_desc elements[] = {{"client_keytab", keytab_.c_str()},
                                                 {"ccache", ccache_.c_str()}};
  const gss_key_value_set_desc store{2, const_cast<gss_key_value_element_desc*>(elements)};
  gss_OID_set_desc mechs{1, const_cast<gss_OID>(gss_mech_krb5)};
  gss_cred_id_t cred = GSS_C_NO_CREDENTIAL;
  major = gss_acquire_cred_from(&minor, name, GSS_C_INDEFINITE, &mechs, GSS_C_INITIATE, &store, &cred,
                                nullptr, nullptr);
  OM_uint32 ignored = 0;
  gss_release_name(&ignored, &name);
  if (GSS_ERROR(major)) {
    problem = {client_errc::sasl_auth_failed, "no Kerberos credentials for '" + principal_ +
                                                  "' from the keytab '" + keytab_ +
                                                  "': " + gss_reason(major, minor)};
    return nullptr;
  }
  return std::shared_ptr<void>(cred, [](void* c) {
    OM_uint32 min = 0;
    auto handle = static_cast<gss_cred_id_t>(c);
    gss_release_cred(&min, &handle);
  });
}

std::optional<GssCredentials::Validity> GssCredentials::login(SaslProblem& problem) const {
  Krb5Context k;
  if (k.rc != 0) {
    problem = {client_errc::sasl_auth_failed,
               "Kerberos cannot start (krb5.conf, $KRB5_CONFIG): error " + std::to_string(k.rc)};
    return std::nullopt;
  }
  krb5_principal p = nullptr;
  krb5_keytab kt = nullptr;
  krb5_ccache cc = nullptr;
  krb5_get_init_creds_opt* opt = nullptr;
  krb5_creds creds{};
  bool have_creds = false;
  const char* step = "the principal";
  krb5_error_code rc = krb5_parse_name(k.ctx, principal_.c_str(), &p);
  if (rc == 0) {
    step = "the keytab";
    rc = krb5_kt_resolve(k.ctx, ("FILE:" + keytab_).c_str(), &kt);
  }
  if (rc == 0) rc = krb5_get_init_creds_opt_alloc(k.ctx, &opt);
  if (rc == 0) {
    step = "the KDC";
    rc = krb5_get_init_creds_keytab(k.ctx, &creds, p, kt, 0, nullptr, opt);
    have_creds = rc == 0;
  }
  if (rc == 0) {
    step = "the ticket cache";
    rc = krb5_cc_resolve(k.ctx, ccache_.c_str(), &cc);
  }
  // The cache is emptied, then given the new ticket: no exchange of this client reads it meanwhile (the C
  // client's waits for this login, c_client_kerberos.hpp).
  if (rc == 0) rc = krb5_cc_initialize(k.ctx, cc, p);
  if (rc == 0) rc = krb5_cc_store_cred(k.ctx, cc, &creds);
  std::optional<Validity> out;
  if (rc == 0) {
    const auto at = [](krb5_timestamp t) {
      return std::chrono::system_clock::time_point(std::chrono::seconds(static_cast<std::uint32_t>(t)));
    };
    out = Validity{at(creds.times.starttime != 0 ? creds.times.starttime : creds.times.authtime),
                   at(creds.times.endtime)};
  } else {
    problem = {client_errc::sasl_auth_failed, "no Kerberos ticket for '" + principal_ +
                                                  "' from the keytab '" + keytab_ + "' (" + step +
                                                  "): " + k.message(rc)};
  }
  if (have_creds) krb5_free_cred_contents(k.ctx, &creds);
  if (cc) krb5_cc_close(k.ctx, cc);
  if (opt) krb5_get_init_creds_opt_free(k.ctx, opt);
  if (kt) krb5_kt_close(k.ctx, kt);
  if (p) krb5_free_principal(k.ctx, p);
  return out;
}

}  // namespace zkr::detail
