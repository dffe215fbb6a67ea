"""The report's tables (Markdown and CSV) and the number formatting they share."""

import csv


def fmt(x, digits=0):
    if x is None:
        return "—"
    if round(x, digits) == 0:
        x = 0.0  # no "-0.0"
    if digits == 0:
        return "%d" % round(x)
    return ("%%.%df" % digits) % x


def ms(us):
    return None if us is None else us / 1e3


def markdown_table(rows):
    head = ("| scenario | library | ops/s median [min..max] | × Curator | p50 / p99 µs | CPU µs/op "
            "| context switches/op | ZK reads/op | ZK writes/op | watch events/op | FIFO |")
    lines = [head, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|:---:|"]
    last = None
    for r in rows:
        approx = "~" if r["requests_source"] == "approx" else ""
        if r["reps"] == 0:
            rate = "failed (%d)" % r["failures"]
        else:
            rate = "%s [%s..%s]" % (fmt(r["ops_per_sec"]), fmt(r["ops_min"]), fmt(r["ops_max"]))
            if r["failures"]:
                rate += " (%d failed)" % r["failures"]
        fifo = "" if r["fifo_ok"] is None else ("yes" if r["fifo_ok"] else "**NO**")
        lines.append("| %s | %s | %s | %s | %s / %s | %s | %s | %s%s | %s%s | %s%s | %s |" % (
            r["row"] if r["row"] != last else "", r["library"], rate,
            fmt(r.get("ratio_vs_curator"), 2), fmt(r["p50_us"]), fmt(r["p99_us"]),
            fmt(r["cpu_us_per_op"]), fmt(r.get("switches_per_op"), 1), approx, fmt(r["reads_per_op"], 1), approx,
            fmt(r["writes_per_op"], 1), approx, fmt(r["watches_per_op"], 2), fifo))
        last = r["row"]
    return "\n".join(lines)


def failover_table(rows):
    """The leader failover table (times in ms)."""
    lines = ["| failover | library | failovers | from the leader's end, p50 / p99 ms [min..max] "
             "| p50 × Curator | from the deletion notice, p50 / p99 ms | end → notice, p50 / p99 ms "
             "| ZK reads / writes / watch events per failover |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    last = None
    for r in rows:
        approx = "~" if r["requests_source"] == "approx" else ""
        if r["reps"] == 0:
            times = "failed (%d)" % r["failures"]
        else:
            times = "%s / %s [%s..%s]" % (fmt(ms(r["p50_us"]), 1), fmt(ms(r["p99_us"]), 1),
                                          fmt(r["min_ms"], 1), fmt(r["max_ms"], 1))
            if r["failures"]:
                times += " (%d runs failed)" % r["failures"]
        lines.append("| %s | %s | %d | %s | %s | %s / %s | %s / %s | %s%s / %s%s / %s%s |" % (
            r["row"] if r["row"] != last else "", r["library"], r["failovers"], times,
            fmt(r.get("ratio_vs_curator"), 2), fmt(r["notice_p50_ms"], 1), fmt(r["notice_p99_ms"], 1),
            fmt(r["end_to_notice_p50_ms"], 1), fmt(r["end_to_notice_p99_ms"], 1),
            approx, fmt(r["reads_per_op"], 1), approx, fmt(r["writes_per_op"], 1), approx,
            fmt(r["watches_per_op"], 1)))
        last = r["row"]
    return "\n".join(lines)


def counters_table(rows):
    """The increments rows' own figures: tries per increment (medians over the reps); None without such rows."""
    rows = [r for r in rows if r["scenario"] == "increments" and r["reps"]]
    if not rows:
        return None
    lines = ["| increments | library | optimistic tries / increment | promoted tries / increment |",
             "|---|---|---:|---:|"]
    last = None
    for r in rows:
        lines.append("| %s | %s | %s | %s |" % (r["row"] if r["row"] != last else "", r["library"],
                                              fmt(r["optimistic_tries_per_op"], 2),
                                              fmt(r["promoted_tries_per_op"], 2)))
        last = r["row"]
    return "\n".join(lines)


def cache_table(rows):
    """The cache-init rows' own figures (medians over the reps); None without such rows."""
    rows = [r for r in rows if r["scenario"] == "cache-init" and r["reps"]]
    if not rows:
        return None
    lines = ["| cache | library | initialize ms | × Curator | heap bytes / node | RSS bytes / node | "
             "server watches | watches / node |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    base = {r["row"]: r["init_ms"] for r in rows if r["library"] == "curator"}
    last = None
    for r in rows:
        b = base.get(r["row"])
        speedup = (b / r["init_ms"]) if (b and r["init_ms"]) else None
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["row"] if r["row"] != last else "", r["library"], fmt(r["init_ms"]), fmt(speedup, 2),
            fmt(r["heap_bytes_per_node"]), fmt(r["rss_bytes_per_node"]), fmt(r["server_watches"]),
            fmt(r["server_watches_per_node"], 2)))
        last = r["row"]
    return "\n".join(lines)


def write_csv(path, rows):
    cols = ["case", "scenario", "row", "library", "reps", "failures", "ops_per_sec", "ops_min", "ops_max",
            "ratio_vs_curator", "p50_us", "p99_us", "cpu_us_per_op", "switches_per_op", "reads_per_op", "writes_per_op",
            "watches_per_op", "packets_per_op", "requests_source", "fifo_ok", "peak_rss_mb", "max_threads",
            # failover rows only (p50_us / p99_us: from the leader's end to the next leader)
            "failovers", "mode", "session_timeout_ms", "min_ms", "max_ms", "notice_p50_ms", "notice_p99_ms",
            "end_to_notice_p50_ms", "end_to_notice_p99_ms",
            # increments rows only
            "optimistic_tries_per_op", "promoted_tries_per_op",
            # cache-init rows only
            "init_ms", "heap_bytes_per_node", "rss_bytes_per_node", "server_watches", "server_watches_per_node"]
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow([("%.3f" % r[c]) if isinstance(r.get(c), float) else r.get(c) for c in cols])
