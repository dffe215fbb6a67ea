// The transport choice (transport.hpp): what a build carries, what `automatic` resolves to under
// ZKR_ZOOKEEPER_TRANSPORT, and the typed refusals at start() (no server is needed: they come first).

#include <catch2/catch.hpp>
#include <zkr/framework/curator_framework.hpp>
#include <zkr/framework/transport.hpp>
#include <zkr/test/scoped_env.hpp>

namespace {

/// ZKR_ZOOKEEPER_TRANSPORT for one scope (each test case runs in a process of its own under ctest).
struct TransportEnv : zkr::test::ScopedEnv {
  explicit TransportEnv(const char* value) : ScopedEnv("ZKR_ZOOKEEPER_TRANSPORT", value) {}
};

zkr::error_code start_error(zkr::ClientConfig cfg) {
  cfg.connect_string = "127.0.0.1:1";
  cfg.retry_policy = std::make_shared<zkr::RetryOneTime>(std::chrono::milliseconds(10));
  cfg.connection_timeout = std::chrono::milliseconds(200);
  zkr::CuratorFramework client(std::move(cfg));
  zkr::error_code ec;
  client.start(ec);
  client.close();
  return ec;
}

}  // namespace

TEST_CASE("transport: names, and what every build carries", "[transport]") {
  using zkr::Transport;
  CHECK(zkr::to_string(Transport::automatic) == "automatic");
  CHECK(zkr::to_string(Transport::c_client) == "c");
  CHECK(zkr::to_string(Transport::native) == "native");
  CHECK(zkr::transport_available(Transport::automatic));
  CHECK(zkr::transport_available(zkr::build_default_transport()));
  CHECK(zkr::build_default_transport() != Transport::automatic);
  // The C client is the default wherever it is linked.
  if (zkr::transport_available(Transport::c_client)) {
    CHECK(zkr::build_default_transport() == Transport::c_client);
  }
  // The native transport speaks TLS wherever the build carries it with OpenSSL (docs/tls.md).
  CHECK(zkr::tls_supported(Transport::native) ==
        (zkr::transport_available(Transport::native) && ZKR_TEST_NATIVE_TLS != 0));
}

TEST_CASE("transport: automatic follows ZKR_ZOOKEEPER_TRANSPORT, and refuses what the build lacks",
          "[transport]") {
  using zkr::Transport;
  {
    TransportEnv env(nullptr);
    CHECK(zkr::default_transport() == zkr::build_default_transport());
  }
  {
    TransportEnv env("");
    CHECK(zkr::default_transport() == zkr::build_default_transport());
  }
  for (auto [name, t] : {std::pair{"c", Transport::c_client}, std::pair{"native", Transport::native}}) {
    TransportEnv env(name);
    INFO(name);
    if (zkr::transport_available(t)) {
      CHECK(zkr::default_transport() == t);
      CHECK(zkr::tls_supported() == zkr::tls_supported(t));
    } else {
      CHECK_FALSE(zkr::default_transport().has_value());
      CHECK_FALSE(zkr::tls_supported());
      CHECK(start_error({}) == zkr::client_errc::transport_unavailable);
    }
  }
  TransportEnv env("nativ");  // a typo is an error, not the default
  CHECK_FALSE(zkr::default_transport().has_value());
  CHECK(start_error({}) == zkr::client_errc::transport_unavailable);
  // An explicit choice does not read the variable.
  zkr::ClientConfig cfg;
  cfg.transport = zkr::build_default_transport();
  CHECK(start_error(cfg) != zkr::client_errc::transport_unavailable);
}

TEST_CASE(
    "transport: a transport the build lacks, or TLS where the transport has none, is refused at start()",
    "[transport]") {
  using zkr::Transport;
  TransportEnv env(nullptr);
  for (auto t : {Transport::c_client, Transport::native}) {
    INFO(zkr::to_string(t));
    zkr::ClientConfig cfg;
    cfg.transport = t;
    if (!zkr::transport_available(t)) {
      CHECK(start_error(cfg) == zkr::client_errc::transport_unavailable);
      continue;
    }
    if (!zkr::tls_supported(t)) {
      // Never a plain-text session where TLS was asked for: the refusal comes before any file is read.
      cfg.tls = zkr::TlsConfig{.ca_file = "/nonexistent/ca.pem"};
      CHECK(start_error(cfg) == zkr::client_errc::tls_unsupported);
    }
  }
}
