"""The benchmark cases: what each runs (scenario, driver options, libraries) at full and --quick sizes."""

from .common import DEFAULT_LIBRARIES, NATIVE_LIBRARY, SASL_LIBRARIES, TLS_LIBRARIES, WITH_STANDARD


FAILOVER_LIBRARIES = ["zkrecipes", "curator"]
# The distributed atomic long's contended increments (issue 40): kazoo's Counter is left out (its retries are the
# client's command retry, backing off from 100 ms by default; no promoted mode; text data): docs/counters.md.
COUNTER_LIBRARIES = ["zkrecipes", "curator"]
# The caches (issue 39): CuratorCache in zkrecipes and Curator; TreeCache in kazoo too (it has no CuratorCache).
# zkrecipes-native joins where --libraries names it: its cache follows the tree with one persistent watch.
CACHE_LIBRARIES = {"curator": ["zkrecipes", "curator"], "tree": ["zkrecipes", "curator", "kazoo"]}
# The leader's session timeout in kill mode: the least a server with tickTime=2000 (ours) grants.
FAILOVER_SESSION_TIMEOUT_MS = 4000


def failover_cases(quick):
    """The leader failover cases (run only with --only failover; --quick: one failover per run)."""
    out = []
    for recipe, name in (("latch", "LeaderLatch"), ("selector", "LeaderSelector")):
        # failovers per driver run: 10 closes, 5 kills (each waits for a session expiry); --quick: 1
        for mode, how, n in (("close", "the leader closes", 10), ("kill", "kill -9 of the leader", 5)):
            out.append(("failover-%s-%s" % (recipe, mode), "failover", "%s failover, %s" % (name, how),
                        {"recipe": recipe, "mode": mode, "ops": 1 if quick else n,
                         "session-timeout-ms": FAILOVER_SESSION_TIMEOUT_MS, "_timeout_s": 300},
                        FAILOVER_LIBRARIES))
    return out


def cache_cases(quick):
    """The cache cases (run only with --only cache, or named): the time to initialize a cache of 10k and 100k
    leaves, and the write-to-listener latency over 1k leaves. "_tree" names the tree under /zkr-bench that the
    case's runs share: populated once (cache-populate) before its reps, read by every library's runs."""
    out = []
    small, large, leaves, changes, warm = (500, 2000, 100, 100, 10) if quick else (10000, 100000, 1000, 2000, 100)
    for recipe, name in (("curator", "CuratorCache"), ("tree", "TreeCache")):
        suffix = "" if recipe == "curator" else "-tree"
        for n, tag in ((small, "10k"), (large, "100k")):
            out.append(("cache-init-%s%s" % (tag, suffix), "cache-init", "%s initialize, %d leaves" % (name, n),
                        {"nodes": n, "recipe": recipe, "_tree": "init-%d" % n, "_timeout_s": 900},
                        CACHE_LIBRARIES[recipe]))
        out.append(("cache-events%s" % suffix, "cache-events", "%s write to listener, %d leaves" % (name, leaves),
                    {"nodes": leaves, "ops": changes, "warmup": warm, "recipe": recipe, "_tree": "events-%d" % leaves},
                    CACHE_LIBRARIES[recipe]))
    return out


def connect_cases(quick):
    """The connection set-up case (run only when named, --only connect): sessions started one at a time, the
    time from start() to CONNECTED (with --sasl, the exchange included), each session closed after."""
    return [("connect", "connect", "connection set-up (start to CONNECTED)",
             {"ops": 20 if quick else 300, "warmup": 5 if quick else 20}, ["zkrecipes", "zkrecipes-mt"])]


