// The zkr command-line tool's lock commands, run as separate processes against a real ZooKeeper: usage
// errors, no ZooKeeper, TLS options and their environment forms, mutual exclusion and fencing tokens across
// processes, --timeout (-w 0 on free and held locks), a lock lost while COMMAND runs, signals (nohup, a
// second signal on a paused server, COMMAND's process group), multi-lock, revoke, and exclusion against Java
// Curator.

#include <signal.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <vector>

#include "cli_support.hpp"
#include "curator_peer.hpp"
#include "fixture.hpp"
#include "tls_support.hpp"

using namespace zkr;
using namespace zkr::test;
using namespace zkr::test::cli;

TEST_CASE("zkr: usage errors and --help", "[cli]") {
  if (!have_zkr()) return;
  TempDir dir;
  auto help = run_zkr({"--help"}, dir);
  CHECK(help.status == 0);
  for (const char* s : {"64", "69", "70", "75", "76", "77", "126", "127", "128+N", "ZKR_FENCING_TOKEN"})
    CHECK(help.out.find(s) != std::string::npos);
  for (const char* cmd :
       {"lock", "read-lock", "write-lock", "semaphore", "multi-lock", "inspect", "revoke"}) {
    auto h = run_zkr({cmd, "--help"}, dir);
    CHECK(h.status == 0);
    CHECK(h.out.find("Exit status") != std::string::npos);
  }
  CHECK(run_zkr({}, dir).status == 64);
  CHECK(run_zkr({"frobnicate"}, dir).status == 64);
  CHECK(run_zkr({"lock"}, dir).status == 64);
  CHECK(run_zkr({"lock", "/a"}, dir).status == 64);  // no COMMAND
  CHECK(run_zkr({"lock", "--timeout", "soon", "/a", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"lock", "relative/path", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"lock", "--on-lost", "panic", "/a", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"semaphore", "/a", "--", "true"}, dir).status == 64);  // no --leases
  CHECK(run_zkr({"semaphore", "--leases", "0", "/a", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"multi-lock", "/a", "--", "true"}, dir).status == 64);  // one path
  CHECK(run_zkr({"semaphore", "--revocable", "-n", "2", "/a", "--", "true"}, dir).status == 64);

  // Durations are capped (ten years for -w and --kill-after, INT_MAX ms for the client's timeouts) instead of
  // overflowing.
  auto big = run_zkr({"lock", "-w", "15000000000", "/a", "--", "true"}, dir);
  CHECK(big.status == 64);
  CHECK(big.err.find("too large") != std::string::npos);
  CHECK(run_zkr({"lock", "--kill-after", "90000h", "/a", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"lock", "--session-timeout", "600h", "/a", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"inspect", "--connection-timeout", "600h", "/a"}, dir).status == 64);
  CHECK(run_zkr({"inspect", "--handshake-timeout", "600h", "/a"}, dir).status == 64);
  CHECK(run_zkr({"inspect", "--handshake-timeout", "soon", "/a"}, dir).status == 64);

  // A malformed connect string is a usage error.
  for (const char* bad : {"localhost", "localhost:", "localhost:99999", "a:1,", "a b:1", "a:1/bad//chroot"}) {
    auto r = run_zkr({"lock", "--connect", bad, "/a", "--", "true"}, dir);
    INFO(bad << ": " << r.err);
    CHECK(r.status == 64);
    CHECK(r.err.find("invalid connect string") != std::string::npos);
  }
}

