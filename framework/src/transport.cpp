// Which transports this build carries, what `Transport::automatic` resolves to, and the session factory
// that makes a client's session over the resolved one.

#include "transport.hpp"

#include <spdlog/logger.h>

#include <cstdlib>
#include <string_view>
#include <zkr/framework/curator_framework.hpp>  // ClientConfig

#if ZKR_HAVE_C_CLIENT
#include "c_session_factory.hpp"
#endif
#if ZKR_HAVE_NATIVE_TRANSPORT
#include "native/native_session.hpp"
#endif

namespace zkr {

std::string_view to_string(Transport t) noexcept {
  switch (t) {
    case Transport::automatic:
      return "automatic";
    case Transport::c_client:
      return "c";
    case Transport::native:
      return "native";
  }
  return "unknown";
}

bool transport_available(Transport t) noexcept {
  switch (t) {
    case Transport::automatic:
      return true;
    case Transport::c_client:
      return ZKR_HAVE_C_CLIENT != 0;
    case Transport::native:
      return ZKR_HAVE_NATIVE_TRANSPORT != 0;
  }
  return false;
}

Transport build_default_transport() noexcept {
  return ZKR_HAVE_C_CLIENT ? Transport::c_client : Transport::native;
}

std::optional<Transport> default_transport() noexcept {
  const char* env = std::getenv(detail::transport_env_var);
  if (env == nullptr || *env == '\0') return build_default_transport();
  const std::string_view name(env);
  Transport t;
  if (name == "c") {
    t = Transport::c_client;
  } else if (name == "native") {
    t = Transport::native;
  } else {
    return std::nullopt;
  }
  if (!transport_available(t)) return std::nullopt;
  return t;
}

bool tls_supported(Transport t) noexcept {
  if (t == Transport::automatic) {
    auto resolved = default_transport();
    if (!resolved) return false;
    t = *resolved;
  }
  if (t == Transport::native) return ZKR_HAVE_NATIVE_TRANSPORT != 0 && ZKR_NATIVE_TLS != 0;
  return t == Transport::c_client && detail::c_client_speaks_tls();
}

bool tls_supported() noexcept { return tls_supported(Transport::automatic); }

}  // namespace zkr

namespace zkr::detail {

bool c_client_speaks_tls() noexcept { return ZKR_C_CLIENT_TLS != 0; }

std::optional<Transport> resolve_transport(Transport asked) noexcept {
  if (asked == Transport::automatic) return default_transport();
  if (!transport_available(asked)) return std::nullopt;
  return asked;
}

std::unique_ptr<Session> make_default_session(boost::asio::io_context& ioc, const ClientConfig& config,
                                              spdlog::logger& log, SessionEvents& events) {
  // An unresolvable choice gets the build's default session, which is never opened: start() refuses first.
  [[maybe_unused]] const Transport t =
      resolve_transport(config.transport).value_or(build_default_transport());
#if ZKR_HAVE_NATIVE_TRANSPORT
  if (t == Transport::native) return std::make_unique<native::NativeSession>(ioc, config, log, events);
#endif
#if ZKR_HAVE_C_CLIENT
  return make_c_client_session(ioc, config, log, events);
#else
  return std::make_unique<native::NativeSession>(ioc, config, log, events);
#endif
}

}  // namespace zkr::detail
