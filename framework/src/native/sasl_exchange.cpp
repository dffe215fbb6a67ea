// The SASL exchange over Cyrus SASL (sasl_exchange.hpp).

#include "sasl_exchange.hpp"

#include <sasl/sasl.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "../sasl/sasl_settings.hpp"
#if ZKR_HAVE_GSSAPI
#include "../sasl/gss_credentials.hpp"
#endif

namespace zkr::detail::native {

namespace {

// Cyrus's client side is initialised once per process and never finalised (other code may use it too).
int init_cyrus() {
  static int rc = sasl_client_init(nullptr);
  return rc;
}

}  // namespace

struct SaslExchange::ClientState {
#if ZKR_HAVE_GSSAPI
  explicit ClientState(const SaslConfig& cfg) : gss(cfg.principal, cfg.keytab) {}
  GssCredentials gss;
#else
  explicit ClientState(const SaslConfig&) {}
#endif
};

struct SaslExchange::Impl {
  const SaslConfig& cfg;
  std::string local, remote, host;
  std::shared_ptr<ClientState> state;
  std::shared_ptr<void> gss_cred;  // GSSAPI: this exchange's credential, released after `conn`
  sasl_conn_t* conn = nullptr;
  std::vector<unsigned char> secret;  // a sasl_secret_t: its length, then the password
  std::vector<sasl_callback_t> callbacks;
  bool finished = false;  // Cyrus said OK while a last token was still to go to the server

  explicit Impl(const SaslConfig& c) : cfg(c) {}
  ~Impl() {
    if (conn) sasl_dispose(&conn);
    std::fill(secret.begin(), secret.end(), 0);
  }

  std::string detail(int rc) const {
    const char* d = conn ? sasl_errdetail(conn) : nullptr;
    return d ? std::string(d) : std::string(sasl_errstring(rc, nullptr, nullptr));
  }

