// SASL to an ensemble that requires it (issue 41; docs/sasl.md): DIGEST-MD5 over the native transport
// against a real server that enforces SASL (`enforce.auth.schemes=sasl`, users from a JAAS `Server`
// section), and every refusal as a typed error. Over the C client, which has no SASL in this build, the
// refusal at start() is what is checked.

#include <spdlog/sinks/ostream_sink.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>
#include <zkr/testing/server_options.hpp>
#include <zkr/testing/testing_cluster.hpp>

#include "checker.hpp"
#include "curator_peer.hpp"
#include "fixture.hpp"
#include "interop_support.hpp"
#include "sasl_support.hpp"
#include "tls_support.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

const std::string alice_password = "Alice-Secret-Pw-41";
const std::string bob_password = "Bob-Secret-Pw-41";

/// One SASL-enforcing server per test case, users alice and bob, and their password files in its directory.
struct SaslServer {
  zkr::testing::TestingServer server{options()};

  static zkr::testing::ServerOptions options() {
    zkr::testing::ServerOptions o;
    o.sasl = zkr::testing::SaslServerOptions{{{"alice", alice_password}, {"bob", bob_password}}};
    return o;
  }
  /// A file holding `content` (with a trailing newline, as an editor leaves it).
  std::string password_file(const std::string& name, const std::string& content) const {
    const auto path = server.data_dir() / (name + ".password");
    std::ofstream(path) << content << '\n';
    return path.string();
  }
  SaslConfig settings(const std::string& user, const std::string& password) const {
    SaslConfig s;
    s.user = user;
    s.password_file =
        password_file(user + "-" + std::to_string(std::hash<std::string>{}(password)), password);
    return s;
  }
  ClientConfig config(SaslConfig sasl, ClientOptions o = {}) const {
    ClientConfig c = client_config(server.connect_string(), o);
    c.sasl = std::move(sasl);
    return c;
  }
};

/// Whether this run's transport has SASL; if not, what start() says is checked (before any server is
/// started: the transport is refused first), and the case ends.
bool sasl_or_refusal_checked() {
  if (zkr::sasl_supported()) return true;
  SaslConfig sasl;
  sasl.user = "alice";
  sasl.password_file = "/nonexistent/alice.password";
  return refusal_checked(sasl, "SASL");
}

/// A TCP relay to a server that passes every byte from the client, but of the server's only its answer to the
/// session handshake (the first frame): the SASL exchange then waits for an answer that never comes.
class SaslSilencer {
 public:
  explicit SaslSilencer(std::uint16_t target) : target_(boost::asio::ip::make_address("127.0.0.1"), target) {
    accept();
    thread_ = std::thread([this] { ioc_.run(); });
  }
  ~SaslSilencer() {
    ioc_.stop();
    thread_.join();
  }
  std::string connect_string() const {
    return "127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
  }
  std::atomic<int> connections{0};

