#include "server_instance.hpp"

#include <signal.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

#include "child_process.hpp"
#include "class_data_sharing.hpp"
#include "net.hpp"
#include "tls_four_letter_word.hpp"

namespace zkr::testing::detail {
namespace fs = std::filesystem;
using std::chrono::milliseconds;

namespace {

constexpr std::string_view start_marker = "=== zkr::testing: starting ZooKeeper";
constexpr auto stop_grace = std::chrono::seconds{5};

std::string now_string() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

void write_file(const fs::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::trunc);
  out << content;
  out.flush();
  if (!out) throw TestingError("cannot write " + path.string());
}

// The state letter of /proc/<pid>/stat ('R', 'S', 'T', 'Z', ...), or 0 if unreadable.
char proc_state(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  if (paren == std::string::npos || paren + 2 >= line.size()) return 0;
  return line[paren + 2];
}

}  // namespace

ClientPorts pick_client_ports(const ServerOptions& options, std::size_t member) {
  auto pick = [&](std::uint16_t fixed) {
    return fixed != 0 ? static_cast<std::uint16_t>(fixed + member) : free_port();
  };
  ClientPorts ports;
  if (!options.tls || options.tls->plain_port) ports.plain = pick(options.port);
  if (options.tls) ports.secure = pick(options.tls->secure_port);
  return ports;
}

bool picks_client_ports(const ServerOptions& options) {
  const bool plain = !options.tls || options.tls->plain_port;
  return (!plain || options.port == 0) && (!options.tls || options.tls->secure_port == 0);
}

namespace {
void check_tls_options(const TlsServerOptions& tls) {
  auto need = [](const fs::path& file, const char* field) {
    std::error_code ec;
    if (file.empty() || !fs::is_regular_file(file, ec)) {
      throw TestingError(std::string("ServerOptions::tls: ") + field + " '" + file.string() +
                         "' is not a file (TestCertificates::server_options() makes them all)");
    }
  };
  need(tls.key_store, "key_store");
  need(tls.trust_store, "trust_store");
  need(tls.probe.ca, "probe.ca");
  need(tls.probe.certificate, "probe.certificate");
  need(tls.probe.key, "probe.key");
}
}  // namespace

ServerInstance::ServerInstance(const ServerOptions& options, fs::path java, std::string classpath,
                               InstanceConfig config)
    : java_(std::move(java)),
      classpath_(std::move(classpath)),
      config_(std::move(config)),
      tick_time_(options.tick_time),
      container_check_interval_(options.container_check_interval),
      start_timeout_(options.start_timeout),
      force_sync_(options.force_sync),
      jvm_flags_(options.jvm_flags),
      extra_config_(options.extra_config),
      tls_(options.tls),
      sasl_(options.sasl) {
  if (tls_) check_tls_options(*tls_);
  if (options.class_data_sharing) cds_.emplace(java_, classpath_);
}

ServerInstance::~ServerInstance() {
  // Killed at once, unless it is to dump the class archive (class_data_sharing.hpp): a JVM dumps at its own
  // exit, so that one server per machine is stopped gracefully instead.
  if (cds_ && cds_->dumping() && is_running()) stop();
  if (auto c = child()) c->kill_and_wait();
}

std::shared_ptr<ChildProcess> ServerInstance::child() const {
  std::lock_guard lock(state_mutex_);
  return child_;
}

std::string ServerInstance::describe(bool with_pid) const {
  std::string s = "ZooKeeper server";
  if (config_.myid != 0) s += " " + std::to_string(config_.myid);
  if (config_.client_port != 0) s += " on 127.0.0.1:" + std::to_string(config_.client_port);
  if (config_.secure_port != 0)
    s += (config_.client_port != 0 ? " and TLS port " : " on TLS port 127.0.0.1:") +
         std::to_string(config_.secure_port);
  if (auto c = child(); c && with_pid) s += " (pid " + std::to_string(c->pid()) + ")";
  return s;
}

