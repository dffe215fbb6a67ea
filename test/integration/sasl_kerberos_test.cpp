// SASL with Kerberos (GSSAPI) against a real ZooKeeper server that logs in with its keytab and a real KDC
// (zkr::testing::TestKdc, one per test process), over both transports (issue 41; docs/sasl.md): the native
// one, and the single-threaded C client with its own ticket cache on its I/O thread. The realm reaches the
// client's MIT library through $KRB5_CONFIG, set once here. Where the transport has no GSSAPI, its refusal at
// start() is what is checked.

#include <spdlog/sinks/ostream_sink.h>

#include <algorithm>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>
#include <zkr/test/scoped_env.hpp>
#include <zkr/testing/server_options.hpp>
#include <zkr/testing/test_certificates.hpp>
#include <zkr/testing/test_kdc.hpp>
#include <zkr/testing/testing_cluster.hpp>

#include "fixture.hpp"
#include "sasl_support.hpp"
#include "tls_support.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

zkr::testing::TestKdc& kdc() { return test_realm(); }

/// Whether this run's transport has GSSAPI; if not, what start() says is checked (no KDC, no server), and
/// the case ends.
bool gssapi_or_refusal_checked() {
  if (zkr::sasl_supported(SaslMechanism::gssapi)) return true;
  SaslConfig sasl;
  sasl.mechanism = SaslMechanism::gssapi;
  sasl.principal = "alice@ZKR.TEST";
  sasl.keytab = "/nonexistent/alice.keytab";
  return refusal_checked(sasl, "GSSAPI");
}

/// A Kerberos server (principal zookeeper/localhost) and its clients, dialled as localhost.
struct KerberosServer {
  zkr::testing::TestingServer server{options()};

  static zkr::testing::ServerOptions options() {
    zkr::testing::ServerOptions o;
    o.sasl = kdc().server_options("localhost");
    return o;
  }
  std::string localhost() const { return "localhost:" + std::to_string(server.port()); }
  static SaslConfig settings(const std::string& name) {
    SaslConfig s;
    s.mechanism = SaslMechanism::gssapi;
    s.principal = kdc().principal(name);
    s.keytab = kdc().add_principal(name).string();
    return s;
  }
  ClientConfig config(SaslConfig sasl, ClientOptions o = {}) const {
    ClientConfig c = client_config(localhost(), o);
    c.sasl = std::move(sasl);
    return c;
  }
};

bool is(CuratorFramework& client, const std::string& principal) {
  return authenticated_as(client, principal);
}