def cases(quick):
    """(case id, scenario, row label, driver arguments, libraries or None for DEFAULT_LIBRARIES)."""
    if quick:
        pairs, warm, handoffs, waiters, sem, rw_ms, rw_warm = 200, 20, 200, 50, 100, 1000, 200
        multi_k, multi_ops, multi_warm, async_ops = (1, 2, 4), 50, 10, 1000
    else:
        pairs, warm, handoffs, waiters, sem, rw_ms, rw_warm = 2000, 100, 2000, 1000, 1000, 5000, 500
        multi_k, multi_ops, multi_warm, async_ops = (1, 2, 4, 8), 500, 50, 10000
    out = [("uncontended", "uncontended", "uncontended mutex acquire+release",
            {"ops": pairs, "warmup": warm}, None)]
    for k in (2, 8, 32):  # K=2: the one waiter is always next in line, so the pre-watch never applies
        out.append(("contended-%d" % k, "contended", "contended, K=%d sessions" % k,
                    {"clients": k, "ops": handoffs, "warmup": warm}, None if k == 2 else WITH_STANDARD))
    out.append(("drain-%d" % waiters, "drain", "drain, W=%d waiters (per handoff)" % waiters,
                {"waiters": waiters, "clients": 8}, WITH_STANDARD))
    # One waiter behind the holder: its watched node is the only one ahead, so the wake-up needs no read
    # (ZK reads/op 0; Curator re-lists: 1). Its rate is one handoff's and means little.
    out.append(("drain-1", "drain", "drain, W=1 waiter (reads after the wake-up)",
                {"waiters": 1, "clients": 1}, None))
    out.append(("semaphore-mutex", "semaphore-mutex", "semaphore mutex acquire+release",
                {"ops": sem, "warmup": warm}, None))
    out.append(("rwlock", "rwlock", "read-write, 4 readers + 1 writer",
                {"ops": rw_ms, "warmup": rw_warm}, None))
    for k in multi_k:
        out.append(("multilock-%d" % k, "multilock", "multi-lock over %d mutexes" % k,
                    {"clients": k, "ops": multi_ops, "warmup": multi_warm}, None))
    # One rep (its measures are absolute: FIFO, peak RSS, threads) and a longer timeout: each of its waiters
    # lists the whole lock directory, so the queueing costs grow with the square of the waiters.
    out.append(("zkr_async10k", "zkr_async10k", "zkrecipes async: %d acquires" % async_ops,
                {"ops": async_ops, "clients": 4, "_reps": 1, "_timeout_s": 120 if quick else 2400},
                ["zkrecipes"]))
    # Scenario 4's other half: Curator needs a thread per waiter, so it queues the same drain with one thread
    # each, on as many sessions, at growing W until a run fails; the row is the largest W it survived. One rep
    # per W: what it shows (peak RSS, threads, whether it survives) is absolute.
    out.append(("curator-threads", "drain", "Curator threads",
                {"clients": 4, "_reps": 1, "_ladder": [50, 200] if quick else [1000, 2500, 5000, async_ops],
                 "_timeout_s": 120 if quick else 1200},
                ["curator"]))
    # K=8 sessions increment one DistributedAtomicLong: optimistic (RetryNTimes(1000, 1 ms)), or one try and
    # then PromotedToLock under the same policy. Each driver checks the counter at the end.
    incs, inc_warm = (40, 8) if quick else (2000, 100)
    for mode, suffix, how in (("optimistic", "", "optimistic"), ("promoted", "-promoted", "promoted to a lock")):
        out.append(("increments-8" + suffix, "increments", "atomic long increments, K=8, %s" % how,
                    {"clients": 8, "ops": incs, "warmup": inc_warm, "mode": mode}, COUNTER_LIBRARIES))
    return out


def case_libraries(case):
    """The libraries a case runs: those it names (or DEFAULT_LIBRARIES), and the TLS library of each plain one
    among them, the native transport beside zkrecipes and the SASL library of each plain one (only the lock and
    cache cases: not failover, whose drivers spawn leaders of their own, nor the ladder; no TLS library in the
    cache cases). A library runs only where the run has its driver (--libraries)."""
    libs = list(case[4] or DEFAULT_LIBRARIES)
    if case[1] != "failover" and "_ladder" not in case[3]:
        if "_tree" not in case[3]:
            libs += [tls for tls, plain in TLS_LIBRARIES.items() if plain in libs]
        if "zkrecipes" in libs:
            libs.append(NATIVE_LIBRARY)
        libs += [sasl for sasl, plain in SASL_LIBRARIES.items() if plain in libs]
    return libs


def select_cases(quick, only):
    """The cases to run: the lock cases, or those named by --only (case ids or scenarios, failover's included);
    None when --only names none. The failover cases run only when named (--only failover): minutes of waiting
    on session expiries, and a report of their own (docs/benchmarks-failover.md); so do the cache cases (--only
    cache, or their ids or scenarios: docs/benchmarks-caches.md)."""
    if not only:
        return cases(quick)
    want = {x.strip() for x in only.split(",")}
    every = cases(quick) + failover_cases(quick) + cache_cases(quick) + connect_cases(quick)
    return [c for c in every
            if c[0] in want or c[1] in want or ("cache" in want and c[1].startswith("cache-"))] or None


def case_ids(quick):
    return [c[0] for c in cases(quick) + failover_cases(quick) + cache_cases(quick) + connect_cases(quick)]
