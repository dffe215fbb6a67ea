"""Statistics over the reps: medians, nearest-rank percentiles, the report rows of a case and library, the
ratios against Curator."""

import math
import statistics


def median(xs):
    xs = [x for x in xs if isinstance(x, (int, float)) and x == x]
    return statistics.median(xs) if xs else None


def percentile(xs, p):
    """Nearest-rank percentile of the numbers in xs (None without any), as the drivers compute theirs."""
    xs = sorted(x for x in xs if isinstance(x, (int, float)))
    if not xs:
        return None
    return xs[min(len(xs) - 1, max(0, math.ceil(p * len(xs)) - 1))]


def failover_row(case, lib, ok, failures):
    """The row of a failover case: every failover of every rep pooled (the drivers list their samples)."""
    case_id, scenario, label, params, _ = case

    def pooled(key):
        out = []
        for r in ok:
            out += (r["result"].get("extra") or {}).get(key) or []
        return [x for x in out if isinstance(x, (int, float))]

    fail, notice, end_notice = pooled("failover_ms"), pooled("notice_ms"), pooled("end_to_notice_ms")
    n = sum(float(r["result"].get("ops") or 0) for r in ok)

    def per_failover(key):  # requests summed over every measured window, per failover
        return sum(r["requests"][key] * float(r["result"].get("ops") or 0) for r in ok) / n if n else None

    cpu = sum(r["result"].get("cpu_seconds") or 0 for r in ok)
    return {
        "case": case_id, "scenario": scenario, "row": label, "library": lib, "reps": len(ok),
        "failures": failures, "failovers": len(fail), "mode": params.get("mode"),
        "session_timeout_ms": params.get("session-timeout-ms"),
        "ops_per_sec": None, "ops_min": None, "ops_max": None,
        "p50_us": percentile(fail, 0.50) * 1e3 if fail else None,
        "p99_us": percentile(fail, 0.99) * 1e3 if fail else None,
        "min_ms": min(fail) if fail else None, "max_ms": max(fail) if fail else None,
        "notice_p50_ms": percentile(notice, 0.50), "notice_p99_ms": percentile(notice, 0.99),
        "end_to_notice_p50_ms": percentile(end_notice, 0.50),
        "end_to_notice_p99_ms": percentile(end_notice, 0.99),
        "cpu_us_per_op": cpu / n * 1e6 if n else None,
        "reads_per_op": per_failover("reads"), "writes_per_op": per_failover("writes"),
        "watches_per_op": per_failover("watches"), "packets_per_op": per_failover("packets"),
        "requests_source": ok[0]["requests"]["source"] if ok else None,
        "fifo_ok": None, "peak_rss_mb": None, "max_threads": None,
    }


def rows_of(case, lib, runs):
    """Report rows (one, or reads + writes for rwlock) for one case and library."""
    case_id, scenario, label, _, _ = case
    ok = [r for r in runs if "result" in r]
    failures = len(runs) - len(ok)
    if scenario == "failover":
        return [failover_row(case, lib, ok, failures)]

    def worst(key):
        xs = [(r["result"].get("extra") or {}).get(key) for r in ok]
        xs = [x for x in xs if isinstance(x, (int, float))]
        return max(xs) if xs else None

    def extra_median(key):  # the scenario's own figures (increments: tries per increment)
        xs = [(r["result"].get("extra") or {}).get(key) for r in ok]
        xs = [x for x in xs if isinstance(x, (int, float))]
        return median(xs) if xs else None

    def agg(name, rate, p50, p99):
        rates = [rate(r["result"]) for r in ok]
        rates = [x for x in rates if x is not None]
        cpu, switches = [], []
        for r in ok:
            res = r["result"]
            if res.get("cpu_seconds") is not None and res.get("ops"):
                cpu.append(res["cpu_seconds"] / res["ops"] * 1e6)
            cs = (res.get("extra") or {}).get("context_switches")
            if isinstance(cs, (int, float)) and res.get("ops"):
                switches.append(cs / res["ops"])
        fifo = [r["result"].get("fifo_ok") for r in ok]
        fifo = None if all(f is None for f in fifo) else all(f is True for f in fifo)
        return {
            "case": case_id, "scenario": scenario, "row": name, "library": lib, "reps": len(ok),
            "failures": failures,
            "ops_per_sec": median(rates), "ops_min": min(rates) if rates else None,
            "ops_max": max(rates) if rates else None,
            "p50_us": median([p50(r["result"]) for r in ok]),
            "p99_us": median([p99(r["result"]) for r in ok]),
            "cpu_us_per_op": median(cpu),
            "switches_per_op": median(switches) if switches else None,
            # the reps' spread, for the targets' noise rule (targets.py)
            "cpu_min": min(cpu) if cpu else None, "cpu_max": max(cpu) if cpu else None,
            "switches_min": min(switches) if switches else None,
            "switches_max": max(switches) if switches else None,
            "reads_per_op": median([r["requests"]["reads"] for r in ok]),
            "writes_per_op": median([r["requests"]["writes"] for r in ok]),
            "watches_per_op": median([r["requests"]["watches"] for r in ok]),
            "packets_per_op": median([r["requests"]["packets"] for r in ok]),
            "requests_source": ok[0]["requests"]["source"] if ok else None,
            "fifo_ok": fifo,
            "peak_rss_mb": worst("peak_rss_mb"),
            "max_threads": worst("max_threads"),
            "optimistic_tries_per_op": extra_median("optimistic_tries_per_op"),
            "promoted_tries_per_op": extra_median("promoted_tries_per_op"),
            # the cache-init rows (cache_table)
            "init_ms": extra_median("init_ms"),
            "heap_bytes_per_node": extra_median("heap_bytes_per_node"),
            "rss_bytes_per_node": extra_median("rss_bytes_per_node"),
            "server_watches_per_node": extra_median("server_watches_per_node"),
            "server_watches": extra_median("server_watches"),
        }

    if scenario == "rwlock":
        def ex(key):
            return lambda res: (res.get("extra") or {}).get(key)
        return [agg(label + ": reads", ex("reads_per_sec"), ex("read_p50_us"), ex("read_p99_us")),
                agg(label + ": writes", ex("writes_per_sec"), ex("write_p50_us"), ex("write_p99_us"))]
    return [agg(label, lambda res: res.get("ops_per_sec"), lambda res: res.get("p50_us"),
                lambda res: res.get("p99_us"))]


def add_ratios(rows):
    """ratio_vs_curator: ops/s over Curator's; for a failover row, its p50 failover time over Curator's."""
    key = {r["row"]: ("p50_us" if r["scenario"] == "failover" else "ops_per_sec") for r in rows}
    base = {r["row"]: r[key[r["row"]]] for r in rows if r["library"] == "curator"}
    for r in rows:
        b, v = base.get(r["row"]), r[key[r["row"]]]
        r["ratio_vs_curator"] = (v / b) if (b and v is not None) else None


def lock_rows(rows):
    return [r for r in rows if r["scenario"] != "failover"]


def failover_rows(rows):
    return [r for r in rows if r["scenario"] == "failover"]
