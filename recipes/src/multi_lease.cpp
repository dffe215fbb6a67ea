// MultiLease: the grants of one multi-lock acquire, and how they go back: every node deleted in one
// transaction from the caller's thread or the I/O thread (the framework's `remove_from_caller` and
// `remove_nodes`), falling back to one guaranteed delete each.

#include <algorithm>
#include <boost/asio/post.hpp>
#include <zkr/recipes/detail/lease_core.hpp>

#include "multi_lock_internals.hpp"

namespace asio = boost::asio;

namespace zkr {

namespace detail {

namespace {

/// Releases leases on the I/O thread of their client: marks them released, then deletes every node in one
/// transaction (reverse list order), falling back to one guaranteed delete each (`remove_nodes`).
void multi_release_nodes(std::vector<Lease> leases, VoidCallback cb) {
  std::vector<std::shared_ptr<LeaseCore>> cores;
  for (auto it = leases.rbegin(); it != leases.rend(); ++it)
    if (auto& st = detail::access::state(*it); st && !st->released) cores.push_back(st);
  if (cores.empty()) return cb(client_errc::not_acquired);
  auto core = cores.front()->core;
  std::vector<std::string> paths;
  for (auto& c : cores) {  // as LeaseCore::release, minus the delete
    c->released = true;
    c->set_status(LeaseStatus::released);
    c->stop_monitoring();
    paths.push_back(c->path);
  }
  remove_nodes(*core, std::move(paths), std::move(cb));
}

/// No two leases belong to different clients (empty handles aside).
bool one_client(const std::vector<Lease>& leases) {
  const Core* c = nullptr;
  for (const auto& l : leases) {
    if (!detail::access::state(l)) continue;
    if (c && detail::access::state(l)->core.get() != c) return false;
    c = detail::access::state(l)->core.get();
  }
  return true;
}

}  // namespace

}  // namespace detail

namespace {

/// The leases' shared states in the order multi_release_nodes deletes them (reverse list order).
std::vector<std::shared_ptr<detail::LeaseCore>> cores_in_release_order(const std::vector<Lease>& leases) {
  std::vector<std::shared_ptr<detail::LeaseCore>> out;
  for (auto it = leases.rbegin(); it != leases.rend(); ++it)
    if (detail::access::state(*it)) out.push_back(detail::access::state(*it));
  return out;
}

}  // namespace

MultiLease& MultiLease::operator=(MultiLease&& other) noexcept {
  if (this != &other) {
    MultiLease old(std::move(*this));  // released by its destructor
    leases_ = std::move(other.leases_);
  }
  return *this;
}

MultiLease::~MultiLease() {
  if (leases_.empty()) return;
  try {
    if (detail::one_client(leases_) && detail::access::state(leases_.front())) {
      auto core = detail::access::state(leases_.front())->core;
      // As a blocking release, the deletes leave from this thread when they can (not waiting for the reply).
      detail::VoidCallback ignore([](error_code) {});
      if (release_here(leases_, ignore)) {
        leases_.clear();  // each Lease sees itself released
        return;
      }
      asio::post(core->io_executor(), [l = std::move(leases_)]() mutable {
        detail::multi_release_nodes(std::move(l), [](error_code) {});
      });
    } else {
      while (!leases_.empty()) leases_.pop_back();  // each Lease releases itself in the background
    }
  } catch (...) {
    // never throw from a destructor; the session's end removes ephemeral nodes anyway
  }
}

bool MultiLease::valid() const noexcept {
  return !leases_.empty() &&
         std::all_of(leases_.begin(), leases_.end(), [](const Lease& l) { return l.valid(); });
}

std::vector<std::int64_t> MultiLease::fencing_tokens() const {
  std::vector<std::int64_t> out;
  for (const auto& l : leases_) out.push_back(l.fencing_token());
  return out;
}

std::vector<std::string> MultiLease::node_paths() const {
  std::vector<std::string> out;
  for (const auto& l : leases_) out.push_back(l.node_path());
  return out;
}

std::shared_ptr<detail::Core> MultiLease::core_of() const {
  for (const auto& l : leases_)
    if (detail::access::state(l)) return detail::access::state(l)->core;
  throw Error(client_errc::not_acquired, "release", "");
}

std::shared_ptr<detail::Core> MultiLease::async_core() const noexcept {
  for (const auto& l : leases_)
    if (detail::access::state(l)) return detail::access::state(l)->core;
  return nullptr;
}

detail::OpInfo MultiLease::info(std::string_view operation, detail::Cancellation cancellation) const {
  if (!async_core()) return {operation, std::string(), cancellation, client_errc::not_acquired};
  return {operation, leases_.front().node_path(), cancellation};
}

std::vector<std::shared_ptr<detail::LeaseCore>> MultiLease::grant_states() const {
  std::vector<std::shared_ptr<detail::LeaseCore>> out;
  for (const auto& l : leases_)
    out.push_back(detail::access::state(l));  // an empty one fails the transaction's preconditions
  return out;
}

std::vector<OpResult> MultiLease::multi_while_held(std::vector<Op> ops, error_code& ec) const {
  if (!valid()) {
    ec = client_errc::not_acquired;
    return {};
  }
  return detail::run_blocking<std::vector<OpResult>>(
      *core_of(),
      [&](detail::unique_function<void(error_code, std::vector<OpResult>)> cb) {
        Lease::multi_while_held_start(grant_states(), std::move(ops), std::move(cb));
      },
      ec);
}
std::vector<OpResult> MultiLease::multi_while_held(std::vector<Op> ops) const {
  error_code ec;
  auto r = multi_while_held(std::move(ops), ec);
  throw_if(ec, "multi_while_held", leases_.empty() ? std::string() : leases_.front().node_path());
  return r;
}

bool MultiLease::release_here(const std::vector<Lease>& leases, detail::VoidCallback& cb) {
  return detail::one_client(leases) && detail::release_from_caller(cores_in_release_order(leases), cb);
}

void MultiLease::release_start(std::vector<Lease> leases, detail::VoidCallback cb) {
  detail::multi_release_nodes(std::move(leases), std::move(cb));
}

void MultiLease::release(error_code& ec) {
  ec = {};
  auto leases = take();
  auto first = std::find_if(leases.begin(), leases.end(), [](const Lease& l) { return l.valid(); });
  if (first == leases.end()) {
    ec = client_errc::not_acquired;
    return;
  }
  if (detail::one_client(leases)) {
    auto core = detail::access::state(*first)->core;
    if (core->running_in_io_thread()) {  // as Lease::release: start the deletes, do not wait for them
      release_start(std::move(leases), [](error_code) {});
      return;
    }
    // As Lease::release: the deletes (one multi) leave from this thread when they can.
    auto l = std::make_shared<std::vector<Lease>>(std::move(leases));
    detail::run_blocking_void_from_caller(
        *core, [l](detail::VoidCallback& cb) { return release_here(*l, cb); },
        [l](detail::VoidCallback cb) { release_start(std::move(*l), std::move(cb)); }, ec);
    return;
  }
  for (auto it = leases.rbegin(); it != leases.rend(); ++it) {
    if (!it->valid()) continue;
    error_code e;
    it->release(e);
    if (e && !ec) ec = e;
  }
}

void MultiLease::release() {
  const auto paths = node_paths();
  error_code ec;
  release(ec);
  throw_if(ec, "release", paths.empty() ? std::string() : paths.front());
}

}  // namespace zkr
