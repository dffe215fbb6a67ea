#include <zkr/recipes/inter_process_multi_lock.hpp>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include <algorithm>
#include <exception>
#include <set>

#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/lease_core.hpp>
#include <zkr/recipes/inter_process_mutex.hpp>

namespace asio = boost::asio;

namespace zkr {

namespace detail {

struct MultiShared {
  std::shared_ptr<Core> core;
  std::vector<std::shared_ptr<LockInternals>> engines;
  std::mutex mu;
  std::optional<std::string> node_data;
};

std::shared_ptr<Core> multi_core(const std::shared_ptr<MultiShared>& s) { return s->core; }

std::shared_ptr<MultiShared> make_multi_shared(std::shared_ptr<Core> core, const std::vector<std::string>& paths) {
  if (paths.empty()) throw Error(errc::invalid_argument, "multi-lock (no paths)", "");
  for (std::size_t i = 0; i < paths.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (paths[i] == paths[j]) throw Error(errc::invalid_argument, "multi-lock (duplicate path)", paths[i]);
  auto s = std::make_shared<MultiShared>();
  s->core = core;
  for (const auto& p : paths)
    s->engines.push_back(std::make_shared<LockInternals>(core, p, std::string(InterProcessMutex::lock_name), 1,
                                                         default_mutex_driver()));
  return s;
}

namespace {

/// Deletes `paths` (I/O thread), in one transaction when there are several; if the transaction fails (a node
/// already gone, say), one guaranteed quiet delete each. Calls `k` once every delete has answered.
void remove_nodes(const std::shared_ptr<Core>& core, std::vector<std::string> paths, unique_function<void()> k) {
  if (paths.empty() || !core->is_open()) return k();
  auto one_by_one = [core](std::vector<std::string> paths, unique_function<void()> k) {
    auto left = std::make_shared<std::size_t>(paths.size());
    auto kk = std::make_shared<unique_function<void()>>(std::move(k));
    for (auto& p : paths)
      core->remove(std::move(p), -1, /*guaranteed=*/true, /*quietly=*/true, [left, kk](error_code) {
        if (--*left == 0) (*kk)();
      });
  };
  if (paths.size() == 1) return one_by_one(std::move(paths), std::move(k));
  std::vector<Op> ops;
  ops.reserve(paths.size());
  for (const auto& p : paths) ops.push_back(Op::remove(p));
  core->multi(std::move(ops), [paths = std::move(paths), one_by_one, k = std::move(k)](
                                  error_code ec, std::vector<OpResult>) mutable {
    if (!ec) return k();
    one_by_one(std::move(paths), std::move(k));
  });
}

/// The path-based acquire: batched enqueue, pipelined listing, ordered waiting. See docs/multi-lock.md.
struct MultiAcquire : std::enable_shared_from_this<MultiAcquire> {
  using Clock = std::chrono::steady_clock;

  /// Our node in a lock, queued by a batch and not yet granted or handed to the engine.
  struct Queued {
    std::string path;    // un-namespaced, with the sequence
    std::string prefix;  // "_c_<uuid>-": a retried transaction may have left another node with it
  };

  std::shared_ptr<MultiShared> s;
  std::shared_ptr<Core> core;
  std::optional<Clock::time_point> deadline;
  std::shared_ptr<CancelState> cancel;
  unique_function<void(error_code, MultiLease)> done;
  std::optional<std::string> node_data;

  std::vector<Lease> held;                    // the granted prefix of the list
  std::vector<std::optional<Queued>> queued;  // by lock index
  std::vector<std::string> strays;            // other nodes of ours (a retried transaction's), deleted by stop()
  std::int64_t batch_czxid = 0;               // every node of one transaction has the transaction's zxid
  std::int64_t batch_session = 0;
  int parent_rounds = 0;
  bool batch = true;  // false after an unexpected failure: the engine, lock by lock, takes over
  bool in_flight = false;
  bool in_engine = false;
  bool finished = false;
  bool timed_out = false;
  std::shared_ptr<CancelState> engine_cancel;
  std::vector<StopPtr> batch_stops;  // the transaction and its listings: stopped while waiting for the connection
  std::unique_ptr<asio::steady_timer> deadline_timer;

  std::size_t n() const { return s->engines.size(); }
  /// Cancellation stops at any step. The deadline only stops a *wait* (as the engine: a timed acquire of free
  /// locks succeeds even with a zero timeout): it is checked where we would wait, and the engine applies it to
  /// its own waits.
  bool stopping() const { return cancel->requested(); }
  bool past_deadline() const { return deadline && Clock::now() >= *deadline; }

  void begin() {
    cancel->on_request([self = shared_from_this()] { self->interrupt(); });
    if (deadline) {
      // At the deadline, a batch still waiting for the connection is not sent (an outage must not hold a timed
      // acquire for the connection timeout); requests already sent finish, as everywhere.
      deadline_timer = std::make_unique<asio::steady_timer>(core->io_executor(), *deadline);
      deadline_timer->async_wait([self = shared_from_this()](error_code ec) {
        if (ec || self->finished || !self->in_flight || self->in_engine) return;
        for (auto& st : self->batch_stops) st->request();
      });
    }
    next();
  }

  /// Cancellation: the engine cleans up its own attempt; a request in flight finishes first.
  void interrupt() {
    if (finished) return;
    if (in_engine) return engine_cancel->request();
    if (in_flight) {
      // Requests of the batch still waiting for the connection are never sent (as the engine's create).
      for (auto& st : batch_stops) st->request();
      return;
    }
    stop({});
  }

  void next() {
    if (finished) return;
    if (stopping()) return stop({});
    if (give_back_stale()) return;
    const std::size_t k = held.size();
    if (k == n()) return succeed();
    if (!batch || n() - k == 1) return wait_on(k);
    enqueue(k);
  }

  // 1. One transaction queues us on every remaining lock. Three more operations on a scratch node (created,
  //    written and deleted in the same transaction, so nobody ever sees it) return a Stat whose mzxid is the
  //    transaction's zxid, which is the czxid of every lock node created with it: the fencing tokens, at no
  //    extra request (a multi's create does not return a Stat in the C client).
  void enqueue(std::size_t k) {
    const std::string data = node_data ? *node_data : core->default_data();
    std::vector<Op> ops;
    std::vector<std::string> prefixes;
    for (std::size_t i = k; i < n(); ++i) {
      const auto& e = *s->engines[i];
      const auto id = protected_names::new_protected_id();
      prefixes.push_back(protected_names::prefix_for(id));
      ops.push_back(Op::create(protected_names::to_protected_path(make_path(e.base_path(), e.lock_name()), id), data,
                               CreateMode::ephemeral_sequential));
    }
    const auto stamp = make_path(s->engines[k]->base_path(),
                                 protected_names::prefix_for(protected_names::new_protected_id()) + "zkr-multi-stamp");
    ops.push_back(Op::create(stamp, std::string(), CreateMode::persistent));
    ops.push_back(Op::set_data(stamp, std::string()));
    ops.push_back(Op::remove(stamp));
    // The listings of step 2 go out right behind the transaction, before its reply: the session's requests
    // are applied in order, so they already show our nodes (one round trip for steps 1 and 2). A listing
    // that does not show our node (the core retried the transaction after it was sent) is not trusted.
    struct Round {
      std::size_t left = 0;
      error_code ec;
      std::vector<OpResult> results;
      std::vector<std::vector<std::string>> children;
      error_code list_ec;
    };
    auto round = std::make_shared<Round>();
    round->left = 1 + (n() - k);
    round->children.resize(n() - k);
    auto shared_prefixes = std::make_shared<std::vector<std::string>>(std::move(prefixes));
    auto arrived = [self = shared_from_this(), k, round, prefixes = std::move(shared_prefixes)]() mutable {
      if (--round->left) return;
      self->on_enqueued(k, std::move(*prefixes), round->ec, std::move(round->results), &round->children,
                        round->list_ec);
    };
    auto shared_arrived = std::make_shared<decltype(arrived)>(std::move(arrived));
    in_flight = true;
    batch_stops.clear();
    auto new_stop = [this] { return batch_stops.emplace_back(std::make_shared<StopSignal>()); };
    core->multi(
        std::move(ops),
        [round, shared_arrived](error_code ec, std::vector<OpResult> results) {
          round->ec = ec;
          round->results = std::move(results);
          (*shared_arrived)();
        },
        {.stop = new_stop()});
    for (std::size_t i = k; i < n(); ++i) {
      core->get_children(
          s->engines[i]->base_path(), nullptr,
          [round, shared_arrived, at = i - k](error_code ec, Children c) {
            if (ec == zk_errc::no_node) c.names.clear(), ec = {};
            if (ec && !round->list_ec) round->list_ec = ec;
            round->children[at] = std::move(c.names);
            (*shared_arrived)();
          },
          {.stop = new_stop()});
    }
  }

  void on_enqueued(std::size_t k, std::vector<std::string> prefixes, error_code ec,
                   std::vector<OpResult> results, std::vector<std::vector<std::string>>* listed,
                   error_code list_ec) {
    in_flight = false;
    batch_stops.clear();
    const std::size_t m = n() - k;
    if (!ec && results.size() == m + 3) {
      batch_czxid = results[m + 1].stat.mzxid;
      batch_session = core->session_id();
      for (std::size_t i = 0; i < m; ++i) queued[k + i] = Queued{std::move(results[i].path), prefixes[i]};
      bool usable = !list_ec;
      for (std::size_t i = 0; usable && i < m; ++i) {
        const auto& names = (*listed)[i];
        usable = std::find(names.begin(), names.end(), node_name(queued[k + i]->path)) != names.end();
      }
      if (usable) return on_listed(k, std::move(*listed), {});  // stops there if asked, orphans included
      if (stopping()) {
        // The listings came before the transaction's last try: an earlier try may have committed.
        sweep(k, prefixes);
        return stop({});
      }
      return list(k);  // list again, after the transaction's reply
    }
    // Nothing of this transaction exists (all or none), but a retried transaction whose first try committed
    // unseen may have left nodes: find them by their protected prefixes.
    // (A stopped transaction counts too: a try sent before the stop may have committed.)
    if (is_retryable(ec) || is_connection_loss(ec) || ec == asio::error::operation_aborted) sweep(k, prefixes);
    if (stopping()) return stop({});
    if (ec == asio::error::operation_aborted && past_deadline()) {  // stopped by the deadline timer
      timed_out = true;
      return stop({});
    }
    // A directory missing (first use, or a container reaped), or created by someone else since we looked.
    const bool dirs_changed = ec == zk_errc::no_node || ec == zk_errc::node_exists ||
                              std::any_of(results.begin(), results.end(), [](const OpResult& r) {
                                return r.ec == zk_errc::no_node || r.ec == zk_errc::node_exists;
                              });
    if (dirs_changed && parent_rounds++ < 3) return find_missing_dirs(k);
    core->logger()->debug("multi-lock: batched enqueue failed ({}); acquiring lock by lock", ec.message());
    batch = false;
    next();
  }

  /// Lock directories are missing: find which of them and of their ancestors do not exist (one pipelined
  /// round of exists), create those as containers (one pipelined round per depth), then queue again.
  /// (Not inside the transaction: the C client misreads a multi's reply to a container create, which the
  /// server answers with a Stat the client does not expect.)
  void find_missing_dirs(std::size_t k) {
    std::set<std::string> all;  // ordered: a parent sorts before its children
    for (std::size_t i = k; i < n(); ++i) {
      const auto& base = s->engines[i]->base_path();
      for (auto pos = base.find('/', 1); pos != std::string::npos; pos = base.find('/', pos + 1))
        all.insert(base.substr(0, pos));
      all.insert(base);
    }
    struct Probe {
      std::vector<std::string> dirs;
      std::vector<char> missing;
      std::size_t left = 0;
      error_code ec;
    };
    auto p = std::make_shared<Probe>();
    p->dirs.assign(all.begin(), all.end());
    p->missing.assign(p->dirs.size(), 0);
    p->left = p->dirs.size();
    in_flight = true;
    for (std::size_t i = 0; i < p->dirs.size(); ++i) {
      core->exists(p->dirs[i], nullptr, [self = shared_from_this(), p, i, k](error_code ec, Stat) {
        if (ec == zk_errc::no_node) p->missing[i] = 1;
        else if (ec && !p->ec) p->ec = ec;
        if (--p->left) return;
        self->in_flight = false;
        if (self->stopping()) return self->stop({});
        if (p->ec) {
          self->batch = false;
          return self->next();
        }
        std::vector<std::string> missing;
        for (std::size_t j = 0; j < p->dirs.size(); ++j)
          if (p->missing[j]) missing.push_back(std::move(p->dirs[j]));
        // By depth, so that every parent is created before its children.
        std::stable_sort(missing.begin(), missing.end(), [](const std::string& a, const std::string& b) {
          return std::count(a.begin(), a.end(), '/') < std::count(b.begin(), b.end(), '/');
        });
        self->create_dirs(k, std::move(missing), 0);
      });
    }
  }

  /// Creates `dirs[from...]` of the smallest depth at once (as Curator's mkdirs: containers unless the client
  /// says `dont_use_container_parents`, node_exists ignored), then the next depth, then queues again.
  void create_dirs(std::size_t k, std::vector<std::string> dirs, std::size_t from) {
    if (stopping()) return stop({});
    if (from == dirs.size()) return enqueue(k);
    const auto depth = [](const std::string& d) { return std::count(d.begin(), d.end(), '/'); };
    std::size_t to = from;
    while (to < dirs.size() && depth(dirs[to]) == depth(dirs[from])) ++to;
    auto left = std::make_shared<std::size_t>(to - from);
    auto failed = std::make_shared<error_code>();
    auto shared_dirs = std::make_shared<std::vector<std::string>>(std::move(dirs));
    in_flight = true;
    for (std::size_t i = from; i < to; ++i) {
      CreateOptions co;
      co.mode = core->use_container_parents() ? CreateMode::container : CreateMode::persistent;
      co.data = std::string();
      core->create((*shared_dirs)[i], std::move(co),
                   [self = shared_from_this(), k, left, failed, shared_dirs, to](error_code ec, CreateResult) {
                     if (ec && ec != zk_errc::node_exists && !*failed) *failed = ec;
                     if (--*left) return;
                     self->in_flight = false;
                     if (self->stopping()) return self->stop({});
                     if (*failed) {
                       self->batch = false;  // the engine, lock by lock, reports the real error
                       return self->next();
                     }
                     self->create_dirs(k, std::move(*shared_dirs), to);
                   });
    }
  }

  /// `sweep` with the prefixes of the nodes queued in locks [k, n).
  void sweep_queued(std::size_t k) {
    std::vector<std::string> prefixes;
    for (std::size_t i = k; i < n(); ++i) prefixes.push_back(queued[i] ? queued[i]->prefix : std::string());
    sweep(k, prefixes);
  }

  /// Deletes, in the background, any node of ours left in locks [k, n) by a transaction retried after a
  /// connection loss (an empty prefix: none to look for).
  void sweep(std::size_t k, const std::vector<std::string>& prefixes) {
    if (!core->is_open()) return;
    for (std::size_t i = k; i < n(); ++i) {
      if (prefixes[i - k].empty()) continue;
      const auto base = s->engines[i]->base_path();
      core->get_children(base, nullptr, [core = core, base, prefix = prefixes[i - k]](error_code ec, Children c) {
        if (ec) return;
        for (const auto& name : c.names)
          if (name.starts_with(prefix)) core->remove(make_path(base, name), -1, true, true, [](error_code) {});
      });
    }
  }

  // 2. All directories listed at once: keep the held prefix of the list.
  void list(std::size_t k) {
    struct Listing {
      std::vector<std::vector<std::string>> children;
      std::size_t left = 0;
      error_code ec;
    };
    auto l = std::make_shared<Listing>();
    l->children.resize(n() - k);
    l->left = n() - k;
    in_flight = true;
    for (std::size_t i = k; i < n(); ++i) {
      core->get_children(s->engines[i]->base_path(), nullptr,
                         [self = shared_from_this(), l, k, i](error_code ec, Children c) {
                           if (ec == zk_errc::no_node) c.names.clear(), ec = {};  // reaped: our node is gone
                           if (ec && !l->ec) l->ec = ec;
                           l->children[i - k] = std::move(c.names);
                           if (--l->left) return;
                           self->in_flight = false;
                           self->on_listed(k, std::move(l->children), l->ec);
                         });
    }
  }

  void on_listed(std::size_t k, std::vector<std::vector<std::string>> children, error_code ec) {
    // A transaction retried after a lost reply may have committed twice: the first try's nodes carry our
    // prefixes but are not our nodes. Take them out of every listing, not only up to the first lock not
    // granted, and delete them whatever comes next; left alone they are live nodes of our own session that
    // we (or the next acquire) would queue behind.
    std::vector<std::string> orphans;
    for (std::size_t i = k; i < n(); ++i) {
      const auto& q = *queued[i];
      const auto our = node_name(q.path);
      std::erase_if(children[i - k], [&](const std::string& name) {
        if (name == our || !name.starts_with(q.prefix)) return false;
        orphans.push_back(make_path(s->engines[i]->base_path(), name));
        return true;
      });
    }
    if (stopping() || ec) {
      if (ec) sweep_queued(k);  // a failed listing may hide orphans
      strays = std::move(orphans);
      return stop(stopping() ? error_code() : ec);
    }
    std::size_t j = k;
    for (; j < n(); ++j) {
      const auto& e = *s->engines[j];
      const auto& q = *queued[j];
      auto names = std::move(children[j - k]);
      const auto our = node_name(q.path);
      e.driver().sort_children(names, e.lock_name());
      const auto r = e.driver().gets_the_lock(names, our, e.max_leases());
      if (!r || !r->gets_the_lock || core->session_id() != batch_session) break;
      held.push_back(make_lease(core, q.path, batch_czxid, batch_session));
      queued[j].reset();
    }
    if (j == n()) {
      if (!orphans.empty()) remove_nodes(core, std::move(orphans), [] {});  // we hold every lock: no need to wait
      return next();
    }
    if (past_deadline()) {  // we would have to wait: time is up
      timed_out = true;
      strays = std::move(orphans);
      return stop({});
    }
    // 3. Lock j is taken: give back our queue positions in the locks after it before waiting for it, so we
    //    never wait while queued in a later lock (docs/multi-lock.md). The orphans go in the same deletes.
    std::vector<std::string> later = std::move(orphans);
    for (std::size_t i = j + 1; i < n(); ++i)
      if (queued[i]) later.push_back(std::exchange(queued[i], std::nullopt)->path);
    in_flight = true;
    remove_nodes(core, std::move(later), [self = shared_from_this(), j] {
      self->in_flight = false;
      if (self->stopping()) return self->stop({});
      self->wait_on(j);
    });
  }

  // 4. Wait for lock j as the engine does (watching the predecessor), keeping our place in its queue.
  void wait_on(std::size_t j) {
    AcquireOptions o;
    o.deadline = deadline;
    o.node_data = node_data;
    if (queued[j]) {
      auto q = std::exchange(queued[j], std::nullopt);
      if (core->session_id() == batch_session)
        o.existing_node = AcquireOptions::ExistingNode{std::move(q->path), batch_czxid, batch_session};
      else
        remove_nodes(core, {std::move(q->path)}, [] {});  // of a lost session: the engine makes a new one
    }
    engine_cancel = std::make_shared<CancelState>();
    in_engine = true;
    s->engines[j]->attempt_lock(std::move(o), engine_cancel, [self = shared_from_this()](error_code ec, Lease l) {
      self->in_engine = false;
      if (l) {
        self->held.push_back(std::move(l));
        return self->next();  // stops (and gives it back) if we were interrupted meanwhile
      }
      if (ec && !(ec == asio::error::operation_aborted && self->stopping())) return self->stop(ec);
      self->timed_out = !self->cancel->requested();  // the engine's deadline
      self->stop({});
    });
  }

  /// A session expiry while we waited for a later lock deleted the nodes of the locks held before it; other
  /// clients may hold those locks now. A lease of an earlier session, or one already lost, grants nothing:
  /// keep the longest prefix of good leases, give back the rest (a later lock must not be held while we wait
  /// for an earlier one, docs/multi-lock.md), then carry on from there. True when it gave something back.
  bool give_back_stale() {
    const auto sid = core->session_id();
    const auto bad = std::find_if(held.begin(), held.end(), [sid](const Lease& l) {
      return l.state()->session != sid || l.state()->status == LeaseStatus::lost;
    });
    if (bad == held.end()) return false;
    std::vector<Lease> stale(std::make_move_iterator(bad), std::make_move_iterator(held.end()));
    held.erase(bad, held.end());
    core->logger()->debug("multi-lock: {} lock(s) held by an earlier session or lost; taking them again",
                          stale.size());
    std::reverse(stale.begin(), stale.end());
    in_flight = true;
    auto left = std::make_shared<std::size_t>(stale.size() + 1);
    auto resume = [self = shared_from_this(), left] {
      if (--*left) return;
      self->in_flight = false;
      self->next();
    };
    for (auto& l : stale) l.state()->release([resume](error_code) mutable { resume(); });
    resume();
    return true;
  }

  void succeed() {
    finished = true;
    if (deadline_timer) deadline_timer->cancel();
    cancel->on_request({});
    auto d = std::move(done);
    if (d) d({}, MultiLease(std::move(held)));
  }

  /// Timeout, cancellation or error: delete every queued node and give back the locks taken (in reverse
  /// order), then complete.
  void stop(error_code ec) {
    if (finished) return;
    finished = true;
    if (deadline_timer) deadline_timer->cancel();
    cancel->on_request({});
    if (!ec && cancel->requested() && !timed_out) ec = asio::error::operation_aborted;
    std::vector<std::string> nodes = std::move(strays);
    for (auto& q : queued)
      if (q) nodes.push_back(std::exchange(q, std::nullopt)->path);
    auto self = shared_from_this();
    remove_nodes(core, std::move(nodes), [self, ec]() mutable {
      std::vector<Lease> leases = std::move(self->held);
      std::reverse(leases.begin(), leases.end());
      auto left = std::make_shared<std::size_t>(leases.size() + 1);
      auto finish = [self, ec, left] {
        if (--*left) return;
        auto d = std::move(self->done);
        if (d) d(ec, MultiLease());
      };
      for (auto& l : leases) l.state()->release([finish](error_code) mutable { finish(); });
      finish();
    });
  }
};

/// Releases leases on the I/O thread of their client: marks them released, then deletes every node in one
/// transaction (reverse list order), falling back to one guaranteed delete each.
void multi_release_nodes(std::vector<Lease> leases, VoidCallback cb) {
  std::vector<std::shared_ptr<LeaseCore>> cores;
  for (auto it = leases.rbegin(); it != leases.rend(); ++it)
    if (auto& st = it->state(); st && !st->released) cores.push_back(st);
  if (cores.empty()) return cb(errc::not_acquired);
  auto core = cores.front()->core;
  std::vector<std::string> paths;
  for (auto& c : cores) {  // as LeaseCore::release, minus the delete
    c->released = true;
    c->set_status(LeaseStatus::released);
    c->stop_monitoring();
    paths.push_back(c->path);
  }
  if (!core->is_open()) return cb({});  // the session and its ephemeral nodes are gone with the client
  if (paths.size() == 1) return core->remove(std::move(paths.front()), -1, true, true, std::move(cb));
  std::vector<Op> ops;
  for (const auto& p : paths) ops.push_back(Op::remove(p));
  core->multi(std::move(ops), [core, paths = std::move(paths), cb = std::move(cb)](
                                  error_code ec, std::vector<OpResult>) mutable {
    if (!ec) return cb({});
    remove_each(*core, std::move(paths), std::move(cb));
  });
}

bool one_client(const std::vector<Lease>& leases) {
  const Core* c = nullptr;
  for (const auto& l : leases) {
    if (!l.state()) continue;
    if (c && l.state()->core.get() != c) return false;
    c = l.state()->core.get();
  }
  return true;
}

}  // namespace

void multi_acquire(std::shared_ptr<MultiShared> s, std::optional<std::chrono::steady_clock::time_point> deadline,
                   std::shared_ptr<CancelState> cancel, unique_function<void(error_code, MultiLease)> done) {
  auto a = std::make_shared<MultiAcquire>();
  a->core = s->core;
  {
    std::lock_guard lk(s->mu);
    a->node_data = s->node_data;
  }
  a->queued.resize(s->engines.size());
  a->s = std::move(s);
  a->deadline = deadline;
  a->cancel = cancel ? std::move(cancel) : std::make_shared<CancelState>();
  a->done = std::move(done);
  if (a->cancel->requested()) {
    a->finished = true;
    return a->done(asio::error::operation_aborted, MultiLease());
  }
  a->begin();
}

}  // namespace detail

// MultiLease ---------------------------------------------------------------------------------------------------

namespace {

/// The leases' shared states in the order multi_release_nodes deletes them (reverse list order).
std::vector<std::shared_ptr<detail::LeaseCore>> cores_in_release_order(const std::vector<Lease>& leases) {
  std::vector<std::shared_ptr<detail::LeaseCore>> out;
  for (auto it = leases.rbegin(); it != leases.rend(); ++it)
    if (it->state()) out.push_back(it->state());
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
    if (detail::one_client(leases_) && leases_.front().state()) {
      auto core = leases_.front().state()->core;
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
  return !leases_.empty() && std::all_of(leases_.begin(), leases_.end(), [](const Lease& l) { return l.valid(); });
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
    if (l.state()) return l.state()->core;
  throw Error(errc::not_acquired, "release", "");
}

std::vector<std::shared_ptr<detail::LeaseCore>> MultiLease::grant_states() const {
  std::vector<std::shared_ptr<detail::LeaseCore>> out;
  for (const auto& l : leases_) out.push_back(l.state());  // an empty one fails the transaction's preconditions
  return out;
}

std::vector<OpResult> MultiLease::multi_while_held(std::vector<Op> ops, error_code& ec) const {
  if (!valid()) {
    ec = errc::not_acquired;
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
    ec = errc::not_acquired;
    return;
  }
  if (detail::one_client(leases)) {
    auto core = first->state()->core;
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

// InterProcessMultiLock ----------------------------------------------------------------------------------------

struct InterProcessMultiLock::AsyncTarget {
  std::shared_ptr<detail::MultiShared> shared;               // paths form
  std::vector<InterProcessLock*> locks;                       // locks form
  std::vector<std::shared_ptr<InterProcessLock>> keep_alive;  // the locks given as shared_ptrs
};

InterProcessMultiLock::InterProcessMultiLock(CuratorFramework& client, std::vector<std::string> paths)
    : paths_(std::move(paths)),
      shared_(detail::make_multi_shared(client.core(), paths_)),
      async_target_(std::make_shared<const AsyncTarget>(AsyncTarget{shared_, {}, {}})) {}

InterProcessMultiLock::InterProcessMultiLock(std::vector<std::shared_ptr<InterProcessLock>> locks)
    : owned_(std::move(locks)) {
  if (owned_.empty()) throw Error(errc::invalid_argument, "multi-lock (no locks)", "");
  for (const auto& l : owned_) {
    if (!l) throw Error(errc::invalid_argument, "multi-lock (null lock)", "");
    locks_.push_back(l.get());
  }
  async_target_ = std::make_shared<const AsyncTarget>(AsyncTarget{nullptr, locks_, owned_});
}

InterProcessMultiLock::InterProcessMultiLock(std::vector<std::reference_wrapper<InterProcessLock>> locks) {
  if (locks.empty()) throw Error(errc::invalid_argument, "multi-lock (no locks)", "");
  for (auto& l : locks) locks_.push_back(&l.get());
  async_target_ = std::make_shared<const AsyncTarget>(AsyncTarget{nullptr, locks_, {}});
}

InterProcessMultiLock::~InterProcessMultiLock() = default;  // held MultiLeases release themselves

std::size_t InterProcessMultiLock::size() const noexcept { return shared_ ? paths_.size() : locks_.size(); }

void InterProcessMultiLock::set_node_data(std::optional<std::string> data) {
  if (!shared_) return;
  std::lock_guard lk(shared_->mu);
  shared_->node_data = std::move(data);
}

std::shared_ptr<detail::Core> InterProcessMultiLock::async_core() const {
  auto core = grant_core();
  if (!core)
    throw Error(errc::invalid_argument, "async_acquire (a lock of this multi-lock has no asynchronous acquire)", "");
  return core;
}

bool InterProcessMultiLock::hold_lost() const {
  if (!shared_)
    return std::any_of(locks_.begin(), locks_.end(), [](const InterProcessLock* l) { return l->hold_lost(); });
  std::lock_guard lk(mu_);
  auto it = holds_.find(std::this_thread::get_id());
  if (it == holds_.end()) return false;
  const auto& leases = it->second.lease.leases();
  return std::any_of(leases.begin(), leases.end(), [](const Lease& l) { return l.status() == LeaseStatus::lost; });
}

std::shared_ptr<detail::Core> InterProcessMultiLock::grant_core() const {
  if (shared_) return shared_->core;
  for (const auto* l : locks_)
    if (!l->grant_core()) return nullptr;
  return locks_.front()->grant_core();
}

void InterProcessMultiLock::start_grant(std::optional<std::chrono::steady_clock::time_point> deadline,
                                        std::shared_ptr<detail::StopSignal> cancel,
                                        detail::unique_function<void(error_code, std::vector<Lease>)> done) {
  start_acquire(async_target_, deadline, std::move(cancel),
                [done = std::move(done)](error_code ec, MultiLease m) mutable { done(ec, m.take()); });
}

// The locks form's asynchronous acquire: each lock's `start_grant` in list order, each on its own client's I/O
// thread with a stop signal of its own (a `StopSignal` belongs to one I/O thread); the operation's own signal
// (on the first lock's I/O thread) forwards a cancellation to the step in flight. Steps run one at a time, so
// `mu` only orders a step's start and end against a cancellation.
struct InterProcessMultiLock::LocksRun {
  std::shared_ptr<const AsyncTarget> target;
  std::optional<std::chrono::steady_clock::time_point> deadline;
  detail::unique_function<void(error_code, MultiLease)> done;
  std::mutex mu;
  bool cancelled = false;
  std::shared_ptr<detail::StopSignal> step_stop;  // the step in flight's, requested on step_core's I/O thread
  std::shared_ptr<detail::Core> step_core;
  std::vector<Lease> taken;            // in list order
  std::vector<std::size_t> taken_from;  // the index of the lock each of `taken` came from
  std::shared_ptr<detail::CancelState> cancel;  // the operation's; kept alive for its cancellation slot
};

void InterProcessMultiLock::start_acquire(const std::shared_ptr<const AsyncTarget>& target,
                                          std::optional<std::chrono::steady_clock::time_point> deadline,
                                          std::shared_ptr<detail::CancelState> cancel,
                                          detail::unique_function<void(error_code, MultiLease)> done) {
  if (target->shared) return detail::multi_acquire(target->shared, deadline, std::move(cancel), std::move(done));
  auto run = std::make_shared<LocksRun>();
  run->target = target;
  run->deadline = deadline;
  run->done = std::move(done);
  if (cancel) {
    if (cancel->requested()) return run->done(boost::asio::error::operation_aborted, {});
    cancel->on_request([weak = std::weak_ptr<LocksRun>(run)] {
      if (auto r = weak.lock()) locks_cancel(r);
    });
    run->cancel = std::move(cancel);
  }
  locks_step(run, 0);
}

void InterProcessMultiLock::locks_step(const std::shared_ptr<LocksRun>& run, std::size_t i) {
  const auto& locks = run->target->locks;
  if (i == locks.size()) {
    auto leases = std::move(run->taken);
    run->taken.clear();
    run->taken_from.clear();
    return run->done({}, MultiLease(std::move(leases)));
  }
  auto core = locks[i]->grant_core();
  if (!core) return locks_roll_back(run, errc::invalid_argument);  // checked at the start; cannot change
  auto io = core->io_executor();
  boost::asio::post(io, [run, i, core = std::move(core)]() mutable {
    auto stop = std::make_shared<detail::StopSignal>();
    {
      std::lock_guard lk(run->mu);
      if (run->cancelled) {
        run->step_stop = nullptr;
      } else {
        run->step_stop = stop;
        run->step_core = std::move(core);
      }
    }
    if (!run->step_stop) return locks_roll_back(run, boost::asio::error::operation_aborted);
    run->target->locks[i]->start_grant(
        run->deadline, std::move(stop),
        [run, i](error_code ec, std::vector<Lease> leases) mutable { locks_stepped(run, i, ec, std::move(leases)); });
  });
}

void InterProcessMultiLock::locks_stepped(const std::shared_ptr<LocksRun>& run, std::size_t i, error_code ec,
                                          std::vector<Lease> leases) {
  bool cancelled;
  {
    std::lock_guard lk(run->mu);
    run->step_stop = nullptr;
    run->step_core = nullptr;
    cancelled = run->cancelled;
  }
  const bool granted = !leases.empty();
  for (auto& l : leases) {
    run->taken.push_back(std::move(l));
    run->taken_from.push_back(i);
  }
  if (cancelled) return locks_roll_back(run, boost::asio::error::operation_aborted);
  if (ec || !granted) return locks_roll_back(run, ec);  // an error, or the deadline passed (no error)
  // A grant of an earlier lock lost while this one was awaited (its session expired, its node was deleted)
  // holds nothing, and others may hold that lock now. Curator's MultiLock would return it all the same. Give
  // it back with every later grant (a later lock is never held while an earlier one is awaited) and take the
  // locks again from there, within the same deadline and cancellation.
  for (std::size_t k = 0; k < run->taken.size(); ++k) {
    if (run->taken[k].status() != LeaseStatus::lost) continue;
    const auto again = run->taken_from[k];
    return locks_give_back(run, k, [run, again] { locks_step(run, again); });
  }
  locks_step(run, i + 1);
}

void InterProcessMultiLock::locks_cancel(const std::shared_ptr<LocksRun>& run) {
  std::shared_ptr<detail::StopSignal> stop;
  std::shared_ptr<detail::Core> core;
  {
    std::lock_guard lk(run->mu);
    run->cancelled = true;
    stop = run->step_stop;
    core = run->step_core;
  }
  // The step in flight deletes its own nodes and completes with operation_aborted; a step about to start sees
  // `cancelled` and does not.
  if (stop) boost::asio::post(core->io_executor(), [stop] { stop->request(); });
}

void InterProcessMultiLock::locks_roll_back(const std::shared_ptr<LocksRun>& run, error_code ec) {
  locks_give_back(run, 0, [run, ec] { run->done(ec, MultiLease()); });
}

void InterProcessMultiLock::locks_give_back(const std::shared_ptr<LocksRun>& run, std::size_t from,
                                            detail::unique_function<void()> then) {
  // The grants go back in reverse list order, each release awaited, before `then`.
  while (run->taken.size() > from) {
    Lease last = std::move(run->taken.back());
    run->taken.pop_back();
    run->taken_from.pop_back();
    if (!last.valid()) continue;
    try {
      last.async_release([run, from, then = std::move(then)](error_code) mutable {
        locks_give_back(run, from, std::move(then));
      });
      return;
    } catch (...) {
      // an empty handle cannot be released; its Lease destructor has nothing to do either
    }
  }
  then();
}
bool InterProcessMultiLock::paths_acquire(std::optional<std::chrono::milliseconds> timeout, error_code& ec) {
  const auto me = std::this_thread::get_id();
  {
    std::lock_guard lk(mu_);
    if (auto it = holds_.find(me); it != holds_.end()) {  // re-entering: no I/O
      ++it->second.count;
      return true;
    }
  }
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (timeout) deadline = std::chrono::steady_clock::now() + std::max(*timeout, std::chrono::milliseconds(0));
  MultiLease lease = detail::run_blocking<MultiLease>(
      *shared_->core,
      [s = shared_, deadline](detail::unique_function<void(error_code, MultiLease)> cb) mutable {
        detail::multi_acquire(std::move(s), deadline, nullptr, std::move(cb));
      },
      ec);
  if (ec || !lease) return false;
  std::lock_guard lk(mu_);
  holds_[me] = Hold{std::move(lease), 1};
  return true;
}

bool InterProcessMultiLock::locks_acquire(std::optional<std::chrono::milliseconds> timeout, error_code& ec) {
  const auto deadline = std::chrono::steady_clock::now() + timeout.value_or(std::chrono::milliseconds(0));
  std::size_t taken = 0;
  auto give_back = [&](std::size_t from) {
    while (taken > from) {
      error_code ignored;
      try {
        locks_[--taken]->release(ignored);
      } catch (...) {
        // Curator ignores release failures of the roll-back
      }
    }
  };
  // A lock taken earlier in this acquire whose hold was lost while a later one was awaited (its session
  // expired) is given back with every later lock and taken again (Curator's MultiLock would return it). A hold
  // that stays lost after being taken again (a reentrant hold older than this acquire, say) fails the acquire.
  constexpr int max_retakes = 16;
  int retakes = 0;
  try {
    while (taken < locks_.size()) {
      bool ok;
      if (timeout) {
        auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        ok = locks_[taken]->acquire(std::max(left, std::chrono::milliseconds(0)), ec);
      } else {
        locks_[taken]->acquire(ec);
        ok = !ec;
      }
      if (!ok) {
        give_back(0);
        return false;
      }
      ++taken;
      std::size_t lost = 0;
      while (lost < taken && !locks_[lost]->hold_lost()) ++lost;
      if (lost == taken) continue;
      give_back(lost);
      if (++retakes > max_retakes) {
        give_back(0);
        ec = errc::lock_lost;
        return false;
      }
    }
  } catch (...) {
    give_back(0);
    throw;
  }
  return true;
}

void InterProcessMultiLock::acquire(error_code& ec) {
  ec = {};
  shared_ ? paths_acquire(std::nullopt, ec) : locks_acquire(std::nullopt, ec);
}
void InterProcessMultiLock::acquire() {
  error_code ec;
  acquire(ec);
  throw_if(ec, "acquire", paths_.empty() ? std::string() : paths_.front());
}
bool InterProcessMultiLock::timed_acquire(std::chrono::milliseconds timeout, error_code& ec) {
  ec = {};
  return shared_ ? paths_acquire(timeout, ec) : locks_acquire(timeout, ec);
}
bool InterProcessMultiLock::timed_acquire(std::chrono::milliseconds timeout) {
  error_code ec;
  const bool r = acquire(timeout, ec);
  throw_if(ec, "acquire", paths_.empty() ? std::string() : paths_.front());
  return r;
}

void InterProcessMultiLock::release(error_code& ec) {
  ec = {};
  if (shared_) {
    MultiLease lease;
    {
      std::lock_guard lk(mu_);
      auto it = holds_.find(std::this_thread::get_id());
      if (it == holds_.end()) {
        ec = errc::not_owner;
        return;
      }
      if (--it->second.count > 0) return;
      lease = std::move(it->second.lease);
      holds_.erase(it);  // forgotten even if a delete fails (the guaranteed deletes go on), as the mutex
    }
    lease.release(ec);
    return;
  }
  // Curator: every lock, in reverse order, whatever fails; the first failure is reported.
  std::exception_ptr thrown;
  for (auto it = locks_.rbegin(); it != locks_.rend(); ++it) {
    error_code e;
    try {
      (*it)->release(e);
    } catch (const boost::system::system_error& x) {
      e = x.code();
    } catch (...) {
      if (!thrown && !ec) thrown = std::current_exception();
    }
    if (e && !ec && !thrown) ec = e;
  }
  if (thrown) std::rethrow_exception(thrown);
}
void InterProcessMultiLock::release() {
  error_code ec;
  release(ec);
  throw_if(ec, "release", paths_.empty() ? std::string() : paths_.front());
}

bool InterProcessMultiLock::is_acquired_in_this_process() const {
  if (shared_) {
    std::lock_guard lk(mu_);
    return !holds_.empty();
  }
  return std::all_of(locks_.begin(), locks_.end(), [](const InterProcessLock* l) { return l->is_acquired_in_this_process(); });
}

bool InterProcessMultiLock::is_owned_by_current_thread() const {
  std::lock_guard lk(mu_);
  return holds_.count(std::this_thread::get_id()) > 0;
}

std::vector<std::int64_t> InterProcessMultiLock::fencing_tokens() const {
  std::lock_guard lk(mu_);
  auto it = holds_.find(std::this_thread::get_id());
  return it == holds_.end() ? std::vector<std::int64_t>{} : it->second.lease.fencing_tokens();
}

std::vector<std::string> InterProcessMultiLock::lock_paths() const {
  std::lock_guard lk(mu_);
  auto it = holds_.find(std::this_thread::get_id());
  return it == holds_.end() ? std::vector<std::string>{} : it->second.lease.node_paths();
}

}  // namespace zkr
