#pragma once
/// \file
/// The framework's unit-test bench: a real client engine (`zkr::detail::CoreImpl`, from the private
/// framework/src) over a `FakeSession`, with its own I/O thread as in production, and the small tools the
/// tests need around it: operations started on the I/O thread whose completions the test thread waits for (a
/// bounded wait, never a sleep), a retry policy that records its answers, and a log of the connection states
/// the client's listeners saw.

#include <spdlog/sinks/null_sink.h>

#include <boost/asio/post.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core_impl.hpp"
#include "fake_session.hpp"

namespace fake {

using Millis = std::chrono::milliseconds;
using namespace std::chrono_literals;

/// One operation's completion, set on the I/O thread and awaited on the test thread.
template <class T = std::monostate>
class Outcome {
 public:
  using Clock = std::chrono::steady_clock;
  void set(zkr::error_code ec, T value = {}) {
    {
      std::lock_guard lk(mu_);
      ++calls_;
      ec_ = ec;
      value_ = std::move(value);
      at_ = Clock::now();
    }
    cv_.notify_all();
  }
  /// Waits up to `limit` for the completion.
  bool wait(Millis limit = 5s) const {
    std::unique_lock lk(mu_);
    return cv_.wait_for(lk, limit, [&] { return calls_ > 0; });
  }
  bool done() const { return calls() > 0; }
  int calls() const {
    std::lock_guard lk(mu_);
    return calls_;
  }
  zkr::error_code ec() const {
    std::lock_guard lk(mu_);
    return ec_;
  }
  T value() const {
    std::lock_guard lk(mu_);
    return value_;
  }
  Clock::time_point at() const {
    std::lock_guard lk(mu_);
    return at_;
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  int calls_ = 0;
  zkr::error_code ec_;
  T value_{};
  Clock::time_point at_{};
};

/// A retry policy that answers as `inner` does and records every answer to "may I retry, and after how
/// long?".
class RecordingPolicy final : public zkr::RetryPolicy {
 public:
  struct Decision {
    int retry_count;
    Millis elapsed;
    std::optional<Millis> sleep;
  };
  explicit RecordingPolicy(zkr::RetryPolicyPtr inner) : inner_(std::move(inner)) {}
  std::optional<Millis> allow_retry(int retry_count, Millis elapsed) const override {
    auto sleep = inner_->allow_retry(retry_count, elapsed);
    {
      std::lock_guard lk(mu_);
      decisions_.push_back({retry_count, elapsed, sleep});
    }
    cv_.notify_all();
    return sleep;
  }
  bool allow_retry(const zkr::error_code& ec) const override { return inner_->allow_retry(ec); }
  std::vector<Decision> decisions() const {
    std::lock_guard lk(mu_);
    return decisions_;
  }
  /// Waits up to `limit` for the `i`-th (0-based) answer.
  std::optional<Decision> wait_decision(std::size_t i, Millis limit = 5s) const {
    std::unique_lock lk(mu_);
    if (!cv_.wait_for(lk, limit, [&] { return decisions_.size() > i; })) return std::nullopt;
    return decisions_[i];
  }

