// A close over TLS whose reply arrives in part (issue 38): the client sends closeSession and waits a bounded
// time for the server's answer, which deletes the session's ephemeral nodes before close() returns. A TLS
// record cut short by the network must not hold that wait (and the caller of close) past its bound: a
// blocking read of the record's rest would wait for as long as the connection stays open.

#include <chrono>
#include <future>

#include "client_support.hpp"
#include "fault_proxy.hpp"
#include "fixture.hpp"
#include "tls_support.hpp"

using namespace std::chrono_literals;

TEST_CASE("tls: a close whose reply arrives in part returns within its bound", "[tls]") {
  if (!zkr::test::tls_available()) return;
  zkr::testing::TestCertificates certs;
  zkr::testing::ServerOptions so;
  so.tls = certs.server_options();  // its plain port too, for the check at the end
  zkr::testing::TestingServer server(so);
  zkr::itest::FaultProxy proxy(server.secure_port(), false);  // TLS passes through as bytes
  auto c = zkr::test::make_tls_client("127.0.0.1:" + std::to_string(proxy.port()),
                                      zkr::test::tls_settings(certs.client("client-a")));
  zkr::CreateOptions ephemeral;
  ephemeral.mode = zkr::CreateMode::ephemeral;
  c->create("/tls-close", ephemeral);
  // Three bytes of the next record: less than its header.
  proxy.stall_replies_after(3);
  auto closed = std::async(std::launch::async, [&] { c->close(); });
  // The bound is 2 s on the native transport; the C client reads without blocking. A hang is the failure.
  const bool returned = closed.wait_for(60s) == std::future_status::ready;
  if (!returned) proxy.drop_connections();  // ends the wait, so that the failure is reported, not a hang
  closed.get();
  REQUIRE(returned);
  // The server had the closeSession: the session's ephemeral node is gone.
  auto other = zkr::test::make_client(server.connect_string());
  CHECK_FALSE(other->exists("/tls-close").has_value());
}
