// The client's life: the I/O thread it runs on (made in the constructor, drained and joined in the
// destructor), start (the first session), close (pending guaranteed deletes get their wait, then everything
// pending ends with client_errc::closed), and the blocking waits and test hooks that go with them.

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "core_impl.hpp"
#include "sasl/sasl_settings.hpp"
#include "tls/tls_checks.hpp"
#include "transport.hpp"

namespace zkr::detail {

namespace {

std::string local_address() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "127.0.0.1";
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* res = nullptr;
  if (::getaddrinfo(host, nullptr, &hints, &res) != 0 || !res) return "127.0.0.1";
  char buf[INET_ADDRSTRLEN] = {};
  auto* sin = reinterpret_cast<sockaddr_in*>(res->ai_addr);
  ::inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof buf);
  ::freeaddrinfo(res);
  return buf;
}

bool valid_connect_string(std::string_view cs) {
  // host:port[,host:port...][/chroot]; we accept a chroot suffix like the C client does.
  if (cs.empty()) return false;
  auto slash = cs.find('/');
  auto hosts = cs.substr(0, slash);
  if (hosts.empty()) return false;
  while (!hosts.empty()) {
    auto comma = hosts.find(',');
    auto one = hosts.substr(0, comma);
    auto colon = one.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == one.size()) return false;
    const auto digits = one.substr(colon + 1);
    if (digits.size() > 5) return false;
    int port = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return false;
      port = port * 10 + (c - '0');
    }
    if (port < 1 || port > 65535) return false;  // the C client would silently truncate it
    if (comma == std::string_view::npos) break;
    hosts.remove_prefix(comma + 1);
    if (hosts.empty()) return false;
  }
  return true;
}

/// `cfg` with the defaults of what it leaves empty: a logger (warnings to stderr), the retry policy, the data
/// of a create without data (the local address).
ClientConfig with_defaults(ClientConfig cfg) {
  if (!cfg.logger) {
    cfg.logger = std::make_shared<spdlog::logger>("zkrecipes",
                                                  std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
    cfg.logger->set_level(spdlog::level::warn);
  }
  if (!cfg.retry_policy) cfg.retry_policy = std::make_shared<ExponentialBackoffRetry>(Millis(1000), 3);
  if (!cfg.default_data) cfg.default_data = local_address();
  return cfg;
}

}  // namespace

CoreImpl::CoreImpl(ClientConfig cfg, const SessionFactory& make_session)
    : rt_(std::make_shared<IoRuntime>()),
      cfg_(with_defaults(std::move(cfg))),
      log_(cfg_.logger),
      completion_ex_(cfg_.executor ? *cfg_.executor : asio::any_io_executor(rt_->ioc.get_executor())),
      session_(make_session(rt_->ioc, cfg_, *log_, *this)),
      pauses_(rt_->ioc),
      states_({rt_->ioc, completion_ex_, life_, log_, cfg_.simulated_session_expiration_percent},
              cfg_.session_timeout,
              [this] { handle_session_lost("the session timeout elapsed while disconnected"); }),
      deletes_({*session_, life_, states_, pauses_, *log_, cfg_.connection_timeout}),
      ns_(cfg_.namespace_name,
          [this](Namespace::Done k) {
            mkdirs({ns_.prefix()}, cfg_.use_container_parents, nullptr, std::move(k));
          }),
      opening_({rt_->ioc, cfg_, *log_, *session_, life_,
                [this](error_code ec, const std::string& why) { give_up(ec, why); }}) {
  work_.emplace(rt_->ioc.get_executor());
  std::promise<void> ready;
  auto fut = ready.get_future();
  rt_->thread = std::thread([rt = rt_, &ready] {
    rt->thread_id = std::this_thread::get_id();
    // The C client writes TLS records with write(2), which raises SIGPIPE when the server has closed first
    // (its plain sends use MSG_NOSIGNAL): keep that signal from the application. Blocked here, it stays
    // pending on this thread and the write fails with EPIPE; the multi-threaded client's threads, started
    // from this thread, inherit the mask.
    sigset_t pipe;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
    ready.set_value();
    for (;;) {
      try {
        rt->ioc.run();
        break;
      } catch (const std::exception& e) {
        // A handler threw (a user callback on our executor): log and keep the loop alive.
        std::fprintf(stderr, "zkrecipes: exception escaped a handler on the I/O thread: %s\n", e.what());
      }
    }
    rt->ran_out.set_value();
  });
  fut.wait();
}

CoreImpl::~CoreImpl() {
  close();
  work_.reset();
  if (!rt_->thread.joinable()) return;
  if (running_in_io_thread()) {
    // Handlers still queued would run after this object is gone: drop them.
    rt_->ioc.stop();
    rt_->thread.detach();  // the thread holds the runtime alive until it returns
    return;
  }
  // Let the queue drain instead of stopping it: close() queued completions (client_errc::closed) that queue
  // the callers' handlers in turn, and those must run. close() cancelled our timers and the socket wait, so
  // the loop runs out of work once drained; what still holds it after two seconds (a caller's timer on our
  // executor) is dropped.
  if (rt_->ran_out.get_future().wait_for(std::chrono::seconds(2)) != std::future_status::ready) {
    log_->warn("the I/O thread still had work two seconds after close; dropping it");
    rt_->ioc.stop();
  }
  rt_->thread.join();
}

