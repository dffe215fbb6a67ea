#include "context.hpp"

#include <spdlog/logger.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <algorithm>
#include <boost/asio/strand.hpp>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

namespace zkr_bench {

using namespace std::chrono_literals;

Context::Context(Options options) : options_(std::move(options)), mntr_(options_.mntr) {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  logger_ = std::make_shared<spdlog::logger>("zkr_bench", std::move(sink));
  logger_->set_level(spdlog::level::warn);
}

Context::~Context() { close_sessions(); }

zkr::CuratorFramework& Context::new_session() { return new_session(options_.session_timeout_ms); }

zkr::CuratorFramework& Context::new_session(int session_timeout_ms) {
  auto c = std::make_unique<zkr::CuratorFramework>(client_config(session_timeout_ms));
  auto& ref = *c;
  {
    std::lock_guard lk(sessions_mu_);
    sessions_.push_back(std::move(c));
  }
  ref.start();
  if (!ref.block_until_connected(20s)) throw std::runtime_error("could not connect to " + options_.connect);
  sample_threads();
  return ref;
}

zkr::ClientConfig Context::client_config(int session_timeout_ms) {
  const Options& a = options_;
  zkr::ClientConfig cfg;
  cfg.connect_string = a.connect;
  cfg.retry_policy = std::make_shared<zkr::ExponentialBackoffRetry>(100ms, 3);
  cfg.session_timeout = std::chrono::milliseconds(session_timeout_ms);
  cfg.connection_timeout = std::chrono::milliseconds(std::min(15000, session_timeout_ms));
  cfg.logger = logger_;
  if (a.handler_executor != "io") {
    std::lock_guard lk(sessions_mu_);
    const int threads = a.handler_executor == "thread" ? 1 : 2;
    auto& pool = *pools_.emplace_back(std::make_unique<boost::asio::thread_pool>(threads));
    if (a.handler_executor == "thread")
      cfg.executor = pool.get_executor();
    else
      cfg.executor = boost::asio::make_strand(pool.get_executor());
  }
  if (a.tls())
    cfg.tls = zkr::TlsConfig{.ca_file = a.tls_ca,
                             .cert_file = a.tls_cert,
                             .key_file = a.tls_key,
                             .key_password = a.tls_key_password};
  if (a.sasl()) {
    zkr::SaslConfig sasl;
    sasl.mechanism =
        a.sasl_mechanism == "gssapi" ? zkr::SaslMechanism::gssapi : zkr::SaslMechanism::digest_md5;
    sasl.server_host = a.sasl_server_host;
    sasl.user = a.sasl_user;
    sasl.password_file = a.sasl_password_file;
    sasl.principal = a.sasl_principal;
    sasl.keytab = a.sasl_keytab;
    cfg.sasl = std::move(sasl);
  }
  return cfg;
}

std::unique_ptr<zkr::InterProcessMutex> Context::mutex(zkr::CuratorFramework& c) const {
  if (options_.standard)
    return std::make_unique<zkr::InterProcessMutex>(c, options_.path,
                                                    std::make_shared<zkr::StandardLockDriver>());
  return std::make_unique<zkr::InterProcessMutex>(c, options_.path);
}

std::vector<std::unique_ptr<zkr::InterProcessMutex>> Context::mutexes_on_new_sessions(int k) {
  std::vector<std::unique_ptr<zkr::InterProcessMutex>> locks;
  for (int i = 0; i < k; ++i) locks.push_back(mutex(new_session()));
  return locks;
}

void Context::close_sessions() noexcept {
  std::lock_guard lk(sessions_mu_);
  for (auto& c : sessions_) c->close();
}

Clock::time_point Context::deadline() const {
  return Clock::now() + std::chrono::seconds(std::max(1, options_.timeout_s - 5));
}

void Context::mark_start() {
  sample_threads();
  mntr_.begin();
  cpu0_ = cpu_ns();
  switches0_ = context_switches();
  t0_ = now_ns();
}

void Context::mark_end(Result& r) {
  auto t1 = now_ns();
  r.cpu_ns = cpu_ns() - cpu0_;
  r.context_switches = context_switches() - switches0_;
  r.seconds = double(t1 - t0_) / 1e9;
  mntr_.end();
  sample_threads();
}

void Context::fatal(const std::string& what) {
  std::cerr << "zkr_bench: " << options_.scenario << " failed: " << what << std::endl;
  close_sessions();
  std::_Exit(1);
}

}  // namespace zkr_bench
