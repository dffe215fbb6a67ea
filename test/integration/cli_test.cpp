// The zkr command-line tool, run as separate processes against a real ZooKeeper: mutual exclusion and fencing
// tokens across processes, --timeout (-w 0 on free and held locks), a lock lost while COMMAND runs, signals
// (nohup, a second signal on a paused server, COMMAND's process group), inspect (text and JSON, invalid
// UTF-8) over mutex, read-write and semaphore directories and leader elections (LeaderLatch, LeaderSelector),
// `zkr lead` (one leader at a time, leadership lost or suspended, --requeue), revoke, usage errors, and
// exclusion against Java Curator.
//
// The zkr binary comes from the compile definition ZKR_CLI_PATH (test/CMakeLists.txt); without it the tests
// skip with a WARN.

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <boost/json/src.hpp>  // header-only Boost.JSON, to check that `zkr inspect --json` is valid JSON
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#include <zkr/recipes/leader_latch.hpp>
#include <zkr/recipes/leader_selector.hpp>

#include "curator_peer.hpp"
#include "fixture.hpp"
#include "tls_support.hpp"

using namespace zkr;
using namespace zkr::test;
namespace fs = std::filesystem;

extern char** environ;

namespace {

#ifdef ZKR_CLI_PATH
const char* const zkr_path = ZKR_CLI_PATH;
#else
const char* const zkr_path = nullptr;
#endif

bool have_zkr() {
  if (zkr_path && ::access(zkr_path, X_OK) == 0) return true;
  WARN("zkr binary not available (ZKR_CLI_PATH not defined or not built): skipping");
  return false;
}

/// A scratch directory, removed at the end of the test case.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "zkr-cli-test-XXXXXX").string();
    if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string slurp(const std::string& file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty()) v.push_back(l);
  return v;
}