 private:
  zkr::RetryPolicyPtr inner_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  mutable std::vector<Decision> decisions_;
};

/// The connection states a public listener saw, in order.
class StateLog {
 public:
  using Clock = std::chrono::steady_clock;
  void add(zkr::ConnectionState s) {
    {
      std::lock_guard lk(mu_);
      states_.push_back({s, Clock::now()});
    }
    cv_.notify_all();
  }
  /// Waits up to `limit` until `n` states were seen; returns all seen so far.
  std::vector<zkr::ConnectionState> wait_for(std::size_t n, Millis limit = 5s) const {
    std::unique_lock lk(mu_);
    cv_.wait_for(lk, limit, [&] { return states_.size() >= n; });
    std::vector<zkr::ConnectionState> out;
    for (auto& [s, at] : states_) out.push_back(s);
    return out;
  }
  /// When the `i`-th (0-based) state was seen.
  Clock::time_point at(std::size_t i) const {
    std::lock_guard lk(mu_);
    return states_.at(i).second;
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<std::pair<zkr::ConnectionState, Clock::time_point>> states_;
};

/// A started client over a fake session (not connected yet: see `connect`).
class FakeClient {
 public:
  /// `config`'s connect string, retry policy and logger get test defaults when left empty.
  explicit FakeClient(zkr::ClientConfig config = {}) {
    if (config.connect_string.empty()) config.connect_string = "fake:2181";
    if (!config.retry_policy) config.retry_policy = std::make_shared<zkr::RetryNTimes>(3, 1ms);
    if (!config.logger)
      config.logger =
          std::make_shared<spdlog::logger>("fake_client", std::make_shared<spdlog::sinks::null_sink_mt>());
    if (!config.default_data) config.default_data = "";
    core_ = std::make_shared<zkr::detail::CoreImpl>(std::move(config), FakeSession::factory(session_));
    core_->add_public_listener([log = states_](zkr::ConnectionState s) { log->add(s); });
    REQUIRE_FALSE(core_->start());
  }
  FakeClient(const FakeClient&) = delete;
  FakeClient& operator=(const FakeClient&) = delete;
  ~FakeClient() {
    core_->close();
    // A listener handler still queued holds the client: let it go, so the client ends on this thread.
    for (int i = 0; i < 100 && core_.use_count() > 1; ++i) sync_io();
    core_.reset();
  }

  zkr::detail::CoreImpl& core() { return *core_; }
  /// The client engine, for a recipe's engine driven over it (drop it before this client).
  std::shared_ptr<zkr::detail::Core> shared_core() { return core_; }
  FakeSession& session() { return *session_; }
  const StateLog& states() const { return *states_; }

  /// Runs `f` on the client's I/O thread (posted; returns at once).
  template <class F>
  void io(F&& f) {
    boost::asio::post(core_->io_executor(), std::forward<F>(f));
  }
  /// Returns once every handler queued on the I/O thread before this call has run.
  void sync_io() {
    std::promise<void> p;
    auto f = p.get_future();
    io([&p] { p.set_value(); });
    f.wait();
  }
  /// The session connects; returns once the client counts itself connected (bounded).
  void connect(SessionState state = SessionState::connected) {
    session_->set_state(state);
    sync_io();
    REQUIRE(core_->is_connected());
  }

