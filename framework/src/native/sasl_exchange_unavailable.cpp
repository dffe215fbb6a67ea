// The SASL exchange of a build without Cyrus SASL (ZKR_SASL off or libsasl2 not found): every exchange
// fails with client_errc::sasl_unsupported. start() refuses SASL settings before a session opens
// (sasl_settings.cpp), so this only keeps the native session's one code path.

#include "sasl_exchange.hpp"

namespace zkr::detail::native {

struct SaslExchange::Impl {};
struct SaslExchange::ClientState {};

SaslExchange::SaslExchange(const SaslConfig&, std::string, std::string, std::string_view,
                           std::shared_ptr<ClientState>&) {}
SaslExchange::~SaslExchange() = default;

SaslExchange::Step SaslExchange::start() { return next(0, nullptr, 0); }
SaslExchange::Step SaslExchange::on_server_token(std::string_view) { return next(0, nullptr, 0); }
SaslExchange::Step SaslExchange::next(int, const char*, unsigned) {
  return {Step::Kind::failed, {}, client_errc::sasl_unsupported, "this build of zkrecipes has no Cyrus SASL"};
}

}  // namespace zkr::detail::native
