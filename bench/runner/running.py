"""Running the drivers against the server: one run, a ladder of waiter counts, the warm-up, and the reps of a
case interleaved across libraries."""

import json
import subprocess
import time
import uuid

from .cases import case_libraries
from .common import DEFAULT_LIBRARIES, WATCH_KEYS, log
from .servers import mntr
from .stats import rows_of
from .tables import fmt


def run_one(driver, server, case, rep, timeout_s):
    """Runs one driver once. Keys of params starting with "_" are the runner's own (not driver options):
    "_timeout_s" overrides the per-run timeout; "_reps" (used by main) the number of reps."""
    case_id, scenario, _, params, _ = case
    timeout_s = params.get("_timeout_s", timeout_s)
    if "_tree" in params:  # a cache case: every run reads the case's one tree (populate_tree)
        path = "/zkr-bench/cache-tree-%s" % params["_tree"]
    else:
        path = "/zkr-bench/%s/%s-r%d-%s" % (case_id, driver.name, rep, uuid.uuid4().hex[:8])
    argv = driver.command(server) + ["--connect", "127.0.0.1:%d" % driver.connect_port(server),
                                     "--scenario", scenario, "--path", path, "--timeout-s", str(timeout_s)]
    for k, v in params.items():
        if not k.startswith("_"):
            argv += ["--" + k, str(v)]
    if driver.supports_mntr:
        argv += ["--mntr", "127.0.0.1:%d" % server.port]
    def sample():
        try:
            return mntr(server.port)
        except OSError:
            return {}

    before = sample()
    t0 = time.monotonic()
    try:
        r = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=timeout_s + 60)
        rc, out, err = r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired as e:
        rc, out, err = "timeout", e.stdout or "", e.stderr or ""
        if isinstance(out, bytes):
            out = out.decode(errors="replace")
        if isinstance(err, bytes):
            err = err.decode(errors="replace")
    wall = time.monotonic() - t0
    time.sleep(0.05)
    after = sample()
    result = None
    for line in reversed(out.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                result = json.loads(line)
            except ValueError:
                pass
            break
    failure = None
    if rc != 0:
        failure = "exit status %s" % rc
    elif result is None:
        failure = "no JSON result on stdout"
    if failure:
        return {"failure": failure, "stderr": err[-3000:], "argv": argv}

    def d(key):
        a, b = before.get(key, 0), after.get(key, 0)
        return (b - a) if isinstance(a, float) and isinstance(b, float) else 0

    extra = result.get("extra") or {}
    if scenario == "failover" and len(extra.get("failover_ms") or []) != int(params.get("ops", 0)):
        return {"failure": "%d failover samples, %s asked for" % (len(extra.get("failover_ms") or []),
                                                                  params.get("ops")),
                "stderr": err[-3000:], "argv": argv}
    phase = extra.get("mntr")
    if isinstance(phase, dict) and "error" not in phase and result.get("ops"):
        n = float(result["ops"])
        req = {"reads": phase.get("reads", 0) / n, "writes": phase.get("writes", 0) / n,
               "watches": phase.get("watch_events", 0) / n,
               "packets": phase.get("packets_received", 0) / n, "source": "exact"}
    else:
        n = float(extra.get("total_ops") or result.get("ops") or 0) or float("nan")
        sessions = float(extra.get("sessions") or 0)
        req = {"reads": d("zk_cnt_readlatency") / n,
               "writes": (d("zk_cnt_updatelatency") - 2 * sessions) / n,
               "watches": sum(d(k) for k in WATCH_KEYS) / n,
               "packets": d("zk_packets_received") / n, "source": "approx"}
    return {"result": result, "requests": req, "wall": wall,
            "whole_run": {"reads": d("zk_cnt_readlatency"), "writes": d("zk_cnt_updatelatency"),
                          "watches": sum(d(k) for k in WATCH_KEYS),
                          "packets": d("zk_packets_received")}}


def run_ladder(driver, server, case, timeout_s, done, total, notes):
    """Runs a "_ladder" case: the largest waiter count W of the ladder first, then smaller ones while a run
    fails. Returns (the rows of the largest W that succeeded, a failure message when every W failed, the
    updated run count). A failure at a larger W is what the case measures, not a benchmark failure: it goes
    into the notes and the row's label."""
    case_id, scenario, label, params, _ = case
    ladder = sorted(params["_ladder"], reverse=True)
    failed = []
    for i, w in enumerate(ladder):
        done += 1
        r = run_one(driver, server, (case_id, scenario, label, dict(params, waiters=w), None), 1, timeout_s)
        if "failure" not in r and r["result"].get("fifo_ok") is False:
            r = {"failure": "fifo_ok false", "stderr": "", "argv": r.get("argv", [])}
        if "failure" in r:
            failed.append((w, r["failure"]))
            log("[%d/%d] %s %s W=%d: %s\n    %s" % (done, total, case_id, driver.name, w, r["failure"],
                                                   (r.get("stderr") or "").strip()[-500:]))
            continue
        res = r["result"]
        ex = res.get("extra") or {}
        log("[%d/%d] %s %s W=%d: %.0f handoffs/s, peak RSS %s MB, %s threads"
            % (done, total, case_id, driver.name, w, res.get("ops_per_sec") or 0, fmt(ex.get("peak_rss_mb")),
               ex.get("max_threads")))
        if failed:
            notes.append("%s, one thread per waiter, did not survive %s; its row is W=%d"
                         % (driver.name, "; ".join("W=%d (%s)" % f for f in failed), w))
            row_label = "%s, W=%d (W=%d failed)" % (label, w, failed[-1][0])
        else:
            row_label = "%s, W=%d (largest tried)" % (label, w)
        return rows_of((case_id, scenario, row_label, params, None), driver.name, [r]), None, done + len(ladder) - i - 1
    return [], "%s: %s failed at every W (%s)" % (case_id, driver.name, "; ".join("%d: %s" % f for f in failed)), done


def warm_up(drivers, order, server, timeout_s):
    """Unmeasured runs before the first case: the fresh server's JIT and data tree warm up here, not during
    the first library's first measured run. Failures are only logged (the measured runs report them)."""
    case = ("warmup", "uncontended", "warm-up", {"ops": 300, "warmup": 50}, None)
    for lib in order:
        r = run_one(drivers[lib], server, case, 0, min(timeout_s, 120))
        if "failure" in r:
            log("warm-up %s: %s" % (lib, r["failure"]))
    log("warm-up done")


def case_reps(case, reps):
    """A case may cap its reps ("_reps": the 10,000-waiter case runs once); a ladder runs once per rung."""
    return min(reps, case[3].get("_reps", reps)) * len(case[3].get("_ladder", [None]))


def note_versions(meta, lib, res):
    """The versions the drivers report, for the report's setup section."""
    ex = res.get("extra") or {}
    meta["curator"] = meta["curator"] or ex.get("curator_version")
    meta["kazoo"] = meta["kazoo"] or ex.get("kazoo_version")
    meta["zkrecipes"] = meta["zkrecipes"] or ex.get("zkrecipes_version")
    if lib == "kazoo":
        meta["python"] = meta["python"] or ex.get("python_version")


def populate_tree(case, libs, drivers, server, timeout_s, bad):
    """A cache case's tree, made once (cache-populate, by the case's first library) before its reps, so that
    every library's runs read the same nodes and no run's time includes making them. False when it failed."""
    case_id, _, label, params, _ = case
    populate = (case_id, "cache-populate", label, {"nodes": params["nodes"], "_tree": params["_tree"]}, None)
    r = run_one(drivers[libs[0]], server, populate, 0, params.get("_timeout_s", timeout_s))
    if "failure" in r:
        msg = "%s: populating its tree (%s) failed: %s" % (case_id, libs[0], r["failure"])
        bad.append(msg)
        log("%s\n    %s\n%s" % (msg, " ".join(r["argv"]), r["stderr"]))
        return False
    log("%s: tree of %s leaves ready (%.1f s)" % (case_id, params["nodes"], r["wall"]))
    return True


def run_case(case, libs, drivers, server, reps, timeout_s, progress, meta, bad):
    """The reps of one case, interleaved across libraries so that a drift of the shared machine or of the server
    (JIT, data tree, log) does not favour whoever runs last, and the order rotated from rep to rep (zkrecipes,
    Curator, kazoo; Curator, kazoo, zkrecipes; ...) so that no library always takes the case's first, coldest
    run. Returns the case's rows (rwlock's two rows per library grouped by row)."""
    if not libs:
        return []
    if "_tree" in case[3] and not populate_tree(case, libs, drivers, server, timeout_s, bad):
        return []
    runs = {lib: [] for lib in libs}
    for rep in range(1, case_reps(case, reps) + 1):
        shift = (rep - 1) % len(libs)
        for lib in libs[shift:] + libs[:shift]:
            progress[0] += 1
            done, total = progress
            r = run_one(drivers[lib], server, case, rep, timeout_s)
            runs[lib].append(r)
            if "failure" in r:
                why = [l for l in (r.get("stderr") or "").splitlines() if "failed" in l or "Exception" in l]
                msg = "%s %s rep %d: %s%s" % (case[0], lib, rep, r["failure"],
                                              " (%s)" % why[0].strip()[:200] if why else "")
                bad.append(msg)
                log("[%d/%d] FAILED %s\n    %s\n%s" % (done, total, msg, " ".join(r["argv"]), r["stderr"]))
                continue
            res = r["result"]
            note_versions(meta, lib, res)
            if res.get("fifo_ok") is False:
                bad.append("%s %s rep %d: fifo_ok false" % (case[0], lib, rep))
            log("[%d/%d] %s %s rep %d: %.0f ops/s, p50 %s µs, p99 %s µs, %s reads + %s "
                "writes/op%s" % (done, total, case[0], lib, rep, res.get("ops_per_sec") or 0,
                                 res.get("p50_us"), res.get("p99_us"),
                                 fmt(r["requests"]["reads"], 1), fmt(r["requests"]["writes"], 1),
                                 "" if res.get("fifo_ok") is None else
                                 ", fifo_ok %s" % res.get("fifo_ok")))
    case_rows = []
    for lib in libs:
        case_rows += rows_of(case, lib, runs[lib])
    labels = []
    for r in case_rows:
        if r["row"] not in labels:
            labels.append(r["row"])
    case_rows.sort(key=lambda r: labels.index(r["row"]))
    return case_rows


def run_cases(selected, drivers, order, server, reps, timeout_s, meta, notes):
    """Every selected case with every library it runs: (rows, failure messages)."""
    jobs = [(c[0], lib) for c in selected for lib in order if lib in case_libraries(c)]
    by_id = {c[0]: c for c in selected}
    progress = [0, sum(case_reps(by_id[cid], reps) for cid, _ in jobs)]  # [done, total]
    rows, bad = [], []
    warm_up(drivers, order, server, timeout_s)
    for case in selected:
        if "_ladder" in case[3]:
            lib = (case[4] or DEFAULT_LIBRARIES)[0]
            if lib in drivers:
                row, failed_first, progress[0] = run_ladder(drivers[lib], server, case, timeout_s, progress[0],
                                                            progress[1], notes)
                rows += row
                if failed_first:
                    bad.append(failed_first)
            continue
        libs = [lib for lib in order if (case[0], lib) in jobs]
        rows += run_case(case, libs, drivers, server, reps, timeout_s, progress, meta, bad)
    return rows, bad