  // Operations, started on the I/O thread.
  std::shared_ptr<Outcome<zkr::CreateResult>> create(std::string path, zkr::CreateOptions options,
                                                     zkr::detail::RequestOptions ro = {}) {
    auto out = std::make_shared<Outcome<zkr::CreateResult>>();
    io([this, out, path = std::move(path), options = std::move(options), ro]() mutable {
      core_->create(
          std::move(path), std::move(options),
          [out](zkr::error_code ec, zkr::CreateResult r) { out->set(ec, std::move(r)); }, ro);
    });
    return out;
  }
  std::shared_ptr<Outcome<>> remove(std::string path, bool guaranteed, bool quietly = false,
                                    zkr::detail::RequestOptions ro = {}) {
    auto out = std::make_shared<Outcome<>>();
    io([this, out, path = std::move(path), guaranteed, quietly, ro]() mutable {
      core_->remove(
          std::move(path), -1, guaranteed, quietly, [out](zkr::error_code ec) { out->set(ec); }, ro);
    });
    return out;
  }
  /// A delete of `path` and its children (DeleteOptions::deleting_children), not guaranteed.
  std::shared_ptr<Outcome<>> remove_tree(std::string path, bool quietly = false) {
    auto out = std::make_shared<Outcome<>>();
    io([this, out, path = std::move(path), quietly]() mutable {
      core_->delete_children_then(
          std::move(path), -1, false, quietly, [out](zkr::error_code ec) { out->set(ec); }, nullptr);
    });
    return out;
  }
  std::shared_ptr<Outcome<zkr::NodeData>> get_data(std::string path, zkr::detail::RequestOptions ro = {}) {
    auto out = std::make_shared<Outcome<zkr::NodeData>>();
    io([this, out, path = std::move(path), ro]() mutable {
      core_->get_data(
          std::move(path), nullptr,
          [out](zkr::error_code ec, zkr::NodeData d) { out->set(ec, std::move(d)); }, ro);
    });
    return out;
  }
  std::shared_ptr<Outcome<zkr::Stat>> set_data(std::string path, std::string data, int version,
                                               zkr::detail::RequestOptions ro = {}) {
    auto out = std::make_shared<Outcome<zkr::Stat>>();
    io([this, out, path = std::move(path), data = std::move(data), version, ro]() mutable {
      core_->set_data(
          std::move(path), std::move(data), version,
          [out](zkr::error_code ec, zkr::Stat s) { out->set(ec, s); }, ro);
    });
    return out;
  }
  /// A delete of `path` at `version`, neither guaranteed nor quiet.
  std::shared_ptr<Outcome<>> remove_version(std::string path, int version,
                                            zkr::detail::RequestOptions ro = {}) {
    auto out = std::make_shared<Outcome<>>();
    io([this, out, path = std::move(path), version, ro]() mutable {
      core_->remove(
          std::move(path), version, false, false, [out](zkr::error_code ec) { out->set(ec); }, ro);
    });
    return out;
  }
  std::shared_ptr<Outcome<zkr::AclResult>> get_acl(std::string path, zkr::detail::RequestOptions ro = {}) {
    auto out = std::make_shared<Outcome<zkr::AclResult>>();
    io([this, out, path = std::move(path), ro]() mutable {
      core_->get_acl(
          std::move(path), [out](zkr::error_code ec, zkr::AclResult a) { out->set(ec, std::move(a)); }, ro);
    });
    return out;
  }
  std::shared_ptr<Outcome<zkr::Stat>> set_acl(std::string path, zkr::AclList acl, int version,
                                              zkr::detail::RequestOptions ro = {}) {
    auto out = std::make_shared<Outcome<zkr::Stat>>();
    io([this, out, path = std::move(path), acl = std::move(acl), version, ro]() mutable {
      core_->set_acl(
          std::move(path), std::move(acl), version,
          [out](zkr::error_code ec, zkr::Stat s) { out->set(ec, s); }, ro);
    });
    return out;
  }
  std::shared_ptr<Outcome<>> make_dirs(std::vector<std::string> paths, zkr::detail::RequestOptions ro = {}) {
    auto out = std::make_shared<Outcome<>>();
    io([this, out, paths = std::move(paths), ro]() mutable {
      core_->make_dirs(
          std::move(paths), [out](zkr::error_code ec) { out->set(ec); }, ro);
    });
    return out;
  }
  /// Requests `stop` on the I/O thread (a stop signal is single-threaded).
  void stop(const zkr::detail::StopPtr& stop) {
    io([stop] { stop->request(); });
  }

  /// The next request; fails the test when none comes within the bounded wait.
  Call next() {
    auto c = session_->next();
    REQUIRE(c);
    return std::move(*c);
  }
  /// The next request, which must be a `T` on `path`.
  template <class T>
  Call expect(const std::string& path) {
    auto c = next();
    INFO("got " << c.kind() << " " << c.path());
    REQUIRE(c.is<T>());
    REQUIRE(c.path() == path);
    return c;
  }

 private:
  FakeSession* session_ = nullptr;
  std::shared_ptr<StateLog> states_ = std::make_shared<StateLog>();
  std::shared_ptr<zkr::detail::CoreImpl> core_;
};

}  // namespace fake
