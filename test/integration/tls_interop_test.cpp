// Java Curator and zkrecipes on one InterProcessMutex, every one of them over TLS (issue 27): the interop
// mutex test of interop_mixed_test.cpp (exclusion and fencing-token order judged by the independent checker,
// then FIFO across languages) against a TLS-only server. The Java peer (test/interop/java/CuratorPeer.java)
// is unchanged: ZooKeeper's Java client takes its TLS settings from JVM system properties (docs/tls.md,
// "Tests over TLS"). Skipped with a WARN when this build has no TLS or the Java peer cannot run.

#include <unistd.h>

#include <atomic>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <optional>
#include <sstream>
#include <thread>

#include "checker.hpp"
#include "curator_peer.hpp"
#include "interop_support.hpp"
#include "tls_support.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

/// The JVM options that make the peer's ZooKeeper client connect over TLS with the key store of `files` and
/// the server's trust store (the test CA), as ZooKeeper's `ZKClientConfig` reads them.
std::vector<std::string> tls_java_options(TlsServerFixture& f, const zkr::testing::TlsClientFiles& files) {
  const auto server = f.certs.server_options();
  return {"-Dzookeeper.client.secure=true",
          "-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
          "-Dzookeeper.ssl.keyStore.location=" + files.key_store.string(),
          "-Dzookeeper.ssl.keyStore.password=" + files.key_store_password,
          "-Dzookeeper.ssl.keyStore.type=PKCS12",
          "-Dzookeeper.ssl.trustStore.location=" + server.trust_store.string(),
          "-Dzookeeper.ssl.trustStore.password=" + server.store_password,
          "-Dzookeeper.ssl.trustStore.type=PKCS12"};
}

/// How a Java peer with certificate `name` starts over TLS.
CuratorPeer::Options java_tls_peer_options(TlsServerFixture& f, const std::string& name) {
  CuratorPeer::Options o;
  o.jvm_args = tls_java_options(f, f.files(name));
  o.extra = {"--connection-timeout-ms", "30000"};  // a cold JVM's first TLS handshake on a busy machine
  return o;
}

/// A Java mutex peer on `path` over TLS, with certificate `name`.
std::unique_ptr<CuratorPeer> java_tls_peer(TlsServerFixture& f, const std::string& name,
                                           const std::string& path) {
  return std::make_unique<CuratorPeer>(f.server.secure_connect_string(), "mutex",
                                       std::vector<std::string>{path}, java_tls_peer_options(f, name));
}

bool java_tls_or_skip() {
  if (!tls_available() || !curator_peer_or_skip()) return false;
  if (CuratorPeer::netty_jars_present()) return true;
  WARN(
      "skipped: /usr/share/java/netty-codec.jar or netty-resolver.jar missing (Java TLS needs them; "
      "docs/tls.md)");
  return false;
}

std::vector<std::string> children(CuratorFramework& c, const std::string& path) {
  error_code ec;
  auto r = c.get_children(path, {}, ec);
  return ec ? std::vector<std::string>{} : r;
}

}  // namespace

TEST_CASE(
    "tls interop: Java Curator and C++ contenders on one InterProcessMutex over TLS exclude each other and "
    "queue fairly",
    "[tls][interop]") {
  if (!java_tls_or_skip()) return;
  TlsServerFixture f(false);  // TLS only: nobody can fall back to plain text
  auto admin = f.client("client-admin");
  // Both parts on this one server, one after the other.

  {
    INFO("contention: exclusion across languages, tokens increasing in grant order");
    const std::string path = "/tls-interop/mutex";
    MixedContention m{.name = "tls-mutex",
                      .connect = f.server.secure_connect_string(),
                      .recipe = "mutex",
                      .path = path,
                      .java = java_tls_peer_options(f, "java-a"),
                      .cxx_client = [&](int i) { return f.client(i ? "client-b" : "client-a"); },
                      .java_rounds = 10,
                      .cxx_rounds_each = 8};
    (void)mixed_contention<InterProcessMutex>(m);
    CHECK(eventually([&] { return children(*admin, path).empty(); }));
  }

  {
    INFO("FIFO across languages: Java, C++, Java queued behind a C++ holder");
    GrantChecker checker;
    const std::string path = "/tls-interop/fifo";
    auto hc = f.client("client-a");
    auto wc = f.client("client-b");
    InterProcessMutex holder(*hc, path);
    InterProcessMutex waiter(*wc, path);
    auto java_a = java_tls_peer(f, "java-a", path);
    auto java_b = java_tls_peer(f, "java-b", path);

    REQUIRE(holder.acquire(30s));
    auto hid = checker.begin(path, "cxx-holder", GrantChecker::Kind::exclusive, holder.fencing_token());
    java_a->send("acquire");
    REQUIRE(eventually([&] { return children(*admin, path).size() == 2; }));
    auto w = waiter.async_acquire(boost::asio::use_future);
    REQUIRE(eventually([&] { return children(*admin, path).size() == 3; }));
    java_b->send("acquire");
    REQUIRE(eventually([&] { return children(*admin, path).size() == 4; }));

    std::vector<std::string> order;
    checker.end(hid);
    holder.release();

    auto a = java_a->answer(30s);
    REQUIRE(a.rfind("acquired ", 0) == 0);
    order.push_back("java-a");
    auto aid = checker.begin(path, "java-a", GrantChecker::Kind::exclusive, czxid_of(*admin, a.substr(9)));
    CHECK(w.wait_for(300ms) == std::future_status::timeout);
    CHECK(java_b->answer(300ms).empty());
    checker.end(aid);
    REQUIRE(java_a->call("release") == "released");

    REQUIRE(w.wait_for(30s) == std::future_status::ready);
    Lease lease = w.get();
    order.push_back("cxx-waiter");
    auto wid = checker.begin(path, "cxx-waiter", GrantChecker::Kind::exclusive, lease.fencing_token());
    CHECK(java_b->answer(300ms).empty());
    checker.end(wid);
    lease.release();

    auto b = java_b->answer(30s);
    REQUIRE(b.rfind("acquired ", 0) == 0);
    order.push_back("java-b");
    auto bid = checker.begin(path, "java-b", GrantChecker::Kind::exclusive, czxid_of(*admin, b.substr(9)));
    checker.end(bid);
    REQUIRE(java_b->call("release") == "released");

    CHECK(order == std::vector<std::string>{"java-a", "cxx-waiter", "java-b"});
    const auto v = checker.report("tls interop fifo:");
    CHECK(v.empty());
    CHECK(eventually([&] { return children(*admin, path).empty(); }));
  }
}
