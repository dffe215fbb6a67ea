"""The report: <out>.md (setup, tables, TLS, failover, targets, notes, plot), written beside <out>.csv and
<out>.png."""

from pathlib import Path

from .cases import FAILOVER_SESSION_TIMEOUT_MS
from .common import ORDER, TLS_LIBRARIES, log
from .plot import write_plot
from .stats import add_ratios, failover_rows, lock_rows
from .tables import cache_table, counters_table, failover_table, fmt, markdown_table, write_csv
from .targets import targets_markdown


def tls_markdown(rows):
    """What TLS costs (issue 27): the TLS libraries against their plain counterparts, and against each other, on
    the medians of this run; [] when no TLS library ran."""
    by = {(r["case"], r["library"]): r for r in rows if r["scenario"] != "failover" and r["reps"]}
    if not any(lib in TLS_LIBRARIES for _, lib in by):
        return []

    def val(case, lib, key):
        r = by.get((case, lib))
        return r.get(key) if r else None

    def ratio(a, b):
        return a / b if (a is not None and b) else None

    measures = [("uncontended", "p50_us", "uncontended pair, p50 µs"),
                ("uncontended", "ops_per_sec", "uncontended pairs/s"),
                ("uncontended", "cpu_us_per_op", "uncontended pair, client CPU µs"),
                ("contended-8", "ops_per_sec", "contended K=8, handoffs/s"),
                ("contended-8", "p50_us", "contended K=8, acquire p50 µs"),
                ("contended-8", "cpu_us_per_op", "contended K=8, client CPU µs/handoff")]
    lines = ["## TLS", "",
             "zkrecipes and Curator over TLS (the server's `secureClientPort`) beside plain text, in the same run "
             "against the same server; medians over the reps. TLS ÷ plain: the TLS library's figure divided by "
             "its plain counterpart's; the last column divides zkrecipes-tls's by curator-tls's.", "",
             "| measure | zkrecipes | zkrecipes-tls | TLS ÷ plain | curator | curator-tls | TLS ÷ plain "
             "| zkrecipes-tls ÷ curator-tls |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    summary = []
    for case, key, label in measures:
        if not any((case, lib) in by for lib in TLS_LIBRARIES):
            continue
        z, zt, c, ct = (val(case, lib, key) for lib in ("zkrecipes", "zkrecipes-tls", "curator", "curator-tls"))
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            label, fmt(z), fmt(zt), fmt(ratio(zt, z), 2), fmt(c), fmt(ct), fmt(ratio(ct, c), 2),
            fmt(ratio(zt, ct), 2)))
        if (case, key) in (("uncontended", "p50_us"), ("contended-8", "ops_per_sec")):
            summary.append("%s: zkrecipes-tls ÷ zkrecipes %s (%s → %s), curator-tls ÷ curator %s (%s → %s), "
                           "zkrecipes-tls ÷ curator-tls %s"
                           % (label, fmt(ratio(zt, z), 2), fmt(z), fmt(zt), fmt(ratio(ct, c), 2), fmt(c), fmt(ct),
                              fmt(ratio(zt, ct), 2)))
    lines += [""] + ["- " + x + "." for x in summary] + [""]
    return lines


