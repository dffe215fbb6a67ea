// Cyrus SASL's client callbacks for a SaslConfig (cyrus_callbacks.hpp).

#include "cyrus_callbacks.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace zkr::detail {

int init_cyrus_client() noexcept {
  static const int rc = sasl_client_init(nullptr);
  return rc;
}

CyrusCallbacks::CyrusCallbacks(const SaslConfig& cfg) : cfg_(cfg) {
  // Cyrus stores every callback as int(*)(void); the cast goes through void(*)(), the generic one.
  auto cb = [](auto* f) { return reinterpret_cast<int (*)()>(reinterpret_cast<void (*)()>(f)); };
  callbacks_ = {
      {SASL_CB_USER, cb(&CyrusCallbacks::simple), this},
      {SASL_CB_AUTHNAME, cb(&CyrusCallbacks::simple), this},
      {SASL_CB_PASS, cb(&CyrusCallbacks::password), this},
      {SASL_CB_GETREALM, cb(&CyrusCallbacks::realm), this},
      {SASL_CB_LIST_END, nullptr, nullptr},
  };
}

CyrusCallbacks::~CyrusCallbacks() { wipe(); }

void CyrusCallbacks::wipe() noexcept {
  std::lock_guard lock(mu_);
  clear_secret();
}

void CyrusCallbacks::clear_secret() noexcept {
  for (volatile unsigned char& c : secret_) c = 0;
  secret_.clear();
  loaded_ = false;
}

void CyrusCallbacks::hold(std::string& pw) {
  clear_secret();
  secret_.assign(sizeof(sasl_secret_t) + pw.size() + 1, 0);
  auto* secret = reinterpret_cast<sasl_secret_t*>(secret_.data());
  secret->len = pw.size();
  std::memcpy(secret->data, pw.data(), pw.size());
  for (volatile char& c : pw) c = '\0';
}

bool CyrusCallbacks::load_password(SaslProblem& problem) {
  std::lock_guard lock(mu_);
  std::string pw = read_sasl_password(cfg_.password_file, problem);
  if (problem.ec) return false;
  hold(pw);
  loaded_ = true;
  return true;
}

bool CyrusCallbacks::password_unreadable(std::string& reason) const {
  std::lock_guard lock(mu_);
  reason = unreadable_;
  return !unreadable_.empty();
}

int CyrusCallbacks::simple(void* ctx, int id, const char** result, unsigned* len) {
  auto* self = static_cast<CyrusCallbacks*>(ctx);
  if (id != SASL_CB_USER && id != SASL_CB_AUTHNAME) return SASL_BADPARAM;
  static const std::string none;
  const std::string& name = self->cfg_.mechanism == SaslMechanism::gssapi ? none : self->cfg_.user;
  *result = name.c_str();
  if (len) *len = static_cast<unsigned>(name.size());
  return SASL_OK;
}

int CyrusCallbacks::password(sasl_conn_t*, void* ctx, int id, sasl_secret_t** out) {
  auto* self = static_cast<CyrusCallbacks*>(ctx);
  if (id != SASL_CB_PASS) return SASL_BADPARAM;
  std::lock_guard lock(self->mu_);
  if (std::exchange(self->loaded_, false)) {
    *out = reinterpret_cast<sasl_secret_t*>(self->secret_.data());
    return SASL_OK;
  }
  SaslProblem problem;
  std::string pw = read_sasl_password(self->cfg_.password_file, problem);
  if (problem.ec) {
    self->unreadable_ = problem.reason;
    return SASL_FAIL;
  }
  self->unreadable_.clear();
  // The previous connection's copy goes first; this one stays until the next connection asks (Cyrus's
  // DIGEST-MD5 keeps the pointer for the exchange's later steps).
  self->hold(pw);
  *out = reinterpret_cast<sasl_secret_t*>(self->secret_.data());
  return SASL_OK;
}

int CyrusCallbacks::realm(void* ctx, int id, const char** available, const char** result) {
  auto* self = static_cast<CyrusCallbacks*>(ctx);
  if (id != SASL_CB_GETREALM) return SASL_BADPARAM;
  if (!self->cfg_.realm.empty())
    *result = self->cfg_.realm.c_str();
  else
    *result = available && *available ? *available : "";
  return SASL_OK;
}

}  // namespace zkr::detail