void ServerInstance::write_config() const {
  const fs::path data = config_.dir / "data";
  std::error_code ec;
  fs::create_directories(data, ec);
  if (ec) throw TestingError("cannot create " + data.string() + ": " + ec.message());

  const auto tick = std::max<long long>(tick_time_.count(), 1);
  std::ostringstream cfg;
  cfg << "# Written by zkr::testing for one test server.\n"
      << "tickTime=" << tick << '\n'
      << "initLimit=10\n"
      << "syncLimit=5\n"
      << "dataDir=" << data.string() << '\n';
  if (config_.client_port != 0)
    cfg << "clientPort=" << config_.client_port << '\n' << "clientPortAddress=127.0.0.1\n";
  if (tls_) write_tls_config(cfg);
  if (sasl_) write_sasl_config(cfg);
  cfg << "maxClientCnxns=0\n"
      << "4lw.commands.whitelist=*\n"
      << "extendedTypesEnabled=true\n"
      << "admin.enableServer=false\n"
      << "forceSync=" << (force_sync_ ? "yes" : "no") << '\n'
      << "minSessionTimeout=" << 2 * tick << '\n'
      << "maxSessionTimeout=" << std::max<long long>(60000, 2 * tick) << '\n';
  for (const auto& peer : config_.peers) {
    cfg << "server." << peer.id << "=127.0.0.1:" << peer.quorum_port << ':' << peer.election_port << '\n';
  }
  for (const auto& line : extra_config_) cfg << line << '\n';
  write_file(config_.dir / "zoo.cfg", cfg.str());
  if (config_.myid != 0) write_file(data / "myid", std::to_string(config_.myid) + "\n");
}

void ServerInstance::write_tls_config(std::ostream& cfg) const {
  // TLS needs the Netty connection factory, which then serves the plain port too. zookeeper.jar's manifest
  // leaves out netty-codec and netty-resolver, which the TLS pipeline needs: zookeeper_classpath() adds them.
  // Unknown zoo.cfg keys become zookeeper.* system properties, hence ssl.* here.
  cfg << "secureClientPort=" << config_.secure_port << '\n'
      << "secureClientPortAddress=127.0.0.1\n"
      << "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n"
      << "ssl.keyStore.location=" << tls_->key_store.string() << '\n'
      << "ssl.keyStore.password=" << tls_->store_password << '\n'
      << "ssl.keyStore.type=PKCS12\n"
      << "ssl.trustStore.location=" << tls_->trust_store.string() << '\n'
      << "ssl.trustStore.password=" << tls_->store_password << '\n'
      << "ssl.trustStore.type=PKCS12\n"
      << "ssl.clientAuth=" << tls_->client_auth << '\n'
      << "authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider\n";
}

// Unknown zoo.cfg keys become zookeeper.* system properties: enforce.auth.* is zookeeper.enforce.auth.*.
void ServerInstance::write_sasl_config(std::ostream& cfg) const {
  cfg << "authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider\n";
  if (sasl_->required)
    cfg << "enforce.auth.enabled=true\n"
        << "enforce.auth.schemes=sasl\n";
  auto quotable = [](const std::string& s) { return s.find_first_of("\"\\") == std::string::npos; };
  std::string jaas = "Server {\n  ";
  if (const auto& krb = sasl_->kerberos) {
    // The server's own login: its keys from the keytab, kept (storeKey) to accept the clients' tickets.
    if (!sasl_->digest_users.empty())
      throw TestingError("ServerOptions::sasl: digest_users and kerberos together (the server offers one)");
    if (!quotable(krb->keytab.string()) || !quotable(krb->principal))
      throw TestingError(
          "ServerOptions::sasl: the keytab path or principal holds a character JAAS cannot take");
    jaas += "com.sun.security.auth.module.Krb5LoginModule required\n  useKeyTab=true\n  keyTab=\"" +
            krb->keytab.string() + "\"\n  storeKey=true\n  useTicketCache=false\n  principal=\"" +
            krb->principal + "\"";
  } else {
    jaas += "org.apache.zookeeper.server.auth.DigestLoginModule required";
  }
  for (const auto& [user, password] : sasl_->digest_users) {
    if (user.find_first_of("\"\\ =") != std::string::npos || !quotable(password))
      throw TestingError("ServerOptions::sasl: the user '" + user +
                         "' or its password holds a character JAAS cannot take");
    jaas += "\n  user_" + user + "=\"" + password + "\"";
  }
  write_file(config_.dir / "jaas.conf", jaas + ";\n};\n");
}

