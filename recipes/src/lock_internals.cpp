#include <spdlog/logger.h>

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <zkr/framework/paths.hpp>
#include <zkr/recipes/detail/callback_guard.hpp>
#include <zkr/recipes/detail/lease_core.hpp>
#include <zkr/recipes/detail/lock_internals.hpp>

#include "acquire_op.hpp"
#include "retry_pause.hpp"

namespace asio = boost::asio;

namespace zkr::detail {

Lease make_lease(const std::shared_ptr<Core>& core, std::string path, std::int64_t czxid,
                 std::int64_t session, bool persistent) {
  auto lc = std::make_shared<LeaseCore>(core, std::move(path), czxid, session, persistent);
  lc->start_monitoring();
  return access::make<Lease>(std::move(lc));
}

LockInternals::LockInternals(CuratorFramework& client, std::string base_path, std::string lock_name,
                             std::size_t max_leases, std::shared_ptr<const LockDriver> driver)
    : LockInternals(detail::access::core(client), std::move(base_path), std::move(lock_name), max_leases,
                    std::move(driver)) {}

LockInternals::LockInternals(std::shared_ptr<detail::Core> core, std::string base_path, std::string lock_name,
                             std::size_t max_leases, std::shared_ptr<const LockDriver> driver)
    : core_(std::move(core)),
      base_path_(std::move(base_path)),
      lock_name_(std::move(lock_name)),
      max_leases_(max_leases),
      driver_(std::move(driver)) {
  if (auto why = path_error(base_path_)) throw Error(client_errc::invalid_path, "lock " + *why, base_path_);
  if (!driver_)
    driver_ = std::shared_ptr<const LockDriver>(&standard_lock_driver(), [](const LockDriver*) {});
}

std::shared_ptr<const LockDriver> default_mutex_driver() {
  return std::shared_ptr<const LockDriver>(&prewatch_lock_driver(), [](const LockDriver*) {});
}

/// One listing of the directory, sorted by the engine's driver, shared by every attempt that joined it.
struct LockInternals::Listing {
  std::vector<std::string> names;
  bool foreign = false;  // a child that is not a node of the lock (`LockDriver::is_lock_node`, CURATOR-43)
};

struct LockInternals::ListingBatch {
  std::vector<std::shared_ptr<Attempt>> members;
};

/// One acquire: a state machine on the I/O thread, on the acquire scaffold (acquire_op.hpp).
struct LockInternals::Attempt : AcquireOp<LockInternals::Attempt, Lease> {
  /// What the attempt is doing: nothing in flight (waiting on its watches, pausing before a new node, or not
  /// begun), a queue round (create + pipelined listing, or a listing alone), or the read that sets its watch.
  enum class Step : std::uint8_t { idle, round, watch_read, retry_pause };
  /// What the watched node's deletion means: list again, or the lock is ours (the latest listing showed it
  /// as the only one ahead).
  enum class OnWatchedGone : std::uint8_t { relist, grant };

  Attempt(std::shared_ptr<LockInternals> e, AcquireOptions o, std::shared_ptr<CancelState> c, Done d)
      : AcquireOp(e->core_, o.deadline, std::move(c), std::move(d)),
        engine(std::move(e)),
        options(std::move(o)) {}

  std::shared_ptr<LockInternals> engine;
  AcquireOptions options;
  Step step = Step::idle;
  bool woken = false;  // a watch fired while a request was in flight: look again when it returns
  RetryBudget retries;
  QueuedNode node;
  QueueRound round;
  error_code listing_ec;
  std::shared_ptr<const Listing> listing;
  detail::StopPtr create_stop;  // stops the create's retry loop (a try not yet sent is never sent)
  detail::WatchId watch = 0;    // on the node the driver names (path_to_watch), while waiting
  std::string watched;          // its name
  OnWatchedGone watched_gone = OnWatchedGone::relist;
  detail::WatchId prewatch = 0;  // on the node ahead of it (path_to_prewatch), while waiting
  std::string prewatched;        // its name
  Epoch prewatch_epoch;          // tells the current pre-watch's callbacks from a replaced one's