TEST_CASE("zkr: no ZooKeeper within --connection-timeout exits 69", "[cli]") {
  if (!have_zkr()) return;
  TempDir dir;
  const std::string nowhere = "127.0.0.1:" + std::to_string(zkr::testing::free_port());
  auto r =
      run_zkr({"lock", "-v", "--connect", nowhere, "--connection-timeout", "1s", "/a", "--", "true"}, dir);
  CHECK(r.status == 69);
  // No request was ever sent, so there is nothing to clean up before exiting (-v shows the warning if there
  // is).
  CHECK(r.err.find("still pending") == std::string::npos);
  auto i = run_zkr({"inspect", "--connect", nowhere, "--connection-timeout", "1s", "/a"}, dir);
  CHECK(i.status == 69);
  // The -w budget starts once connected: a short one does not turn "unreachable" into "timed out".
  for (const char* cmd : {"lock", "multi-lock"}) {
    std::vector<std::string> args{cmd,  "--connect", nowhere, "--connection-timeout",
                                  "1s", "-w",        "300ms", "/a"};
    if (std::string(cmd) == "multi-lock") args.push_back("/b");
    auto w = run_zkr(cat(args, {"--", "true"}), dir);
    INFO(w.err);
    CHECK(w.status == 69);
  }
  // A host that cannot be resolved is unreachable (69), not a usage error; so is it for inspect and revoke.
  const std::string unresolvable = "no-such-host.invalid:2181";
  auto u =
      run_zkr({"lock", "--connect", unresolvable, "--connection-timeout", "1s", "/a", "--", "true"}, dir);
  INFO(u.err);
  CHECK(u.status == 69);
  CHECK(run_zkr({"inspect", "--connect", unresolvable, "--connection-timeout", "1s", "/a"}, dir).status ==
        69);
  CHECK(run_zkr({"revoke", "--connect", unresolvable, "--connection-timeout", "1s", "/a/b"}, dir).status ==
        69);
}

TEST_CASE("zkr -w 0 on a free lock acquires it and runs COMMAND", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  const std::vector<std::vector<std::string>> commands{{"lock", "/cli/free"},
                                                       {"semaphore", "-n", "2", "/cli/free-sem"},
                                                       {"multi-lock", "/cli/free-a", "/cli/free-b"}};
  for (const auto& command : commands) {
    auto r = run_zkr(cat(cat(command, common_args(fx)), {"-w", "0", "--", "echo", "ran"}), dir);
    INFO(command.front() << ": " << r.err);
    CHECK(r.status == 0);
    CHECK(r.out == "ran\n");
  }
  CHECK(fx.children("/cli/free").empty());
  CHECK(fx.children("/cli/free-a").empty());
}