void ServerInstance::launch() {
  std::lock_guard control(control_mutex_);
  if (auto c = child(); c && c->running()) return;

  std::vector<std::pair<std::uint16_t, const char*>> ports;
  if (config_.client_port != 0) ports.emplace_back(config_.client_port, "client");
  if (config_.secure_port != 0) ports.emplace_back(config_.secure_port, "TLS client");
  for (const auto& peer : config_.peers) {
    if (peer.id == config_.myid) {
      ports.emplace_back(peer.quorum_port, "quorum");
      ports.emplace_back(peer.election_port, "election");
    }
  }
  for (auto [port, what] : ports) {
    if (!port_is_free(port, true)) {
      throw PortInUseError("cannot start " + describe(false) + ": port " + std::to_string(port) +
                           " on 127.0.0.1 (" + what + " port) is already in use");
    }
  }
  write_config();

  std::vector<std::string> argv{java_.string()};
  argv.insert(argv.end(), jvm_flags_.begin(), jvm_flags_.end());
  if (cds_) {
    const auto cds = cds_->flags();
    argv.insert(argv.end(), cds.begin(), cds.end());
  }
  if (sasl_) argv.push_back("-Djava.security.auth.login.config=" + (config_.dir / "jaas.conf").string());
  if (sasl_ && sasl_->kerberos)
    argv.insert(argv.end(), {"-Djava.security.krb5.conf=" + sasl_->kerberos->krb5_conf.string(),
                             "-Dsun.security.krb5.disableReferrals=true"});
  argv.insert(
      argv.end(),
      {"-cp", classpath_, "-Djava.net.preferIPv4Stack=true", "-Dzookeeper.admin.enableServer=false",
       "-Dznode.container.checkIntervalMs=" + std::to_string(container_check_interval_.count()),
       "-Dzookeeper.jmx.log4j.disable=true", "-Dorg.slf4j.simpleLogger.defaultLogLevel=info",
       "-Dorg.slf4j.simpleLogger.showDateTime=true", "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
       "org.apache.zookeeper.server.quorum.QuorumPeerMain", (config_.dir / "zoo.cfg").string()});
  {
    std::ofstream log(log_file(), std::ios::app);
    log << '\n' << start_marker << " at " << now_string() << ":\n";
    for (const auto& arg : argv) log << "  " << arg << '\n';
    log << "===\n";
  }
  auto c = std::make_shared<ChildProcess>(argv, log_file());
  std::lock_guard lock(state_mutex_);
  child_ = std::move(c);
}

std::string ServerInstance::log_tail() const {
  std::ifstream in(log_file(), std::ios::binary);
  if (!in) return "\n(no server log at " + log_file().string() + ")";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  const std::streamoff from = std::max<std::streamoff>(0, size - 64 * 1024);
  in.seekg(from);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (const auto marker = text.rfind(start_marker); marker != std::string::npos) {
    const auto after = text.find("===\n", marker + start_marker.size());
    text.erase(0, after == std::string::npos ? marker : after + 4);
  }
  // Keep the last 40 lines.
  std::size_t pos = text.size();
  if (pos > 0 && text.back() == '\n') --pos;
  for (int lines = 0; lines < 40 && pos != std::string::npos && pos > 0; ++lines)
    pos = text.rfind('\n', pos - 1);
  if (pos != std::string::npos && pos > 0) text.erase(0, pos + 1);
  return "\n--- last lines of " + log_file().string() + " ---\n" + text + (text.ends_with('\n') ? "" : "\n") +
         "--- end of log ---";
}

