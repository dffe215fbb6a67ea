#pragma once
/// \file
/// The ZooKeeper transports a client can speak through, and which of them this build of zkrecipes has.
///
/// A build links the ZooKeeper C client (`ZKR_ZOOKEEPER_CLIENT=st` or `mt`), and by default also carries the
/// native transport (`ZKR_NATIVE_TRANSPORT`, docs/native-transport.md), which speaks the protocol itself on
/// Asio; a `ZKR_ZOOKEEPER_CLIENT=native` build has only the native one. `ClientConfig::transport` chooses per
/// client; left at `Transport::automatic`, the environment variable `ZKR_ZOOKEEPER_TRANSPORT` (`c` or
/// `native`) chooses, as Java's `zookeeper.clientCnxnSocket` system property chooses the Java client's socket
/// implementation, and without it the build's default does (the C client where it is linked).

#include <optional>
#include <string_view>

namespace zkr {

/// A ZooKeeper transport.
enum class Transport {
  automatic,  ///< `ZKR_ZOOKEEPER_TRANSPORT` if set, else the build's default (`default_transport()`)
  c_client,   ///< the ZooKeeper C client this build links (3.5-era protocol; TLS where the client has it)
  native,     ///< zkrecipes's own, on Asio: 3.6+ requests such as persistent watches, TLS, SASL
};

/// "automatic", "c" or "native".
std::string_view to_string(Transport t) noexcept;

/// Whether this build carries the transport (`automatic` always).
bool transport_available(Transport t) noexcept;

/// The build's default: the C client where it is linked, else the native transport.
Transport build_default_transport() noexcept;

/// What `Transport::automatic` stands for in this process: `ZKR_ZOOKEEPER_TRANSPORT` (`c` or `native`) if
/// set, else `build_default_transport()`. Empty when the variable names no transport, or one this build does
/// not carry: a client left at `automatic` then fails `start()` with `client_errc::transport_unavailable`.
std::optional<Transport> default_transport() noexcept;

/// Whether the transport speaks TLS to the ensemble: the C client where this build links a TLS-capable one
/// (`ZKR_ZOOKEEPER_TLS`), the native transport wherever the build carries it with OpenSSL (unless
/// `ZKR_ZOOKEEPER_TLS` is OFF). `automatic` asks of `default_transport()`.
bool tls_supported(Transport t) noexcept;

}  // namespace zkr