 private:
  using tcp = boost::asio::ip::tcp;
  struct Pair {
    explicit Pair(boost::asio::io_context& ioc) : in(ioc), out(ioc) {}
    tcp::socket in, out;
    std::array<char, 4096> up{}, down{};
    std::size_t down_left = 4;  // the server's bytes still to pass: its first frame's length, then the frame
    bool length_known = false;
    std::array<unsigned char, 4> length{};
  };
  void accept() {
    auto p = std::make_shared<Pair>(ioc_);
    acceptor_.async_accept(p->in, [this, p](boost::system::error_code ec) {
      if (ec) return;
      ++connections;
      boost::system::error_code cec;
      p->out.connect(target_, cec);
      if (!cec) {
        pump_up(p);
        pump_down(p);
      }
      accept();
    });
  }
  void pump_up(const std::shared_ptr<Pair>& p) {
    p->in.async_read_some(boost::asio::buffer(p->up), [this, p](boost::system::error_code ec, std::size_t n) {
      if (ec) return p->out.close();
      boost::system::error_code wec;
      boost::asio::write(p->out, boost::asio::buffer(p->up.data(), n), wec);
      if (!wec) pump_up(p);
    });
  }
  void pump_down(const std::shared_ptr<Pair>& p) {
    p->out.async_read_some(
        boost::asio::buffer(p->down), [this, p](boost::system::error_code ec, std::size_t n) {
          if (ec) return p->in.close();
          std::size_t pass = 0;
          for (std::size_t i = 0; i < n && p->down_left > 0; ++i, ++pass) {
            if (!p->length_known) p->length[4 - p->down_left] = static_cast<unsigned char>(p->down[i]);
            if (--p->down_left == 0 && !p->length_known) {
              p->length_known = true;
              p->down_left = (std::size_t(p->length[0]) << 24) | (std::size_t(p->length[1]) << 16) |
                             (std::size_t(p->length[2]) << 8) | std::size_t(p->length[3]);
            }
          }
          boost::system::error_code wec;
          if (pass > 0) boost::asio::write(p->in, boost::asio::buffer(p->down.data(), pass), wec);
          if (!wec) pump_down(p);
        });
  }
  boost::asio::io_context ioc_;
  tcp::acceptor acceptor_{ioc_, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)};
  tcp::endpoint target_;
  std::thread thread_;
};

}  // namespace

TEST_CASE("sasl: a DIGEST-MD5 client authenticates then creates nodes and takes a lock", "[sasl]") {
  if (!sasl_or_refusal_checked()) return;
  SaslServer f;
  auto client = connected(f.config(f.settings("alice", alice_password)));
  CHECK(authenticated_as(*client, "alice"));
  CHECK(client->create("/sasl/a", {.creating_parents = true, .data = std::string("x")}).path == "/sasl/a");
  CHECK(client->get_data("/sasl/a").data == "x");
  InterProcessMutex lock(*client, "/sasl/lock");
  lock.acquire();
  CHECK(lock.is_acquired_in_this_process());
  lock.release();
  CHECK_FALSE(lock.is_acquired_in_this_process());
}

TEST_CASE("sasl: a sasl ACL admits its owner and refuses another user", "[sasl]") {
  if (!sasl_or_refusal_checked()) return;
  SaslServer f;
  auto alice = connected(f.config(f.settings("alice", alice_password)));
  auto bob = connected(f.config(f.settings("bob", bob_password)));
  alice->create("/owned", {.acl = AclList{Acl{perms::all, {"sasl", "alice"}}}, .data = std::string("mine")});
  CHECK(alice->get_data("/owned").data == "mine");
  error_code ec;
  (void)bob->get_data("/owned", {}, ec);
  CHECK(ec == zk_errc::no_auth);
  (void)bob->set_data("/owned", "theirs", -1, ec);
  CHECK(ec == zk_errc::no_auth);
}