def caches_markdown(rows):
    """The cache cases' own figures and how to read them (issue 39); [] when none ran."""
    if not any(r["scenario"].startswith("cache-") for r in rows):
        return []
    lines = ["## Caches", "",
             "Every library caches one tree under `/zkr-bench` made once per case before its runs: groups of 100 "
             "leaves, 32 bytes of data each (N leaves: 1 + N/100 + N nodes cached). In the table above, the "
             "initialize rows' ops/s are nodes loaded per second and their p50 the time to initialize; the "
             "write-to-listener rows' ops/s are changes per second (one at a time: a second session sets a "
             "leaf's data once the listener has seen the previous change) and p50 / p99 the time from the "
             "`setData` call to the listener's call with the new data; ZK reads/op there are the cache's reads "
             "per change.", ""]
    table = cache_table(rows)
    if table:
        lines += [table, "",
                  "- initialize ms: from the cache's start to its initialized event (medians over the reps); "
                  "× Curator: Curator's time over this one's (above 1 is faster).",
                  "- heap bytes / node: what the cache keeps, per cached node: for zkrecipes malloc's bytes in "
                  "use (`mallinfo2`) after the initialization less before the start; for Curator the JVM heap "
                  "used after `System.gc()`, the same two moments. kazoo: none (Python's objects are not "
                  "counted apart from the interpreter's).",
                  "- RSS bytes / node: the resident set's growth over the same span (for the JVM this includes "
                  "heap it reserved and has not returned).",
                  "- server watches: the server's `zk_watch_count` growth while the cache started (two one-shot "
                  "watches per node: data and children; one persistent recursive watch, plus the root's, on "
                  "the native transport and in Curator's `CuratorCache`).",
                  "- zkrecipes is on the single-threaded C client (one-shot watches: the C client has no "
                  "persistent watch); zkrecipes-native on the native transport (one persistent recursive "
                  "watch, ZooKeeper 3.6+).", ""]
    return lines


def counters_markdown(rows):
    """The increments cases' tries per increment (issue 40); [] when none ran."""
    table = counters_table(rows)
    if not table:
        return []
    return ["## Atomic long increments", "",
            "K=8 sessions, a thread each, increment one `DistributedAtomicLong` until N increments are done in "
            "total; ops/s above is increments per second, p50 / p99 the latency of one increment with its "
            "retries. *optimistic*: `RetryNTimes(1000, 1 ms)`; *promoted to a lock*: one optimistic try "
            "(`RetryNTimes(0, 0)`), then `PromotedToLock` on `<path>-lock` under `RetryNTimes(1000, 1 ms)`, the "
            "same on both sides. Each driver checks at the end that the counter went up by exactly warmup + N "
            "(else the run fails). Tries per increment: the `AtomicStats` counts, medians over the reps. "
            "What the counters are: [counters.md](counters.md).", "", table, ""]


def zkr_description(meta):
    if not meta.get("zkr_bench"):
        return "not run"
    parts = [meta.get("zkrecipes") or "version unknown"]
    if meta.get("revision"):
        parts.append("source %s" % meta["revision"])
    return "%s (%s, driver `%s`)" % (parts[0], ", ".join(parts[1:]) or "—", Path(meta["zkr_bench"]).name)


def failover_markdown(ftable):
    return [
        "## Leader failover",
        "",
        "What the recipes do and how they map to Curator's: [leader-election.md](leader-election.md), "
        "[porting guide](porting-from-curator.md#leader-election). Rerun: `cmake --build build --target "
        "bench-failover` (writes docs/benchmarks-failover.md), or `python3 bench/run_bench.py --only failover "
        "--zkr-bench build/bench/zkr_bench --out docs/benchmarks-failover`.",
        "",
        ftable,
        "",
        "How to read it:",
        "",
        "- One failover: the measuring driver (zkr_bench or CuratorBench) spawns a leader in a process of "
        "its own (the same driver and library, on a session of its own, on a fresh path), waits until it "
        "leads, queues its own participant behind it and, once the server holds that participant's watch on "
        "the leader's node, ends the leader. p50 / p99: nearest rank over every failover of every rep (with "
        "fewer than 100 failovers the p99 is the slowest one); p50 × Curator divides the p50 by Curator's "
        "(below 1: faster).",
        "- From the leader's end: *close*: from the leader process's clock just before its `close()` (the "
        "latch's node is deleted in the background; the selector's term is asked to stop, ends, and its node "
        "is deleted) to the follower's `is_leader` listener call (LeaderLatch) or the start of its "
        "`take_leadership` (LeaderSelector); both processes read CLOCK_MONOTONIC. *kill -9*: from just "
        "before the driver sends SIGKILL to the leader's process. The follower then learns only when the "
        "server expires the dead session: the figure includes the session timeout (%d ms, the least a server "
        "with tickTime=2000 grants). The server expires sessions in tickTime buckets, counting from the "
        "session's last packet (a ping at the latest a third of the timeout before the kill), so the expiry "
        "comes between "
        "about 2/3 of the timeout and the timeout + 2 s after the kill, whichever library (the drivers "
        "start the leaders of the kill cases spread evenly over the tick, so that no run sits at one phase of "
        "it): the kill rows' "
        "totals differ between libraries by that lottery, their library part is the next column."
        % FAILOVER_SESSION_TIMEOUT_MS,
        "- From the deletion notice: from the node-deleted event of an observer session (an `exists` watch "
        "on the leader's node, in the measuring process) to the follower's leadership: the library's own "
        "part (wake-up, re-list, claim, listener dispatch). It can come out slightly negative when the "
        "follower's event is handled before the observer's.",
        "- End → notice: from the leader's end to that event; in kill mode the session expiry as the server "
        "acts on it (plus the delivery of one event).",
        "- ZK requests per failover: the server's `mntr` counters read just before the leader's end and just "
        "after the follower leads, summed over the failovers; the observer's own watch event is taken out. "
        "The server counts pings as reads: the measuring process's two sessions use a 30 s timeout so that "
        "they do not ping during a kill's window (a stray ping can still add ~0.1). A session's expiry is no "
        "client request: in kill mode the dead leader's node goes without any write being counted.",
        "- kazoo is not run here (its `Election` is its `Lock`; left out of this scenario).",
        "",
    ]


