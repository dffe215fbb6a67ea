// zkr_bench_server: the benchmark's ZooKeeper, from the project's own test support (zkrecipes::testing), so
// that bench/run_bench.py keeps no server lifecycle or certificate authority of its own.
//
//   zkr_bench_server [--servers N] [--port P] [--data-dir DIR] [--tick-ms MS] [--force-sync yes|no] [--tls]
//                    [--sasl digest-md5|gssapi] [--start-timeout-s S]
//
// Starts a TestingServer (--servers 1, the default) or a TestingCluster of N members on 127.0.0.1, set up as
// the benchmark's server always was: tickTime 2000 ms, forceSync=yes, ZooKeeper's own container check
// interval and the JVM's default flags. With --tls the servers also open a secureClientPort, with a
// TestCertificates PKI (made in DIR/pki when --data-dir is given) and one client certificate ("bench", an
// encrypted PEM key and a PKCS12 store) for every TLS client of the run. With --sasl the servers offer SASL
// without requiring it (SaslServerOptions::required = false: plain and SASL clients of one run share them):
// DIGEST-MD5 with one user "bench" (a random password, in a file), or GSSAPI with a TestKdc realm of its own,
// the server's principal zookeeper/localhost and a client principal "bench" with its keytab. Once every
// server serves, prints one JSON line on stdout:
//
//   {"connect":"127.0.0.1:P[,...]","ports":[P,...],"pids":[...],"data_dir":DIR,"logs":[...],
//    "secure_connect":...,"secure_ports":[...],                                   (--tls only)
//    "tls":{"ca","cert","key","key_password","key_store","key_store_password",    (--tls only)
//           "trust_store","trust_store_password"},
//    "sasl":{"mechanism","user","password_file" | "principal","keytab","krb5_conf","server_host"}} (--sasl
//    only)
//
// then stops the servers (SIGTERM, SIGKILL after a few seconds) and exits 0 at the end of its stdin or on
// SIGTERM, SIGINT or SIGHUP. The servers also die with this process (the fixture's PR_SET_PDEATHSIG).
// Exit status: 0 ok; 1 a server failed to start or stop (message on stderr); 2 usage, or no Java or no
// ZooKeeper jars, openssl or keytool on this machine.

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <zkr/testing/test_certificates.hpp>
#include <zkr/testing/test_kdc.hpp>
#include <zkr/testing/testing_cluster.hpp>
#include <zkr/testing/testing_server.hpp>

#include "../driver/json.hpp"

namespace {

namespace zt = zkr::testing;
using zkr_bench::Json;
using zkr_bench::JsonArray;
using zkr_bench::JsonObject;

constexpr const char* usage =
    "usage: zkr_bench_server [--servers N] [--port P] [--data-dir DIR] [--tick-ms MS] [--force-sync yes|no]\n"
    "                        [--tls] [--sasl digest-md5|gssapi] [--start-timeout-s S]\n"
    "Starts the benchmark's ZooKeeper server(s), prints one JSON line (connect string, ports, TLS files),\n"
    "stops them at the end of stdin or on SIGTERM.\n";

struct Args {
  std::size_t servers = 1;
  std::uint16_t port = 0;
  std::string data_dir;
  int tick_ms = 2000;
  bool force_sync = true;
  bool tls = false;
  std::string sasl;  // "", "digest-md5" or "gssapi"
  int start_timeout_s = 60;
};

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "zkr_bench_server: " << message << "\n" << usage;
  std::exit(2);
}

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    if (k == "--help" || k == "-h") {
      std::cout << usage;
      std::exit(0);
    }
    if (k == "--tls") {
      a.tls = true;
      continue;
    }
    if (i + 1 >= argc) usage_error("missing value after " + k);
    const std::string v = argv[++i];
    auto number = [&](long lo, long hi) {
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (v.empty() || *end != '\0' || n < lo || n > hi) usage_error("bad number for " + k + ": " + v);
      return n;
    };
    if (k == "--servers")
      a.servers = std::size_t(number(1, 9));
    else if (k == "--port")
      a.port = std::uint16_t(number(0, 65535));
    else if (k == "--data-dir")
      a.data_dir = v;
    else if (k == "--tick-ms")
      a.tick_ms = int(number(1, 60000));
    else if (k == "--start-timeout-s")
      a.start_timeout_s = int(number(1, 3600));
    else if (k == "--sasl") {
      if (v != "digest-md5" && v != "gssapi") usage_error("--sasl: digest-md5 or gssapi, not " + v);
      a.sasl = v;
    } else if (k == "--force-sync") {
      if (v != "yes" && v != "no") usage_error("--force-sync: yes or no, not " + v);
      a.force_sync = v == "yes";
    } else
      usage_error("unknown option " + k);
  }
  return a;
}

// The end of stdin or a termination signal: the self-pipe the handler writes to.
int stop_pipe[2] = {-1, -1};
extern "C" void on_signal(int) {
  const char c = 's';
  (void)!::write(stop_pipe[1], &c, 1);
}

void wait_for_stop() {
  pollfd fds[2] = {{0, POLLIN, 0}, {stop_pipe[0], POLLIN, 0}};
  for (;;) {
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents) return;
    if (fds[0].revents) {
      char buf[256];
      const ssize_t n = ::read(0, buf, sizeof buf);
      if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return;
    }
  }
}

/// The servers of the run: one TestingServer, or a TestingCluster.
struct Servers {
  std::unique_ptr<zt::TestingServer> server;
  std::unique_ptr<zt::TestingCluster> cluster;