/// A client that must not get a session: it gives up with `expected`, within its connection bound, and the
/// log names the cause.
void refused(const ClientConfig& base, error_code expected) {
  std::ostringstream out;
  auto logger =
      std::make_shared<spdlog::logger>("krb-log", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger->set_level(spdlog::level::debug);
  ClientConfig c = base;
  c.logger = logger;
  CuratorFramework client(c);
  client.start();
  CHECK_FALSE(client.block_until_connected(15s));
  error_code ec;
  (void)client.exists("/", {}, ec);
  CHECK(ec == expected);
  logger->flush();
  INFO(out.str());
  CHECK(out.str().find("SASL authentication failed") != std::string::npos);
}

/// A KDC that never answers: it accepts TCP connections (and takes UDP datagrams) on a port of 127.0.0.1 and
/// holds them until destroyed, when it closes them all (a request still waiting then fails at once).
class SilentKdc {
 public:
  SilentKdc() {
    udp_.open(boost::asio::ip::udp::v4());
    udp_.bind({boost::asio::ip::make_address("127.0.0.1"), acceptor_.local_endpoint().port()});
    accept();
    thread_ = std::thread([this] { ioc_.run(); });
  }
  ~SilentKdc() {
    boost::asio::post(ioc_, [this] {
      acceptor_.close();
      udp_.close();
      held_.clear();
    });
    work_.reset();
    thread_.join();
  }
  /// A krb5.conf of the test realm whose KDC is this one.
  std::filesystem::path krb5_conf(const std::filesystem::path& dir) const {
    std::ifstream in(kdc().krb5_conf());
    std::stringstream conf;
    conf << in.rdbuf();
    std::string text = conf.str();
    const std::string real = "kdc = 127.0.0.1:" + std::to_string(kdc().port());
    text.replace(text.find(real), real.size(), "kdc = 127.0.0.1:" + std::to_string(port()));
    const auto file = dir / "silent-krb5.conf";
    std::ofstream(file) << text;
    return file;
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

 private:
  void accept() {
    acceptor_.async_accept([this](boost::system::error_code ec, boost::asio::ip::tcp::socket s) {
      if (ec) return;
      held_.push_back(std::make_unique<boost::asio::ip::tcp::socket>(std::move(s)));
      accept();
    });
  }
  boost::asio::io_context ioc_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{
      ioc_.get_executor()};
  boost::asio::ip::tcp::acceptor acceptor_{ioc_, {boost::asio::ip::make_address("127.0.0.1"), 0}};
  boost::asio::ip::udp::socket udp_{ioc_};
  std::vector<std::unique_ptr<boost::asio::ip::tcp::socket>> held_;
  std::thread thread_;
};

}  // namespace

TEST_CASE("sasl kerberos: a client authenticates with its keytab and a sasl ACL admits only its principal",
          "[sasl][kerberos]") {
  if (!gssapi_or_refusal_checked()) return;
  KerberosServer f;
  ClientOptions o;
  o.session_timeout = 30s;  // both sessions outlive the restart below
  const auto alice_principal = kdc().principal("alice");
  auto alice = connected(f.config(KerberosServer::settings("alice"), o));
  CHECK(is(*alice, alice_principal));
  alice->create("/owned",
                {.acl = AclList{Acl{perms::all, {"sasl", alice_principal}}}, .data = std::string("mine")});
  CHECK(alice->get_data("/owned").data == "mine");

  // Another principal in the same process, with its own credentials: authenticated as itself, refused there.
  // Dialled by address, it names the server's host itself (SaslConfig::server_host).
  auto bob_settings = KerberosServer::settings("bob");
  bob_settings.server_host = "localhost";
  ClientConfig bob_config = client_config(f.server.connect_string(), o);
  bob_config.sasl = bob_settings;
  auto bob = connected(bob_config);
  CHECK(is(*bob, kdc().principal("bob")));
  error_code ec;
  (void)bob->get_data("/owned", {}, ec);
  CHECK(ec == zk_errc::no_auth);
  CHECK(alice->get_data("/owned").data == "mine");

  // Both reconnect at once after a restart, each exchange with its own client's tickets (on the C client,
  // each I/O thread's default cache is its client's): each is itself again, never the other.
  f.server.restart();
  CHECK(alice->get_data("/owned").data == "mine");
  (void)bob->get_data("/owned", {}, ec);
  CHECK(ec == zk_errc::no_auth);
  CHECK(is(*bob, kdc().principal("bob")));
  CHECK(is(*alice, alice_principal));
}

TEST_CASE("sasl kerberos: two principals of one process take turns on one lock and one leadership",
          "[sasl][kerberos]") {
  if (!gssapi_or_refusal_checked()) return;
  KerberosServer f;
  auto alice = connected(f.config(KerberosServer::settings("lock-alice")));
  auto bob = connected(f.config(KerberosServer::settings("lock-bob")));
  InterProcessMutex alice_lock(*alice, "/krb/lock");
  InterProcessMutex bob_lock(*bob, "/krb/lock");
  alice_lock.acquire();
  CHECK_FALSE(bob_lock.acquire(500ms));
  alice_lock.release();
  CHECK(bob_lock.acquire(10s));
  bob_lock.release();

  LeaderLatch alice_latch(*alice, "/krb/leader", "alice");
  alice_latch.start();
  CHECK(alice_latch.await(10s));
  LeaderLatch bob_latch(*bob, "/krb/leader", "bob");
  bob_latch.start();
  CHECK_FALSE(bob_latch.await(500ms));
  alice_latch.close();
  CHECK(bob_latch.await(10s));
  CHECK(is(*alice, kdc().principal("lock-alice")));
  CHECK(is(*bob, kdc().principal("lock-bob")));
}

TEST_CASE(
    "sasl kerberos: a wrong keytab is refused at start, a principal or host the KDC does not know ends "
    "the client with sasl_auth_failed",
    "[sasl][kerberos]") {
  if (!gssapi_or_refusal_checked()) return;
  KerberosServer f;
  // At start(): no principal, no keytab, a keytab without the principal's keys (another principal's).
  auto carol = KerberosServer::settings("carol");
  std::vector<SaslConfig> bad(3, carol);
  bad[0].principal.clear();
  bad[1].keytab = (kdc().dir() / "no-such.keytab").string();
  bad[2].keytab = kdc().add_principal("dave").string();
  for (const auto& settings : bad) {
    CuratorFramework client(f.config(settings, quick()));
    error_code ec;
    client.start(ec);
    CHECK(ec == client_errc::sasl_config_error);
  }
  // At the connection: a principal the KDC no longer knows (its keytab still holds keys).
  auto erin = KerberosServer::settings("erin");
  kdc().remove_principal("erin");
  refused(f.config(erin, quick()), client_errc::sasl_auth_failed);
  // A server dialled by an address for which the realm has no principal (zookeeper/127.0.0.1).
  ClientConfig by_address = client_config(f.server.connect_string(), quick());
  by_address.sasl = carol;
  refused(by_address, client_errc::sasl_auth_failed);
  // A KDC that is down: no ticket to be had.
  auto frank = KerberosServer::settings("frank");
  kdc().stop();
  refused(f.config(frank, quick()), client_errc::sasl_auth_failed);
  kdc().start();
}

TEST_CASE("sasl kerberos: the session is authenticated again after a server restart", "[sasl][kerberos]") {
  if (!gssapi_or_refusal_checked()) return;
  KerberosServer f;
  ClientOptions o;
  o.session_timeout = 30s;
  const auto principal = kdc().principal("alice");
  auto alice = connected(f.config(KerberosServer::settings("alice"), o));
  alice->create("/owned",
                {.acl = AclList{Acl{perms::all, {"sasl", principal}}}, .data = std::string("mine")});
  const auto session = alice->session_id();
  f.server.restart();
  // The retry loop waits for the reconnection; the read needs the id again (the ACL admits only alice).
  CHECK(alice->get_data("/owned").data == "mine");
  CHECK(alice->session_id() == session);
  CHECK(is(*alice, principal));
}

TEST_CASE("sasl kerberos: a session moved to another member of the ensemble is authenticated there",
          "[sasl][kerberos][cluster]") {
  if (!gssapi_or_refusal_checked()) return;
  zkr::testing::TestingCluster cluster(3, KerberosServer::options());
  // Every member dialled as localhost (one host, three ports): each is zookeeper/localhost, the name the
  // client asks a ticket for without server_host, on either transport.
  std::string connect;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    auto member = cluster.member_connect_string(i);
    member.replace(0, member.find(':'), "localhost");
    connect += (connect.empty() ? "" : ",") + member;
  }
  ClientOptions o;
  o.session_timeout = 30s;
  ClientConfig c = client_config(connect, o);
  const auto settings = KerberosServer::settings("moving");
  c.sasl = settings;
  auto client = connected(c);
  client->create(
      "/owned", {.acl = AclList{Acl{perms::all, {"sasl", settings.principal}}}, .data = std::string("mine")});
  move_across_members(cluster, *client, "/owned", "mine");
  CHECK(is(*client, settings.principal));
}

