#pragma once
// The Java Curator interop peers (test/interop/java: CuratorPeer.java for locks, LeaderPeer.java for leader
// election, CounterPeer.java for counters and the semaphore on a count, ChurnPeer.java for cache churn,
// NodePeer.java for a PersistentNode) as child processes driven over pipes. The peers are compiled with javac
// into a temporary directory, once per test process. When javac or the Curator jars are missing,
// `CuratorPeer::available()` says why and the interop tests skip with a WARN.

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace zkr::test {

class CuratorPeer {
 public:
  /// The class path (classes dir + jars) of a compiled peer, or nullopt with `why` set.
  static std::optional<std::string> classpath(std::string* why = nullptr) {
    static std::mutex m;
    static std::optional<std::string> cp;
    static std::string reason;
    static bool tried = false;
    std::lock_guard lk(m);
    if (!tried) {
      tried = true;
      cp = build(reason);
    }
    if (why) *why = reason;
    return cp;
  }

  /// True when the peer can run; otherwise `why` says what is missing. With ZKR_REQUIRE_CURATOR_PEER=1 in the
  /// environment (tools/test.sh, hence CI, sets it) a missing peer throws instead, which fails the test: a
  /// machine without Java or Curator must not pass the interop tests by skipping them.
  static bool available(std::string* why = nullptr) {
    std::string reason;
    if (classpath(&reason)) return true;
    if (const char* req = std::getenv("ZKR_REQUIRE_CURATOR_PEER"); req && std::string(req) == "1")
      throw std::runtime_error("the Java Curator peer is required (ZKR_REQUIRE_CURATOR_PEER=1): " + reason);
    if (why) *why = reason;
    return false;
  }

  /// How a peer is started.
  struct Options {
    std::string main_class = "CuratorPeer";  ///< or "LeaderPeer"
    std::chrono::milliseconds session_timeout = std::chrono::seconds(10);
    std::vector<std::string> extra;  ///< more options before the recipe, e.g. {"--id", "java-1"}
    /// JVM options before the class path, e.g. `-Dzookeeper.client.secure=true`: ZooKeeper's Java client
    /// reads its `zookeeper.*` settings (TLS among them) from system properties (`tls_java_options`,
    /// tls_interop_test.cpp).
    std::vector<std::string> jvm_args;
    /// Called on the reader thread with each asynchronous line as it arrives; returning true consumes it
    /// (it is not kept for `wait_async`). For work that must happen when the peer says something, such as
    /// applying its writes to a fenced resource in arrival order.
    std::function<bool(const std::string&)> on_async;
  };

  /// Starts `CuratorPeer --connect <connect> <recipe> <paths...>` and waits for `ready`.
  CuratorPeer(const std::string& connect, const std::string& recipe, const std::vector<std::string>& paths)
      : CuratorPeer(connect, recipe, paths, Options{}) {}

  /// Starts `<main class> --connect <connect> --session-timeout-ms N <extra...> <recipe> <paths...>` and
  /// waits for `ready`.
  CuratorPeer(const std::string& connect, const std::string& recipe, const std::vector<std::string>& paths,
              Options options)
      : on_async_(std::move(options.on_async)) {
    std::string why;
    auto cp = classpath(&why);
    if (!cp) throw std::runtime_error("Curator peer unavailable: " + why);
    std::vector<std::string> args{"/usr/bin/env", "java", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                                  "-Xmx128m"};
    args.insert(args.end(), options.jvm_args.begin(), options.jvm_args.end());
    args.insert(args.end(), {"-cp", *cp, options.main_class, "--connect", connect, "--session-timeout-ms",
                             std::to_string(options.session_timeout.count())});
    args.insert(args.end(), options.extra.begin(), options.extra.end());
    args.push_back(recipe);
    args.insert(args.end(), paths.begin(), paths.end());
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    const std::string log =
        (std::filesystem::temp_directory_path() / ("zkr-curator-peer-" + std::to_string(::getpid()) + ".log"))
            .string();
    std::vector<char*> argv;  // built before fork: the child only makes async-signal-safe calls
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      ::dup2(in[0], 0);
      ::dup2(out[1], 1);
      int err = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (err >= 0) ::dup2(err, 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    to_ = in[1];
    from_ = out[0];
    reader_ = std::thread([this] { read_loop(); });
    auto ready = answer(std::chrono::seconds(60));
    if (ready.rfind("ready", 0) != 0) {
      stop();
      throw std::runtime_error("Curator peer did not start: " + ready);
    }
  }

  ~CuratorPeer() { stop(); }
  CuratorPeer(const CuratorPeer&) = delete;
  CuratorPeer& operator=(const CuratorPeer&) = delete;

  /// Sends one command line.
  void send(const std::string& line) {
    const std::string l = line + "\n";
    if (::write(to_, l.data(), l.size()) != static_cast<ssize_t>(l.size()))
      throw std::runtime_error("peer write failed");
  }

  /// The next answer line (asynchronous lines are kept apart); "" on timeout.
  std::string answer(std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    std::unique_lock lk(m_);
    if (!cv_.wait_for(lk, timeout, [&] { return !answers_.empty() || eof_; })) return {};
    if (answers_.empty()) return {};
    auto a = std::move(answers_.front());
    answers_.pop_front();
    return a;
  }

  /// `send(line)` then `answer(timeout)`.
  std::string call(const std::string& line, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    send(line);
    return answer(timeout);
  }

  /// Waits for an asynchronous line starting with `prefix` (e.g. "revoke-requested"); "" on timeout.
  std::string wait_async(const std::string& prefix,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
    std::unique_lock lk(m_);
    std::string found;
    cv_.wait_for(lk, timeout, [&] {
      for (auto it = async_.begin(); it != async_.end(); ++it)
        if (it->rfind(prefix, 0) == 0) {
          found = *it;
          async_.erase(it);
          return true;
        }
      return eof_;
    });
    return found;
  }

  int pid() const { return pid_; }

  /// Whether the jars a peer over TLS needs beyond `classpath()`'s required ones are installed.
  static bool netty_jars_present() {
    namespace fs = std::filesystem;
    return fs::exists("/usr/share/java/netty-codec.jar") && fs::exists("/usr/share/java/netty-resolver.jar");
  }

  /// Ends the peer with SIGKILL (a crash: its session is left for the server to expire) and reaps it.
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);  // our own child, by its pid
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (to_ >= 0) ::close(to_);
    to_ = -1;
    if (reader_.joinable()) reader_.join();
    if (from_ >= 0) ::close(from_);
    from_ = -1;
  }

 private:
  static bool is_async(const std::string& l) {
    for (const char* p :
         {"state ", "revoke-requested", "revoke-released", "leader ", "not-leader ", "write "})
      if (l.rfind(p, 0) == 0) return true;
    return false;
  }

  void read_loop() {
    std::string buf;
    char chunk[4096];
    for (;;) {
      ssize_t n = ::read(from_, chunk, sizeof chunk);
      if (n <= 0) break;
      buf.append(chunk, static_cast<std::size_t>(n));
      std::size_t pos;
      while ((pos = buf.find('\n')) != std::string::npos) {
        std::string line = buf.substr(0, pos);
        buf.erase(0, pos + 1);
        const bool async = is_async(line);
        if (async && on_async_ && on_async_(line)) continue;
        std::lock_guard lk(m_);
        (async ? async_ : answers_).push_back(std::move(line));
        cv_.notify_all();
      }
    }
    std::lock_guard lk(m_);
    eof_ = true;
    cv_.notify_all();
  }

  void stop() {
    if (pid_ <= 0) return;
    if (to_ >= 0) {
      const char q[] = "quit\n";
      [[maybe_unused]] auto r = ::write(to_, q, sizeof q - 1);
      ::close(to_);
      to_ = -1;
    }
    int status = 0;
    bool exited = false;
    for (int i = 0; i < 100 && !exited; ++i) {  // up to 10 s for a clean exit
      if (::waitpid(pid_, &status, WNOHANG) == pid_)
        exited = true;
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!exited) {
      ::kill(pid_, SIGKILL);  // our own child, by its pid
      ::waitpid(pid_, &status, 0);
    }
    pid_ = -1;
    if (reader_.joinable()) reader_.join();
    if (from_ >= 0) ::close(from_);
    from_ = -1;
  }

  static std::optional<std::string> build(std::string& why) {
    namespace fs = std::filesystem;
#ifdef ZKR_INTEROP_JAVA_DIR
    const fs::path src_dir =
        ZKR_INTEROP_JAVA_DIR;  // set by test/CMakeLists.txt: absolute, whatever __FILE__ is
#else
    const fs::path src_dir = fs::path(__FILE__).parent_path().parent_path() / "interop" / "java";
#endif
    std::string sources;
    for (const char* f :
         {"CuratorPeer.java", "LeaderPeer.java", "CounterPeer.java", "ChurnPeer.java", "NodePeer.java"}) {
      if (!fs::exists(src_dir / f)) {
        why = "source " + (src_dir / f).string() + " not found";
        return std::nullopt;
      }
      sources += " '" + (src_dir / f).string() + "'";
    }
    if (std::system("command -v javac >/dev/null 2>&1 && command -v java >/dev/null 2>&1") != 0) {
      why = "java/javac not found (install default-jdk-headless)";
      return std::nullopt;
    }
    std::string jars;
    for (const char* j : {"curator-recipes", "curator-framework", "curator-client", "zookeeper",
                          "zookeeper-jute", "guava", "slf4j-api", "slf4j-nop"}) {
      const fs::path p = fs::path("/usr/share/java") / (std::string(j) + ".jar");
      if (!fs::exists(p)) {
        why = p.string() + " not found (install libcurator-recipes-java)";
        return std::nullopt;
      }
      jars += (jars.empty() ? "" : ":") + p.string();
    }
    // ZooKeeper's Netty client socket (TLS) needs these two, which zookeeper.jar's manifest leaves out
    // (docs/tls.md). Optional: only the TLS peers need them (`netty_jars_present`).
    for (const char* j : {"netty-codec", "netty-resolver"}) {
      const fs::path p = fs::path("/usr/share/java") / (std::string(j) + ".jar");
      if (fs::exists(p)) jars += ":" + p.string();
    }
    const fs::path dir = fs::temp_directory_path() / ("zkr-curator-peer-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string cmd = "javac -nowarn -encoding UTF-8 -cp '" + jars + "' -d '" + dir.string() + "'" +
                            sources + " > '" + (dir / "javac.log").string() + "' 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      why = "javac failed, see " + (dir / "javac.log").string();
      return std::nullopt;
    }
    // Removed at exit of the test process.
    static struct Cleanup {
      fs::path d;
      ~Cleanup() {
        std::error_code ec;
        fs::remove_all(d, ec);
      }
    } cleanup{dir};
    return dir.string() + ":" + jars;
  }

  std::function<bool(const std::string&)> on_async_;
  int pid_ = -1;
  int to_ = -1;
  int from_ = -1;
  std::thread reader_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::string> answers_;
  std::deque<std::string> async_;
  bool eof_ = false;
};

/// True when the Java peer can run; otherwise a WARN says why (the caller then skips its test). Under
/// ZKR_REQUIRE_CURATOR_PEER=1 a missing peer throws instead, which fails the test.
inline bool curator_peer_or_skip() {
  std::string why;
  if (CuratorPeer::available(&why)) return true;
  WARN("Java Curator peer unavailable, skipping: " << why);
  return false;
}

}  // namespace zkr::test