error_code CoreImpl::start(std::string* subject) {
  if (life_.closed()) return client_errc::closed;
  if (!valid_connect_string(cfg_.connect_string)) return client_errc::invalid_connect_string;
  if (cfg_.handshake_timeout < std::chrono::milliseconds::zero()) return client_errc::invalid_argument;
  if (!ns_.prefix().empty() && path_error(ns_.prefix())) return client_errc::invalid_path;
  const auto transport = resolve_transport(cfg_.transport);
  if (!transport) {
    if (cfg_.transport == Transport::automatic) {
      const char* env = std::getenv(transport_env_var);
      log_->error("ZooKeeper transport refused: {}='{}' names none this build carries (c or native)",
                  transport_env_var, env ? env : "");
    } else {
      log_->error("ZooKeeper transport refused: this build does not carry the {} transport",
                  to_string(cfg_.transport));
    }
    return client_errc::transport_unavailable;
  }
  if (cfg_.tls && !tls_supported(*transport)) {
    log_->error("TLS settings refused: the {} transport has no TLS support (docs/tls.md)",
                to_string(*transport));
    if (subject) *subject = "TLS";
    return client_errc::tls_unsupported;
  }
  if (cfg_.tls) {
    // Before the C client sees them: it would spin on a bad file (docs/tls.md). Again before every session.
    auto problem = check_tls_settings(*cfg_.tls);
    if (problem.ec) {
      log_->error("TLS settings refused: {}: {}", problem.subject, problem.reason);
      if (subject) *subject = problem.subject;
      return problem.ec;
    }
  }
  if (cfg_.sasl) {
    auto problem = check_sasl_settings(*cfg_.sasl, *transport, cfg_.tls.has_value());
    if (problem.ec) {
      log_->error("SASL settings refused: {}", problem.reason);
      if (subject) *subject = "SASL";
      return problem.ec;
    }
  }
  if (!life_.start()) return life_.closed() ? error_code(client_errc::closed) : error_code{};
  error_code ec;
  run_blocking_void(
      *this,
      [this](VoidCallback done) {
        // A close() that raced this start() (and saw it not started) finishes nothing: open no handle.
        if (life_.closed()) return done(client_errc::closed);
        done(open_session() ? error_code{} : error_code(client_errc::invalid_connect_string));
      },
      ec);
  if (ec) life_.start_failed();
  return ec;
}

void CoreImpl::close() noexcept {
  // Never started: nothing to finish (a start() racing this one either started first, and is finished below,
  // or finds the client closed and opens nothing).
  if (life_.close_if_idle()) return;
  // Give pending guaranteed deletes up to max_close_wait while the client still runs: once it is closed they
  // are dropped at their next step (and with_retry/when_connected refuse to run), so waiting afterwards would
  // only wait for them to give up. A close() that finishes first ends the wait.
  if (!running_in_io_thread()) (void)deletes_.wait_idle(Clock::now() + cfg_.max_close_wait);
  if (life_.close() == Lifecycle::Phase::closed) return;  // another close() finishes it
  deletes_.end_waits();
  auto finish = [this] {
    opening_.cancel();
    pauses_.wake_all();
    states_.fail_waits();
    for (auto& k : ns_.take_waiters()) post([k = std::move(k)]() mutable { k(client_errc::closed); });
    end_session();
    fail_watches(true);
    states_.closed();  // the SUSPENDED timer stops, no session, the blocking waits end
  };
  if (running_in_io_thread()) {
    finish();
    return;
  }
  if (const auto pending = deletes_.pending(); pending > 0)
    log_->warn(
        "closing with {} guaranteed delete(s) still pending; the server removes ephemeral ones with the "
        "session",
        pending);
  std::promise<void> done;
  auto fut = done.get_future();
  // finish() queues the completions of what it cancels (connection waiters, sleeping retries, requests failed
  // by the handle close). Signal from a handler queued after them, so that they have run (pending guaranteed
  // deletes have given up, pending_guaranteed_deletes() is 0) when close() returns. It must be posted from
  // the I/O thread: with a concurrency hint of 1, what a handler posts is queued only when that handler
  // returns, so a post from this thread could overtake it.
  post([&] {
    finish();
    post([&] { done.set_value(); });
  });
  fut.wait();
}

error_code CoreImpl::inject_session_expiration() {
  if (auto ec = life_.gate()) return ec;
  // Like ZooKeeper's Java testable hook: the client ends its own session (closeSession from the connection
  // that owns it, so the server deletes its ephemeral nodes at once), reports LOST, and starts a new session.
  // Doing it from a second handle on the same session id races with our own reconnect (the session moves back
  // and the second handle's close is refused).
  error_code ec;
  run_blocking_void(
      *this,
      [this](VoidCallback done) {
        if (!session_->is_open())
          return done(life_.given_up() ? life_.reason() : error_code(client_errc::closed));
        handle_session_lost("session expiration injected");
        done({});
      },
      ec);
  return ec;
}

}  // namespace zkr::detail