TEST_CASE(
    "sasl: a wrong password or an unknown user ends the client with sasl_auth_failed and logs no secret",
    "[sasl]") {
  if (!sasl_or_refusal_checked()) return;
  SaslServer f;
  const bool unknown_user = GENERATE(false, true);
  std::ostringstream out;
  auto logger =
      std::make_shared<spdlog::logger>("sasl-log", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger->set_level(spdlog::level::trace);
  const std::string wrong = alice_password + "-wrong";
  auto settings = unknown_user ? f.settings("mallory", wrong) : f.settings("alice", wrong);
  CuratorFramework client(f.config(settings, quick(logger)));
  client.start();
  CHECK_FALSE(client.block_until_connected(15s));
  error_code ec;
  (void)client.exists("/", {}, ec);
  CHECK(ec == client_errc::sasl_auth_failed);
  CHECK(is_session_lost(ec));
  logger->flush();
  const auto log = out.str();
  INFO(log);
  CHECK(log.find("SASL authentication failed") != std::string::npos);
  CHECK(log.find(wrong) == std::string::npos);
  CHECK(log.find(alice_password) == std::string::npos);
}

TEST_CASE("sasl: a missing password file or incomplete settings or GSSAPI are refused at start", "[sasl]") {
  if (!sasl_or_refusal_checked()) return;
  SaslServer f;
  const auto good = f.settings("alice", alice_password);
  std::vector<std::pair<SaslConfig, error_code>> cases(4, {good, client_errc::sasl_config_error});
  cases[0].first.password_file = (f.server.data_dir() / "no-such-file").string();
  cases[1].first.user.clear();
  cases[2].first.password_file.clear();
  cases[3].first.mechanism = SaslMechanism::gssapi;  // without a principal and keytab
  cases[3].second =
      sasl_supported(SaslMechanism::gssapi) ? client_errc::sasl_config_error : client_errc::sasl_unsupported;
  for (const auto& [settings, expected] : cases) {
    CuratorFramework client(f.config(settings, quick()));
    error_code ec;
    client.start(ec);
    CHECK(ec == expected);
    try {
      CuratorFramework thrower(f.config(settings, quick()));
      thrower.start();
      FAIL("start() did not throw");
    } catch (const zkr::Error& e) {
      CHECK(e.code() == expected);
    }
  }
}

TEST_CASE("sasl: a client without SASL gets no session from an enforcing server", "[sasl]") {
  if (!sasl_or_refusal_checked()) return;
  SaslServer f;
  CuratorFramework client(client_config(f.server.connect_string(), quick()));
  client.start();
  error_code ec;
  (void)client.create("/anonymous", {}, ec);
  CHECK(ec);
  // Nothing was created anonymously: an authenticated client sees no node.
  auto alice = connected(f.config(f.settings("alice", alice_password)));
  CHECK_FALSE(alice->exists("/anonymous"));
}

TEST_CASE("sasl: the session is authenticated again after a server restart", "[sasl]") {
  if (!sasl_or_refusal_checked()) return;
  SaslServer f;
  ClientOptions o;
  o.session_timeout = 30s;
  auto alice = connected(f.config(f.settings("alice", alice_password), o));
  alice->create("/owned", {.acl = AclList{Acl{perms::all, {"sasl", "alice"}}}, .data = std::string("mine")});
  const auto session = alice->session_id();
  f.server.restart();
  // The retry loop waits for the reconnection; the read needs the id again (the ACL admits only alice).
  CHECK(alice->get_data("/owned").data == "mine");
  CHECK(alice->session_id() == session);
  CHECK(authenticated_as(*alice, "alice"));
}

TEST_CASE("sasl: a session moved to another member of the ensemble is authenticated there",
          "[sasl][cluster]") {
  if (!sasl_or_refusal_checked()) return;
  zkr::testing::TestingCluster cluster(3, SaslServer::options());
  const auto password_file = cluster.data_dir() / "alice.password";
  std::ofstream(password_file) << alice_password << '\n';
  ClientOptions o;
  o.session_timeout = 30s;
  ClientConfig c = client_config(cluster.connect_string(), o);
  c.sasl = SaslConfig{};
  c.sasl->user = "alice";
  c.sasl->password_file = password_file.string();
  auto alice = connected(c);
  alice->create("/owned", {.acl = AclList{Acl{perms::all, {"sasl", "alice"}}}, .data = std::string("mine")});
  move_across_members(cluster, *alice, "/owned", "mine");
  CHECK(authenticated_as(*alice, "alice"));
}

TEST_CASE("sasl: DIGEST-MD5 over TLS, on the server's secure port only", "[sasl]") {
  if (!sasl_or_refusal_checked() || !tls_available()) return;
  if (*default_transport() == Transport::c_client) return;  // refused: the next case
  zkr::testing::TestCertificates certs;
  zkr::testing::ServerOptions so = SaslServer::options();
  so.tls = certs.server_options();
  so.tls->plain_port = false;
  zkr::testing::TestingServer server(so);
  const auto password_file = server.data_dir() / "alice.password";
  std::ofstream(password_file) << alice_password << '\n';
  ClientConfig c = client_config(server.secure_connect_string(), {});
  c.tls = tls_settings(certs.client("client-a"));
  c.sasl = SaslConfig{};
  c.sasl->user = "alice";
  c.sasl->password_file = password_file.string();
  auto alice = connected(c);
  const auto ids = alice->who_am_i();
  CHECK(std::find(ids.begin(), ids.end(), ClientIdentity{"sasl", "alice"}) != ids.end());
  alice->create("/owned", {.acl = AclList{Acl{perms::all, {"sasl", "alice"}}}, .data = std::string("mine")});
  CHECK(alice->get_data("/owned").data == "mine");
}

TEST_CASE("sasl: SASL with TLS is refused at start on the C client, which cannot combine them", "[sasl]") {
  if (*default_transport() != Transport::c_client || !sasl_supported() || !tls_available()) {
    WARN("SASL with TLS on the C client not checked: this run's transport is not a C client with both");
    return;
  }
  zkr::testing::TestCertificates certs;
  SaslServer f;
  ClientConfig c = f.config(f.settings("alice", alice_password), quick());
  c.tls = tls_settings(certs.client("client-a"));
  CuratorFramework client(c);
  error_code ec;
  client.start(ec);
  CHECK(ec == client_errc::sasl_unsupported);
  try {
    CuratorFramework thrower(c);
    thrower.start();
    FAIL("start() did not throw");
  } catch (const zkr::Error& e) {
    CHECK(e.code() == client_errc::sasl_unsupported);
  }
}

TEST_CASE("sasl: a server that never answers the exchange is given up within the attempt bound", "[sasl]") {
  if (!sasl_or_refusal_checked()) return;
  SaslServer f;
  SaslSilencer relay(f.server.port());
  std::ostringstream out;
  auto logger =
      std::make_shared<spdlog::logger>("sasl-silent", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger->set_level(spdlog::level::debug);
  ClientOptions o = quick(logger);
  o.connection_timeout = 2s;
  ClientConfig c = client_config(relay.connect_string(), o);
  c.sasl = f.settings("alice", alice_password);
  c.handshake_timeout = 200ms;
  CuratorFramework client(c);
  client.start();
  // Not connected, never anonymous: the operation fails at the connection timeout, each attempt having been
  // given up at its bound and made again.
  error_code ec;
  (void)client.exists("/", {}, ec);
  CHECK(ec);
  CHECK_FALSE(client.block_until_connected(0ms));
  CHECK(eventually([&] { return relay.connections.load() >= 2; }, 20s));
  logger->flush();
  // The native transport bounds the SASL exchange itself; the C client's exchange runs inside what the st
  // session bounds as the connection handshake (it is not CONNECTED until the exchange is done).
  CHECK(out.str().find(*default_transport() == Transport::c_client
                           ? "no answer to the connection handshake"
                           : "no answer to SASL within the bound") != std::string::npos);
}

TEST_CASE("sasl: Java Curator and C++ clients, each authenticated, exclude each other on one mutex",
          "[sasl][interop]") {
  if (!sasl_or_refusal_checked()) return;
  if (!curator_peer_or_skip()) return;
  SaslServer f;
  // Java authenticates as bob from its JAAS "Client" section; the C++ clients as alice.
  const auto jaas = f.server.data_dir() / "client-jaas.conf";
  std::ofstream(jaas) << "Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
                      << "  username=\"bob\"\n  password=\"" << bob_password << "\";\n};\n";
  MixedContention m{
      .name = "sasl-mutex",
      .connect = f.server.connect_string(),
      .recipe = "mutex",
      .path = "/sasl-interop/mutex",
      .java = {},
      .cxx_client = [&](int) { return connected(f.config(f.settings("alice", alice_password))); },
      .java_rounds = 15,
      .cxx_rounds_each = 10};
  m.java.jvm_args = {"-Djava.security.auth.login.config=" + jaas.string()};
  const auto clients = mixed_contention<InterProcessMutex>(m);
  CHECK(authenticated_as(*clients.front(), "alice"));
}