TEST_CASE("zkr over TLS: the --tls-* options take a lock, refused settings exit 78, a refused handshake 69",
          "[cli][tls]") {
  if (!have_zkr()) return;
  TempDir dir;
  if (!zkr::tls_supported()) {
    // Built without TLS: TLS settings are refused before connecting, never used as plain text.
    auto r = run_zkr(
        {"lock", "--tls-ca", "ca.pem", "--tls-cert", "c.pem", "--tls-key", "k.pem", "/cli/tls", "--", "true"},
        dir);
    CHECK(r.status == 78);
    return;
  }
  TlsServerFixture f(false);  // a TLS-only server
  const auto a = f.files("client-a");
  {
    std::ofstream(dir.file("pw")) << a.key_password << "\n";
    std::ofstream(dir.file("wrong-pw")) << "not-the-password\n";
  }
  auto tls = [&](const zkr::testing::TlsClientFiles& files, const std::string& password_file) {
    return std::vector<std::string>{"--connect",
                                    f.server.secure_connect_string(),
                                    "--connection-timeout",
                                    "20s",
                                    "--tls-ca",
                                    files.ca.string(),
                                    "--tls-cert",
                                    files.certificate.string(),
                                    "--tls-key",
                                    files.key.string(),
                                    "--tls-key-password-file",
                                    dir.file(password_file)};
  };
  {
    auto ok = run_zkr(cat(cat({"lock", "/cli/tls"}, tls(a, "pw")), {"-w", "0", "--", "echo", "ran"}), dir);
    INFO(ok.err);
    CHECK(ok.status == 0);
    CHECK(ok.out == "ran\n");
  }

  auto wrong = run_zkr(cat(cat({"lock", "/cli/tls"}, tls(a, "wrong-pw")), {"--", "true"}), dir);
  CHECK(wrong.status == 78);
  CHECK(wrong.err.find("not-the-password") == std::string::npos);

  auto partial = run_zkr({"lock", "--tls-ca", a.ca.string(), "/cli/tls", "--", "true"}, dir);
  CHECK(partial.status == 64);

  const auto x = f.certs.client("client-x", {.issuer = zkr::testing::CertificateAuthority::foreign});
  auto foreign = tls(x, "pw");
  foreign[5] = a.ca.string();  // --tls-ca: it trusts the server, the server does not trust it
  {
    auto refused = run_zkr(cat(cat({"lock", "/cli/tls"}, foreign), {"-w", "0", "--", "true"}), dir);
    INFO(refused.err);
    CHECK(refused.status == 69);
    CHECK(refused.err.find("TLS") != std::string::npos);
  }

  // The environment stands for the options (docs/cli.md): $ZKR_TLS_CA, _CERT, _KEY, and the key's password
  // from $ZKR_TLS_KEY_PASSWORD_FILE or $ZKR_TLS_KEY_PASSWORD; an option given on the command line wins.
  const std::vector<std::string> plain_args{"--connect", f.server.secure_connect_string(),
                                            "--connection-timeout", "20s"};
  const std::vector<std::string> files_env{"ZKR_TLS_CA=" + a.ca.string(),
                                           "ZKR_TLS_CERT=" + a.certificate.string(),
                                           "ZKR_TLS_KEY=" + a.key.string()};
  auto with = [](std::vector<std::string> env, const std::vector<std::string>& more) {
    env.insert(env.end(), more.begin(), more.end());
    return env;
  };
  const auto lock_echo = cat(cat({"lock", "/cli/tls"}, plain_args), {"-w", "0", "--", "echo", "ran"});
  auto by_file = run_zkr(lock_echo, dir, std::chrono::seconds(90),
                         with(files_env, {"ZKR_TLS_KEY_PASSWORD_FILE=" + dir.file("pw")}));
  INFO(by_file.err);
  CHECK(by_file.status == 0);
  CHECK(by_file.out == "ran\n");
  auto by_value = run_zkr(lock_echo, dir, std::chrono::seconds(90),
                          with(files_env, {"ZKR_TLS_KEY_PASSWORD=" + a.key_password}));
  INFO(by_value.err);
  CHECK(by_value.status == 0);
  CHECK(by_value.err.find(a.key_password) == std::string::npos);
  // The option wins over the environment: a wrong password file given as an option is refused.
  auto option_wins = run_zkr(cat(cat({"lock", "/cli/tls"}, plain_args),
                                 {"--tls-key-password-file", dir.file("wrong-pw"), "--", "true"}),
                             dir, std::chrono::seconds(90),
                             with(files_env, {"ZKR_TLS_KEY_PASSWORD_FILE=" + dir.file("pw")}));
  CHECK(option_wins.status == 78);
  // Half the settings in the environment: refused before connecting, as with the options.
  auto half = run_zkr(cat(cat({"lock", "/cli/tls"}, plain_args), {"--", "true"}), dir,
                      std::chrono::seconds(90), {"ZKR_TLS_CA=" + a.ca.string()});
  CHECK(half.status == 64);
}

TEST_CASE("zkr lock --data with an empty string gives the node empty data", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  for (const char* cmd : {"lock", "write-lock"}) {
    Zkr holder(cat(cat({cmd}, common_args(fx)), {"--data", "", "/cli/empty-data", "--", "sleep", "30"}), dir);
    REQUIRE(wait_children(fx, "/cli/empty-data", 1));
    auto node = fx.admin->get_data("/cli/empty-data/" + fx.children("/cli/empty-data").front());
    CHECK(node.data.empty());
    holder.signal(SIGTERM);
    CHECK(holder.wait() == 128 + SIGTERM);
    REQUIRE(wait_children(fx, "/cli/empty-data", 0));
  }
}

