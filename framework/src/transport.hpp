#pragma once
// The transport choice inside the framework: resolving `ClientConfig::transport`, and whether the linked C
// client speaks TLS.

#include <optional>
#include <zkr/framework/transport.hpp>

#include "session.hpp"

namespace zkr::detail {

/// The environment variable `Transport::automatic` reads.
inline constexpr const char* transport_env_var = "ZKR_ZOOKEEPER_TRANSPORT";

/// The transport a client asking for `asked` speaks through; empty when this build cannot give it
/// (`client_errc::transport_unavailable`).
std::optional<Transport> resolve_transport(Transport asked) noexcept;

/// Whether the ZooKeeper C client this build links has TLS (false without a C client).
bool c_client_speaks_tls() noexcept;

}  // namespace zkr::detail
