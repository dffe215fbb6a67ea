// Bad input and misuse, as ONE table: each row is a case and the error it must get; after every row nothing
// may be left under the test root (the lock directories are containers, reaped by the server once empty). Not
// here: sequence numbers near the server's 32-bit wrap cannot be produced quickly on a real server; the
// driver's order after the wrap is covered by test/unit/lock_driver_test.cpp ("sequence wrap: ...").

#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <functional>
#include <future>
#include <thread>
#include <zkr/test/outcome.hpp>
#include <zkr/testing/server_options.hpp>
#include <zkr/testing/test_certificates.hpp>

#include "fixture.hpp"

using namespace zkr;
using namespace zkr::test;

namespace {

const std::string root = "/bad";

/// The outcome of a row: an error code, or (its value) a boolean result of a timed acquire.
using Outcome = zkr::test::Outcome<std::optional<bool>>;

Outcome from_error(error_code ec) { return {ec, std::nullopt}; }

/// Runs `f`, mapping a thrown `zkr::Error` to its code.
Outcome catching(const std::function<void()>& f) {
  try {
    f();
    return {};
  } catch (const zkr::Error& e) {
    return from_error(e.code());
  }
}

struct Row {
  std::string name;
  std::function<Outcome(ServerFixture&)> run;
  error_code expected_ec;
  std::optional<bool> expected_acquired;
};

/// Every node under `path` (recursively), as full paths.
void all_nodes(CuratorFramework& c, const std::string& path, std::vector<std::string>& out) {
  error_code ec;
  auto kids = c.get_children(path, {}, ec);
  if (ec) return;
  for (auto& k : kids) {
    const auto p = make_path(path, k);
    out.push_back(p);
    all_nodes(c, p, out);
  }
}

std::vector<Row> rows() {
  std::vector<Row> t;
  const std::vector<std::pair<std::string, std::string>> bad_paths{
      {"empty", ""},
      {"relative", "bad/x"},
      {"trailing slash", "/bad/x/"},
      {"double slash", "/bad//x"},
      {"dot segment", "/bad/./x"},
      {"dot-dot segment", "/bad/../x"},
      {"NUL", std::string("/bad/x\0y", 8)},
      {"control character", "/bad/x\x01y"},
      {"C1 control character", "/bad/x\xC2\x85y"},
      {"non-BMP character", "/bad/x\xF0\x9F\x94\x92"},
      {"malformed UTF-8", "/bad/x\xC3"},
  };
  for (auto& [what, p] : bad_paths) {
    const auto inv = make_error_code(client_errc::invalid_path);
    auto path = p;
    auto ec_row = [&](const std::string& op, std::function<void(CuratorFramework&, error_code&)> f) {
      t.push_back({op + " with " + what + " path",
                   [f, path](ServerFixture& fx) {
                     error_code ec;
                     f(*fx.admin, ec);
                     return from_error(ec);
                   },
                   inv, std::nullopt});
    };
    ec_row("create", [path](CuratorFramework& c, error_code& ec) { c.create(path, {}, ec); });
    ec_row("get_data", [path](CuratorFramework& c, error_code& ec) { c.get_data(path, {}, ec); });
    ec_row("set_data", [path](CuratorFramework& c, error_code& ec) { c.set_data(path, "x", -1, ec); });
    ec_row("remove", [path](CuratorFramework& c, error_code& ec) { c.remove(path, {}, ec); });
    ec_row("exists", [path](CuratorFramework& c, error_code& ec) { c.exists(path, {}, ec); });
    ec_row("get_children", [path](CuratorFramework& c, error_code& ec) { c.get_children(path, {}, ec); });
    t.push_back(
        {"InterProcessMutex with " + what + " path",
         [path](ServerFixture& fx) { return catching([&] { InterProcessMutex m(*fx.admin, path); }); }, inv});
    t.push_back({"InterProcessSemaphoreMutex with " + what + " path",
                 [path](ServerFixture& fx) {
                   return catching([&] { InterProcessSemaphoreMutex m(*fx.admin, path); });
                 },
                 inv});
    t.push_back({"InterProcessReadWriteLock with " + what + " path",
                 [path](ServerFixture& fx) {
                   return catching([&] { InterProcessReadWriteLock m(*fx.admin, path); });
                 },
                 inv});
  }

  t.push_back({"node data over the limit",
               [](ServerFixture& fx) {
                 error_code ec;
                 fx.admin->create(root + "/big", {.data = std::string(default_max_data_size + 1, 'x')}, ec);
                 return from_error(ec);
               },
               make_error_code(client_errc::data_too_large)});
  t.push_back({"release without holding",
               [](ServerFixture& fx) {
                 InterProcessMutex m(*fx.admin, root + "/l1");
                 error_code ec;
                 m.release(ec);
                 return from_error(ec);
               },
               make_error_code(client_errc::not_owner)});
  t.push_back({"release from another thread",
               [](ServerFixture& fx) {
                 InterProcessMutex m(*fx.admin, root + "/l2");
                 m.acquire();
                 error_code ec;
                 std::thread([&] { m.release(ec); }).join();
                 m.release();
                 return from_error(ec);
               },
               make_error_code(client_errc::not_owner)});
  t.push_back({"double release",
               [](ServerFixture& fx) {
                 InterProcessMutex m(*fx.admin, root + "/l3");
                 m.acquire();
                 m.release();
                 error_code ec;
                 m.release(ec);
                 return from_error(ec);
               },
               make_error_code(client_errc::not_owner)});
  t.push_back({"double release of a semaphore mutex",
               [](ServerFixture& fx) {
                 InterProcessSemaphoreMutex m(*fx.admin, root + "/l3s");
                 m.acquire();
                 m.release();
                 error_code ec;
                 m.release(ec);
                 return from_error(ec);
               },
               make_error_code(client_errc::not_acquired)});
  for (auto [what, timeout] : {std::pair{"zero", 0ms}, std::pair{"negative", -5ms}}) {
    t.push_back({std::string(what) + " timeout on a held lock",
                 [timeout](ServerFixture& fx) {
                   auto other = fx.client();
                   InterProcessMutex held(*fx.admin, root + "/l4"), m(*other, root + "/l4");
                   held.acquire();
                   error_code ec;
                   const bool got = m.acquire(timeout, ec);
                   const auto left = fx.children(root + "/l4").size();  // only the holder's node
                   held.release();
                   if (left != 1) return from_error(make_error_code(client_errc::invalid_argument));
                   return Outcome{ec, got};
                 },
                 {},
                 false});
    t.push_back({std::string(what) + " timeout on a free lock",
                 [timeout](ServerFixture& fx) {
                   InterProcessMutex m(*fx.admin, root + "/l5");
                   error_code ec;
                   const bool got = m.acquire(timeout, ec);
                   if (got) m.release();
                   return Outcome{ec, got};
                 },
                 {},
                 true});
  }
  t.push_back({"a closed client",
               [](ServerFixture& fx) {
                 auto c = fx.client();
                 InterProcessMutex m(*c, root + "/l6");
                 c->close();
                 error_code ec;
                 m.acquire(ec);
                 return from_error(ec);
               },
               make_error_code(client_errc::closed)});
  t.push_back({"a never-started client",
               [](ServerFixture& fx) {
                 ClientConfig cfg;
                 cfg.connect_string = fx.server.connect_string();
                 cfg.retry_policy = std::make_shared<RetryOneTime>(Millis(10));
                 CuratorFramework c(cfg);
                 InterProcessMutex m(c, root + "/l7");
                 error_code ec;
                 const bool acquired = m.acquire(1s, ec);
                 return from_error(acquired ? error_code() : ec);  // acquired: no error, which fails the case
               },
               make_error_code(client_errc::not_started)});
  t.push_back({"a lock object destroyed while an async wait is pending (the handler still completes)",
               [](ServerFixture& fx) {
                 auto other = fx.client();
                 InterProcessMutex held(*fx.admin, root + "/l8");
                 held.acquire();
                 auto m = std::make_unique<InterProcessMutex>(*other, root + "/l8");
                 auto f = m->async_acquire(boost::asio::use_future);
                 eventually([&] { return fx.children(root + "/l8").size() == 2; }, 10s);
                 m.reset();
                 held.release();
                 if (f.wait_for(20s) != std::future_status::ready)
                   return from_error(make_error_code(client_errc::lock_lost));  // hang
                 try {
                   Lease l = f.get();
                   l.release();
                   return Outcome{};
                 } catch (const boost::system::system_error& e) {
                   return from_error(e.code());
                 }
               },
               {}});
  t.push_back({"a negative handshake timeout (start() refuses it)",
               [](ServerFixture& fx) {
                 ClientConfig cfg;
                 cfg.connect_string = fx.server.connect_string();
                 cfg.retry_policy = std::make_shared<RetryOneTime>(Millis(10));
                 cfg.handshake_timeout = -1ms;
                 CuratorFramework c(cfg);
                 error_code ec;
                 c.start(ec);
                 return from_error(ec);
               },
               make_error_code(client_errc::invalid_argument)});
  t.push_back({"an unreachable ensemble (connection timeout 1 s)",
               [](ServerFixture&) {
                 ClientConfig cfg;
                 cfg.connect_string = "127.0.0.1:" + std::to_string(zkr::testing::free_port());
                 cfg.connection_timeout = 1s;
                 cfg.retry_policy = std::make_shared<RetryOneTime>(Millis(10));
                 CuratorFramework c(cfg);
                 c.start();
                 InterProcessMutex m(c, root + "/l9");
                 error_code ec;
                 const auto t0 = std::chrono::steady_clock::now();
                 m.acquire(ec);
                 if (std::chrono::steady_clock::now() - t0 > 10s)
                   return from_error(make_error_code(client_errc::lock_lost));
                 return from_error(ec);
               },
               make_error_code(client_errc::connection_timeout)});
  t.push_back(
      {"a foreign persistent child \"0\" in the lock directory blocks the lock until deleted (CURATOR-43)",
       [](ServerFixture& fx) {
         const std::string dir = root + "/l10";
         fx.admin->create(dir + "/0", {.creating_parents = true});
         auto c = fx.client();
         InterProcessMutex m(*c, dir);
         const bool blocked = !m.acquire(300ms);
         const auto left = fx.children(dir);
         fx.admin->remove(dir + "/0");
         const bool got = m.acquire(5s);
         if (got) m.release();
         fx.admin->remove(dir, {.quietly = true});
         return Outcome{{}, blocked && left == std::vector<std::string>{"0"} && got};
       },
       {},
       true});
  t.push_back({"a nested lock path inside a lock directory does not block the outer lock",
               [](ServerFixture& fx) {
                 const std::string dir = root + "/l11";
                 auto c = fx.client();
                 InterProcessMutex inner(*fx.admin, dir + "/nested"), outer(*c, dir);
                 inner.acquire();
                 const bool got = outer.acquire(5s);
                 if (got) outer.release();
                 inner.release();
                 return Outcome{{}, got};
               },
               {},
               true});
  // TLS settings: refused at start(), before the C client reads them (it would spin on each of these), with
  // the typed error; without TLS in this build's C client, every one is tls_unsupported.
  static auto certs = std::make_shared<zkr::testing::TestCertificates>();
  const auto a = certs->client("client-a");
  const auto b = certs->client("client-b");
  const auto settings = [](const zkr::testing::TlsClientFiles& f) {
    return TlsConfig{f.ca.string(), f.certificate.string(), f.key.string(), f.key_password, true};
  };
  auto tls_row = [&](const std::string& what, TlsConfig tls, client_errc expected) {
    t.push_back({"TLS: " + what,
                 [tls](ServerFixture& fx) {
                   ClientConfig c;
                   c.connect_string = fx.server.connect_string();
                   c.retry_policy = std::make_shared<RetryNTimes>(0, Millis(0));
                   c.tls = tls;
                   CuratorFramework client(c);
                   error_code ec;
                   client.start(ec);
                   return from_error(ec);
                 },
                 make_error_code(tls_supported() ? expected : client_errc::tls_unsupported), std::nullopt});
  };
  auto missing_ca = settings(a);
  missing_ca.ca_file = (certs->dir() / "no-such-ca.pem").string();
  tls_row("a missing CA file", missing_ca, client_errc::tls_file_error);
  auto not_a_key = settings(a);
  not_a_key.key_file = a.certificate.string();
  tls_row("a key file that holds no key", not_a_key, client_errc::tls_file_error);
  auto wrong_password = settings(a);
  wrong_password.key_password = "not-the-password";
  tls_row("the wrong key password", wrong_password, client_errc::tls_key_error);
  auto no_password = settings(a);
  no_password.key_password.clear();
  tls_row("an encrypted key and no password", no_password, client_errc::tls_key_error);
  auto other_key = settings(a);
  other_key.key_file = b.key.string();
  tls_row("the key of another certificate", other_key, client_errc::tls_key_error);
  auto comma = settings(a);
  comma.cert_file = a.certificate.string() + ",x";
  tls_row("a path with a comma (the C client splits on them)", comma, client_errc::tls_file_error);
  auto no_cert = settings(a);
  no_cert.cert_file.clear();
  tls_row("no client certificate (the C client needs one)", no_cert, client_errc::tls_file_error);
  return t;
}

}  // namespace

TEST_CASE("bad input: every row gets its error and leaves nothing behind", "[bad-input]") {
  ServerFixture fx;
  fx.admin->create(root);
  for (auto& row : rows()) {
    INFO("row: " << row.name);
    const auto out = row.run(fx);
    CHECK(out.ec == row.expected_ec);
    if (out.ec != row.expected_ec) WARN(row.name << ": got " << out.ec.message());
    CHECK(out.value == row.expected_acquired);
    std::vector<std::string> left;
    const bool clean = eventually(
        [&] {
          left.clear();
          all_nodes(*fx.admin, root, left);
          return left.empty();
        },
        10s);
    INFO("left: " << Catch::Detail::stringify(left));
    CHECK(clean);
  }
}