TEST_CASE("zkr lock: processes never overlap, tokens strictly increase, the environment is set", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  const std::string log = dir.file("log");
  constexpr int n = 5;
  std::vector<std::unique_ptr<Zkr>> procs;
  for (int i = 0; i < n; ++i)
    procs.push_back(std::make_unique<Zkr>(
        cat(cat({"lock"}, common_args(fx)), {"/cli/mutex", "--", "sh", "-c", log_script, "sh", log}), dir));
  for (auto& p : procs) {
    auto st = p->wait();
    INFO(p->err());
    CHECK(st == 0);
  }
  check_exclusive_log(log, n);
  CHECK(fx.children("/cli/mutex").empty());

  // ZKR_LOCK_PATH is our node (under the lock path), ZKR_FENCING_TOKEN its czxid, ZKR_SESSION_ID ours.
  auto r =
      run_zkr(cat(cat({"lock"}, common_args(fx)),
                  {"/cli/mutex", "--", "sh", "-c", "echo $ZKR_LOCK_PATH $ZKR_FENCING_TOKEN $ZKR_SESSION_ID"}),
              dir);
  REQUIRE(r.status == 0);
  std::istringstream in(r.out);
  std::string node, session;
  long long token = 0;
  in >> node >> token >> session;
  CHECK(node.rfind("/cli/mutex/_c_", 0) == 0);
  CHECK(node.find("-lock-") != std::string::npos);
  CHECK(token > 0);
  CHECK(session.rfind("0x", 0) == 0);

  // COMMAND's own status is zkr's; 127 / 126 when it cannot run.
  CHECK(
      run_zkr(cat(cat({"lock"}, common_args(fx)), {"/cli/mutex", "--", "sh", "-c", "exit 42"}), dir).status ==
      42);
  CHECK(
      run_zkr(cat(cat({"lock"}, common_args(fx)), {"/cli/mutex", "--", "no-such-command-zkr"}), dir).status ==
      127);
  CHECK(run_zkr(cat(cat({"lock"}, common_args(fx)), {"/cli/mutex", "--", "/etc/passwd"}), dir).status == 126);
  CHECK(fx.children("/cli/mutex").empty());
}

TEST_CASE("zkr lock --timeout: exit 75 and no node left behind", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  Zkr holder(cat(cat({"lock"}, common_args(fx)), {"/cli/timeout", "--", "sleep", "30"}), dir);
  REQUIRE(wait_children(fx, "/cli/timeout", 1));
  const auto held = fx.children("/cli/timeout");

  auto r =
      run_zkr(cat(cat({"lock"}, common_args(fx)), {"--timeout", "500ms", "/cli/timeout", "--", "true"}), dir);
  CHECK(r.status == 75);
  CHECK(r.err.find("timed out") != std::string::npos);
  CHECK(fx.children("/cli/timeout") == held);

  // 0: one try without waiting (flock -n).
  CHECK(run_zkr(cat(cat({"lock"}, common_args(fx)), {"-w", "0", "/cli/timeout", "--", "true"}), dir).status ==
        75);
  // --quiet: nothing on stderr.
  auto q =
      run_zkr(cat(cat({"lock"}, common_args(fx)), {"-q", "-w", "200ms", "/cli/timeout", "--", "true"}), dir);
  CHECK(q.status == 75);
  CHECK(q.err.empty());
  CHECK(fx.children("/cli/timeout") == held);

  // The same for the other recipes.
  CHECK(run_zkr(cat(cat({"multi-lock"}, common_args(fx)),
                    {"-w", "300ms", "/cli/other", "/cli/timeout", "--", "true"}),
                dir)
            .status == 75);
  CHECK(fx.children("/cli/other").empty());
  CHECK(fx.children("/cli/timeout") == held);

  holder.signal(SIGTERM);
  CHECK(holder.wait() == 128 + SIGTERM);  // forwarded to sleep, which died of it
  CHECK(wait_children(fx, "/cli/timeout", 0));
}