/// One zkr process (our own child; only ever signalled by its pid). Killed and reaped by the destructor.
class Zkr {
 public:
  /// `ignore`: signals zkr starts with ignored (as `nohup` leaves SIGHUP). `env`: "NAME=value" entries added to
  /// this process's environment for zkr.
  Zkr(std::vector<std::string> args, const TempDir& dir, std::vector<int> ignore = {},
      std::vector<std::string> env = {}) {
    static int counter = 0;
    const int n = ++counter;
    out_ = dir.file("out-" + std::to_string(n));
    err_ = dir.file("err-" + std::to_string(n));
    args.insert(args.begin(), zkr_path);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (char** e = environ; *e; ++e) envp.push_back(*e);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addclosefrom_np(&fa, 3);
    // An ignored disposition survives exec: ignore the signals here for the moment of the spawn.
    std::vector<struct sigaction> saved(ignore.size());
    for (std::size_t i = 0; i < ignore.size(); ++i) {
      struct sigaction ign {};
      ign.sa_handler = SIG_IGN;
      ::sigaction(ignore[i], &ign, &saved[i]);
    }
    int rc = posix_spawn(&pid_, zkr_path, &fa, nullptr, argv.data(), envp.data());
    for (std::size_t i = 0; i < ignore.size(); ++i) ::sigaction(ignore[i], &saved[i], nullptr);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) throw std::runtime_error("cannot start zkr");
  }
  ~Zkr() {
    if (pid_ > 0 && !status_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  Zkr(const Zkr&) = delete;
  Zkr& operator=(const Zkr&) = delete;

  /// The exit status (128+N for death by signal N), or nullopt when still running after `limit`.
  std::optional<int> wait(std::chrono::milliseconds limit = std::chrono::seconds(60)) {
    if (status_) return status_;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      int st = 0;
      pid_t r = ::waitpid(pid_, &st, WNOHANG);
      if (r == pid_) {
        status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        return status_;
      }
      if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  bool running() { return !wait(std::chrono::milliseconds(0)); }
  void signal(int sig) {
    if (pid_ > 0 && !status_) ::kill(pid_, sig);
  }
  std::string out() const { return slurp(out_); }
  std::string err() const { return slurp(err_); }

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;
  std::string out_, err_;
};

/// Runs zkr to completion; returns {status, stdout, stderr}.
struct Result {
  int status = -1;
  std::string out, err;
};
Result run_zkr(std::vector<std::string> args, const TempDir& dir,
               std::chrono::milliseconds limit = std::chrono::seconds(90), std::vector<std::string> env = {}) {
  Zkr z(std::move(args), dir, {}, std::move(env));
  auto st = z.wait(limit);
  return {st ? *st : -1, z.out(), z.err()};
}

/// A shell script (for `sh -c`) that appends `START <nanos> <token> zkr`, holds, then appends `END <nanos>
/// zkr` to $1: the same format as the Java peer's `loop`.
const std::string log_script =
    "echo \"START $(date +%s%N) $ZKR_FENCING_TOKEN zkr\" >> \"$1\"; sleep 0.15; "
    "echo \"END $(date +%s%N) zkr\" >> \"$1\"";

/// Checks a START/END log: strictly alternating (no two holders at once) and strictly increasing tokens.
void check_exclusive_log(const std::string& file, std::size_t expected_pairs) {
  auto lines = lines_of(slurp(file));
  INFO(slurp(file));
  REQUIRE(lines.size() == 2 * expected_pairs);
  long long last_token = -1;
  for (std::size_t i = 0; i < lines.size(); i += 2) {
    std::istringstream start(lines[i]), end(lines[i + 1]);
    std::string s, e, who_s, who_e;
    long long t0 = 0, t1 = 0, token = 0;
    start >> s >> t0 >> token >> who_s;
    end >> e >> t1 >> who_e;
    CHECK(s == "START");
    CHECK(e == "END");
    CHECK(who_s == who_e);  // the END belongs to the holder that wrote the START
    CHECK(t1 >= t0);
    CHECK(token > last_token);
    last_token = token;
  }
}

std::vector<std::string> common_args(ServerFixture& fx) {
  std::vector<std::string> args{"--connect", fx.server.connect_string(), "--session-timeout", "10s"};
  for (const char* a : {"--connection-timeout", "20s", "--handshake-timeout", "2s"}) args.emplace_back(a);
  return args;
}

std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// A member of a JSON object.
const boost::json::value& get(const boost::json::value& v, const char* key) { return v.as_object().at(key); }

/// Waits until `path` has `n` children.
bool wait_children(ServerFixture& fx, const std::string& path, std::size_t n) {
  return eventually([&] { return fx.children(path).size() == n; }, std::chrono::seconds(30));
}

}  // namespace

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
    auto r = run_zkr({"lock", "--tls-ca", "ca.pem", "--tls-cert", "c.pem", "--tls-key", "k.pem", "/cli/tls", "--",
                      "true"},
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
    return std::vector<std::string>{"--connect", f.server.secure_connect_string(), "--connection-timeout", "20s",
                                    "--tls-ca", files.ca.string(), "--tls-cert", files.certificate.string(),
                                    "--tls-key", files.key.string(), "--tls-key-password-file",
                                    dir.file(password_file)};
  };
  auto ok = run_zkr(cat(cat({"lock", "/cli/tls"}, tls(a, "pw")), {"-w", "0", "--", "echo", "ran"}), dir);
  INFO(ok.err);
  CHECK(ok.status == 0);
  CHECK(ok.out == "ran\n");

  auto wrong = run_zkr(cat(cat({"lock", "/cli/tls"}, tls(a, "wrong-pw")), {"--", "true"}), dir);
  CHECK(wrong.status == 78);
  CHECK(wrong.err.find("not-the-password") == std::string::npos);

  auto partial = run_zkr({"lock", "--tls-ca", a.ca.string(), "/cli/tls", "--", "true"}, dir);
  CHECK(partial.status == 64);

  const auto x = f.certs.client("client-x", {.issuer = zkr::testing::CertificateAuthority::foreign});
  auto foreign = tls(x, "pw");
  foreign[5] = a.ca.string();  // --tls-ca: it trusts the server, the server does not trust it
  auto refused = run_zkr(cat(cat({"lock", "/cli/tls"}, foreign), {"-w", "0", "--", "true"}), dir);
  INFO(refused.err);
  CHECK(refused.status == 69);
  CHECK(refused.err.find("TLS") != std::string::npos);

  // The environment stands for the options (docs/cli.md): $ZKR_TLS_CA, _CERT, _KEY, and the key's password
  // from $ZKR_TLS_KEY_PASSWORD_FILE or $ZKR_TLS_KEY_PASSWORD; an option given on the command line wins.
  const std::vector<std::string> plain_args{"--connect", f.server.secure_connect_string(), "--connection-timeout",
                                            "20s"};
  const std::vector<std::string> files_env{"ZKR_TLS_CA=" + a.ca.string(), "ZKR_TLS_CERT=" + a.certificate.string(),
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
  auto option_wins = run_zkr(
      cat(cat({"lock", "/cli/tls"}, plain_args), {"--tls-key-password-file", dir.file("wrong-pw"), "--", "true"}),
      dir, std::chrono::seconds(90), with(files_env, {"ZKR_TLS_KEY_PASSWORD_FILE=" + dir.file("pw")}));
  CHECK(option_wins.status == 78);
  // Half the settings in the environment: refused before connecting, as with the options.
  auto half = run_zkr(cat(cat({"lock", "/cli/tls"}, plain_args), {"--", "true"}), dir, std::chrono::seconds(90),
                      {"ZKR_TLS_CA=" + a.ca.string()});
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

TEST_CASE("zkr inspect: mutex, read-write and semaphore directories, as text and JSON", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  auto inspect = [&](const std::string& path, bool json) {
    auto args = cat(cat({"inspect"}, common_args(fx)), {path});
    if (json) args.push_back("--json");
    auto r = run_zkr(args, dir);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return r.out;
  };
  auto nodes_of = [](const boost::json::value& doc, std::size_t queue) {
    return get(get(doc, "queues").as_array().at(queue), "nodes").as_array();
  };

  SECTION("a directory that does not exist") {
    CHECK(inspect("/cli/none", false).find("does not exist") != std::string::npos);
    auto doc = boost::json::parse(inspect("/cli/none", true));
    CHECK(get(doc, "exists").as_bool() == false);
  }

  SECTION("mutex, with a foreign node") {
    Zkr holder(
        cat(cat({"lock"}, common_args(fx)), {"--data", "holder \"one\"", "/cli/m", "--", "sleep", "60"}),
        dir);
    REQUIRE(wait_children(fx, "/cli/m", 1));
    Zkr waiter(cat(cat({"lock"}, common_args(fx)), {"--data", "waiter", "/cli/m", "--", "true"}), dir);
    REQUIRE(wait_children(fx, "/cli/m", 2));
    CreateOptions eph;
    eph.mode = CreateMode::ephemeral;
    eph.data = "x";
    fx.admin->create("/cli/m/not-a-lock", eph);

    auto text = inspect("/cli/m", false);
    INFO(text);
    CHECK(text.find("mutex, 3 nodes") != std::string::npos);
    CHECK(text.find("holder \"one\"") != std::string::npos);
    CHECK(text.find("foreign") != std::string::npos);

    auto doc = boost::json::parse(inspect("/cli/m", true));
    CHECK(get(doc, "type").as_string() == "mutex");
    auto nodes = nodes_of(doc, 0);
    REQUIRE(nodes.size() == 3);
    CHECK(get(nodes[0], "position").as_int64() == 1);
    CHECK(get(nodes[0], "holds").as_bool());
    CHECK(get(nodes[0], "kind").as_string() == "lock");
    CHECK(get(nodes[0], "data").as_string() == "holder \"one\"");
    CHECK(get(nodes[0], "owner").as_string().size() == 18);
    CHECK(get(nodes[0], "age_ms").as_int64() >= 0);
    CHECK(!get(nodes[1], "holds").as_bool());
    CHECK(get(nodes[1], "data").as_string() == "waiter");
    CHECK(get(nodes[2], "foreign").as_bool());
    CHECK(get(nodes[0], "fencing_token").as_int64() < get(nodes[1], "fencing_token").as_int64());
    fx.admin->remove("/cli/m/not-a-lock");
    holder.signal(SIGTERM);
    CHECK(holder.wait() == 128 + SIGTERM);
    CHECK(waiter.wait() == 0);
  }

  SECTION("read-write lock") {
    Zkr r1(cat(cat({"read-lock"}, common_args(fx)), {"/cli/rw", "--", "sleep", "60"}), dir);
    REQUIRE(wait_children(fx, "/cli/rw", 1));
    Zkr r2(cat(cat({"read-lock"}, common_args(fx)), {"/cli/rw", "--", "sleep", "60"}), dir);
    REQUIRE(wait_children(fx, "/cli/rw", 2));
    // Two readers hold at once; a writer and a reader behind it wait.
    Zkr w(cat(cat({"write-lock"}, common_args(fx)), {"/cli/rw", "--", "true"}), dir);
    REQUIRE(wait_children(fx, "/cli/rw", 3));
    Zkr r3(cat(cat({"read-lock"}, common_args(fx)), {"/cli/rw", "--", "true"}), dir);
    REQUIRE(wait_children(fx, "/cli/rw", 4));

    auto text = inspect("/cli/rw", false);
    INFO(text);
    CHECK(text.find("read-write lock, 4 nodes") != std::string::npos);
    auto doc = boost::json::parse(inspect("/cli/rw", true));
    CHECK(get(doc, "type").as_string() == "read-write lock");
    auto nodes = nodes_of(doc, 0);
    REQUIRE(nodes.size() == 4);
    const char* kinds[] = {"read", "read", "write", "read"};
    const bool holds[] = {true, true, false, false};
    for (std::size_t i = 0; i < 4; ++i) {
      CHECK(get(nodes[i], "kind").as_string() == kinds[i]);
      CHECK(get(nodes[i], "holds").as_bool() == holds[i]);
    }
    // A reader arriving now may not pass the queued writer.
    CHECK(run_zkr(cat(cat({"read-lock"}, common_args(fx)), {"-w", "300ms", "/cli/rw", "--", "true"}), dir)
              .status == 75);
    r1.signal(SIGTERM);
    r2.signal(SIGTERM);
    CHECK(w.wait() == 0);
    CHECK(r3.wait() == 0);
  }

  SECTION("semaphore") {
    Zkr a(cat(cat({"semaphore"}, common_args(fx)), {"--leases", "2", "/cli/sem", "--", "sleep", "60"}), dir);
    Zkr b(cat(cat({"semaphore"}, common_args(fx)), {"--leases", "2", "/cli/sem", "--", "sleep", "60"}), dir);
    REQUIRE(wait_children(fx, "/cli/sem/leases", 2));
    Zkr c(cat(cat({"semaphore"}, common_args(fx)), {"--leases", "2", "/cli/sem", "--", "true"}), dir);
    REQUIRE(wait_children(fx, "/cli/sem/locks", 1));
    REQUIRE(wait_children(fx, "/cli/sem/leases", 3));

    auto text = inspect("/cli/sem", false);
    INFO(text);
    CHECK(text.find("semaphore") != std::string::npos);
    CHECK(text.find("/cli/sem/leases") != std::string::npos);
    CHECK(text.find("/cli/sem/locks") != std::string::npos);
    auto doc = boost::json::parse(inspect("/cli/sem", true));
    CHECK(get(doc, "type").as_string() == "semaphore");
    auto leases = nodes_of(doc, 0);
    auto locks = nodes_of(doc, 1);
    REQUIRE(leases.size() == 3);
    REQUIRE(locks.size() == 1);
    int holders = 0;
    for (auto& l : leases) {
      CHECK(get(l, "kind").as_string() == "lease");
      holders += get(l, "holds").as_bool() ? 1 : 0;
    }
    CHECK(holders == 2);
    CHECK(get(locks[0], "kind").as_string() == "lock");
    // The waiter's lease node is the one not holding, and it owns the internal lock.
    CHECK(get(leases[2], "owner") == get(locks[0], "owner"));
    CHECK(!get(leases[2], "holds").as_bool());
    // A third lease within 300 ms: no.
    CHECK(run_zkr(
              cat(cat({"semaphore"}, common_args(fx)), {"-n", "2", "-w", "300ms", "/cli/sem", "--", "true"}),
              dir)
              .status == 75);
    a.signal(SIGTERM);
    CHECK(c.wait() == 0);
    b.signal(SIGTERM);
    CHECK(b.wait() == 128 + SIGTERM);
    CHECK(wait_children(fx, "/cli/sem/leases", 0));
  }
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

TEST_CASE("zkr inspect --json: data that is not valid UTF-8 comes out as valid UTF-8 with U+FFFD", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  const std::string r = "\xef\xbf\xbd";  // U+FFFD
  const std::vector<std::pair<std::string, std::string>> cases{
      {"a\xff\x80\x80"
       "b \xed\xa0\x80",
       "a" + r + r + r + "b " + r + r + r},  // bad lead; surrogate
      {"\xc0\x80", r + r},                   // overlong 2-byte
      {"\xe0\x80\xaf", r + r + r},           // overlong 3-byte
      {"\xf0\x8f\xbf\xbf", r + r + r + r},   // overlong 4-byte
      {"\xf4\x90\x80\x80", r + r + r + r},   // above U+10FFFF
      {"x\xe2\x82", "x" + r + r},            // truncated
      {"\xf0\x9f\x98\x80 ok \xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf",
       "\xf0\x9f\x98\x80 ok \xc3\xa9 \xe2\x82\xac \xf4\x8f\xbf\xbf"},
  };
  CreateOptions opts;
  opts.creating_parents = true;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    opts.data = cases[i].first;
    fx.admin->create("/cli/utf8/n" + std::to_string(i), opts);
  }
  auto res = run_zkr(cat(cat({"inspect"}, common_args(fx)), {"/cli/utf8", "--json"}), dir);
  REQUIRE(res.status == 0);
  INFO(res.out);
  boost::json::value doc;
  REQUIRE_NOTHROW(doc = boost::json::parse(res.out));  // Boost.JSON rejects invalid UTF-8
  auto nodes = get(get(doc, "queues").as_array().at(0), "nodes").as_array();
  REQUIRE(nodes.size() == cases.size());
  for (auto& n : nodes) {
    const std::string name(get(n, "name").as_string());
    const std::size_t i = std::stoul(name.substr(1));
    INFO(name);
    CHECK(std::string(get(n, "data").as_string()) == cases.at(i).second);
  }
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
  std::string why;
  if (!CuratorPeer::available(&why)) {
    WARN("Java Curator peer unavailable, skipping: " << why);
    return;
  }
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

namespace {

/// A LeaderSelector participant that leads until it is asked to stop.
class HoldingLeader : public LeaderSelectorListenerAdapter {
 public:
  std::atomic<bool> leading{false};
  void take_leadership(CuratorFramework&, Leadership& l) override {
    leading = true;
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock lk(m);
    cv.wait_for(lk, l.stop_token(), std::chrono::seconds(60), [] { return false; });
    leading = false;
  }
};

/// A session id as zkr shows it: "0x" and 16 lower-case hex digits.
std::string hex_session(std::int64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(id));
  return buf;
}

std::vector<std::string> lead_args(ServerFixture& fx, std::vector<std::string> rest) {
  return cat(cat({"lead"}, common_args(fx)), rest);
}

}  // namespace

TEST_CASE("zkr inspect: leader elections show their participants in Curator order and the leader", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  auto inspect = [&](std::vector<std::string> args) {
    auto r = run_zkr(cat(cat({"inspect"}, common_args(fx)), args), dir);
    INFO(r.err);
    REQUIRE(r.status == 0);
    return r.out;
  };
  auto nodes_of = [](const boost::json::value& doc) {
    return get(get(doc, "queues").as_array().at(0), "nodes").as_array();
  };

  SECTION("LeaderLatch") {
    auto c1 = fx.client();
    auto c2 = fx.client();
    LeaderLatch first(*c1, "/cli/latch", "alpha");
    first.start();
    REQUIRE(first.await(std::chrono::seconds(20)));
    LeaderLatch second(*c2, "/cli/latch", "beta");
    second.start();
    REQUIRE(wait_children(fx, "/cli/latch", 2));

    auto text = inspect({"/cli/latch"});
    INFO(text);
    CHECK(text.find("leader latch, 2 nodes") != std::string::npos);
    CHECK(text.find("LeaderLatch election") != std::string::npos);
    CHECK(text.find("leader: alpha") != std::string::npos);
    CHECK(text.find("beta") != std::string::npos);

    auto doc = boost::json::parse(inspect({"/cli/latch", "--json"}));
    CHECK(get(doc, "type").as_string() == "leader latch");
    auto nodes = nodes_of(doc);
    REQUIRE(nodes.size() == 2);
    CHECK(get(nodes[0], "id").as_string() == "alpha");
    CHECK(get(nodes[0], "leader").as_bool());
    CHECK(get(nodes[0], "kind").as_string() == "latch");
    CHECK(get(nodes[1], "id").as_string() == "beta");
    CHECK(!get(nodes[1], "leader").as_bool());
    CHECK(get(nodes[0], "sequence").as_int64() < get(nodes[1], "sequence").as_int64());
    CHECK(get(nodes[0], "owner").as_string() == hex_session(c1->session_id()));
    CHECK(get(nodes[1], "owner").as_string() == hex_session(c2->session_id()));
    CHECK(get(get(doc, "leader"), "id").as_string() == "alpha");
    CHECK(get(nodes[0], "path").as_string() == first.our_path());

    // The leader leaves: the next one in Curator's order leads, as LeaderLatch itself sees it.
    first.close();
    REQUIRE(second.await(std::chrono::seconds(20)));
    auto after = boost::json::parse(inspect({"/cli/latch", "--json"}));
    CHECK(get(get(after, "leader"), "id").as_string() == "beta");
    CHECK(nodes_of(after).size() == 1);
    second.close();
  }

  SECTION("LeaderSelector, named with --type selector") {
    auto c1 = fx.client();
    auto c2 = fx.client();
    auto l1 = std::make_shared<HoldingLeader>();
    auto l2 = std::make_shared<HoldingLeader>();
    LeaderSelector first(*c1, "/cli/selector", l1);
    first.set_id("sel-one");
    first.start();
    REQUIRE(eventually([&] { return l1->leading.load(); }));
    LeaderSelector second(*c2, "/cli/selector", l2);
    second.set_id("sel-two");
    second.start();
    REQUIRE(wait_children(fx, "/cli/selector", 2));

    auto text = inspect({"--type", "selector", "/cli/selector"});
    INFO(text);
    CHECK(text.find("leader selector, 2 nodes") != std::string::npos);
    CHECK(text.find("LeaderSelector (mutex) election") != std::string::npos);
    CHECK(text.find("leader: sel-one") != std::string::npos);

    auto doc = boost::json::parse(inspect({"--type", "selector", "--json", "/cli/selector"}));
    CHECK(get(doc, "type").as_string() == "leader selector");
    auto nodes = nodes_of(doc);
    REQUIRE(nodes.size() == 2);
    CHECK(get(nodes[0], "id").as_string() == "sel-one");
    CHECK(get(nodes[0], "leader").as_bool());
    CHECK(get(nodes[1], "id").as_string() == "sel-two");
    CHECK(!get(nodes[1], "leader").as_bool());
    CHECK(get(get(doc, "leader"), "id").as_string() == first.get_leader().id);

    // Untyped, the same nodes read as the mutex they are.
    CHECK(get(boost::json::parse(inspect({"--json", "/cli/selector"})), "type").as_string() == "mutex");
    first.close();
    second.close();
  }

  SECTION("an election without participants") {
    auto doc = boost::json::parse(inspect({"--type", "latch", "--json", "/cli/nobody"}));
    CHECK(get(doc, "leader").is_null());
    CHECK(inspect({"--type", "latch", "/cli/nobody"}).find("does not exist") != std::string::npos);
  }
}

TEST_CASE("zkr lead: processes on one path run COMMAND one at a time, with the fencing token", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  const std::string log = dir.file("log");
  std::string flag, path;
  SECTION("LeaderLatch (the default)") {
    flag = "--latch";
    path = "/cli/lead-latch";
  }
  SECTION("LeaderSelector") {
    flag = "--selector";
    path = "/cli/lead-selector";
  }
  constexpr int n = 3;
  std::vector<std::unique_ptr<Zkr>> procs;
  for (int i = 0; i < n; ++i)
    procs.push_back(std::make_unique<Zkr>(
        lead_args(fx, {flag, "--id", "p" + std::to_string(i), path, "--", "sh", "-c", log_script, "sh", log}),
        dir));
  for (auto& p : procs) {
    auto st = p->wait();
    INFO(p->err());
    CHECK(st == 0);
  }
  check_exclusive_log(log, n);
  CHECK(fx.children(path).empty());

  // The node is the election's kind, carries the id, and COMMAND gets it and the token.
  auto r = run_zkr(lead_args(fx, {flag, "--id", "me", path, "--", "sh", "-c",
                                  "echo $ZKR_LOCK_PATH $ZKR_FENCING_TOKEN $ZKR_SESSION_ID"}),
                   dir);
  INFO(r.err);
  REQUIRE(r.status == 0);
  std::istringstream in(r.out);
  std::string node, session;
  long long token = 0;
  in >> node >> token >> session;
  CHECK(node.rfind(path + "/_c_", 0) == 0);
  CHECK(node.find(flag == "--latch" ? "-latch-" : "-lock-") != std::string::npos);
  CHECK(token > 0);
  CHECK(session.rfind("0x", 0) == 0);
  CHECK(run_zkr(lead_args(fx, {flag, path, "--", "sh", "-c", "exit 42"}), dir).status == 42);
  CHECK(fx.children(path).empty());
}

TEST_CASE("zkr lead: a library LeaderLatch leads first, zkr lead only after it closes", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  auto c = fx.client();
  LeaderLatch latch(*c, "/cli/mixed", "library");
  latch.start();
  REQUIRE(latch.await(std::chrono::seconds(20)));
  const std::string started = dir.file("started");
  Zkr z(lead_args(fx, {"--id", "zkr", "/cli/mixed", "--", "touch", started}), dir);
  REQUIRE(wait_children(fx, "/cli/mixed", 2));
  CHECK(!z.wait(std::chrono::milliseconds(500)));
  CHECK(!fs::exists(started));
  CHECK(latch.get_participants().at(1).id == "zkr");
  latch.close();
  CHECK(z.wait() == 0);
  CHECK(fs::exists(started));
  CHECK(wait_children(fx, "/cli/mixed", 0));
}

TEST_CASE("zkr lead: leadership lost or suspended terminates COMMAND", "[cli]") {
  if (!have_zkr()) return;
  ServerFixture fx;
  TempDir dir;
  const std::string marker = dir.file("marker");
  const std::string script =
      "echo START $ZKR_FENCING_TOKEN >> \"$1\"; "
      "trap 'echo TERM >> \"$1\"; kill $! 2>/dev/null; exit 0' TERM; sleep 60 & wait";
  auto count = [&](const std::string& word) {
    auto text = slurp(marker);
    std::size_t k = 0;
    for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++k;
    return k;
  };

  SECTION("the server stops: the connection is suspended, exit 76") {
    Zkr leader(lead_args(fx, {"/cli/lost", "--", "sh", "-c", script, "sh", marker}), dir);
    REQUIRE(wait_children(fx, "/cli/lost", 1));
    REQUIRE(eventually([&] { return count("START") == 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let COMMAND install its trap
    fx.server.stop();
    auto st = leader.wait(std::chrono::seconds(40));
    INFO(leader.err());
    CHECK(st == 76);
    CHECK(count("TERM") == 1);
    // Ended on SUSPENDED, as Curator's LeaderSelectorListenerAdapter does, not only once the session is lost.
    CHECK(leader.err().find("suspended: leadership may be lost: terminating COMMAND") != std::string::npos);
    fx.server.start();
  }
  SECTION("our node is deleted: exit 76") {
    Zkr leader(lead_args(fx, {"--selector", "/cli/lost", "--", "sh", "-c", script, "sh", marker}), dir);
    REQUIRE(wait_children(fx, "/cli/lost", 1));
    REQUIRE(eventually([&] { return count("START") == 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    fx.admin->remove("/cli/lost/" + fx.children("/cli/lost").front());
    auto st = leader.wait(std::chrono::seconds(30));
    INFO(leader.err());
    CHECK(st == 76);
    CHECK(count("TERM") == 1);
    CHECK(leader.err().find("leadership was lost") != std::string::npos);
  }
  SECTION("--requeue: COMMAND runs again once leading again") {
    Zkr leader(lead_args(fx, {"--requeue", "/cli/lost", "--", "sh", "-c", script, "sh", marker}), dir);
    REQUIRE(wait_children(fx, "/cli/lost", 1));
    REQUIRE(eventually([&] { return count("START") == 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    fx.server.stop();
    REQUIRE(eventually([&] { return count("TERM") == 1; }, std::chrono::seconds(30)));
    CHECK(leader.running());
    fx.server.start();
    REQUIRE(eventually([&] { return count("START") == 2; }, std::chrono::seconds(40)));
    INFO(leader.err());
    CHECK(leader.running());
    // The new term's node is a new one: a larger fencing token.
    std::vector<long long> tokens;
    for (auto& line : lines_of(slurp(marker))) {
      std::istringstream in(line);
      std::string word;
      long long token = 0;
      if (in >> word >> token && word == "START") tokens.push_back(token);
    }
    REQUIRE(tokens.size() == 2);
    CHECK(tokens[0] > 0);
    CHECK(tokens[1] > tokens[0]);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    leader.signal(SIGTERM);  // forwarded to COMMAND, which exits 0
    CHECK(leader.wait() == 0);
    CHECK(leader.err().find("waiting to lead again") != std::string::npos);
  }
  // Nothing is left behind (a node of a session that outlived the server's stop goes when it expires).
  CHECK(wait_children(fx, "/cli/lost", 0));
}

TEST_CASE("zkr lead: usage errors", "[cli]") {
  if (!have_zkr()) return;
  TempDir dir;
  auto help = run_zkr({"lead", "--help"}, dir);
  CHECK(help.status == 0);
  for (const char* s : {"--latch", "--selector", "--requeue", "--id", "Exit status"})
    CHECK(help.out.find(s) != std::string::npos);
  auto empty = run_zkr({"lead", "/a", "--"}, dir);
  CHECK(empty.status == 64);
  CHECK(empty.err.find("missing COMMAND") != std::string::npos);
  CHECK(run_zkr({"lead", "/a"}, dir).status == 64);
  CHECK(run_zkr({"lead"}, dir).status == 64);
  auto bad = run_zkr({"lead", "relative/path", "--", "true"}, dir);
  CHECK(bad.status == 64);
  CHECK(bad.err.find("invalid path") != std::string::npos);
  CHECK(run_zkr({"lead", "/a/", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"lead", "--latch", "--selector", "/a", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"lead", "--revocable", "/a", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"lead", "--on-lost", "ignore", "/a", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"lead", "-w", "soon", "/a", "--", "true"}, dir).status == 64);
  CHECK(run_zkr({"inspect", "--type", "leader", "/a"}, dir).status == 64);
}
