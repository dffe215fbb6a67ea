#include <algorithm>
#include <fstream>
#include <random>
#include <thread>
#include <zkr/testing/server_options.hpp>
#include <zkr/testing/test_kdc.hpp>

#include "child_process.hpp"
#include "net.hpp"
#include "run_tool.hpp"
#include "scratch_dir.hpp"

namespace zkr::testing {
namespace fs = std::filesystem;
namespace {

// MIT's programs live in /usr/sbin, which a test's $PATH may lack.
fs::path kerberos_program(const std::string& name) {
  for (const char* dir : {"/usr/sbin", "/usr/local/sbin", "/usr/bin"}) {
    if (detail::is_executable_file(fs::path(dir) / name)) return fs::path(dir) / name;
  }
  if (auto found = detail::find_on_path(name)) return *found;
  throw TestingError(name +
                     " not found: install MIT Kerberos's KDC (apt-get install krb5-kdc krb5-admin-server)");
}

bool valid_principal_name(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.back() == '/') return false;
  int slashes = 0;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '_' || c == '.' || (c == '/' && ++slashes == 1);
    if (!ok) return false;
  }
  return true;
}

std::string random_password() {
  std::random_device rd;
  std::string pw;
  for (int i = 0; i < 32; ++i) pw += "abcdefghijklmnopqrstuvwxyz0123456789"[rd() % 36];
  return pw;
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.flush();
  if (!out) throw TestingError("cannot write " + path.string());
}

// AES with SHA-1 only: what MIT's library, Java 17 and Cyrus's plugin all take without further settings.
constexpr const char* enctypes = "aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96";

}  // namespace

TestKdc::TestKdc(std::string realm, std::optional<fs::path> dir)
    : realm_(std::move(realm)), dir_(std::make_unique<detail::ScratchDir>(dir, "kdc")), port_(free_port()) {
  const fs::path d = dir_->path();
  const std::string kdc = "127.0.0.1:" + std::to_string(port_);
  write(krb5_conf(), "[libdefaults]\n  default_realm = " + realm_ +
                         "\n  dns_lookup_kdc = false\n  dns_lookup_realm = false\n  rdns = false\n"
                         "  dns_canonicalize_hostname = false\n  udp_preference_limit = 1\n"
                         "  default_tkt_enctypes = " +
                         enctypes + "\n  default_tgs_enctypes = " + enctypes +
                         "\n  permitted_enctypes = " + enctypes + "\n  ticket_lifetime = 1h\n\n[realms]\n  " +
                         realm_ + " = {\n    kdc = " + kdc +
                         "\n  }\n\n[domain_realm]\n  localhost = " + realm_ + "\n");
  write(d / "kdc.conf", "[kdcdefaults]\n  kdc_ports = " + std::to_string(port_) +
                            "\n  kdc_tcp_ports = " + std::to_string(port_) + "\n\n[realms]\n  " + realm_ +
                            " = {\n    database_name = " + (d / "principal").string() +
                            "\n    key_stash_file = " + (d / "stash").string() + "\n    kdc_listen = " + kdc +
                            "\n    kdc_tcp_listen = " + kdc + "\n    supported_enctypes = " +
                            "aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal\n"
                            "    max_life = 1h\n  }\n\n[logging]\n  kdc = FILE:" +
                            (d / "kdc.log").string() + "\n");
  std::string master = random_password();
  detail::run_tool({kerberos_program("kdb5_util").string(), "create", "-s", "-P", master, "-r", realm_},
                   d / "kadmin.log", "create the test realm's database", std::chrono::seconds{60},
                   {"KRB5_CONFIG=" + krb5_conf().string(), "KRB5_KDC_PROFILE=" + (d / "kdc.conf").string()});
  std::fill(master.begin(), master.end(), '\0');
  start();
}

TestKdc::~TestKdc() { stop(); }

void TestKdc::stop() noexcept {
  std::lock_guard lock(mutex_);
  if (kdc_) kdc_->kill_and_wait();
  kdc_.reset();
}