void ServerInstance::wait_until_answering(Clock::time_point deadline, bool serving) {
  auto c = child();
  if (!c) throw TestingError(describe(false) + " was never started");
  bool answered = false;
  for (auto pause = milliseconds{10};; pause = std::min(pause * 2, milliseconds{100})) {
    if (!c->running()) {
      const std::string tail = log_tail();
      const bool in_use = tail.find("Address already in use") != std::string::npos;
      std::string message = describe() + " " + c->describe_exit() + " during start-up";
      if (in_use) {
        message += ": a port it needs is already in use (BindException)";
        throw PortInUseError(message + tail);
      }
      throw TestingError(message + tail);
    }
    auto left = std::clamp(std::chrono::duration_cast<milliseconds>(deadline - Clock::now()), milliseconds{0},
                           milliseconds{1000});
    // A TLS probe runs openssl, and a fresh JVM takes up to about 1 s for its first TLS handshake.
    const auto tls_left = std::max(left, milliseconds{3000});
    if (tls_ && config_.client_port == 0) left = tls_left;
    try {
      // `ruok` is answered as soon as the port is open; `srvr` tells whether requests are served yet.
      answered = answered || four_letter_word("ruok", left) == "imok";
      // With both ports, also one answer over TLS: the first TLS handshake of a fresh JVM is the slow one.
      if (answered && (!serving || !mode(left).empty()) &&
          (!tls_ || config_.client_port == 0 || tls_ruok(tls_left)))
        return;
    } catch (const TestingError&) {
      // not listening yet
    }
    if (Clock::now() >= deadline) {
      c->kill_and_wait();
      throw TestingError(
          describe() + (answered ? " answered 'ruok' but did not serve requests" : " did not answer 'ruok'") +
          " within the start timeout of " + std::to_string(start_timeout_.count()) + " ms; it was killed" +
          log_tail());
    }
    std::this_thread::sleep_for(
        std::min(pause, std::chrono::duration_cast<milliseconds>(deadline - Clock::now())));
  }
}

void ServerInstance::start() {
  if (is_running()) return;
  launch();
  wait_until_answering(Clock::now() + start_timeout_, config_.peers.empty());
}

void ServerInstance::stop() {
  std::lock_guard control(control_mutex_);
  auto c = child();
  if (!c || !c->signal(SIGTERM)) return;
  c->signal(SIGCONT);  // a paused JVM must run to act on SIGTERM
  if (!c->wait_for_exit(stop_grace)) return c->kill_and_wait();
  if (cds_) cds_->exited_cleanly();
}

void ServerInstance::kill() {
  std::lock_guard control(control_mutex_);
  if (auto c = child()) c->kill_and_wait();
}

void ServerInstance::wait_for_state(bool stopped) const {
  auto c = child();
  const auto deadline = Clock::now() + std::chrono::seconds{2};
  while (c && c->running() && (proc_state(c->pid()) == 'T') != stopped && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds{1});
  }
}

void ServerInstance::pause() {
  std::lock_guard control(control_mutex_);
  auto c = child();
  if (!c || !c->signal(SIGSTOP))
    throw TestingError("cannot pause " + describe(false) + ": it is not running");
  wait_for_state(true);
}

void ServerInstance::resume() {
  std::lock_guard control(control_mutex_);
  auto c = child();
  if (!c || !c->signal(SIGCONT))
    throw TestingError("cannot resume " + describe(false) + ": it is not running");
  wait_for_state(false);
}

bool ServerInstance::is_running() const {
  auto c = child();
  return c && c->running();
}

int ServerInstance::pid() const {
  auto c = child();
  return c && c->running() ? c->pid() : -1;
}

std::string ServerInstance::four_letter_word(std::string_view cmd, milliseconds timeout) const {
  if (config_.client_port == 0 && tls_)
    return tls_four_letter_word(config_.secure_port, cmd, tls_->probe, config_.dir, timeout);
  return detail::four_letter_word(config_.client_port, cmd, timeout);
}

bool ServerInstance::tls_ruok(milliseconds timeout) const {
  try {
    return tls_four_letter_word(config_.secure_port, "ruok", tls_->probe, config_.dir, timeout) == "imok";
  } catch (const TestingError&) {
    return false;
  }
}

std::string ServerInstance::mode(milliseconds timeout) const {
  std::string answer;
  try {
    answer = four_letter_word("srvr", timeout);
  } catch (const TestingError&) {
    return {};
  }
  constexpr std::string_view key = "Mode: ";
  const auto pos = answer.find(key);
  if (pos == std::string::npos) return {};
  const auto end = answer.find('\n', pos);
  return answer.substr(pos + key.size(),
                       end == std::string::npos ? std::string::npos : end - pos - key.size());
}

}  // namespace zkr::testing::detail
