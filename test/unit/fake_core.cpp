// FakeCore: an in-memory zkr::detail::Core for step-by-step fault injection (see fake_core.hpp).

#include "fake_core.hpp"

#include <spdlog/logger.h>
#include <spdlog/sinks/null_sink.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cstdio>
#include <stdexcept>
#include <thread>
#include <zkr/framework/paths.hpp>

namespace fake {

using zkr::client_errc;
using zkr::error_code;
using zkr::zk_errc;
namespace detail = zkr::detail;

std::string_view to_string(Op op) noexcept {
  switch (op) {
    case Op::create:
      return "create";
    case Op::remove:
      return "remove";
    case Op::exists:
      return "exists";
    case Op::get_data:
      return "get_data";
    case Op::get_children:
      return "get_children";
    case Op::set_data:
      return "set_data";
    case Op::multi:
      return "multi";
    case Op::sync:
      return "sync";
    case Op::get_acl:
      return "get_acl";
    case Op::set_acl:
      return "set_acl";
    case Op::make_dirs:
      return "make_dirs";
    case Op::add_watch:
      return "add_watch";
  }
  return "?";
}

FakeCore::FakeCore()
    : logger_(std::make_shared<spdlog::logger>("fake_core", std::make_shared<spdlog::sinks::null_sink_mt>())),
      retry_(std::make_shared<zkr::RetryNTimes>(3, std::chrono::milliseconds(1))) {
  nodes_["/"] = Node{};
}

FakeCore::~FakeCore() = default;

void FakeCore::shutdown() {
  settle();
  rules_.clear();
  // Callbacks held here may own the objects that own this core: drop them so the cycle breaks.
  auto w = std::move(watches_);
  watches_.clear();
  auto pw = std::move(persistent_);
  persistent_.clear();
  pending_delivery_.clear();
  auto l = std::move(listeners_);
  listeners_.clear();
  w.clear();
  l.clear();
  settle();
}

// ---------------------------------------------------------------------------------------------------------
// Running

bool FakeCore::run_until(const std::function<bool()>& pred, std::chrono::milliseconds limit) {
  const auto end = Clock::now() + limit;
  while (!pred()) {
    const auto now = Clock::now();
    if (now >= end) return pred();
    ioc_.restart();
    const auto slice = std::min<Clock::duration>(end - now, std::chrono::milliseconds(5));
    if (ioc_.run_for(slice) == 0 && ioc_.stopped()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

void FakeCore::run_for(std::chrono::milliseconds d) {
  const auto end = Clock::now() + d;
  for (auto now = Clock::now(); now < end; now = Clock::now()) {
    ioc_.restart();
    if (ioc_.run_for(end - now) == 0 && ioc_.stopped())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void FakeCore::settle() {
  for (;;) {
    ioc_.restart();
    if (ioc_.poll() == 0) break;
  }
}

template <class F>
void FakeCore::enqueue(F&& f) {
  boost::asio::post(ioc_, std::forward<F>(f));
}

// ---------------------------------------------------------------------------------------------------------
// Faults and the log

void FakeCore::fail_next(Op op, error_code ec, std::string path_filter) {
  fail_nth(op, 1, ec, std::move(path_filter));
}

void FakeCore::fail_nth(Op op, int n, error_code ec, std::string path_filter) {
  Rule r;
  r.op = op;
  r.nth = n;
  r.ec = ec;
  r.path_filter = std::move(path_filter);
  rules_.push_back(std::move(r));
}

void FakeCore::fail_next_applied(Op op, error_code ec, std::string path_filter) {
  Rule r;
  r.op = op;
  r.ec = ec;
  r.apply = true;
  r.path_filter = std::move(path_filter);
  rules_.push_back(std::move(r));
}

void FakeCore::apply_next_multi_twice(std::string path_filter) {
  Rule r;
  r.op = Op::multi;
  r.twice = true;
  r.path_filter = std::move(path_filter);
  rules_.push_back(std::move(r));
}

void FakeCore::before_next(Op op, std::function<void()> fn, std::string path_filter) {
  before_nth(op, 1, std::move(fn), std::move(path_filter));
}

void FakeCore::before_nth(Op op, int n, std::function<void()> fn, std::string path_filter) {
  Rule r;
  r.op = op;
  r.nth = n;
  r.before = std::move(fn);
  r.path_filter = std::move(path_filter);
  rules_.push_back(std::move(r));
}

void FakeCore::after_next(Op op, std::function<void()> fn, std::string path_filter) {
  Rule r;
  r.op = op;
  r.before = std::move(fn);
  r.after = true;
  r.path_filter = std::move(path_filter);
  rules_.push_back(std::move(r));
}

void FakeCore::clear_faults() { rules_.clear(); }

std::vector<FaultStep> fault_steps(const FakeCore& core) {
  std::vector<FaultStep> steps;
  const auto& log = core.requests();
  for (std::size_t i = 0; i < log.size(); ++i) {
    const auto& r = log[i];
    if (r.background) continue;
    // A protected node's name holds a random id, another in the replay: such a step is found by its
    // directory.
    const auto filter = zkr::protected_names::is_protected_node(zkr::node_name(r.path))
                            ? zkr::parent_path(r.path) + "/"
                            : r.path;
    // The rule counts the foreground requests of its kind whose path contains its filter, as `judge` does.
    const auto nth =
        std::count_if(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(i) + 1, [&](const Request& q) {
          return !q.background && q.op == r.op && q.path.find(filter) != std::string::npos;
        });
    steps.push_back(FaultStep{r.op, filter, static_cast<int>(nth)});
  }
  return steps;
}

void fail(FakeCore& core, const FaultStep& step, error_code ec) {
  core.fail_nth(step.op, step.nth, ec, step.path);
}

std::string to_string(const FaultStep& step) {
  return std::string(to_string(step.op)) + " " + step.path + " (#" + std::to_string(step.nth) + ")";
}

std::size_t FakeCore::log_request(Op op, const std::string& path, bool background) {
  Request r;
  r.op = op;
  r.path = path;
  r.background = background;
  log_.push_back(std::move(r));
  return log_base_ + log_.size() - 1;
}

void FakeCore::clear_log() {
  log_base_ += log_.size();
  log_.clear();
}

void FakeCore::reply(std::size_t seq, error_code ec) {
  if (seq < log_base_ || seq - log_base_ >= log_.size()) return;
  auto& r = log_[seq - log_base_];
  r.applied = true;
  r.result = ec;
}

FakeCore::Verdict FakeCore::judge(Op op, const std::string& path) {
  Verdict v;
  bool decided = false;
  std::vector<std::function<void()>> hooks;
  for (auto it = rules_.begin(); it != rules_.end();) {
    if (it->op != op || (!it->path_filter.empty() && path.find(it->path_filter) == std::string::npos) ||
        ++it->seen < it->nth) {
      ++it;
      continue;
    }
    if (it->before) (it->after ? v.after : hooks).push_back(std::move(it->before));
    if (it->twice) v.twice = true;
    if (it->ec && !decided) {
      v.ec = it->ec;
      v.apply = it->apply;
      decided = true;
    }
    it = rules_.erase(it);
  }
  for (auto& h : hooks) h();  // may change the session, the tree or the rules
  if (!decided && !open_) v.ec = client_errc::closed, v.apply = false;
  if (!decided && open_ && !connected_) v.ec = zk_errc::connection_loss, v.apply = false;
  return v;
}

template <class F>
void FakeCore::complete(Verdict& v, std::size_t seq, error_code ec, F&& deliver) {
  reply(seq, ec);
  if (v.after.empty()) return deliver();
  auto hooks = std::move(v.after);
  for (auto& h : hooks) h();
  enqueue(std::forward<F>(deliver));  // behind the events the hooks caused
}

std::size_t FakeCore::count(Op op, std::string_view path_filter) const {
  return static_cast<std::size_t>(std::count_if(log_.begin(), log_.end(), [&](const Request& r) {
    return !r.background && r.op == op && r.path.find(path_filter) != std::string::npos;
  }));
}

std::size_t FakeCore::count_all() const {
  return static_cast<std::size_t>(
      std::count_if(log_.begin(), log_.end(), [](const Request& r) { return !r.background; }));
}

std::string FakeCore::describe_log() const {
  std::string out;
  for (auto& r : log_) {
    if (!out.empty()) out += ", ";
    if (r.background) out += "[bg] ";
    out += to_string(r.op);
    out += ' ';
    out += r.path;
    if (r.applied && r.result) out += " -> " + r.result.message();
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// The tree

std::vector<std::string> FakeCore::children(const std::string& path) const {
  const std::string prefix = path == "/" ? "/" : path + "/";
  std::vector<std::string> out;
  for (auto it = nodes_.lower_bound(prefix);
       it != nodes_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    auto rest = it->first.substr(prefix.size());
    if (!rest.empty() && rest.find('/') == std::string::npos) out.push_back(std::move(rest));
  }
  return out;
}

std::optional<zkr::Stat> FakeCore::stat(const std::string& path) const {
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return std::nullopt;
  return it->second.stat;
}

std::optional<std::string> FakeCore::data(const std::string& path) const {
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return std::nullopt;
  return it->second.data;
}

std::string FakeCore::put(const std::string& path, zkr::CreateMode mode, std::int64_t owner,
                          std::string data) {
  std::string created;
  if (auto ec = do_create(path, mode, data, true, false, owner, created))
    throw std::runtime_error("FakeCore::put " + path + ": " + ec.message());
  return created;
}

bool FakeCore::erase(const std::string& path) { return !do_remove(path, -1); }

bool FakeCore::set(const std::string& path, std::string data) {
  return !do_set(path, std::move(data), -1, nullptr);
}

error_code FakeCore::do_create(const std::string& path, zkr::CreateMode mode, const std::string& data,
                               bool parents, bool containers, std::int64_t owner, std::string& created) {
  if (auto why = zkr::path_error(path, zkr::is_sequential(mode))) return client_errc::invalid_path;
  const auto parent = zkr::parent_path(path);
  if (!nodes_.count(parent)) {
    if (!parents) return zk_errc::no_node;
    std::string cur;
    for (auto& seg : zkr::split_path(parent)) {
      cur += "/" + seg;
      if (nodes_.count(cur)) continue;
      std::string ignored;
      auto ec = do_create(cur, containers ? zkr::CreateMode::container : zkr::CreateMode::persistent, {},
                          false, false, 0, ignored);
      if (ec) return ec;
    }
  }
  auto& p = nodes_.at(parent);
  if (p.stat.ephemeral_owner != 0) return zk_errc::no_children_for_ephemerals;
  std::string actual = path;
  if (zkr::is_sequential(mode)) {
    char buf[16];
    // As the server: the parent's count of child creates. Its cversion counts creates and deletes, and
    // num_children is creates less deletes.
    std::snprintf(buf, sizeof buf, "%010d", (p.stat.cversion + p.stat.num_children) / 2);
    actual += buf;
  }
  if (nodes_.count(actual)) return zk_errc::node_exists;
  Node n;
  n.data = data;
  n.stat.czxid = n.stat.mzxid = n.stat.pzxid = next_zxid();
  n.stat.ctime = n.stat.mtime = std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
  n.stat.ephemeral_owner = zkr::is_ephemeral(mode) ? owner : 0;
  n.stat.data_length = static_cast<std::int32_t>(data.size());
  n.container = mode == zkr::CreateMode::container;
  const auto n_czxid = n.stat.czxid;
  nodes_[actual] = std::move(n);
  ++p.stat.cversion;
  ++p.stat.num_children;
  p.stat.pzxid = n_czxid;
  created = actual;
  fire(WatchKind::exists, actual, zkr::EventType::node_created);
  fire_persistent(actual, zkr::EventType::node_created);
  fire(WatchKind::children, parent, zkr::EventType::node_children_changed);
  return {};
}

error_code FakeCore::do_remove(const std::string& path, int version) {
  if (path == "/") return client_errc::invalid_path;
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return zk_errc::no_node;
  if (version != -1 && version != it->second.stat.version) return zk_errc::bad_version;
  if (it->second.stat.num_children != 0) return zk_errc::not_empty;
  nodes_.erase(it);
  const auto parent = zkr::parent_path(path);
  auto& p = nodes_.at(parent);
  ++p.stat.cversion;
  --p.stat.num_children;
  p.stat.pzxid = next_zxid();
  fire(WatchKind::data, path, zkr::EventType::node_deleted);
  fire_persistent(path, zkr::EventType::node_deleted);
  fire(WatchKind::exists, path, zkr::EventType::node_deleted);
  fire(WatchKind::children, path, zkr::EventType::node_deleted);
  fire(WatchKind::children, parent, zkr::EventType::node_children_changed);
  return {};
}

error_code FakeCore::do_set(const std::string& path, std::string data, int version, zkr::Stat* out) {
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return zk_errc::no_node;
  auto& n = it->second;
  if (version != -1 && version != n.stat.version) return zk_errc::bad_version;
  n.stat.data_length = static_cast<std::int32_t>(data.size());
  n.data = std::move(data);
  ++n.stat.version;
  n.stat.mzxid = next_zxid();
  if (out) *out = n.stat;
  fire(WatchKind::data, path, zkr::EventType::node_data_changed);
  fire_persistent(path, zkr::EventType::node_data_changed);
  fire(WatchKind::exists, path, zkr::EventType::node_data_changed);
  return {};
}

// ---------------------------------------------------------------------------------------------------------
// Watches and state listeners

void FakeCore::arm(detail::WatchId id, WatchKind kind, const std::string& path, detail::WatchCallback cb) {
  if (!id || !cb) return;
  if (removed_before_armed_.erase(id)) return;
  watches_.emplace(id, Watch{kind, path, std::make_shared<detail::WatchCallback>(std::move(cb))});
}

void FakeCore::deliver(detail::WatchId id, std::shared_ptr<detail::WatchCallback> cb, zkr::WatchedEvent ev) {
  pending_delivery_.insert(id);
  enqueue([this, id, cb = std::move(cb), ev = std::move(ev)] {
    if (!pending_delivery_.erase(id)) return;  // removed meanwhile: never runs
    (*cb)(ev);
  });
}

error_code FakeCore::do_multi(const std::vector<zkr::Op>& ops, std::vector<zkr::OpResult>& results) {
  results.assign(ops.size(), zkr::OpResult{});
  auto saved = nodes_;
  std::vector<Fire> fires;
  deferred_fires_ = &fires;
  txn_zxid_ = zxid_ + 1;
  error_code failed;
  std::size_t at = 0;  // the failing operation
  for (; at < ops.size(); ++at) {
    const auto& op = ops[at];
    auto& r = results[at];
    switch (op.kind) {
      case zkr::Op::Kind::create:
        r.ec = do_create(op.path, op.mode, op.data, false, false, zkr::is_ephemeral(op.mode) ? session_ : 0,
                         r.path);
        break;
      case zkr::Op::Kind::remove:
        r.ec = do_remove(op.path, op.version);
        break;
      case zkr::Op::Kind::set_data:
        r.ec = do_set(op.path, op.data, op.version, &r.stat);
        break;
      case zkr::Op::Kind::check: {
        auto it = nodes_.find(op.path);
        if (it == nodes_.end())
          r.ec = zk_errc::no_node;
        else if (op.version != -1 && op.version != it->second.stat.version)
          r.ec = zk_errc::bad_version;
        break;
      }
    }
    if ((failed = r.ec)) break;
  }
  deferred_fires_ = nullptr;
  const auto zxid = *txn_zxid_;
  txn_zxid_.reset();
  if (failed) {
    nodes_ = std::move(saved);
    for (std::size_t i = 0; i < results.size(); ++i)
      results[i] = zkr::OpResult{i < at    ? error_code{}
                                 : i == at ? failed
                                           : error_code(zk_errc::runtime_inconsistency),
                                 {},
                                 {}};
    return failed;
  }
  zxid_ = zxid;
  for (auto& f : fires) fire(f.kind, f.path, f.type);
  return {};
}

void FakeCore::fire(WatchKind kind, const std::string& path, zkr::EventType type) {
  if (deferred_fires_) return deferred_fires_->push_back(Fire{kind, path, type});
  for (auto it = watches_.begin(); it != watches_.end();) {
    if (it->second.kind != kind || it->second.path != path) {
      ++it;
      continue;
    }
    deliver(it->first, it->second.cb, zkr::WatchedEvent{type, path});
    it = watches_.erase(it);  // one-shot
  }
}

void FakeCore::fire_all(zkr::EventType type) {
  auto all = std::move(watches_);
  watches_.clear();
  for (auto& [id, w] : all) deliver(id, w.cb, zkr::WatchedEvent{type, w.path});
  auto kept = std::move(persistent_);
  persistent_.clear();
  for (auto& [id, w] : kept) deliver(id, w.cb, zkr::WatchedEvent{type, w.path});
}

void FakeCore::fire_persistent(const std::string& path, zkr::EventType type) {
  if (deferred_fires_) return;  // transactions: not modelled for persistent watches
  for (auto& [id, w] : persistent_) {
    const bool below = w.path == "/" || path.compare(0, w.path.size() + 1, w.path + "/") == 0;
    if (path == w.path || (w.recursive && below))
      enqueue([this, id = id, cb = w.cb, ev = zkr::WatchedEvent{type, path}] {
        if (persistent_.count(id)) (*cb)(ev);  // removed meanwhile: never runs
      });
  }
}

detail::WatchId FakeCore::add_persistent_watch(std::string path, zkr::AddWatchMode mode,
                                               detail::WatchCallback watch, detail::VoidCallback cb,
                                               detail::RequestOptions) {
  if (!persistent_enabled_) {
    enqueue([cb = std::move(cb)]() mutable { cb(client_errc::unsupported_by_transport); });
    return 0;
  }
  auto seq = log_request(Op::add_watch, path);
  const auto id = new_watch_id();
  enqueue(
      [this, seq, id, path = std::move(path), mode, watch = std::move(watch), cb = std::move(cb)]() mutable {
        auto v = judge(Op::add_watch, path);
        if (v.apply && !v.ec && !removed_before_armed_.erase(id))
          persistent_.emplace(id, PersistentWatch{path, mode == zkr::AddWatchMode::persistent_recursive,
                                                  std::make_shared<detail::WatchCallback>(std::move(watch))});
        complete(v, seq, v.ec, [cb = std::move(cb), ec = v.ec]() mutable { cb(ec); });
      });
  return id;
}

std::size_t FakeCore::watch_count(std::string_view path) const {
  return static_cast<std::size_t>(std::count_if(watches_.begin(), watches_.end(), [&](const auto& kv) {
    return path.empty() || kv.second.path == path;
  }));
}

void FakeCore::remove_watch(detail::WatchId id) {
  if (!id) return;
  if (persistent_.erase(id)) {
    pending_delivery_.erase(id);
    return;
  }
  if (watches_.erase(id) || pending_delivery_.erase(id)) return;
  removed_before_armed_.insert(id);  // its request has not been applied yet (or never arms: harmless)
}

void FakeCore::remove_all_watches(std::string path, detail::VoidCallback cb) {
  // Not a logged request (the engine never uses it): the local half, completed in a posted step.
  for (auto it = watches_.begin(); it != watches_.end();) {
    if (it->second.path == path) {
      pending_delivery_.erase(it->first);
      it = watches_.erase(it);
    } else {
      ++it;
    }
  }
  enqueue([cb = std::move(cb)]() mutable { cb({}); });
}

std::uint64_t FakeCore::add_state_listener(detail::StateCallback cb) {
  listeners_.emplace(++next_listener_id_, std::make_shared<detail::StateCallback>(std::move(cb)));
  return next_listener_id_;
}

void FakeCore::remove_state_listener(std::uint64_t id) { listeners_.erase(id); }

void FakeCore::notify_state(std::vector<zkr::ConnectionState> states) {
  enqueue([this, states = std::move(states)] {
    for (auto s : states) {
      std::vector<std::pair<std::uint64_t, std::shared_ptr<detail::StateCallback>>> now(listeners_.begin(),
                                                                                        listeners_.end());
      for (auto& [id, cb] : now)
        if (listeners_.count(id)) (*cb)(s);
    }
  });
}

// ---------------------------------------------------------------------------------------------------------
// Session and connection

void FakeCore::expire_session(bool drop_ephemerals) {
  const auto old = session_;
  fire_all(zkr::EventType::session_lost);
  if (drop_ephemerals) {
    std::vector<std::string> mine;
    for (auto& [p, n] : nodes_)
      if (n.stat.ephemeral_owner == old) mine.push_back(p);
    std::sort(mine.begin(), mine.end(), [](auto& a, auto& b) { return a.size() > b.size(); });
    for (auto& p : mine) do_remove(p, -1);
  }
  session_ = old + 0x100;
  connected_ = true;
  notify_state({zkr::ConnectionState::lost, zkr::ConnectionState::reconnected});
}

void FakeCore::suspend() {
  connected_ = false;
  notify_state({zkr::ConnectionState::suspended});
}

void FakeCore::reconnect(bool read_only) {
  connected_ = true;
  notify_state({read_only ? zkr::ConnectionState::read_only : zkr::ConnectionState::reconnected});
}

void FakeCore::close() {
  const auto old = session_;
  open_ = false;
  connected_ = false;
  fire_all(zkr::EventType::session_lost);
  std::vector<std::string> mine;
  for (auto& [p, n] : nodes_)
    if (n.stat.ephemeral_owner == old) mine.push_back(p);
  for (auto& p : mine) do_remove(p, -1);
}

void FakeCore::background_remove(std::string path) {
  auto seq = log_request(Op::remove, path, true);
  enqueue([this, seq, path = std::move(path)] {
    error_code ec = open_ ? do_remove(path, -1) : error_code(client_errc::closed);
    reply(seq, ec);
  });
}

void FakeCore::background_find_and_delete(std::string parent, std::string protected_prefix) {
  auto seq = log_request(Op::get_children, parent, true);
  enqueue([this, seq, parent = std::move(parent), prefix = std::move(protected_prefix)] {
    reply(seq, {});
    for (auto& n : children(parent))
      if (n.compare(0, prefix.size(), prefix) == 0) background_remove(zkr::make_path(parent, n));
  });
}

// ---------------------------------------------------------------------------------------------------------
// Requests

void FakeCore::create(std::string path, zkr::CreateOptions o, detail::CreateCallback cb,
                      detail::RequestOptions ro) {
  auto seq = log_request(Op::create, path);
  enqueue([this, seq, path = std::move(path), o = std::move(o), cb = std::move(cb), ro]() mutable {
    auto v = judge(Op::create, path);
    std::string full = path, prefix;
    if (o.protection) {
      const auto id = zkr::protected_names::new_protected_id();
      prefix = zkr::protected_names::prefix_for(id);
      full = zkr::protected_names::to_protected_path(path, id);
    }
    error_code ec;
    zkr::CreateResult r;
    if (v.apply) {
      std::string created;
      ec = do_create(full, o.mode, o.data ? *o.data : default_data_,
                     o.creating_parents || o.parents_as_containers, o.parents_as_containers,
                     zkr::is_ephemeral(o.mode) ? session_ : 0, created);
      if (!ec) {
        r.path = created;
        r.stat = nodes_.at(created).stat;
      }
      // The real core deletes what a failed protected create may have left (find-and-delete in background).
      if (!ec && v.ec && o.protection && background_cleanup_ && zkr::is_connection_loss(v.ec))
        background_find_and_delete(zkr::parent_path(created), prefix);
    }
    if (v.ec) {
      ec = v.ec;
      r = zkr::CreateResult{};
    }
    complete(v, seq, ec, [this, path, o, ro, ec, r = std::move(r), cb = std::move(cb)]() mutable {
      auto held = std::make_shared<detail::CreateCallback>(std::move(cb));
      auto again = [this, path, o, ro, held](error_code e) mutable {
        if (e) return (*held)(e, zkr::CreateResult{});
        create(std::move(path), std::move(o), std::move(*held), ro);
      };
      const bool conditional = !o.protection && !zkr::is_sequential(o.mode);
      if (!recheck(
              ro, conditional, ec, path, [this, path] { return !has(path); }, std::move(again)))
        (*held)(ec, std::move(r));
    });
  });
}

void FakeCore::remove(std::string path, int version, bool guaranteed, bool quietly, detail::VoidCallback cb,
                      detail::RequestOptions) {
  auto seq = log_request(Op::remove, path);
  enqueue([this, seq, path = std::move(path), version, guaranteed, quietly, cb = std::move(cb)]() mutable {
    auto v = judge(Op::remove, path);
    error_code ec;
    if (v.apply) ec = do_remove(path, version);
    if (v.ec) {
      ec = v.ec;
      // The real core keeps a guaranteed delete that failed for a retryable reason, in the background.
      if (guaranteed && background_cleanup_ && open_ && zkr::is_retryable(ec)) background_remove(path);
    }
    if (ec == zk_errc::no_node && quietly) ec = {};
    complete(v, seq, ec, [cb = std::move(cb), ec]() mutable { cb(ec); });
  });
}

bool FakeCore::remove_from_caller(std::vector<std::string> paths, detail::VoidCallback& cb) {
  if (paths.empty() || running_in_io_thread() || !open_ || !connected_) return false;
  boost::asio::post(ioc_, [this, paths = std::move(paths), cb = std::move(cb)]() mutable {
    if (paths.size() == 1)
      return remove(std::move(paths.front()), -1, /*guaranteed=*/true, /*quietly=*/true, std::move(cb));
    std::vector<zkr::Op> ops;
    for (const auto& p : paths) ops.push_back(zkr::Op::remove(p));
    multi(std::move(ops), [this, paths = std::move(paths), cb = std::move(cb)](
                              error_code ec, std::vector<zkr::OpResult>) mutable {
      if (!ec) return cb({});
      detail::remove_each(*this, std::move(paths), std::move(cb));
    });
  });
  return true;
}

detail::WatchId FakeCore::exists(std::string path, detail::WatchCallback watch, detail::StatCallback cb,
                                 detail::RequestOptions) {
  auto seq = log_request(Op::exists, path);
  const auto id = watch ? new_watch_id() : 0;
  enqueue([this, seq, id, path = std::move(path), watch = std::move(watch), cb = std::move(cb)]() mutable {
    auto v = judge(Op::exists, path);
    error_code ec = v.ec;
    zkr::Stat s;
    if (v.apply) {
      auto it = nodes_.find(path);
      if (it != nodes_.end()) s = it->second.stat;
      if (!ec && it == nodes_.end()) ec = zk_errc::no_node;
      arm(id, WatchKind::exists, path, std::move(watch));  // on success and on no-node
    }
    if (v.ec) s = zkr::Stat{};
    complete(v, seq, ec, [cb = std::move(cb), ec, s]() mutable { cb(ec, s); });
  });
  return id;
}

detail::WatchId FakeCore::get_data(std::string path, detail::WatchCallback watch, detail::DataCallback cb,
                                   detail::RequestOptions) {
  auto seq = log_request(Op::get_data, path);
  const auto id = watch ? new_watch_id() : 0;
  enqueue([this, seq, id, path = std::move(path), watch = std::move(watch), cb = std::move(cb)]() mutable {
    auto v = judge(Op::get_data, path);
    error_code ec = v.ec;
    zkr::NodeData d;
    if (v.apply) {
      auto it = nodes_.find(path);
      if (it == nodes_.end()) {
        if (!ec) ec = zk_errc::no_node;
      } else {
        arm(id, WatchKind::data, path, std::move(watch));  // only when the node exists
        if (!ec) d = zkr::NodeData{it->second.data, it->second.stat};
      }
    }
    complete(v, seq, ec, [cb = std::move(cb), ec, d = std::move(d)]() mutable { cb(ec, std::move(d)); });
  });
  return id;
}

detail::WatchId FakeCore::get_children(std::string path, detail::WatchCallback watch,
                                       detail::ChildrenCallback cb, detail::RequestOptions) {
  auto seq = log_request(Op::get_children, path);
  const auto id = watch ? new_watch_id() : 0;
  enqueue([this, seq, id, path = std::move(path), watch = std::move(watch), cb = std::move(cb)]() mutable {
    auto v = judge(Op::get_children, path);
    error_code ec = v.ec;
    zkr::Children c;
    if (v.apply) {
      auto it = nodes_.find(path);
      if (it == nodes_.end()) {
        if (!ec) ec = zk_errc::no_node;
      } else {
        arm(id, WatchKind::children, path, std::move(watch));
        if (!ec) {
          c.names = children(path);
          std::reverse(c.names.begin(), c.names.end());  // the server's order is not sorted: make sure of it
          c.stat = it->second.stat;
        }
      }
    }
    complete(v, seq, ec, [cb = std::move(cb), ec, c = std::move(c)]() mutable { cb(ec, std::move(c)); });
  });
  return id;
}

void FakeCore::set_data(std::string path, std::string data, int version, detail::StatCallback cb,
                        detail::RequestOptions ro) {
  auto seq = log_request(Op::set_data, path);
  enqueue(
      [this, seq, path = std::move(path), data = std::move(data), version, cb = std::move(cb), ro]() mutable {
        auto v = judge(Op::set_data, path);
        error_code ec;
        zkr::Stat s;
        if (v.apply) ec = do_set(path, data, version, &s);
        if (v.ec) ec = v.ec, s = zkr::Stat{};
        complete(v, seq, ec, [this, path, data, version, ro, ec, s, cb = std::move(cb)]() mutable {
          auto unchanged = [this, path, version] {
            auto it = nodes_.find(path);
            return it != nodes_.end() && it->second.stat.version == version;
          };
          auto held = std::make_shared<detail::StatCallback>(std::move(cb));
          auto again = [this, path, data, version, ro, held](error_code e) mutable {
            if (e) return (*held)(e, zkr::Stat{});
            set_data(std::move(path), std::move(data), version, std::move(*held), ro);
          };
          if (!recheck(ro, version != -1, ec, path, unchanged, std::move(again))) (*held)(ec, s);
        });
      });
}

bool FakeCore::recheck(const detail::RequestOptions& ro, bool conditional, error_code ec, std::string path,
                       std::function<bool()> unchanged, detail::VoidCallback k) {
  if (!ro.conditional || !conditional || !ec || !zkr::is_retryable(ec)) return false;
  sync(std::move(path), [unchanged = std::move(unchanged), k = std::move(k)](error_code e) mutable {
    if (e) return k(e);
    k(unchanged() ? error_code{} : error_code(client_errc::outcome_unknown));
  });
  return true;
}

void FakeCore::multi(std::vector<zkr::Op> ops, detail::MultiCallback cb, detail::RequestOptions) {
  // The log and the rules see a transaction by its first operation's path.
  auto path = ops.empty() ? std::string() : ops.front().path;
  auto seq = log_request(Op::multi, path);
  enqueue([this, seq, path = std::move(path), ops = std::move(ops), cb = std::move(cb)]() mutable {
    auto v = judge(Op::multi, path);
    error_code ec;
    std::vector<zkr::OpResult> results;
    if (v.apply && v.twice) (void)do_multi(ops, results);  // the first try, its reply lost
    if (v.apply) ec = do_multi(ops, results);
    if (v.ec) ec = v.ec, results.clear();
    complete(v, seq, ec, [cb = std::move(cb), ec, results = std::move(results)]() mutable {
      cb(ec, std::move(results));
    });
  });
}

void FakeCore::sync(std::string path, detail::VoidCallback cb, detail::RequestOptions) {
  auto seq = log_request(Op::sync, path);
  enqueue([this, seq, path = std::move(path), cb = std::move(cb)]() mutable {
    auto v = judge(Op::sync, path);
    complete(v, seq, v.ec, [cb = std::move(cb), ec = v.ec]() mutable { cb(ec); });
  });
}

void FakeCore::get_acl(std::string path, detail::AclCallback cb, detail::RequestOptions) {
  auto seq = log_request(Op::get_acl, path);
  enqueue([this, seq, path = std::move(path), cb = std::move(cb)]() mutable {
    auto v = judge(Op::get_acl, path);
    error_code ec = v.ec;
    zkr::AclResult a;
    if (v.apply && !ec) {
      auto it = nodes_.find(path);
      if (it == nodes_.end())
        ec = zk_errc::no_node;
      else
        a = {it->second.acl.empty() ? zkr::open_acl_unsafe() : it->second.acl, it->second.stat};
    }
    complete(v, seq, ec, [cb = std::move(cb), ec, a = std::move(a)]() mutable { cb(ec, std::move(a)); });
  });
}

void FakeCore::set_acl(std::string path, zkr::AclList acl, int version, detail::StatCallback cb,
                       detail::RequestOptions) {
  auto seq = log_request(Op::set_acl, path);
  enqueue([this, seq, path = std::move(path), acl = std::move(acl), version, cb = std::move(cb)]() mutable {
    auto v = judge(Op::set_acl, path);
    error_code ec = v.ec;
    zkr::Stat s;
    if (v.apply && !ec) {
      auto it = nodes_.find(path);
      if (it == nodes_.end())
        ec = zk_errc::no_node;
      else if (version != -1 && version != it->second.stat.aversion)
        ec = zk_errc::bad_version;
      else if (acl.empty())
        ec = zk_errc::invalid_acl;
      else {
        it->second.acl = std::move(acl);
        ++it->second.stat.aversion;
        s = it->second.stat;
      }
    }
    complete(v, seq, ec, [cb = std::move(cb), ec, s]() mutable { cb(ec, s); });
  });
}

void FakeCore::make_dirs(std::vector<std::string> paths, detail::VoidCallback cb, detail::RequestOptions) {
  auto seq = log_request(Op::make_dirs, paths.empty() ? std::string() : paths.front());
  enqueue([this, seq, paths = std::move(paths), cb = std::move(cb)]() mutable {
    auto v = judge(Op::make_dirs, paths.empty() ? std::string() : paths.front());
    error_code ec = v.ec;
    if (v.apply)
      for (const auto& p : paths) {
        if (p == "/" || has(p)) continue;
        std::string created;
        auto e = do_create(p, zkr::CreateMode::container, {}, true, true, 0, created);
        if (e && !ec) ec = e;
      }
    complete(v, seq, ec, [cb = std::move(cb), ec]() mutable { cb(ec); });
  });
}

void FakeCore::sweep_protected(std::string parent_path, std::string protected_prefix) {
  if (!open_ || !background_cleanup_ || protected_prefix.empty()) return;
  background_find_and_delete(std::move(parent_path), std::move(protected_prefix));
}

}  // namespace fake
