#pragma once
// Four-letter words over TLS, with `openssl s_client` and a client certificate.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <zkr/testing/tls_options.hpp>

namespace zkr::testing::detail {

/// Sends `cmd` to the TLS port 127.0.0.1:`port`, presenting `client`, and returns the answer. `scratch` is a
/// directory for the request and answer files. \throws TestingError when there is no answer within
/// `timeout` (the handshake failed, nothing listens, or the server did not answer; s_client is killed).
std::string tls_four_letter_word(std::uint16_t port, std::string_view cmd, const TlsClientFiles& client,
                                 const std::filesystem::path& scratch, std::chrono::milliseconds timeout);

}  // namespace zkr::testing::detail