  void begin() {
    arm();
    if (options.existing_node) {  // adopt a node the caller queued (multi-lock batch): no create
      auto n = std::move(*options.existing_node);
      options.existing_node.reset();
      node = QueuedNode{std::move(n.path), n.czxid, n.session, LockNodeMode::ephemeral_sequential};
      return check();
    }
    create_node();
  }

  /// Timeout or cancellation: if nothing is in flight we clean up now, else when the reply comes. A create
  /// still waiting for the connection (or sleeping between tries) is stopped, so an outage does not hold the
  /// acquire for the create's whole retry loop; a try already sent is not recalled, and if its reply is lost,
  /// the framework finds and deletes its node once connected (protected mode).
  void interrupt() {
    if (ended()) return;
    if (step == Step::retry_pause) {
      if (!cancelled()) return;  // past the deadline the node is still made again (retry_with_new_node)
      cancel_pause();
      return give_up({});
    }
    if (step != Step::idle) {
      if (round.awaiting_create() && create_stop) create_stop->request();
      return;
    }
    cancel_pause();
    give_up({});
  }

  void create_node() {
    if (cancelled()) return give_up({});
    // The driver describes the node; the engine makes it.
    auto spec = driver().lock_node(engine->lock_name_);
    node.mode = spec.mode;
    CreateOptions co;
    if (options.fixed_sequence.empty())
      co.mode = node.persistent() ? CreateMode::persistent_sequential : CreateMode::ephemeral_sequential;
    else
      co.mode = node.persistent() ? CreateMode::persistent : CreateMode::ephemeral;
    co.parents_as_containers = true;
    co.protection = spec.protection;
    if (options.revocable)
      co.data = std::string();  // Curator
    else
      co.data = options.node_data ? options.node_data : std::move(spec.data);  // a retry needs it again
    step = Step::round;
    round.start_create();
    create_stop = std::make_shared<detail::StopSignal>();
    core->create(make_path(engine->base_path_, engine->lock_name_ + options.fixed_sequence), std::move(co),
                 [self = shared_from_this()](error_code ec, CreateResult r) {
                   if (!ec) {
                     self->core->logger()->debug("lock {}: queued as {}", self->engine->base_path_, r.path);
                     // A persistent node has no owner: it is this session's doing, and stays ours after it.
                     self->node.path = std::move(r.path);
                     self->node.czxid = r.stat.czxid;
                     self->node.session =
                         self->node.persistent() ? self->core->session_id() : r.stat.ephemeral_owner;
                     self->tell(self->options.on_queued);
                   }
                   // Giving up with no node: the pipelined listing (shared, still waiting) is not needed.
                   if (self->round.create_replied(ec) || (ec && self->stops_on_create_error(ec)))
                     self->round_done();
                 },
                 {.stop = create_stop});
    // Pipelined: sent behind the create before its reply (see the file comment).
    engine->join_listing(shared_from_this());
  }

  void check() {
    if (cancelled()) return give_up({});
    step = Step::round;
    round.start_listing();
    engine->join_listing(shared_from_this());
  }

  /// A shared listing arrived (the engine calls this on every member of its batch).
  void on_listing(error_code ec, std::shared_ptr<const Listing> l) {
    listing_ec = ec;
    listing = std::move(l);
    if (round.listing_replied()) round_done();
  }

  void round_done() {
    step = Step::idle;
    auto l = std::move(listing);
    listing.reset();
    if (ended()) return;
    const bool created = round.finish();
    const auto create_ec = round.create_error();
    // A timeout or cancel stopped the create's retries: the stop is the outcome, not the create's error. An
    // error no retry would have mended (the client gave up: its auth was refused) is the outcome itself.
    if (created && create_ec && stopping() &&
        (create_ec == boost::asio::error::operation_aborted || is_retryable(create_ec)))
      return give_up({});
    if (created) {
      if (create_ec == zk_errc::no_node) return retry_with_new_node(create_ec);
      if (create_ec) return give_up(create_ec);
    }
    if (cancelled()) return give_up({});
    if (listing_ec) return give_up(listing_ec);
    decide(*l, created);
  }

  const LockDriver& driver() const { return options.driver ? *options.driver : *engine->driver_; }