  // The callbacks: the user (as authentication and authorisation name), the password, the realm. GSSAPI
  // asks only for the authorisation name: none (the server then authorises the principal authenticated).
  static int simple(void* ctx, int id, const char** result, unsigned* len) {
    auto* self = static_cast<Impl*>(ctx);
    if (id != SASL_CB_USER && id != SASL_CB_AUTHNAME) return SASL_BADPARAM;
    static const std::string none;
    const std::string& name = self->cfg.mechanism == SaslMechanism::gssapi ? none : self->cfg.user;
    *result = name.c_str();
    if (len) *len = static_cast<unsigned>(name.size());
    return SASL_OK;
  }
  static int password(sasl_conn_t*, void* ctx, int id, sasl_secret_t** out) {
    auto* self = static_cast<Impl*>(ctx);
    if (id != SASL_CB_PASS || self->secret.empty()) return SASL_BADPARAM;
    *out = reinterpret_cast<sasl_secret_t*>(self->secret.data());
    return SASL_OK;
  }
  static int realm(void* ctx, int id, const char** available, const char** result) {
    auto* self = static_cast<Impl*>(ctx);
    if (id != SASL_CB_GETREALM) return SASL_BADPARAM;
    if (!self->cfg.realm.empty())
      *result = self->cfg.realm.c_str();
    else
      *result = available && *available ? *available : "";
    return SASL_OK;
  }
};

SaslExchange::SaslExchange(const SaslConfig& cfg, std::string local, std::string remote,
                           std::string_view host, std::shared_ptr<ClientState>& state)
    : impl_(std::make_unique<Impl>(cfg)) {
  impl_->local = std::move(local);
  impl_->remote = std::move(remote);
  impl_->host = sasl_server_host(cfg, host);
  if (cfg.mechanism == SaslMechanism::gssapi && !state) state = std::make_shared<ClientState>(cfg);
  impl_->state = state;
}

SaslExchange::~SaslExchange() = default;

SaslExchange::Step SaslExchange::start() {
  Impl& s = *impl_;
  SaslProblem problem;
  if (s.cfg.mechanism == SaslMechanism::gssapi) {
#if ZKR_HAVE_GSSAPI
    s.gss_cred = s.state->gss.acquire(problem);
#else
    problem = {errc::sasl_unsupported, "this build of zkrecipes has no Kerberos for GSSAPI"};
#endif
    if (problem.ec) return {Step::Kind::failed, {}, problem.ec, problem.reason};
  } else {
    std::string pw = read_sasl_password(s.cfg.password_file, problem);
    if (problem.ec) return {Step::Kind::failed, {}, problem.ec, problem.reason};
    // sasl_secret_t: an unsigned long length, then the bytes (and a terminating zero, which Cyrus expects).
    s.secret.assign(sizeof(sasl_secret_t) + pw.size() + 1, 0);
    auto* secret = reinterpret_cast<sasl_secret_t*>(s.secret.data());
    secret->len = pw.size();
    std::memcpy(secret->data, pw.data(), pw.size());
    std::fill(pw.begin(), pw.end(), '\0');
  }

  if (int rc = init_cyrus(); rc != SASL_OK)
    return {Step::Kind::failed,
            {},
            errc::sasl_unsupported,
            std::string("Cyrus SASL cannot start: ") + sasl_errstring(rc, nullptr, nullptr)};
  // Cyrus stores every callback as int(*)(void); the cast goes through void(*)(), the generic one.
  auto cb = [](auto* f) { return reinterpret_cast<int (*)()>(reinterpret_cast<void (*)()>(f)); };
  s.callbacks = {
      {SASL_CB_USER, cb(&Impl::simple), &s},   {SASL_CB_AUTHNAME, cb(&Impl::simple), &s},
      {SASL_CB_PASS, cb(&Impl::password), &s}, {SASL_CB_GETREALM, cb(&Impl::realm), &s},
      {SASL_CB_LIST_END, nullptr, nullptr},
  };

  int rc = sasl_client_new(s.cfg.service.c_str(), s.host.c_str(), s.local.c_str(), s.remote.c_str(),
                           s.callbacks.data(), 0, &s.conn);
  if (rc != SASL_OK) return next(rc, nullptr, 0);
  // Authentication only: no integrity or confidentiality layer (ZooKeeper frames stay plain).
  sasl_security_properties_t props{};
  props.min_ssf = 0;
  props.max_ssf = 0;
  props.maxbufsize = 0;
  sasl_setprop(s.conn, SASL_SEC_PROPS, &props);
  // GSSAPI: the client's own credential, not the process's default ticket cache.
  if (s.gss_cred) sasl_setprop(s.conn, SASL_GSS_CREDS, s.gss_cred.get());

  const std::string mech(to_string(s.cfg.mechanism));
  const char* out = nullptr;
  unsigned out_len = 0;
  const char* chosen = nullptr;
  rc = sasl_client_start(s.conn, mech.c_str(), nullptr, &out, &out_len, &chosen);
  if (rc == SASL_NOMECH)
    return {
        Step::Kind::failed,
        {},
        errc::sasl_unsupported,
        "Cyrus SASL has no " + mech + " plugin (install " +
            (s.cfg.mechanism == SaslMechanism::gssapi ? "libsasl2-modules-gssapi-mit" : "libsasl2-modules") +
            ")"};
  // DIGEST-MD5 is server-first: the exchange opens with an empty token, which asks the server's challenge.
  // GSSAPI is client-first: the token is the AP-REQ (the KDC was asked for the tickets it needs).
  if (rc == SASL_CONTINUE || rc == SASL_OK) return {Step::Kind::send, std::string(out ? out : "", out_len)};
  return next(rc, out, out_len);
}

SaslExchange::Step SaslExchange::on_server_token(std::string_view token) {
  Impl& s = *impl_;
  if (s.finished) return {Step::Kind::done};
  const char* out = nullptr;
  unsigned out_len = 0;
  const int rc =
      sasl_client_step(s.conn, token.data(), static_cast<unsigned>(token.size()), nullptr, &out, &out_len);
  return next(rc, out, out_len);
}

SaslExchange::Step SaslExchange::next(int rc, const char* out, unsigned out_len) {
  Impl& s = *impl_;
  if (rc == SASL_CONTINUE) return {Step::Kind::send, std::string(out ? out : "", out_len)};
  if (rc == SASL_OK) {
    // The wipe: Cyrus has what it needs from the password once the mechanism is through.
    std::fill(s.secret.begin(), s.secret.end(), 0);
    if (out_len == 0) return {Step::Kind::done};
    s.finished = true;  // one last token for the server, whose answer ends the exchange
    return {Step::Kind::send, std::string(out, out_len)};
  }
  return {Step::Kind::failed, {}, errc::sasl_auth_failed, "the client's SASL step failed: " + s.detail(rc)};
}

}  // namespace zkr::detail::native
