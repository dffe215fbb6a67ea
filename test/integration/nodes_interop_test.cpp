// Interop of the persistent node with Java Curator 5.4 (test/interop/java/NodePeer.java): a C++
// PersistentNode and a Java one, both ephemeral, under one parent; each side reads the other's node, each
// survives the expiry of its own session (made again by its owner, with its data, and seen again by the other
// side), and nothing is left once both close.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <zkr/recipes/nodes/persistent_node.hpp>

#include "curator_peer.hpp"
#include "fixture.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

/// The session id the peer writes as `0x<hex>`.
std::int64_t session_of(const std::string& hex) {
  return hex.size() > 2 ? std::int64_t(std::stoull(hex.substr(2), nullptr, 16)) : -1;
}

/// The node's data and owner as `client` reads them ("" and -1 when it is not there).
std::pair<std::string, std::int64_t> read_node(CuratorFramework& client, const std::string& path) {
  error_code ec;
  auto d = client.get_data(path, {}, ec);
  if (ec) return {"", -1};
  return {d.data, d.stat.ephemeral_owner};
}

/// The node's data and owner as the Java peer reads them.
std::pair<std::string, std::int64_t> java_reads(CuratorPeer& java, const std::string& path) {
  const auto a = java.call("read " + path);
  std::istringstream in(a);
  std::string word, owner, data;
  in >> word >> owner;
  if (word != "data") return {"", -1};
  std::getline(in >> std::ws, data);
  return {data, session_of(owner)};
}

std::int64_t java_session(CuratorPeer& java) {
  const auto a = java.call("session");
  return a.rfind("session ", 0) == 0 ? session_of(a.substr(8)) : -1;
}

}  // namespace

TEST_CASE_METHOD(
    ServerFixture,
    "nodes interop: a PersistentNode of each side survives the other's reads and a session expiry",
    "[nodes][interop][persistent_node]") {
  if (!curator_peer_or_skip()) return;
  const std::string parent = "/pni/group", cxx_path = parent + "/cxx", java_path = parent + "/java";
  CuratorPeer::Options o;
  o.main_class = "NodePeer";
  o.session_timeout = 6s;  // the Java session's expiry is the server's, one session timeout after the inject
  o.extra = {"--data", "java-1"};
  CuratorPeer java(server.connect_string(), "node", {java_path}, o);
  auto c = client();
  PersistentNode node(*c, CreateMode::ephemeral, /*use_protection=*/false, cxx_path, "cxx-1");
  node.start();
  REQUIRE(node.wait_for_initial_create(20s));
  CHECK(node.actual_path() == cxx_path);
  CHECK(java.call("path") == "path " + java_path);

  // Each side reads the other's node (and its own is still there afterwards).
  auto java_sid = java_session(java);
  CHECK(read_node(*c, java_path) == std::pair<std::string, std::int64_t>{"java-1", java_sid});
  CHECK(java_reads(java, cxx_path) == std::pair<std::string, std::int64_t>{"cxx-1", c->session_id()});
  CHECK(java.call("path") == "path " + java_path);
  CHECK(read_node(*admin, cxx_path).second == c->session_id());

  // Data changed on both sides, then the C++ session expires: the node comes back in the new session with
  // the latest data, and Java sees it there. The Java node is untouched.
  node.set_data("cxx-2");
  REQUIRE(java.call("set java-2") == "ok");
  const auto old_cxx = c->session_id();
  c->inject_session_expiration();
  REQUIRE(eventually(
      [&] {
        const auto [data, owner] = java_reads(java, cxx_path);
        return data == "cxx-2" && owner == c->session_id() && owner != old_cxx;
      },
      30s));
  CHECK(read_node(*c, java_path) == std::pair<std::string, std::int64_t>{"java-2", java_sid});

  // The Java session expires (client side: the server ends it one session timeout later, and Curator adopts
  // the old node until then): the node comes back owned by Java's new session, with its data, and C++ sees
  // it there. The C++ node is untouched.
  REQUIRE(java.call("expire") == "expired");
  REQUIRE(eventually(
      [&] {
        const auto sid = java_session(java);
        const auto [data, owner] = read_node(*c, java_path);
        return sid != java_sid && sid > 0 && owner == sid && data == "java-2";
      },
      60s));
  java_sid = java_session(java);
  CHECK(java_reads(java, java_path) == std::pair<std::string, std::int64_t>{"java-2", java_sid});
  CHECK(java_reads(java, cxx_path) == std::pair<std::string, std::int64_t>{"cxx-2", c->session_id()});
  CHECK(read_node(*admin, cxx_path) == std::pair<std::string, std::int64_t>{"cxx-2", c->session_id()});

  // Both close: no node is left under the parent (an empty container parent may be gone too).
  node.close();
  REQUIRE(java.call("close") == "closed");
  CHECK(eventually([&] {
    error_code ec;
    auto kids = admin->get_children(parent, {}, ec);
    return ec == zk_errc::no_node || (!ec && kids.empty());
  }));
}
