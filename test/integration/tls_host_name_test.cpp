// TLS checks the server of every connection over the native transport (issue 38; docs/tls.md): a session
// connected over TLS to server A, whose certificate names the host the client dialled, reconnects through the
// same address to server B, whose certificate comes from the same CA but names another host. The native
// transport refuses B (client_errc::tls_handshake_failed, logged at ERROR with the cause) and never connects
// to it; back on A, the same session goes on. The C client checks no host name on its own reconnections
// (docs/tls.md): there the case says so and ends.

#include <spdlog/sinks/ringbuffer_sink.h>

#include "client_support.hpp"
#include "fault_proxy.hpp"
#include "recorders.hpp"
#include "tls_support.hpp"

using namespace zkr;
using namespace zkr::itest;

namespace {

/// Whether `sink` holds an ERROR line that contains `text`.
bool logged_error(spdlog::sinks::ringbuffer_sink_mt& sink, const std::string& text) {
  for (const auto& m : sink.last_raw())
    if (m.level == spdlog::level::err &&
        std::string_view(m.payload.data(), m.payload.size()).find(text) != std::string_view::npos)
      return true;
  return false;
}

}  // namespace

TEST_CASE("tls: the native transport checks the host name on every reconnection", "[tls]") {
  if (!on_native_transport()) {
    WARN(
        "skipped: the ZooKeeper C client checks no host name on its own reconnections (docs/tls.md): a "
        "server with a certificate from the CA for any other name is accepted there");
    return;
  }
  if (!zkr::test::tls_available()) return;
  zkr::testing::TestCertificates certs;
  zkr::testing::TestingServer a(zkr::test::tls_only(certs.server_options()));  // DNS:localhost, IP:127.0.0.1
  zkr::testing::TestingServer b(zkr::test::tls_only(certs.server_options_for("elsewhere.invalid")));
  FaultProxy proxy(a.secure_port(), false);  // TLS passes through as bytes

  auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256);
  auto logger = std::make_shared<spdlog::logger>("tls-host-name", sink);
  logger->set_level(spdlog::level::info);
  zkr::test::ClientOptions o;
  o.logger = logger;
  o.session_timeout = 20s;
  auto c = zkr::test::make_tls_client("localhost:" + std::to_string(proxy.port()),
                                      zkr::test::tls_settings(certs.client("client-a")), o);
  StateRecorder states;
  c->add_connection_state_listener([&](ConnectionState s) { states.push(s); });
  const auto session = zkr::detail::access::core(*c)->session_id();
  c->create("/on-a");

  // The same address now leads to B: the session loses A and reconnects to B, which it must refuse.
  proxy.set_upstream(b.secure_port());
  proxy.drop_connections();
  REQUIRE(states.wait_for(ConnectionState::suspended, 20s));
  REQUIRE(eventually([&] { return logged_error(*sink, "does not name the host 'localhost'"); }, 20s));
  CHECK(logged_error(*sink, error_code(client_errc::tls_handshake_failed).message()));
  const auto refused_after = proxy.connections();
  REQUIRE(eventually([&] { return proxy.connections() >= refused_after + 2; }, 20s));  // refused again
  CHECK_FALSE(c->is_connected());

  // Back to A: the session (never given to B) goes on there.
  proxy.set_upstream(a.secure_port());
  proxy.drop_connections();
  REQUIRE(states.wait_for(ConnectionState::reconnected, 20s));
  for (auto s : states.items()) CHECK(s != ConnectionState::lost);
  CHECK(zkr::detail::access::core(*c)->session_id() == session);
  CHECK(c->exists("/on-a").has_value());
}