def write_markdown(path, table, meta, notes, plot_note, png_name, rows=(), ftable=None):
    m = meta["machine"]
    counters_only = bool(rows) and all(r["scenario"] == "increments" for r in rows)
    caches_only = bool(rows) and all(r["scenario"].startswith("cache-") for r in rows)
    title = ("# zkrecipes counter benchmarks" if counters_only else
             "# zkrecipes cache benchmarks" if caches_only else "# zkrecipes lock benchmarks")
    lines = [
        title if table
        else "# zkrecipes leader failover benchmark",
        "",
        "Generated by `bench/run_bench.py%s` on %s; %d rep(s) per case%s."
        % (meta.get("command") or (" --quick" if meta["quick"] else ""), meta["date"], meta["reps"],
           ", medians with [min..max] over reps" if table else ", the failovers of all reps pooled"),
        "",
        "## Setup",
        "",
        "- Machine: %s cores, %s, %s GiB memory, Linux %s." % (m["nproc"], m["cpu"] or "unknown CPU",
                                                                m["mem_gib"], m["kernel"]),
        "- ZooKeeper %s, standalone, `forceSync=yes`, on 127.0.0.1 (started by the runner, data dir in "
        "%s; fdatasync p50 there %s µs)." % (meta["zookeeper"] or "?", meta.get("data_dir") or "?",
                                     fmt(meta.get("fsync_us"))),
        "- Curator %s on %s; kazoo %s on Python %s; zkrecipes: %s."
        % (meta.get("curator") or "—", meta.get("java") or "—", meta.get("kazoo") or "—",
           meta.get("python") or "—", zkr_description(meta)),
        "",
    ]
    if meta.get("sasl") == "digest-md5":
        lines[-1:-1] = [
            "- SASL (`--sasl digest-md5`): the server offers DIGEST-MD5 (`SASLAuthenticationProvider`, a JAAS "
            "`Server` section with one user) without requiring it (`SaslServerOptions::required = false`), so "
            "plain and SASL clients share it. zkrecipes-sasl and zkrecipes-native-sasl are the same zkr_bench with "
            "`--sasl-mechanism digest-md5 --sasl-user --sasl-password-file` (`ClientConfig::sasl`)."]
    elif meta.get("sasl") == "gssapi":
        lines[-1:-1] = [
            "- SASL (`--sasl gssapi`): a Kerberos realm of its own (MIT `krb5kdc` on 127.0.0.1, test/testing's "
            "`TestKdc`), the server's principal `zookeeper/localhost` with its keytab, offered without being "
            "required (`SaslServerOptions::required = false`), so plain and SASL clients share the server. "
            "zkrecipes-sasl and zkrecipes-native-sasl are the same zkr_bench with `--sasl-mechanism gssapi "
            "--sasl-principal --sasl-keytab --sasl-server-host localhost` and `KRB5_CONFIG` naming the realm's "
            "krb5.conf. Every session of the connect case is a new client with a ticket cache of its own: its "
            "set-up includes getting the ticket-granting ticket from the keytab and the service ticket from the "
            "KDC (a reconnection of a client reuses both)."]
    if meta.get("tls"):
        lines[-1:-1] = [
            "- TLS (`--tls`): the server also listens on a `secureClientPort` (`ssl.clientAuth=need`, PKCS12 "
            "stores), with `NettyServerCnxnFactory`, which then serves the plain port too: in this run the plain "
            "rows also go through Netty (docs/benchmarks.md's server uses the default NIO factory). The test PKI "
            "is made at run time: RSA 2048 keys, one client certificate shared by every TLS client (an "
            "AES-256-encrypted PEM key for zkrecipes-tls, a PKCS12 store for curator-tls). zkrecipes-tls is the "
            "same zkr_bench with `--tls-ca/--tls-cert/--tls-key/--tls-key-password` (`ClientConfig::tls`); "
            "curator-tls is CuratorBench with `-Dzookeeper.client.secure=true`, "
            "`-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty` and the "
            "`zookeeper.ssl.keyStore.*` / `trustStore.*` properties. `mntr` is read on the plain port.",
        ]
    if table and caches_only:  # its own reading guide: the Caches section below
        lines += ["## Results", "", table, "",
                  "- The machine is shared and noisy: compare ratios taken in one run, not absolute numbers "
                  "across runs. Reps: the libraries take turns, in an order that rotates from rep to rep; medians "
                  "over the reps.", ""]
    elif table:
        lines += [
        "## Results",
        "",
        table,
        "",
        "How to read it:",
        "",
        "- ops/s: acquire+release pairs per second (uncontended, semaphore mutex, multi-lock), lock "
        "handoffs per second (contended, drain), or completed read / write acquire+release pairs per "
        "second (read-write). × Curator divides the median by Curator's.",
        "- p50 / p99: latency of one pair (uncontended, semaphore mutex, multi-lock, read-write), of one "
        "acquire (contended), or the time between consecutive acquisitions (drain).",
        "- CPU µs/op: the client process's user+sys CPU time during the measured part, per operation "
        "(JVM JIT and GC threads included for Curator).",
        "- context switches/op: the client process's context switches (every thread's, voluntary and not, from "
        "`getrusage`) during the measured part, per operation: zkrecipes's drivers only (— for Curator and kazoo).",
        "- ZK reads/op, writes/op, watch events/op: from the server's `mntr` counters "
        "(`zk_cnt_readlatency`, `zk_cnt_updatelatency`, the `zk_sum_node_*_watch_count` sums), read by "
        "the driver just before and after its measured part. `~` marks estimates from counters read "
        "around the whole run (session set-up and warmup included, 2 writes per session removed).",
        "- Reps: the libraries take turns within each rep, in an order that rotates from rep to rep (so no "
        "library always has a case's first run); medians over the reps.",
        "- FIFO: in the drain case, whether the waiters acquired in the order of their sequence numbers.",
        "- Curator threads: scenario 4's Curator half. Curator has no asynchronous lock, so the "
        "zkrecipes async case's drain is queued with one blocked thread per waiter on as many sessions (4), "
        "trying the largest W first and smaller ones only while a run fails (one rep each); its peak RSS and "
        "thread count stand beside the zkrecipes case's in the targets below.",
        "- zkrecipes is built on the single-threaded ZooKeeper C client, zkrecipes-mt on the multi-threaded one "
        "(the same source; `--zkr-bench-mt`, docs/architecture.md \"Two C clients\"); zkrecipes-native is "
        "zkrecipes's driver on the native transport (`ZKR_ZOOKEEPER_TRANSPORT=native`, docs/native-transport.md), "
        "no C client in its path.",
        "- zkrecipes-standard: zkrecipes with `StandardLockDriver` (Curator's request pattern: re-list after each "
        "wake-up) instead of the mutexes' default `PrewatchLockDriver`; run only where the pre-watch changes a "
        "hand-off (K=8, K=32, the long drain).",
        "- The machine is shared and noisy: compare ratios taken in one run, not absolute numbers "
        "across runs.",
        "",
        ]
        if meta.get("tls"):
            lines[-1:-1] = ["- zkrecipes-tls, curator-tls: zkrecipes and Curator connecting over TLS (see Setup); "
                            "their × Curator still divides by plain Curator's figure."]
        if meta.get("sasl"):
            lines[-1:-1] = ["- zkrecipes-sasl, zkrecipes-native-sasl: zkrecipes on the C client and on the native "
                            "transport authenticating with SASL (see Setup), beside the same drivers in plain "
                            "text on the same server."]
        if any(r["scenario"] == "connect" for r in rows):
            lines[-1:-1] = ["- connection set-up: sessions started one at a time, each closed after; p50 / p99 "
                            "from `start()` to CONNECTED (the TCP connection, the session handshake and any SASL "
                            "exchange: CONNECTED comes only once authenticated); ops/s: sessions set up per "
                            "second; ZK writes/op: the session's creation and its close."]
    if table:
        lines += tls_markdown(rows)
        lines += counters_markdown(rows)
        lines += caches_markdown(rows)
    if ftable and not table and notes:  # a failover report: its notes (the machine's load) before its figures
        lines += ["Notes:", ""] + ["- " + n for n in notes] + [""]
        notes = []
    if ftable:
        lines += failover_markdown(ftable)
    lines += targets_markdown(rows)
    analysis = Path(path).parent / "benchmark-targets.md"
    if analysis.exists() and "## Targets" in lines:
        lines += ["Why a target is missed, with profiles and request counts: "
                  "[benchmark-targets.md](benchmark-targets.md).", ""]
    failover_report = Path(path).parent / "benchmarks-failover.md"
    if table and not ftable and failover_report.exists() and not counters_only and not caches_only:
        lines += ["Leader failover times (LeaderLatch, LeaderSelector; close and kill -9) against Curator: "
                  "[benchmarks-failover.md](benchmarks-failover.md) (`bench/run_bench.py --only failover`).", ""]
    counters_report = Path(path).parent / "benchmarks-counters.md"
    if table and counters_report.exists() and Path(path).name != counters_report.name:
        lines += ["Contended increments of a DistributedAtomicLong (K=8, optimistic and promoted to a lock) against "
                  "Curator: [benchmarks-counters.md](benchmarks-counters.md) (`bench/run_bench.py --only "
                  "increments`).", ""]
    caches_report = Path(path).parent / "benchmarks-caches.md"
    if table and caches_report.exists() and Path(path).name != caches_report.name:
        lines += ["The caches (CuratorCache and TreeCache initialising 10k and 100k nodes, write-to-listener "
                  "latency) against Curator and kazoo: [benchmarks-caches.md](benchmarks-caches.md) "
                  "(`bench/run_bench.py --only cache`).", ""]
    if notes:
        lines += ["Notes:", ""] + ["- " + n for n in notes] + [""]
    if not table:
        pass
    elif plot_note:
        lines += [plot_note[0].upper() + plot_note[1:] + ".", ""]
    else:
        lines += ["![operations per second, and latency p50 / p99, per case and library](%s)" % png_name, ""]
    Path(path).write_text("\n".join(lines))


def write_reports(out, rows, meta, notes, bad):
    """Prints the tables and writes <out>.md, <out>.csv and (lock cases, with gnuplot) <out>.png."""
    add_ratios(rows)
    locks, failovers = lock_rows(rows), failover_rows(rows)
    table = markdown_table(locks) if locks else None
    ftable = failover_table(failovers) if failovers else None
    print("\n\n".join(t for t in (table, ftable) if t))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_csv(str(out) + ".csv", rows)
    plot_note = write_plot(str(out) + ".png", locks, ORDER) if locks else None
    if plot_note:
        log(plot_note)
    if bad:
        notes = notes + ["failed runs: " + "; ".join(bad)]
    write_markdown(str(out) + ".md", table, meta, notes, plot_note, out.name + ".png", rows, ftable)
    log("wrote %s.md, %s.csv%s" % (out, out, "" if plot_note or not locks else ", %s.png" % out))
