#include "common.hpp"

#include <spdlog/sinks/stdout_sinks.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <zkr/framework/retry.hpp>

namespace zkr::cli {

std::string_view exit_status_help() {
  return "Exit status:\n"
         "  COMMAND's own status   when COMMAND ran (128+N when it was killed by signal N)\n"
         "  0    success (inspect, revoke; watch: --count events printed)\n"
         "  64   usage error (bad option, missing argument)\n"
         "  69   could not connect to ZooKeeper within --connection-timeout (or no host could be resolved)\n"
         "  70   could not acquire the lock, or another error\n"
         "  75   --timeout passed before the lock was acquired\n"
         "  76   the lock was lost while COMMAND ran (--on-lost kill): COMMAND was terminated; or it was\n"
         "       lost before COMMAND could start (any --on-lost): COMMAND did not run; for `zkr lead`:\n"
         "       leadership was lost or the connection suspended (without --requeue)\n"
         "  77   revocation was requested while COMMAND ran (--revocable): COMMAND was terminated\n"
         "  78   the TLS settings were refused: a file missing or unreadable, a key the password does not\n"
         "       open, or no TLS support in this build (a refused TLS handshake exits 69)\n"
         "  126  COMMAND could not be executed\n"
         "  127  COMMAND not found\n"
         "  128+N  zkr received signal N (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM) "
         "while\n"
         "         waiting for the lock or while releasing it, or while watching (watch: 141 when stdout\n"
         "         was closed)\n";
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text,
                                                        std::chrono::milliseconds max) {
  std::size_t i = 0;
  std::string number;
  bool dot = false;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || (text[i] == '.' && !dot))) {
    if (text[i] == '.') dot = true;
    number += text[i++];
  }
  if (number.empty() || number == ".") return std::nullopt;
  std::string_view unit = text.substr(i);
  double factor = 0;
  if (unit == "ms")
    factor = 1;
  else if (unit.empty() || unit == "s")
    factor = 1000;
  else if (unit == "m")
    factor = 60'000;
  else if (unit == "h")
    factor = 3'600'000;
  else
    return std::nullopt;
  double ms = std::strtod(number.c_str(), nullptr) * factor;
  if (!std::isfinite(ms) || ms < 0 || ms > static_cast<double>(max.count())) return std::nullopt;
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(ms)));
}

std::string format_duration(std::chrono::milliseconds d) {
  auto ms = d.count();
  char buf[64];
  if (ms < 1000)
    std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(ms));
  else if (ms < 60'000)
    std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms) / 1000.0);
  else if (ms < 3'600'000)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", static_cast<long long>(ms / 60'000),
                  static_cast<long long>(ms % 60'000 / 1000));
  else
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", static_cast<long long>(ms / 3'600'000),
                  static_cast<long long>(ms % 3'600'000 / 60'000));
  return buf;
}

std::optional<std::string> connect_string_error(std::string_view connect) {
  if (connect.empty()) return "empty";
  const auto slash = connect.find('/');
  std::string_view hosts = connect.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string chroot(connect.substr(slash));
    if (chroot != "/") {
      if (auto why = path_error(chroot)) return "invalid chroot " + chroot + ": " + *why;
    }
  }
  if (hosts.empty()) return "no host:port";
  for (;;) {
    const auto comma = hosts.find(',');
    const std::string_view one = hosts.substr(0, comma);
    const auto colon = one.rfind(':');
    if (colon == std::string_view::npos) return "missing :port in '" + std::string(one) + "'";
    std::string_view host = one.substr(0, colon);
    const std::string_view port = one.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host.empty()) return "missing host in '" + std::string(one) + "'";
    for (char c : host) {
      const auto u = static_cast<unsigned char>(c);
      if (!std::isalnum(u) && c != '.' && c != '-' && c != '_' && c != ':')
        return "invalid character in host '" + std::string(host) + "'";
    }
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }))
      return "invalid port in '" + std::string(one) + "'";
    const int p = std::atoi(std::string(port).c_str());
    if (p < 1 || p > 65535) return "port out of range in '" + std::string(one) + "'";
    if (comma == std::string_view::npos) break;
    hosts.remove_prefix(comma + 1);
    if (hosts.empty()) return "empty host after ','";
  }
  return std::nullopt;
}

std::string default_connect_string() {
  const char* env = std::getenv("ZKR_CONNECT");
  if (env && *env) return env;
  return "127.0.0.1:2181";
}