TEST_CASE("sasl kerberos: tickets that expire while connected are got again from the keytab at a reconnect",
          "[sasl][kerberos]") {
  if (!gssapi_or_refusal_checked()) return;
  KerberosServer f;
  ClientOptions o;
  o.session_timeout = 30s;
  const std::string name = "short-lived";
  const auto principal = kdc().principal(name);
  const auto settings = KerberosServer::settings(name);
  constexpr auto life = 6s;
  kdc().set_ticket_life(name, life);
  auto client = connected(f.config(settings, o));
  client->create("/expiring",
                 {.acl = AclList{Acl{perms::all, {"sasl", principal}}}, .data = std::string("kept")});
  const auto logins = kdc().initial_tickets_issued(name);
  CHECK(logins >= 1);
  const auto session = client->session_id();

  // Past the tickets' end the session goes on: the server checked them once, at the exchange.
  std::this_thread::sleep_for(life + 2s);
  CHECK(client->get_data("/expiring").data == "kept");

  // A new connection needs a new exchange, and so new tickets: the client's MIT library logs in again with
  // the keytab, and the session keeps its identity.
  f.server.restart();
  CHECK(client->get_data("/expiring").data == "kept");
  CHECK(client->session_id() == session);
  CHECK(is(*client, principal));
  CHECK(kdc().initial_tickets_issued(name) > logins);
}