  /// `pipelined`: the listing was sent before the create's reply; it counts only if it shows our node.
  void decide(const Listing& l, bool pipelined) {
    auto our_name = node_name(node.path);
    auto r = driver().gets_the_lock(l.names, our_name, engine->max_leases_);
    if (!r && pipelined) return check();  // the create was retried after the listing was sent
    // Our node is gone: the session was lost (a persistent node: someone deleted it).
    if (!r) return retry_with_new_node(zk_errc::no_node);
    if (r->gets_the_lock && !options.fixed_sequence_node.empty() &&
        std::find(l.names.begin(), l.names.end(), options.fixed_sequence_node) == l.names.end())
      return give_up(
          client_errc::lock_lost);  // the node whose place we take is gone: so is the grant it stood for
    if (r->gets_the_lock) return grant();
    if (out_of_time()) return give_up({});
    // An event seen while this listing was in flight may postdate it: look again.
    if (std::exchange(woken, false)) return check();
    // The shortcut relies on nothing sorting ahead of us later; a foreign child (not a node of the lock:
    // CURATOR-43) shows that this directory holds names outside that rule, so re-list after the wake-up.
    watched_gone =
        r->granted_when_watched_node_goes && !l.foreign ? OnWatchedGone::grant : OnWatchedGone::relist;
    core->logger()->debug("lock {}: {} waits on {}", engine->base_path_, our_name, r->path_to_watch);
    watch_node(r->path_to_watch);
    prewatch_node(watched_gone == OnWatchedGone::grant || l.foreign ? std::string() : r->path_to_prewatch);
  }

  /// A watch of ours fired. True when the attempt should act on it now; false when ended, when a request
  /// is in flight (its reply looks again: `woken`) or when stopping (cleaned up here).
  bool wake_now() {
    if (ended()) return false;
    if (step != Step::idle) {
      woken = true;
      return false;
    }
    if (stopping()) {
      give_up({});
      return false;
    }
    return true;
  }

  /// Waits on `name` (get_data with a watch, so a vanished node leaves no watch). Already watching it (a
  /// re-listing after the pre-watched node went): that watch is kept, and its deletion now reads
  /// `watched_gone`.
  void watch_node(const std::string& name) {
    if (watch && watched == name) return;
    if (watch) core->remove_watch(watch), watch = 0;
    step = Step::watch_read;
    watched = name;
    auto self = shared_from_this();
    watch = core->get_data(
        make_path(engine->base_path_, name),
        [self](const WatchedEvent& ev) {
          self->watch = 0;
          self->watched.clear();
          if (!self->wake_now()) return;
          if (self->watched_gone == OnWatchedGone::grant && ev.type == EventType::node_deleted &&
              self->node.of_live_session(*self->core))
            return self->grant();
          self->check();
        },
        [self](error_code ec, NodeData) {
          self->step = Step::idle;
          if (self->ended()) return;
          if (self->stopping()) return self->give_up({});
          if (ec == zk_errc::no_node) {  // already gone, no watch set: look again at once
            self->watch = 0;
            self->watched.clear();
            return self->check();
          }
          if (ec) return self->give_up(ec);
          if (std::exchange(self->woken, false)) return self->check();
          // else: wait for the watch, which is set
          self->tell(self->options.on_waiting);
        });
  }

  /// Tells the caller's `on_queued` / `on_waiting` (if any) our node's path, on the completion executor.
  void tell(const std::function<void(const std::string&)>& event) const {
    if (event) boost::asio::post(core->completion_executor(), [f = event, p = node.path] { f(p); });
  }

