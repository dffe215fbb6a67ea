#pragma once
// Helpers for the TLS tests of zkr::testing: one TLS connection with `openssl s_client`, bounded in time.

#include <filesystem>
#include <string>
#include <zkr/testing/tls_options.hpp>

#include "support.hpp"

namespace zkr::testing::test {

/// Connects to 127.0.0.1:`port` with `openssl s_client`, presenting `client` (its certificate, key and CA),
/// sends `request` and returns what came back (stdout and stderr) once the server closed the connection, with
/// s_client's exit status. Bounded by coreutils `timeout` (`seconds`).
inline CommandResult tls_exchange(std::uint16_t port, const TlsClientFiles& client,
                                  const std::string& request, int seconds = 20) {
  const auto input = input_file("tls", request);
  // -noservername: no SNI, and no "Can't use SSL_get_servername" line among the answer.
  std::string cmd =
      "timeout " + std::to_string(seconds) +
      " openssl s_client -quiet -verify_quiet -noservername -connect 127.0.0.1:" + std::to_string(port) +
      " -CAfile '" + client.ca.string() + "' -cert '" + client.certificate.string() + "' -key '" +
      client.key.string() + "'";
  if (!client.key_password.empty()) cmd += " -pass 'pass:" + client.key_password + "'";
  auto result = run_command(cmd + " < '" + input.string() + "' 2>&1");
  std::filesystem::remove(input);
  return result;
}

}  // namespace zkr::testing::test
