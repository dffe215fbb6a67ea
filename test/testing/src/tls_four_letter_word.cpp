#include "tls_four_letter_word.hpp"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <zkr/testing/server_options.hpp>

#include "run_tool.hpp"

namespace zkr::testing::detail {
namespace fs = std::filesystem;

std::string tls_four_letter_word(std::uint16_t port, std::string_view cmd, const TlsClientFiles& client,
                                 const fs::path& scratch, std::chrono::milliseconds timeout) {
  static std::atomic<unsigned> counter{0};
  const auto openssl = find_on_path("openssl");
  if (!openssl) throw TestingError("openssl not found on $PATH: install openssl (apt-get install openssl)");
  const std::string stem = "tls-4lw-" + std::to_string(::getpid()) + "-" + std::to_string(++counter);
  const fs::path request = scratch / (stem + ".in");
  const fs::path answer = scratch / (stem + ".out");
  std::ofstream(request) << cmd;
  // -quiet: no session or certificate chatter, and stdin's end does not close the connection (the server
  // closes it after answering); -noservername: no SNI, and no "Can't use SSL_get_servername" on stderr,
  // which goes to the same file as the answer.
  std::vector<std::string> argv{openssl->string(),
                                "s_client",
                                "-quiet",
                                "-verify_quiet",
                                "-noservername",
                                "-connect",
                                "127.0.0.1:" + std::to_string(port),
                                "-CAfile",
                                client.ca.string(),
                                "-cert",
                                client.certificate.string(),
                                "-key",
                                client.key.string()};
  if (!client.key_password.empty()) argv.insert(argv.end(), {"-pass", "pass:" + client.key_password});
  const bool ok = run_bounded(argv, answer, timeout, request);
  std::ifstream in(answer);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::error_code ec;
  fs::remove(request, ec);
  fs::remove(answer, ec);
  if (!ok || text.empty()) {
    throw TestingError("no answer to '" + std::string(cmd) +
                       "' over TLS from 127.0.0.1:" + std::to_string(port) + " within " +
                       std::to_string(timeout.count()) + " ms" + (text.empty() ? "" : ": " + text));
  }
  return text;
}

}  // namespace zkr::testing::detail
