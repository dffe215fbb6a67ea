#pragma once
// Helpers for the TLS tests of zkr::testing: one TLS connection with `openssl s_client`, bounded in time.

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <zkr/testing/tls_options.hpp>

namespace zkr::testing::test {

struct TlsExchange {
  int exit_status = -1;  // s_client's exit status; 124 when coreutils `timeout` ended it
  std::string output;    // everything it printed (stdout and stderr)
};

/// Connects to 127.0.0.1:`port` with `openssl s_client`, presenting `client` (its certificate, key and CA),
/// sends `request` and returns what came back once the server closed the connection. Bounded by coreutils
/// `timeout` (`seconds`).
inline TlsExchange tls_exchange(std::uint16_t port, const TlsClientFiles& client, const std::string& request,
                                int seconds = 20) {
  static int counter = 0;
  const auto input = std::filesystem::temp_directory_path() /
                     ("zkr-tls-" + std::to_string(::getpid()) + "-" + std::to_string(++counter) + ".txt");
  std::ofstream(input) << request;
  std::string cmd =
      "timeout " + std::to_string(seconds) +
      " openssl s_client -quiet -verify_quiet -noservername -connect 127.0.0.1:" + std::to_string(port) +
      " -CAfile '" + client.ca.string() + "' -cert '" + client.certificate.string() + "' -key '" +
      client.key.string() + "'";
  if (!client.key_password.empty()) cmd += " -pass 'pass:" + client.key_password + "'";
  cmd += " < '" + input.string() + "' 2>&1";
  TlsExchange result;
  if (FILE* pipe = ::popen(cmd.c_str(), "r")) {
    char buf[4096];
    while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe)) result.output.append(buf, n);
    const int status = ::pclose(pipe);
    result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::filesystem::remove(input);
  return result;
}

}  // namespace zkr::testing::test