  /// Watches the node ahead of the watched one (`PredicateResults::path_to_prewatch`; empty: none). Its
  /// deletion, or its absence, leads to a re-listing while the watched node still exists; when that listing
  /// shows the watched node as the only one ahead, the watched node's deletion grants the lock at once. Not a
  /// wait of its own: the attempt is not in flight for it, and a failed read only loses the optimization.
  void prewatch_node(const std::string& name) {
    if (prewatch && prewatched == name) return;
    if (prewatch) core->remove_watch(prewatch), prewatch = 0;
    prewatched = name;
    if (name.empty()) return;
    // Its callbacks count only while it is the current pre-watch (not replaced or dropped meanwhile).
    const auto guard = CallbackGuard<Attempt>::strong(shared_from_this(), &Attempt::prewatch_epoch);
    auto forget = [](Attempt& a) {
      a.prewatch = 0;
      a.prewatched.clear();
    };
    auto went = [guard, forget] {
      auto self = guard.get();
      if (!self) return;
      forget(*self);
      if (self->wake_now()) self->check();
    };
    prewatch = core->get_data(
        make_path(engine->base_path_, name),
        [guard, went, forget](const WatchedEvent& ev) {
          if (ev.type == EventType::node_deleted) return went();
          if (auto self = guard.get()) forget(*self);  // spent: nothing learnt
        },
        [guard, went, forget](error_code ec, NodeData) {
          if (ec == zk_errc::no_node) return went();
          // Any other error set no watch: forget it, so that the next listing can pre-watch again.
          if (auto self = guard.get(); ec && self) forget(*self);
        });
  }

  /// Forgets both watches (their callbacks will not run).
  void drop_watches() {
    if (watch) core->remove_watch(watch), watch = 0;
    watched.clear();
    if (prewatch) core->remove_watch(prewatch), prewatch = 0;
    prewatched.clear();
    prewatch_epoch.advance();
  }

  void grant() {
    // CURATOR-604: an ephemeral node of an earlier session is never ours.
    if (!node.of_live_session(*core)) return retry_with_new_node(zk_errc::session_expired);
    if (!options.fixed_sequence_node.empty() && node.session != options.fixed_sequence_session)
      return give_up(client_errc::lock_lost);
    core->logger()->debug("lock {}: granted {}", engine->base_path_, node.path);
    drop_watches();
    auto lease = detail::make_lease(core, node.path, node.czxid, node.session, node.persistent());
    if (options.revocable)
      watch_revocation(core, detail::access::state(lease), std::move(options.on_revocation_requested));
    complete({}, std::move(lease));
  }

  /// Curator's revocableWatcher, armed once the lock is granted: reads our node with a data watch, runs the
  /// listener (on the completion executor) when the data is the revoke message, re-arms on every change and
  /// stops when the node goes (its deletion fires the watch) or the lease is released. A read that fails
  /// otherwise (the retry policy gave up during a long disconnection) is tried again after
  /// `failure_retry_pause`, so the hold does not silently stop being revocable.
  static void watch_revocation(std::shared_ptr<detail::Core> core, std::shared_ptr<detail::LeaseCore> lease,
                               std::function<void()> listener) {
    struct Watch : std::enable_shared_from_this<Watch> {
      std::shared_ptr<detail::Core> core;
      std::weak_ptr<detail::LeaseCore> lease;
      std::string path;
      std::function<void()> listener;
      void arm() {
        auto lc = lease.lock();
        if (!lc || lc->released) return;
        auto self = shared_from_this();
        core->get_data(
            path,
            [self](const WatchedEvent& ev) {
              if (ev.type == EventType::node_data_changed) self->arm();
            },
            [self](error_code ec, NodeData d) {
              if (ec && ec != zk_errc::no_node && self->core->is_open()) return self->arm_later();
              if (ec || d.data != revoke_message || !self->listener) return;
              auto lc = self->lease.lock();
              if (!lc || lc->released) return;
              asio::post(self->core->completion_executor(), self->listener);
            });
      }
      void arm_later() {
        auto lc = lease.lock();
        if (!lc || lc->released) return;
        core->logger()->debug("revocation watch on {}: read failed, trying again in {} ms", path,
                              failure_retry_pause.count());
        auto t = std::make_shared<asio::steady_timer>(core->io_executor(), failure_retry_pause);
        t->async_wait([self = shared_from_this(), t](error_code ec) {
          if (!ec) self->arm();
        });
      }
    };
    if (!lease) return;
    auto w = std::make_shared<Watch>();
    w->core = std::move(core);
    w->path = lease->path;
    w->lease = lease;
    w->listener = std::move(listener);
    w->arm();
  }

