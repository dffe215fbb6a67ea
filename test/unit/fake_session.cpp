// FakeSession: a scripted session for the framework's unit tests (see fake_session.hpp).

#include "fake_session.hpp"

#include <spdlog/logger.h>

#include <boost/asio/post.hpp>
#include <type_traits>
#include <utility>
#include <zkr/framework/curator_framework.hpp>

namespace fake {

namespace asio = boost::asio;
namespace detail = zkr::detail;

std::string_view Call::kind() const noexcept {
  static constexpr std::string_view names[] = {
      "create",   "delete",    "exists",     "get_data",       "get_children",
      "set_data", "multi",     "sync",       "remove_watches", "get_acl",
      "set_acl",  "add_watch", "multi_read", "get_ephemerals", "get_all_children_number",
      "who_am_i"};
  static_assert(std::size(names) == std::variant_size_v<zk::Request>);
  return names[request.index()];
}

std::string Call::path() const {
  return std::visit(
      [](const auto& r) -> std::string {
        using R = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<R, zk::Multi> || std::is_same_v<R, zk::MultiRead>)
          return r.ops.empty() ? std::string() : r.ops.front().path;
        else if constexpr (std::is_same_v<R, zk::WhoAmI>)
          return std::string();
        else
          return r.path;
      },
      request);
}

detail::WatchId Call::watch() const noexcept {
  if (auto* r = as<zk::Exists>()) return r->watch;
  if (auto* r = as<zk::GetData>()) return r->watch;
  if (auto* r = as<zk::GetChildren>()) return r->watch;
  return 0;
}

zk::Reply rc(zkr::error_code code) {
  zk::Reply r;
  r.ec = code;
  return r;
}

zk::Reply with_stat(zkr::Stat stat, zkr::error_code code) {
  auto r = rc(code);
  r.stat = stat;
  return r;
}

zk::Reply with_children(std::vector<std::string> names) {
  auto r = rc({});
  r.children = std::move(names);
  return r;
}

zk::Reply with_data(std::string data, zkr::Stat stat) {
  auto r = with_stat(stat);
  r.data = std::move(data);
  return r;
}

zkr::Stat ephemeral_stat(std::int64_t session) {
  zkr::Stat s;
  s.ephemeral_owner = session;
  return s;
}

FakeSession::FakeSession(asio::io_context& ioc, const zkr::ClientConfig& config,
                         detail::SessionEvents& events)
    : ioc_(ioc), events_(events), timeout_ms_(static_cast<int>(config.session_timeout.count())) {}

FakeSession::~FakeSession() = default;

detail::SessionFactory FakeSession::factory(FakeSession*& out) {
  return [&out](asio::io_context& ioc, const zkr::ClientConfig& config, spdlog::logger&,
                detail::SessionEvents& events) -> std::unique_ptr<detail::Session> {
    auto s = std::make_unique<FakeSession>(ioc, config, events);
    out = s.get();
    return s;
  };
}

// ---------------------------------------------------------------------------------------------------------
// The client's side

bool FakeSession::open() {
  std::lock_guard lk(mu_);
  open_ = true;
  session_ = 0;
  ++opens_;
  return true;
}

void FakeSession::close() {
  std::vector<std::pair<std::uint64_t, zk::ReplyCallback>> ended;
  {
    std::lock_guard lk(mu_);
    if (!open_) return;
    open_ = false;
    session_ = 0;
    ++closes_;
    for (auto& e : log_)
      if (!e.answered) {
        e.answered = true;
        ended.emplace_back(e.call.seq, std::move(e.cb));
      }
  }
  for (auto& [seq, cb] : ended) deliver(seq, std::move(cb), rc(zkr::zk_errc::closing));
}

bool FakeSession::is_open() const {
  std::lock_guard lk(mu_);
  return open_;
}

void FakeSession::submit(zk::Request request, zk::ReplyCallback reply) {
  if (!is_open()) {
    // As the real session: no session, no request; the client says what that means now.
    if (reply) deliver(0, std::move(reply), rc(events_.no_session_ec()));
    return;
  }
  record(std::move(request), std::move(reply), false);
}

bool FakeSession::submit_from_caller(zk::Request& request, zk::ReplyCallback& reply) {
  {
    std::lock_guard lk(mu_);
    if (!open_ || !accept_from_caller_) return false;
  }
  record(std::move(request), std::move(reply), true);
  return true;
}