void TestKdc::start() {
  std::lock_guard lock(mutex_);
  if (kdc_ && kdc_->running()) return;
  const fs::path d = dir_->path();
  kdc_ = std::make_unique<detail::ChildProcess>(
      std::vector<std::string>{kerberos_program("krb5kdc").string(), "-n", "-r", realm_}, d / "krb5kdc.out",
      "/dev/null",
      std::vector<std::string>{"KRB5_CONFIG=" + krb5_conf().string(),
                               "KRB5_KDC_PROFILE=" + (d / "kdc.conf").string()});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds{10};
  // Listening once the port cannot be bound any more.
  while (detail::port_is_free(port_, true)) {
    if (!kdc_->running() || std::chrono::steady_clock::now() >= deadline) {
      const std::string exit = kdc_->describe_exit();
      kdc_->kill_and_wait();
      kdc_.reset();
      throw TestingError("the test KDC on 127.0.0.1:" + std::to_string(port_) + " " +
                         (exit == "is running" ? "did not listen within 10 s" : exit) + " (see " +
                         (d / "krb5kdc.out").string() + " and kdc.log there)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  }
}

void TestKdc::kadmin(const std::string& query, const std::string& what) {
  const fs::path d = dir_->path();
  detail::run_tool({kerberos_program("kadmin.local").string(), "-r", realm_, "-q", query}, d / "kadmin.log",
                   what, std::chrono::seconds{60},
                   {"KRB5_CONFIG=" + krb5_conf().string(), "KRB5_KDC_PROFILE=" + (d / "kdc.conf").string()});
}

fs::path TestKdc::add_principal(const std::string& name) {
  if (!valid_principal_name(name))
    throw TestingError("TestKdc::add_principal: invalid name '" + name +
                       "' (letters, digits, '-', '_', '.' and one '/')");
  std::lock_guard lock(mutex_);
  if (auto it = keytabs_.find(name); it != keytabs_.end()) return it->second;
  std::string file = name;
  std::replace(file.begin(), file.end(), '/', '_');
  const fs::path keytab = dir_->path() / (file + ".keytab");
  kadmin("addprinc -randkey " + principal(name), "add the principal " + principal(name));
  kadmin("ktadd -k " + keytab.string() + " " + principal(name), "write the keytab of " + principal(name));
  return keytabs_.emplace(name, keytab).first->second;
}

void TestKdc::remove_principal(const std::string& name) {
  if (!valid_principal_name(name))
    throw TestingError("TestKdc::remove_principal: invalid name '" + name + "'");
  std::lock_guard lock(mutex_);
  kadmin("delprinc -force " + principal(name), "delete the principal " + principal(name));
}

void TestKdc::set_ticket_life(const std::string& name, std::chrono::seconds life) {
  if (!valid_principal_name(name))
    throw TestingError("TestKdc::set_ticket_life: invalid name '" + name + "'");
  std::lock_guard lock(mutex_);
  kadmin("modprinc -maxlife \"" + std::to_string(life.count()) + " seconds\" " + principal(name),
         "cap the ticket life of " + principal(name));
}

std::size_t TestKdc::initial_tickets_issued(const std::string& name) const {
  // krb5kdc logs each AS exchange as "AS_REQ (...) <address>: ISSUE: ..., <client> for krbtgt/<realm>@...".
  std::ifstream log(dir_->path() / "kdc.log");
  const std::string issued = " " + principal(name) + " for krbtgt/";
  std::size_t n = 0;
  for (std::string line; std::getline(log, line);)
    if (line.find("AS_REQ") != std::string::npos && line.find("ISSUE") != std::string::npos &&
        line.find(issued) != std::string::npos)
      ++n;
  return n;
}

std::string TestKdc::principal(const std::string& name) const { return name + "@" + realm_; }

SaslServerOptions TestKdc::server_options(const std::string& host) {
  const std::string name = "zookeeper/" + host;
  const auto keytab = add_principal(name);
  SaslServerOptions options;
  options.kerberos =
      KerberosServerOptions{.krb5_conf = krb5_conf(), .keytab = keytab, .principal = principal(name)};
  return options;
}

fs::path TestKdc::krb5_conf() const { return dir_->path() / "krb5.conf"; }
const fs::path& TestKdc::dir() const { return dir_->path(); }

}  // namespace zkr::testing
