// The paths form's acquire: its shared state (one mutex engine per path) and the batched state machine
// (MultiAcquire) that queues on every lock in one transaction, checks them with listings pipelined behind it,
// gives back its places in the later locks before waiting for a taken one, and hands that wait to the engine.
// The algorithm and why it cannot deadlock: docs/multi-lock.md.

#include <spdlog/logger.h>

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/lease_core.hpp>
#include <zkr/recipes/inter_process_mutex.hpp>

#include "acquire_op.hpp"
#include "multi_lock_internals.hpp"

namespace asio = boost::asio;

namespace zkr::detail {

std::shared_ptr<MultiShared> make_multi_shared(std::shared_ptr<Core> core,
                                               const std::vector<std::string>& paths) {
  if (paths.empty()) throw Error(client_errc::invalid_argument, "multi-lock (no paths)", "");
  for (std::size_t i = 0; i < paths.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (paths[i] == paths[j])
        throw Error(client_errc::invalid_argument, "multi-lock (duplicate path)", paths[i]);
  auto s = std::make_shared<MultiShared>();
  s->core = core;
  for (const auto& p : paths)
    s->engines.push_back(std::make_shared<detail::LockInternals>(
        core, p, std::string(InterProcessMutex::lock_name), 1, default_mutex_driver()));
  return s;
}

namespace {

/// The path-based acquire: batched enqueue, pipelined listing, ordered waiting, on the acquire scaffold
/// (acquire_op.hpp). See docs/multi-lock.md.
struct MultiAcquire : AcquireOp<MultiAcquire, MultiLease> {
  /// What is in flight: nothing, a request of the batch (the transaction and its listings, the directories'
  /// creates, a listing round, deletes), or the engine's wait for one lock.
  enum class Step : std::uint8_t { idle, batch, engine };
  /// How the remaining locks are taken: queued in one transaction, or (after an unexpected failure) by the
  /// engine, lock by lock.
  enum class Mode : std::uint8_t { batched, lock_by_lock };

  MultiAcquire(std::shared_ptr<MultiShared> sh, std::optional<Clock::time_point> d,
               std::shared_ptr<CancelState> c, Done dn)
      : AcquireOp(sh->core, d, std::move(c), std::move(dn)), s(std::move(sh)) {}

  /// Our node in a lock, queued by a batch and not yet granted or handed to the engine.
  struct Queued {
    std::string path;    // un-namespaced, with the sequence
    std::string prefix;  // "_c_<uuid>-": a retried transaction may have left another node with it
  };

  std::shared_ptr<MultiShared> s;
  std::optional<std::string> node_data;

  std::vector<Lease> held;                    // the granted prefix of the list
  std::vector<std::optional<Queued>> queued;  // by lock index
  std::vector<std::string> strays;  // other nodes of ours (a retried transaction's), deleted by stop()
  std::int64_t batch_czxid = 0;     // every node of one transaction has the transaction's zxid
  std::int64_t batch_session = 0;
  int parent_rounds = 0;
  Mode mode = Mode::batched;
  Step step = Step::idle;
  std::shared_ptr<CancelState> engine_cancel;
  std::vector<StopPtr>
      batch_stops;    // the transaction and its listings: stopped while waiting for the connection
  StopPtr dirs_stop;  // the making of missing directories: stopped by a cancellation only

  std::size_t n() const { return s->engines.size(); }
  // Cancellation stops at any step. The deadline only stops a *wait* (as the engine: a timed acquire of free
  // locks succeeds even with a zero timeout): it is checked where we would wait (`out_of_time`), and the
  // engine applies it to its own waits.

  void begin() {
    arm();
    next();
  }

  /// At the deadline, a batch still waiting for the connection is not sent (an outage must not hold a timed
  /// acquire for the connection timeout); requests already sent finish, as everywhere.
  void on_deadline() {
    if (step != Step::batch) return;
    for (auto& st : batch_stops) st->request();
  }

  /// Cancellation: the engine cleans up its own attempt; a request in flight finishes first.
  void interrupt() {
    if (ended()) return;
    if (step == Step::engine) return engine_cancel->request();
    if (step == Step::batch) {
      // Requests of the batch still waiting for the connection are never sent (as the engine's create).
      for (auto& st : batch_stops) st->request();
      if (dirs_stop) dirs_stop->request();
      return;
    }
    stop({});
  }

  void next() {
    if (ended()) return;
    if (cancelled()) return stop({});
    if (give_back_stale()) return;
    const std::size_t k = held.size();
    if (k == n()) return succeed();
    if (mode == Mode::lock_by_lock || n() - k == 1) return wait_on(k);
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
      ops.push_back(
          Op::create(protected_names::to_protected_path(make_path(e.base_path(), e.lock_name()), id), data,
                     CreateMode::ephemeral_sequential));
    }
    const auto stamp =
        make_path(s->engines[k]->base_path(),
                  protected_names::prefix_for(protected_names::new_protected_id()) + "zkr-multi-stamp");
    ops.push_back(Op::create(stamp, std::string(), CreateMode::persistent));
    ops.push_back(Op::set_data(stamp, std::string()));
    ops.push_back(Op::remove(stamp));
    // The listings of step 2 go out right behind the transaction, before its reply: the session's requests
    // are applied in order, so they already show our nodes (one round trip for steps 1 and 2). A listing
    // that does not show our node (the core retried the transaction after it was sent) is not trusted.
    struct Round {
      QueueRound join;
      error_code ec;
      std::vector<OpResult> results;
      std::vector<std::vector<std::string>> children;
      error_code list_ec;
    };
    auto round = std::make_shared<Round>();
    round->join.start_create(static_cast<int>(n() - k));
    round->children.resize(n() - k);
    auto shared_prefixes = std::make_shared<std::vector<std::string>>(std::move(prefixes));
    auto arrived = [self = shared_from_this(), k, round,
                    prefixes = std::move(shared_prefixes)](bool all_in) mutable {
      if (!all_in) return;
      round->join.finish();
      self->on_enqueued(k, std::move(*prefixes), round->ec, std::move(round->results), &round->children,
                        round->list_ec);
    };
    auto shared_arrived = std::make_shared<decltype(arrived)>(std::move(arrived));
    step = Step::batch;
    batch_stops.clear();
    auto new_stop = [this] { return batch_stops.emplace_back(std::make_shared<StopSignal>()); };
    core->multi(std::move(ops),
                [round, shared_arrived](error_code ec, std::vector<OpResult> results) {
                  round->ec = ec;
                  round->results = std::move(results);
                  (*shared_arrived)(round->join.create_replied(ec));
                },
                {.stop = new_stop()});
    for (std::size_t i = k; i < n(); ++i) {
      core->get_children(s->engines[i]->base_path(), nullptr,
                         [round, shared_arrived, at = i - k](error_code ec, Children c) {
                           if (ec == zk_errc::no_node) c.names.clear(), ec = {};
                           if (ec && !round->list_ec) round->list_ec = ec;
                           round->children[at] = std::move(c.names);
                           (*shared_arrived)(round->join.listing_replied());
                         },
                         {.stop = new_stop()});
    }
  }

  void on_enqueued(std::size_t k, std::vector<std::string> prefixes, error_code ec,
                   std::vector<OpResult> results, std::vector<std::vector<std::string>>* listed,
                   error_code list_ec) {
    step = Step::idle;
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
      if (cancelled()) {
        // The listings came before the transaction's last try: an earlier try may have committed.
        sweep(k, prefixes);
        return stop({});
      }
      return list(k);  // list again, after the transaction's reply
    }
    // Nothing of this transaction exists (all or none), but a retried transaction whose first try committed
    // unseen may have left nodes: find them by their protected prefixes.
    // (A stopped transaction counts too: a try sent before the stop may have committed.)
    if (is_retryable(ec) || is_connection_loss(ec) || ec == asio::error::operation_aborted)
      sweep(k, prefixes);
    if (cancelled()) return stop({});
    if (ec == asio::error::operation_aborted && out_of_time()) return stop({});  // by the deadline timer
    // A directory missing (first use, or a container reaped), or created by someone else since we looked.
    const bool dirs_changed = ec == zk_errc::no_node || ec == zk_errc::node_exists ||
                              std::any_of(results.begin(), results.end(), [](const OpResult& r) {
                                return r.ec == zk_errc::no_node || r.ec == zk_errc::node_exists;
                              });
    if (dirs_changed && parent_rounds++ < 3) return make_missing_dirs(k);
    core->logger()->debug("multi-lock: batched enqueue failed ({}); acquiring lock by lock", ec.message());
    mode = Mode::lock_by_lock;
    next();
  }

  /// Lock directories are missing: make them and their missing ancestors (the framework's batched mkdirs:
  /// one pipelined round of exists, one pipelined round of creates per depth), then queue again.
  /// (Not inside the transaction: the C client misreads a multi's reply to a container create, which the
  /// server answers with a Stat the client does not expect.)
  void make_missing_dirs(std::size_t k) {
    std::vector<std::string> bases;
    for (std::size_t i = k; i < n(); ++i) bases.push_back(s->engines[i]->base_path());
    step = Step::batch;
    dirs_stop =
        std::make_shared<StopSignal>();  // a cancellation ends it between its rounds; the deadline not
    core->make_dirs(std::move(bases),
                    [self = shared_from_this(), k](error_code ec) {
                      self->step = Step::idle;
                      self->dirs_stop.reset();
                      if (self->cancelled()) return self->stop({});
                      if (ec) {
                        self->mode = Mode::lock_by_lock;  // the engine, lock by lock, reports the real error
                        return self->next();
                      }
                      self->enqueue(k);
                    },
                    {.stop = dirs_stop});
  }

  /// `sweep` with the prefixes of the nodes queued in locks [k, n).
  void sweep_queued(std::size_t k) {
    std::vector<std::string> prefixes;
    for (std::size_t i = k; i < n(); ++i) prefixes.push_back(queued[i] ? queued[i]->prefix : std::string());
    sweep(k, prefixes);
  }

  /// Deletes, in the background, any node of ours left in locks [k, n) by a transaction retried after a
  /// connection loss (an empty prefix: none to look for): the framework's sweep of a protected create.
  void sweep(std::size_t k, const std::vector<std::string>& prefixes) {
    for (std::size_t i = k; i < n(); ++i) core->sweep_protected(s->engines[i]->base_path(), prefixes[i - k]);
  }

  // 2. All directories listed at once: keep the held prefix of the list.
  void list(std::size_t k) {
    struct Listing {
      std::vector<std::vector<std::string>> children;
      QueueRound join;
      error_code ec;
    };
    auto l = std::make_shared<Listing>();
    l->children.resize(n() - k);
    l->join.start_listing(static_cast<int>(n() - k));
    step = Step::batch;
    for (std::size_t i = k; i < n(); ++i) {
      core->get_children(s->engines[i]->base_path(), nullptr,
                         [self = shared_from_this(), l, k, i](error_code ec, Children c) {
                           if (ec == zk_errc::no_node) c.names.clear(), ec = {};  // reaped: our node is gone
                           if (ec && !l->ec) l->ec = ec;
                           l->children[i - k] = std::move(c.names);
                           if (!l->join.listing_replied()) return;
                           l->join.finish();
                           self->step = Step::idle;
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
    if (cancelled() || ec) {
      if (ec) sweep_queued(k);  // a failed listing may hide orphans
      strays = std::move(orphans);
      return stop(cancelled() ? error_code() : ec);
    }
    std::size_t j = k;
    for (; j < n(); ++j) {
      const auto& e = *s->engines[j];
      const auto& q = *queued[j];
      auto names = std::move(children[j - k]);
      const auto our = node_name(q.path);
      e.driver().sort_children(names, e.lock_name());
      const auto r = e.driver().gets_the_lock(names, our, e.max_leases());
      if (!r || !r->gets_the_lock || !batch_node(q).of_live_session(*core)) break;
      held.push_back(make_lease(core, q.path, batch_czxid, batch_session));
      queued[j].reset();
    }
    if (j == n()) {
      if (!orphans.empty())
        remove_nodes(*core, std::move(orphans), [](error_code) {});  // we hold every lock: no need to wait
      return next();
    }
    if (out_of_time()) {  // we would have to wait: time is up
      strays = std::move(orphans);
      return stop({});
    }
    // 3. Lock j is taken: give back our queue positions in the locks after it before waiting for it, so we
    //    never wait while queued in a later lock (docs/multi-lock.md). The orphans go in the same deletes.
    std::vector<std::string> later = std::move(orphans);
    for (std::size_t i = j + 1; i < n(); ++i)
      if (queued[i]) later.push_back(std::exchange(queued[i], std::nullopt)->path);
    step = Step::batch;
    give_back(*core, std::move(later), {}, [self = shared_from_this(), j] {
      self->step = Step::idle;
      if (self->cancelled()) return self->stop({});
      self->wait_on(j);
    });
  }

  // 4. Wait for lock j as the engine does (watching the predecessor), keeping our place in its queue.
  void wait_on(std::size_t j) {
    detail::AcquireOptions o;
    o.deadline = deadline;
    o.node_data = node_data;
    if (queued[j]) {
      auto q = std::exchange(queued[j], std::nullopt);
      auto node = batch_node(*q);
      if (node.of_live_session(*core))
        o.existing_node = detail::AcquireOptions::ExistingNode{node.take_path(), node.czxid, node.session};
      else
        give_back(*core, {node.take_path()}, {});  // of a lost session: the engine makes a new one
    }
    engine_cancel = std::make_shared<CancelState>();
    step = Step::engine;
    s->engines[j]->attempt_lock(
        std::move(o), engine_cancel, [self = shared_from_this()](error_code ec, Lease l) {
          self->step = Step::idle;
          if (l) {
            self->held.push_back(std::move(l));
            return self->next();  // stops (and gives it back) if we were interrupted meanwhile
          }
          if (ec && !(ec == asio::error::operation_aborted && self->cancelled())) return self->stop(ec);
          if (!self->cancelled()) self->mark_timed_out();  // the engine's deadline
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
      return !detail::access::state(l)->still_grants(sid);
    });
    if (bad == held.end()) return false;
    std::vector<Lease> stale(std::make_move_iterator(bad), std::make_move_iterator(held.end()));
    held.erase(bad, held.end());
    core->logger()->debug("multi-lock: {} lock(s) held by an earlier session or lost; taking them again",
                          stale.size());
    std::reverse(stale.begin(), stale.end());
    step = Step::batch;
    give_back(*core, {}, std::move(stale), [self = shared_from_this()] {
      self->step = Step::idle;
      self->next();
    });
    return true;
  }

  /// Our node in lock `q` as the batch's transaction made it (its zxid, this session's).
  QueuedNode batch_node(const Queued& q) const {
    return QueuedNode{q.path, batch_czxid, batch_session, LockNodeMode::ephemeral_sequential};
  }

  void succeed() { complete({}, MultiLease(std::move(held))); }

  /// Timeout, cancellation or error: delete every queued node and give back the locks taken (in reverse
  /// order), then complete.
  void stop(error_code ec) {
    if (ended()) return;
    std::vector<std::string> nodes = std::move(strays);
    for (auto& q : queued)
      if (q) nodes.push_back(std::exchange(q, std::nullopt)->path);
    std::vector<Lease> leases = std::move(held);
    std::reverse(leases.begin(), leases.end());
    stop_giving_back(ec, std::move(nodes), std::move(leases));
  }
};

}  // namespace

void multi_acquire(std::shared_ptr<MultiShared> s,
                   std::optional<std::chrono::steady_clock::time_point> deadline,
                   std::shared_ptr<CancelState> cancel, unique_function<void(error_code, MultiLease)> done) {
  auto a = std::make_shared<MultiAcquire>(std::move(s), deadline, std::move(cancel), std::move(done));
  {
    std::lock_guard lk(a->s->mu);
    a->node_data = a->s->node_data;
  }
  a->queued.resize(a->s->engines.size());
  if (a->cancel->requested()) return a->complete(asio::error::operation_aborted, MultiLease());
  a->begin();
}

}  // namespace zkr::detail