TEST_CASE("zkr lock: a lock lost while COMMAND runs terminates it and exits 76", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  const std::string marker = dir.file("marker");
  const std::string script = "trap 'echo TERM >> \"$1\"; kill $! 2>/dev/null; exit 0' TERM; sleep 60 & wait";

  SECTION("--on-lost kill (the default)") {
    Zkr holder(cat(cat({"lock"}, common_args(fx)), {"/cli/lost", "--", "sh", "-c", script, "sh", marker}),
               dir);
    REQUIRE(wait_children(fx, "/cli/lost", 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let COMMAND install its trap
    // Someone else deletes our node: the lease watch reports it lost.
    fx.admin->remove("/cli/lost/" + fx.children("/cli/lost").front());
    auto st = holder.wait(std::chrono::seconds(30));
    INFO(holder.err());
    CHECK(st == 76);
    CHECK(slurp(marker).find("TERM") != std::string::npos);
    CHECK(holder.err().find("lost") != std::string::npos);
  }
  SECTION("--kill-after: SIGKILL when COMMAND ignores SIGTERM") {
    Zkr holder(cat(cat({"lock"}, common_args(fx)),
                   {"--kill-after", "500ms", "/cli/lost", "--", "sh", "-c", "trap '' TERM; sleep 60"}),
               dir);
    REQUIRE(wait_children(fx, "/cli/lost", 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    fx.admin->remove("/cli/lost/" + fx.children("/cli/lost").front());
    CHECK(holder.wait(std::chrono::seconds(30)) == 76);
  }
  SECTION("--on-lost ignore") {
    Zkr holder(cat(cat({"lock"}, common_args(fx)),
                   {"--on-lost", "ignore", "/cli/lost", "--", "sh", "-c", "sleep 1.5; exit 5"}),
               dir);
    REQUIRE(wait_children(fx, "/cli/lost", 1));
    fx.admin->remove("/cli/lost/" + fx.children("/cli/lost").front());
    CHECK(holder.wait(std::chrono::seconds(30)) == 5);
    CHECK(holder.err().find("--on-lost ignore") != std::string::npos);
  }
  CHECK(wait_children(fx, "/cli/lost", 0));
}

TEST_CASE("zkr lock: signals cancel the wait or are forwarded to COMMAND", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  const std::string marker = dir.file("marker");
  const std::string script =
      "trap 'echo got TERM >> \"$1\"; kill $! 2>/dev/null; exit 7' TERM; sleep 60 & wait";

  Zkr holder(cat(cat({"lock"}, common_args(fx)), {"/cli/sig", "--", "sh", "-c", script, "sh", marker}), dir);
  REQUIRE(wait_children(fx, "/cli/sig", 1));
  const auto held = fx.children("/cli/sig");

  // While waiting: the acquire is cancelled (its node deleted) and zkr exits 128+N.
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM}) {
    Zkr waiter(cat(cat({"lock"}, common_args(fx)), {"/cli/sig", "--", "touch", dir.file("never")}), dir);
    REQUIRE(wait_children(fx, "/cli/sig", 2));
    waiter.signal(sig);
    CHECK(waiter.wait() == 128 + sig);
    CHECK(fx.children("/cli/sig") == held);
  }
  CHECK(!fs::exists(dir.file("never")));

  // zkr ignores SIGPIPE itself (it would otherwise die with its node left behind).
  {
    Zkr waiter(cat(cat({"lock"}, common_args(fx)), {"/cli/sig", "--", "touch", dir.file("never")}), dir);
    REQUIRE(wait_children(fx, "/cli/sig", 2));
    waiter.signal(SIGPIPE);
    CHECK(!waiter.wait(std::chrono::milliseconds(500)));
    waiter.signal(SIGTERM);
    CHECK(waiter.wait() == 128 + SIGTERM);
    CHECK(fx.children("/cli/sig") == held);
  }

  // While COMMAND runs: forwarded; zkr waits for COMMAND, releases and exits with its status.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  holder.signal(SIGTERM);
  CHECK(holder.wait() == 7);
  CHECK(slurp(marker).find("got TERM") != std::string::npos);
  CHECK(wait_children(fx, "/cli/sig", 0));
}

TEST_CASE("zkr multi-lock on lock directories that do not exist yet", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  auto r = run_zkr(
      cat(cat({"multi-lock"}, common_args(fx)), {"-w", "20s", "/cli/fresh/a", "/cli/fresh/b", "--", "true"}),
      dir);
  INFO(r.err);
  CHECK(r.status == 0);
  CHECK(fx.children("/cli/fresh/a").empty());
  CHECK(fx.children("/cli/fresh/b").empty());
}

TEST_CASE("zkr multi-lock: all locks or none, one node per path in the environment", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  // The directories exist already (first use is the test case above).
  CreateOptions dirs;
  dirs.creating_parents = true;
  fx.admin->create("/cli/ma", dirs);
  fx.admin->create("/cli/mb", dirs);
  auto r =
      run_zkr(cat(cat({"multi-lock"}, common_args(fx)),
                  {"/cli/ma", "/cli/mb", "--", "sh", "-c", "echo $ZKR_LOCK_PATH; echo $ZKR_FENCING_TOKEN"}),
              dir);
  REQUIRE(r.status == 0);
  auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].rfind("/cli/ma/_c_", 0) == 0);
  CHECK(lines[0].find(",/cli/mb/_c_") != std::string::npos);
  CHECK(lines[1].find(',') != std::string::npos);

  // Exclusion with a plain lock on one of the paths.
  const std::string log = dir.file("log");
  std::vector<std::unique_ptr<Zkr>> procs;
  for (int i = 0; i < 3; ++i) {
    procs.push_back(
        std::make_unique<Zkr>(cat(cat({"multi-lock"}, common_args(fx)),
                                  {"/cli/ma", "/cli/mb", "--", "sh", "-c", log_script, "sh", log}),
                              dir));
    procs.push_back(std::make_unique<Zkr>(
        cat(cat({"lock"}, common_args(fx)), {"/cli/mb", "--", "sh", "-c", log_script, "sh", log}), dir));
  }
  for (auto& p : procs) CHECK(p->wait() == 0);
  // Tokens: the multi-lock's ZKR_FENCING_TOKEN is a list; compare by the order of the START lines only.
  auto entries = lines_of(slurp(log));
  REQUIRE(entries.size() == 12);
  for (std::size_t i = 0; i < entries.size(); i += 2) {
    CHECK(entries[i].rfind("START", 0) == 0);
    CHECK(entries[i + 1].rfind("END", 0) == 0);
  }
  CHECK(fx.children("/cli/ma").empty());
  CHECK(fx.children("/cli/mb").empty());
}