TEST_CASE("sasl kerberos: a KDC that never answers holds no client thread: the client still closes at once",
          "[sasl][kerberos]") {
  if (!gssapi_or_refusal_checked()) return;
  KerberosServer f;
  const auto settings = KerberosServer::settings("patient");  // made in the real realm, before the switch
  SilentKdc silent;
  // MIT's library reads $KRB5_CONFIG afresh for each request: from here on the realm's KDC is the silent one,
  // which holds a ticket request for about 27 s before MIT gives up.
  ScopedEnv realm("KRB5_CONFIG", silent.krb5_conf(f.server.data_dir()).string());
  auto client = std::make_unique<CuratorFramework>(f.config(settings, quick()));
  client->start();
  CHECK_FALSE(client->block_until_connected(2s));
  // close() runs on the client's I/O thread: had the ticket request been made there, it would wait for it.
  const auto t0 = std::chrono::steady_clock::now();
  client->close();
  const auto closing = std::chrono::steady_clock::now() - t0;
  CHECK(closing < 10s);
}

TEST_CASE("sasl kerberos: over TLS, on the server's secure port only", "[sasl][kerberos]") {
  if (!gssapi_or_refusal_checked() || !tls_available()) return;
  zkr::testing::TestCertificates certs;
  const auto settings = KerberosServer::settings("tls-alice");
  if (*default_transport() == Transport::c_client) {
    // The C API cannot combine them: refused before any server is dialled.
    ClientConfig c = client_config("localhost:2181", quick());
    c.tls = tls_settings(certs.client("client-a"));
    c.sasl = settings;
    CuratorFramework client(c);
    error_code ec;
    client.start(ec);
    CHECK(ec == client_errc::sasl_unsupported);
    return;
  }
  zkr::testing::ServerOptions so = KerberosServer::options();
  so.tls = certs.server_options();
  so.tls->plain_port = false;
  zkr::testing::TestingServer server(so);
  // Dialled as localhost, the name in the server's certificate and in its principal (zookeeper/localhost).
  ClientConfig c = client_config("localhost:" + std::to_string(server.secure_port()), {});
  c.tls = tls_settings(certs.client("client-a"));
  c.sasl = settings;
  auto alice = connected(c);
  CHECK(is(*alice, settings.principal));
  alice->create("/owned",
                {.acl = AclList{Acl{perms::all, {"sasl", settings.principal}}}, .data = std::string("mine")});
  CHECK(alice->get_data("/owned").data == "mine");
}