  void retry_with_new_node(error_code cause) {
    drop_watches();
    // Cancelled, or out of retries: give_up deletes our node (it may still exist) *before* completing. A
    // passed deadline does not stop this: making the node again is no wait (as Curator's retry on a missing
    // node), and a zero timeout must still grant a free lock whose directory the server's container reaper
    // took between the parents' create and ours. The next listing decides, and gives up rather than wait.
    if (cancelled()) return give_up({});
    auto sleep = retries.next(*core);
    if (!sleep || !core->is_open())
      return give_up(cause == zk_errc::no_node ? error_code(client_errc::node_not_found_after_retries)
                                               : cause);
    // Our node may still exist (a node of an earlier session, CURATOR-604; a listing that raced with the
    // parent's reaping): delete it before making another one.
    if (!node.empty()) give_back(*core, {node.take_path()}, {});
    step = Step::retry_pause;
    pause(*sleep, [](Attempt& a) {
      a.step = Step::idle;
      a.create_node();
    });
  }

  /// Timeout, cancellation or error: delete our node, then complete.
  void give_up(error_code ec) {
    if (ended()) return;
    drop_watches();
    std::vector<std::string> nodes;
    if (!node.empty()) nodes.push_back(node.take_path());
    stop_giving_back(ec, std::move(nodes));
  }
};

void LockInternals::join_listing(std::shared_ptr<Attempt> a) {
  if (!open_batch_ && listings_in_flight_ == 0) {
    // Nothing to share with: send now, right behind whatever this handler just sent (our create).
    auto b = std::make_shared<ListingBatch>();
    b->members.push_back(std::move(a));
    return send_listing(b);
  }
  if (!open_batch_) {
    open_batch_ = std::make_shared<ListingBatch>();
    asio::post(core_->io_executor(), [self = shared_from_this(), b = open_batch_] { self->send_listing(b); });
  }
  open_batch_->members.push_back(std::move(a));
}

void LockInternals::send_listing(const std::shared_ptr<ListingBatch>& batch) {
  if (open_batch_ == batch) open_batch_.reset();
  ++listings_in_flight_;
  core_->get_children(base_path_, nullptr, [self = shared_from_this(), batch](error_code ec, Children c) {
    --self->listings_in_flight_;
    auto l = std::make_shared<Listing>();
    if (ec == zk_errc::no_node)
      ec = {};  // no directory: no children
    else if (!ec)
      l->names = std::move(c.names);
    if (!ec) {
      self->driver_->sort_children(l->names, self->lock_name_);
      l->foreign = std::any_of(l->names.begin(), l->names.end(), [&](const std::string& n) {
        return !self->driver_->is_lock_node(n, self->lock_name_);
      });
    }
    std::shared_ptr<const Listing> shared = std::move(l);
    for (auto& m : batch->members) m->on_listing(ec, shared);
  });
}

void LockInternals::attempt_lock(AcquireOptions options, std::shared_ptr<detail::CancelState> cancel,
                                 detail::unique_function<void(error_code, Lease)> done) {
  auto a =
      std::make_shared<Attempt>(shared_from_this(), std::move(options), std::move(cancel), std::move(done));
  if (a->cancel->requested()) {
    std::vector<std::string> nodes;
    if (a->options.existing_node)  // ours from now on: delete it before completing
      nodes.push_back(std::move(a->options.existing_node->path));
    return a->stop_giving_back({}, std::move(nodes));
  }
  a->begin();
}

void LockInternals::participant_nodes(
    detail::unique_function<void(error_code, std::vector<std::string>)> done) {
  core_->get_children(base_path_, nullptr,
                      [self = shared_from_this(), done = std::move(done)](error_code ec, Children c) mutable {
                        if (ec == zk_errc::no_node) return done({}, {});
                        if (ec) return done(ec, {});
                        self->driver_->sort_children(c.names, self->lock_name_);
                        std::vector<std::string> out;
                        out.reserve(c.names.size());
                        for (auto& n : c.names) out.push_back(make_path(self->base_path_, n));
                        done({}, std::move(out));
                      });
}

Lease LockInternals::acquire_blocking(AcquireOptions options, error_code& ec) {
  return detail::run_blocking<Lease>(
      *core_,
      [self = shared_from_this(),
       options = std::move(options)](detail::unique_function<void(error_code, Lease)> cb) mutable {
        self->attempt_lock(std::move(options), nullptr, std::move(cb));
      },
      ec);
}

}  // namespace zkr::detail