TEST_CASE("zkr: SIGQUIT to a holder is forwarded, the lock released, no process orphaned", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  const std::string pidfile = dir.file("pid");
  // A long session: a node left behind by a zkr that died would stay far longer than the checks wait.
  Zkr holder({"lock", "--connect", fx.server.connect_string(), "--session-timeout", "30s", "/cli/quit", "--",
              "sh", "-c", "echo $$ > \"$1\"; exec sleep 30", "sh", pidfile},
             dir);
  REQUIRE(wait_children(fx, "/cli/quit", 1));
  REQUIRE(eventually([&] { return !slurp(pidfile).empty(); }));
  const pid_t command = std::stoi(slurp(pidfile));
  holder.signal(SIGQUIT);
  CHECK(holder.wait(std::chrono::seconds(10)) == 128 + SIGQUIT);  // forwarded: sleep died of it
  CHECK(eventually([&] { return fx.children("/cli/quit").empty(); }, std::chrono::seconds(5)));
  const bool gone = eventually([&] { return ::kill(command, 0) != 0; }, std::chrono::seconds(5));
  CHECK(gone);
  if (!gone) ::kill(command, SIGKILL);  // our own grandchild, orphaned by a zkr that died
}

TEST_CASE("zkr started with SIGHUP ignored (nohup) leaves it ignored, for COMMAND too", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  const std::string marker = dir.file("marker");
  // COMMAND sends itself SIGHUP: it survives only if it inherited the ignored disposition.
  Zkr holder(cat(cat({"lock"}, common_args(fx)),
                 {"/cli/nohup", "--", "sh", "-c",
                  "sleep 0.5; kill -HUP $$; sleep 0.5; echo survived > \"$1\"", "sh", marker}),
             dir, {SIGHUP});
  REQUIRE(wait_children(fx, "/cli/nohup", 1));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  holder.signal(SIGHUP);  // ignored by zkr too: not forwarded
  auto st = holder.wait(std::chrono::seconds(30));
  INFO(holder.err());
  CHECK(st == 0);
  CHECK(slurp(marker) == "survived\n");
  CHECK(wait_children(fx, "/cli/nohup", 0));

  // And while waiting: a SIGHUP does not cancel the wait.
  Zkr first(cat(cat({"lock"}, common_args(fx)), {"/cli/nohup", "--", "sleep", "1"}), dir);
  REQUIRE(wait_children(fx, "/cli/nohup", 1));
  Zkr waiter(cat(cat({"lock"}, common_args(fx)), {"/cli/nohup", "--", "true"}), dir, {SIGHUP});
  REQUIRE(wait_children(fx, "/cli/nohup", 2));
  waiter.signal(SIGHUP);
  CHECK(first.wait() == 0);
  CHECK(waiter.wait() == 0);

  // Without nohup, COMMAND starts with the default disposition of every signal, SIGPIPE included (zkr
  // ignores SIGPIPE itself).
  auto pipe = run_zkr(
      cat(cat({"lock"}, common_args(fx)), {"/cli/nohup", "--", "sh", "-c", "kill -PIPE $$; exit 0"}), dir);
  CHECK(pipe.status == 128 + SIGPIPE);
}