  std::size_t size() const { return server ? 1 : cluster->size(); }
  std::uint16_t port(std::size_t i) const { return server ? server->port() : cluster->member_port(i); }
  std::uint16_t secure_port(std::size_t i) const {
    return server ? server->secure_port() : cluster->member_secure_port(i);
  }
  int pid(std::size_t i) const { return server ? server->pid() : cluster->pid(i); }
  std::filesystem::path dir(std::size_t i) const {
    return server ? server->data_dir() : cluster->member_data_dir(i);
  }
  std::filesystem::path root() const { return server ? server->data_dir() : cluster->data_dir(); }
  void stop() {
    if (server)
      server->stop();
    else
      cluster->stop_all();
  }
};

std::string hosts(const Servers& s, std::uint16_t (Servers::*port)(std::size_t) const) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i)
    out += (i ? "," : "") + std::string("127.0.0.1:") + std::to_string((s.*port)(i));
  return out;
}

JsonObject describe(const Servers& s, const zt::TlsClientFiles* client,
                    const zt::TlsServerOptions* server_tls) {
  JsonArray ports, secure_ports, pids, logs;
  for (std::size_t i = 0; i < s.size(); ++i) {
    ports.emplace_back(int(s.port(i)));
    secure_ports.emplace_back(int(s.secure_port(i)));
    pids.emplace_back(s.pid(i));
    logs.emplace_back((s.dir(i) / "server.log").string());
  }
  JsonObject out{{"connect", hosts(s, &Servers::port)},
                 {"ports", std::move(ports)},
                 {"pids", std::move(pids)},
                 {"data_dir", s.root().string()},
                 {"logs", std::move(logs)}};
  if (client) {
    out.emplace_back("secure_connect", hosts(s, &Servers::secure_port));
    out.emplace_back("secure_ports", std::move(secure_ports));
    out.emplace_back("tls", JsonObject{{"ca", client->ca.string()},
                                       {"cert", client->certificate.string()},
                                       {"key", client->key.string()},
                                       {"key_password", client->key_password},
                                       {"key_store", client->key_store.string()},
                                       {"key_store_password", client->key_store_password},
                                       {"trust_store", server_tls->trust_store.string()},
                                       {"trust_store_password", server_tls->store_password}});
  }
  return out;
}

int run(const Args& a) {
  zt::ServerOptions options;
  options.tick_time = std::chrono::milliseconds(a.tick_ms);
  options.force_sync = a.force_sync;
  options.container_check_interval = std::chrono::minutes(1);  // ZooKeeper's own default
  options.jvm_flags = {};  // the JVM's defaults, as the benchmark always ran
  options.start_timeout = std::chrono::seconds(a.start_timeout_s);
  options.port = a.port;
  if (!a.data_dir.empty()) options.data_dir = a.data_dir;

  std::unique_ptr<zt::TestCertificates> pki;
  zt::TlsClientFiles client;
  if (a.tls) {
    pki = std::make_unique<zt::TestCertificates>(
        a.data_dir.empty() ? std::nullopt : std::optional<std::filesystem::path>(a.data_dir + "/pki"));
    client = pki->client("bench");
    options.tls = pki->server_options();
  }
  std::unique_ptr<zt::TestKdc> kdc;  // outlives the servers
  JsonObject sasl;
  std::string password;
  if (a.sasl == "gssapi") {
    kdc = std::make_unique<zt::TestKdc>();
    options.sasl = kdc->server_options("localhost");
    sasl = {{"mechanism", a.sasl},
            {"principal", kdc->principal("bench")},
            {"keytab", kdc->add_principal("bench").string()},
            {"krb5_conf", kdc->krb5_conf().string()},
            {"server_host", "localhost"}};
  } else if (a.sasl == "digest-md5") {
    std::random_device rd;
    for (int i = 0; i < 24; ++i) password += "0123456789abcdef"[rd() % 16];
    options.sasl = zt::SaslServerOptions{.digest_users = {{"bench", password}}};
  }
  if (options.sasl) options.sasl->required = false;
  Servers servers;
  if (a.servers == 1)
    servers.server = std::make_unique<zt::TestingServer>(options);
  else
    servers.cluster = std::make_unique<zt::TestingCluster>(a.servers, options);
  if (a.sasl == "digest-md5") {
    const auto file = servers.root() / "bench-sasl-password";  // removed with the servers' data
    std::ofstream(file) << password;
    sasl = {{"mechanism", a.sasl}, {"user", "bench"}, {"password_file", file.string()}};
  }

  JsonObject out = describe(servers, a.tls ? &client : nullptr, a.tls ? &*options.tls : nullptr);
  if (!a.sasl.empty()) out.emplace_back("sasl", std::move(sasl));
  std::ostringstream line;
  zkr_bench::write_json(line, Json(std::move(out)));
  std::cout << line.str() << std::endl;

  wait_for_stop();
  servers.stop();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args args = parse(argc, argv);
  if (::pipe2(stop_pipe, O_CLOEXEC) != 0) {
    std::cerr << "zkr_bench_server: pipe: " << std::strerror(errno) << std::endl;
    return 1;
  }
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) ::sigaction(sig, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
  try {
    return run(args);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    std::cerr << "zkr_bench_server: " << what << std::endl;
    // What this machine lacks (Java, the ZooKeeper jars, openssl, keytool) exits 2: the runner reports a
    // skip.
    for (const char* missing :
         {"Java not found", "ZooKeeper server jars not found", "openssl not found", "keytool not found"}) {
      if (what.rfind(missing, 0) == 0) return 2;
    }
    return 1;
  }
}