std::string env_or(const std::string& given, const char* name) {
  if (!given.empty()) return given;
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::optional<TlsConfig> tls_settings(const TlsOptionText& text, std::string& error) {
  TlsConfig t;
  t.ca_file = env_or(text.ca, "ZKR_TLS_CA");
  t.cert_file = env_or(text.cert, "ZKR_TLS_CERT");
  t.key_file = env_or(text.key, "ZKR_TLS_KEY");
  t.verify_host_name = !text.no_verify_host;
  const auto password_file = env_or(text.key_password_file, "ZKR_TLS_KEY_PASSWORD_FILE");
  const int given = !t.ca_file.empty() + !t.cert_file.empty() + !t.key_file.empty();
  if (given == 0) {
    if (!password_file.empty() || text.no_verify_host)
      error = "--tls-key-password-file and --tls-no-verify-host need --tls-ca, --tls-cert and --tls-key";
    return std::nullopt;
  }
  if (given < 3) {
    error =
        "TLS needs all of --tls-ca, --tls-cert and --tls-key (or $ZKR_TLS_CA, $ZKR_TLS_CERT, $ZKR_TLS_KEY)";
    return std::nullopt;
  }
  if (!password_file.empty()) {
    std::FILE* f = std::fopen(password_file.c_str(), "rb");
    if (!f) {
      error = "cannot read the key password file " + password_file;
      return std::nullopt;
    }
    char buf[1024];
    const std::size_t n = std::fread(buf, 1, sizeof buf, f);
    std::fclose(f);
    std::string pw(buf, n);
    pw = pw.substr(0, pw.find_first_of("\r\n"));  // the first line
    t.key_password = std::move(pw);
  } else if (const char* pw = std::getenv("ZKR_TLS_KEY_PASSWORD")) {
    t.key_password = pw;
  }
  return t;
}

std::shared_ptr<spdlog::logger> make_logger(const CommonOptions& o) {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("zkr", std::move(sink));
  logger->set_pattern("zkr %H:%M:%S.%e [%l] %v");
  if (o.verbose)
    logger->set_level(spdlog::level::debug);
  else if (o.quiet)
    logger->set_level(spdlog::level::off);
  else
    logger->set_level(spdlog::level::err);
  return logger;
}

std::unique_ptr<CuratorFramework> make_client(const CommonOptions& o, std::shared_ptr<spdlog::logger> logger,
                                              std::optional<boost::asio::any_io_executor> executor) {
  ClientConfig c;
  c.connect_string = o.connect;
  c.session_timeout = o.session_timeout;
  c.connection_timeout = o.connection_timeout;
  c.handshake_timeout = o.handshake_timeout;
  c.tls = o.tls;
  c.sasl = o.sasl;
  c.retry_policy = std::make_shared<ExponentialBackoffRetry>(Millis(200), 5, Millis(2000));
  c.logger = std::move(logger);
  c.executor = std::move(executor);
  c.max_close_wait = std::chrono::seconds(3);
  auto client = std::make_unique<CuratorFramework>(std::move(c));
  client->start();
  return client;
}

void say(const CommonOptions& o, std::string_view message) {
  if (o.quiet) return;
  std::fprintf(stderr, "zkr: %.*s\n", static_cast<int>(message.size()), message.data());
}

void say_error(std::string_view message) {
  std::fprintf(stderr, "zkr: %.*s\n", static_cast<int>(message.size()), message.data());
}

int report_start_failure(const CommonOptions& o, const Error& e) {
  if (e.code() == client_errc::invalid_connect_string) {
    say_error("cannot reach ZooKeeper at " + o.connect + ": no host of the connect string could be resolved");
    return exit_status::unavailable;
  }
  say_error(e.what());
  return status_for(e.code());
}

int status_for(const error_code& ec) {
  if (ec == client_errc::invalid_connect_string || ec == client_errc::invalid_path) return exit_status::usage;
  if (ec == client_errc::connection_timeout || ec == client_errc::tls_handshake_failed)
    return exit_status::unavailable;
  if (ec == client_errc::tls_unsupported || ec == client_errc::tls_file_error ||
      ec == client_errc::tls_key_error || ec == client_errc::sasl_unsupported ||
      ec == client_errc::sasl_config_error)
    return exit_status::config;
  if (ec == client_errc::sasl_auth_failed) return exit_status::unavailable;
  return exit_status::error;
}

bool run_until(boost::asio::io_context& ioc, const bool& finished) {
  while (!finished) {
    if (ioc.run_one() == 0) {
      say_error("internal error: the event loop ran out of work");
      return false;
    }
  }
  return true;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGALRM:
      return "SIGALRM";
    case SIGKILL:
      return "SIGKILL";
    case SIGPIPE:
      return "SIGPIPE";
    default:
      return "signal " + std::to_string(sig);
  }
}

std::string hex_session(std::int64_t id) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(id));
  return buf;
}

}  // namespace zkr::cli