TEST_CASE("zkr: a terminated COMMAND takes its whole process group along", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  const std::string late = dir.file("late");
  // A grandchild that would write after the lock went to the next holder.
  const std::vector<std::string> command{"--", "sh", "-c", "(sleep 2; echo X >> \"$1\") & wait", "sh", late};

  SECTION("the lock is lost") {
    Zkr holder(cat(cat(cat({"lock"}, common_args(fx)), {"/cli/group"}), command), dir);
    REQUIRE(wait_children(fx, "/cli/group", 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    fx.admin->remove("/cli/group/" + fx.children("/cli/group").front());
    CHECK(holder.wait(std::chrono::seconds(30)) == 76);
  }
  SECTION("revocation") {
    Zkr holder(cat(cat(cat({"lock"}, common_args(fx)), {"--revocable", "/cli/group"}), command), dir);
    REQUIRE(wait_children(fx, "/cli/group", 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto r = run_zkr(
        cat(cat({"revoke"}, common_args(fx)), {"/cli/group/" + fx.children("/cli/group").front()}), dir);
    CHECK(r.status == 0);
    CHECK(holder.wait(std::chrono::seconds(30)) == 77);
  }
  SECTION("a forwarded signal") {
    Zkr holder(cat(cat(cat({"lock"}, common_args(fx)), {"/cli/group"}), command), dir);
    REQUIRE(wait_children(fx, "/cli/group", 1));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    holder.signal(SIGTERM);
    CHECK(holder.wait(std::chrono::seconds(30)) == 128 + SIGTERM);
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));
  CHECK(!fs::exists(late));
  CHECK(wait_children(fx, "/cli/group", 0));
}

TEST_CASE("zkr: a second signal while waiting closes at once, even with the server not answering", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  Zkr holder(cat(cat({"lock"}, common_args(fx)), {"/cli/second", "--", "sleep", "60"}), dir);
  REQUIRE(wait_children(fx, "/cli/second", 1));
  Zkr waiter({"lock", "--connect", fx.server.connect_string(), "--session-timeout", "30s", "/cli/second",
              "--", "true"},
             dir);
  REQUIRE(wait_children(fx, "/cli/second", 2));
  fx.server.pause();  // the cancelled acquire's delete gets no answer
  waiter.signal(SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  CHECK(waiter.running());
  const auto start = std::chrono::steady_clock::now();
  waiter.signal(SIGTERM);
  auto st = waiter.wait(std::chrono::seconds(10));
  const auto took = std::chrono::steady_clock::now() - start;
  fx.server.resume();
  INFO(waiter.err());
  CHECK(st == 128 + SIGTERM);
  CHECK(took < std::chrono::seconds(8));
  holder.signal(SIGTERM);
  CHECK(holder.wait() == 128 + SIGTERM);
}

TEST_CASE("zkr revoke: a --revocable holder terminates COMMAND, releases and exits 77", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  const std::string marker = dir.file("marker");
  const std::string script = "trap 'echo TERM >> \"$1\"; kill $! 2>/dev/null; exit 0' TERM; sleep 60 & wait";

  CHECK(run_zkr(cat(cat({"revoke"}, common_args(fx)), {"/cli/rev/no-such-node"}), dir).status == 70);

  // Only lock nodes are revoked: not a configuration node, not an ephemeral node of another name, not a
  // persistent node named like a lock node. Their data stays.
  CreateOptions config;
  config.creating_parents = true;
  config.data = "keep";
  fx.admin->create("/cli/conf/setting", config);
  fx.admin->create("/cli/conf/_c_9b1f2c3d-1111-4222-8333-944455566677-lock-0000000001", config);
  CreateOptions eph = config;
  eph.mode = CreateMode::ephemeral;
  fx.admin->create("/cli/conf/not-a-lock", eph);
  for (const char* node : {"/cli/conf", "/cli/conf/setting", "/cli/conf/not-a-lock",
                           "/cli/conf/_c_9b1f2c3d-1111-4222-8333-944455566677-lock-0000000001"}) {
    auto r = run_zkr(cat(cat({"revoke"}, common_args(fx)), {node}), dir);
    INFO(node << ": " << r.err);
    CHECK(r.status == 64);
    CHECK(r.err.find("not a lock node") != std::string::npos);
    if (std::string(node) != "/cli/conf") CHECK(fx.admin->get_data(node).data == "keep");
  }

  SECTION("revocable") {
    Zkr holder(cat(cat({"lock"}, common_args(fx)),
                   {"--revocable", "/cli/rev", "--", "sh", "-c", script, "sh", marker}),
               dir);
    REQUIRE(wait_children(fx, "/cli/rev", 1));
    Zkr next(cat(cat({"lock"}, common_args(fx)), {"/cli/rev", "--", "true"}), dir);
    REQUIRE(wait_children(fx, "/cli/rev", 2));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    auto nodes = fx.children("/cli/rev");
    std::sort(nodes.begin(), nodes.end(),
              [](auto& a, auto& b) { return sequential_suffix(a) < sequential_suffix(b); });
    auto r = run_zkr(cat(cat({"revoke"}, common_args(fx)), {"/cli/rev/" + nodes.front()}), dir);
    CHECK(r.status == 0);
    CHECK(holder.wait(std::chrono::seconds(30)) == 77);
    CHECK(slurp(marker).find("TERM") != std::string::npos);
    CHECK(next.wait() == 0);  // the next in line got it
  }
  SECTION("not revocable: the request is ignored") {
    Zkr holder(cat(cat({"lock"}, common_args(fx)), {"/cli/rev", "--", "sh", "-c", script, "sh", marker}),
               dir);
    REQUIRE(wait_children(fx, "/cli/rev", 1));
    auto r =
        run_zkr(cat(cat({"revoke"}, common_args(fx)), {"/cli/rev/" + fx.children("/cli/rev").front()}), dir);
    CHECK(r.status == 0);
    CHECK(!holder.wait(std::chrono::seconds(1)));
    holder.signal(SIGTERM);
    CHECK(holder.wait() == 0);
  }
  CHECK(wait_children(fx, "/cli/rev", 0));
}

TEST_CASE("zkr lock and a Java Curator InterProcessMutex exclude each other", "[cli][interop]") {
  if (!have_zkr()) return;
  if (!curator_peer_or_skip()) return;
  ServerFixture fx;
  TempDir dir;
  CuratorPeer peer(fx.server.connect_string(), "mutex", {"/cli/java"});

  // Java holds: zkr times out.
  REQUIRE(peer.call("acquire").rfind("acquired /cli/java/", 0) == 0);
  CHECK(
      run_zkr(cat(cat({"lock"}, common_args(fx)), {"-w", "500ms", "/cli/java", "--", "true"}), dir).status ==
      75);
  REQUIRE(peer.call("release") == "released");

  // zkr holds: Java times out, then gets it once zkr is done.
  Zkr holder(cat(cat({"lock"}, common_args(fx)), {"/cli/java", "--", "sleep", "2"}), dir);
  REQUIRE(wait_children(fx, "/cli/java", 1));
  CHECK(peer.call("acquire 300") == "timeout");
  CHECK(peer.call("acquire 30000", std::chrono::seconds(40)).rfind("acquired", 0) == 0);
  CHECK(holder.wait() == 0);
  REQUIRE(peer.call("release") == "released");

  // Both at once on one log: strictly alternating START/END, tokens strictly increasing across languages.
  const std::string log = dir.file("log");
  peer.send("loop 5 150000 " + log);
  std::vector<std::unique_ptr<Zkr>> procs;
  for (int i = 0; i < 4; ++i)
    procs.push_back(std::make_unique<Zkr>(
        cat(cat({"lock"}, common_args(fx)), {"/cli/java", "--", "sh", "-c", log_script, "sh", log}), dir));
  for (auto& p : procs) CHECK(p->wait() == 0);
  CHECK(peer.answer(std::chrono::seconds(60)) == "done 5");
  check_exclusive_log(log, 9);
  CHECK(wait_children(fx, "/cli/java", 0));
}