std::int64_t FakeSession::session_id() const {
  std::lock_guard lk(mu_);
  return open_ ? session_ : 0;
}

int FakeSession::negotiated_timeout_ms() const {
  std::lock_guard lk(mu_);
  return negotiated_ms_;
}

void FakeSession::record(zk::Request request, zk::ReplyCallback reply, bool from_caller) {
  {
    std::lock_guard lk(mu_);
    Entry e;
    e.call.seq = log_.size() + 1;
    e.call.request = std::move(request);
    e.call.from_caller = from_caller;
    e.call.session = session_;
    e.call.sent = Clock::now();
    e.call.wants_reply = static_cast<bool>(reply);
    e.answered = !reply;
    e.cb = std::move(reply);
    log_.push_back(std::move(e));
  }
  cv_.notify_all();
}

void FakeSession::deliver(std::uint64_t seq, zk::ReplyCallback cb, zk::Reply r) {
  asio::post(ioc_, [this, seq, cb = std::move(cb), r = std::move(r)]() mutable {
    if (seq != 0) {
      std::lock_guard lk(mu_);
      if (auto* e = find(seq)) e->delivered = Clock::now();
    }
    cb(std::move(r));
  });
}

// ---------------------------------------------------------------------------------------------------------
// The test's side

FakeSession::Entry* FakeSession::find(std::uint64_t seq) {
  return seq >= 1 && seq <= log_.size() ? &log_[seq - 1] : nullptr;
}
const FakeSession::Entry* FakeSession::find(std::uint64_t seq) const {
  return seq >= 1 && seq <= log_.size() ? &log_[seq - 1] : nullptr;
}

std::optional<Call> FakeSession::next(std::chrono::milliseconds limit) {
  std::unique_lock lk(mu_);
  if (!cv_.wait_for(lk, limit, [&] { return taken_ < log_.size(); })) return std::nullopt;
  return log_[taken_++].call;
}

bool FakeSession::reply(const Call& call, zk::Reply r) {
  zk::ReplyCallback cb;
  {
    std::lock_guard lk(mu_);
    auto* e = find(call.seq);
    if (!e || e->answered) return false;
    e->answered = true;
    cb = std::move(e->cb);
    if (auto* c = call.as<zk::Create>(); c && !r.ec && r.path.empty()) r.path = c->path;
  }
  deliver(call.seq, std::move(cb), std::move(r));
  return true;
}

std::optional<FakeSession::Clock::time_point> FakeSession::delivered(const Call& call) const {
  std::lock_guard lk(mu_);
  auto* e = find(call.seq);
  return e ? e->delivered : std::nullopt;
}

void FakeSession::set_state(SessionState state) {
  asio::post(ioc_, [this, state] {
    {
      std::lock_guard lk(mu_);
      if (!open_) return;
      if (state == SessionState::connected || state == SessionState::read_only) {
        if (session_ == 0) session_ = next_session_++;
        negotiated_ms_ = timeout_ms_;
      }
    }
    events_.on_session_state(state);
  });
}

void FakeSession::fire_watch(detail::WatchId watch, zkr::EventType type) {
  asio::post(ioc_, [this, watch, type] {
    if (is_open()) events_.on_watch_event(watch, type, std::string());  // a one-shot watch: its own path
  });
}

void FakeSession::set_negotiated_timeout(std::chrono::milliseconds t) {
  std::lock_guard lk(mu_);
  timeout_ms_ = static_cast<int>(t.count());
}

void FakeSession::accept_from_caller(bool on) {
  std::lock_guard lk(mu_);
  accept_from_caller_ = on;
}

int FakeSession::opens() const {
  std::lock_guard lk(mu_);
  return opens_;
}

int FakeSession::closes() const {
  std::lock_guard lk(mu_);
  return closes_;
}

std::size_t FakeSession::sent() const {
  std::lock_guard lk(mu_);
  return log_.size();
}

std::size_t FakeSession::unanswered() const {
  std::lock_guard lk(mu_);
  std::size_t n = 0;
  for (const auto& e : log_) n += e.answered ? 0 : 1;
  return n;
}

}  // namespace fake
