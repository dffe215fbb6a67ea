// The SASL exchange over Cyrus SASL (sasl_exchange.hpp).

#include "sasl_exchange.hpp"

#include <sasl/sasl.h>

#include "../sasl/cyrus_callbacks.hpp"
#include "../sasl/sasl_settings.hpp"
#if ZKR_HAVE_GSSAPI
#include "../sasl/gss_credentials.hpp"
#endif

namespace zkr::detail::native {

struct SaslExchange::ClientState {
#if ZKR_HAVE_GSSAPI
  explicit ClientState(const SaslConfig& cfg) : gss(cfg.principal, cfg.keytab) {}
  GssCredentials gss;
#else
  explicit ClientState(const SaslConfig&) {}
#endif
};

struct SaslExchange::Impl {
  const SaslConfig cfg;  // a copy: a GSSAPI exchange starts on the blocking pool, and may outlive the session
  std::string local, remote, host;
  std::shared_ptr<ClientState> state;
  std::shared_ptr<void> gss_cred;  // GSSAPI: this exchange's credential, released after `conn`
  CyrusCallbacks callbacks;        // the user, the password (read at start), the realm
  sasl_conn_t* conn = nullptr;
  bool finished = false;  // Cyrus said OK while a last token was still to go to the server

  explicit Impl(const SaslConfig& c) : cfg(c), callbacks(cfg) {}
  ~Impl() {
    if (conn) sasl_dispose(&conn);
  }

  std::string detail(int rc) const {
    const char* d = conn ? sasl_errdetail(conn) : nullptr;
    return d ? std::string(d) : std::string(sasl_errstring(rc, nullptr, nullptr));
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
    problem = {client_errc::sasl_unsupported, "this build of zkrecipes has no Kerberos for GSSAPI"};
#endif
    if (problem.ec) return {Step::Kind::failed, {}, problem.ec, problem.reason};
  } else if (!s.callbacks.load_password(problem)) {
    return {Step::Kind::failed, {}, problem.ec, problem.reason};
  }

  if (int rc = init_cyrus_client(); rc != SASL_OK)
    return {Step::Kind::failed,
            {},
            client_errc::sasl_unsupported,
            std::string("Cyrus SASL cannot start: ") + sasl_errstring(rc, nullptr, nullptr)};
  int rc = sasl_client_new(s.cfg.service.c_str(), s.host.c_str(), s.local.c_str(), s.remote.c_str(),
                           s.callbacks.list(), 0, &s.conn);
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
        client_errc::sasl_unsupported,
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
    s.callbacks.wipe();  // Cyrus has what it needs from the password once the mechanism is through
    if (out_len == 0) return {Step::Kind::done};
    s.finished = true;  // one last token for the server, whose answer ends the exchange
    return {Step::Kind::send, std::string(out, out_len)};
  }
  return {Step::Kind::failed,
          {},
          client_errc::sasl_auth_failed,
          "the client's SASL step failed: " + s.detail(rc)};
}

}  // namespace zkr::detail::native
