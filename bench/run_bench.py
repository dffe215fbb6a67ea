#!/usr/bin/env python3
"""run_bench.py: runs zkrecipes' lock benchmarks against Curator and kazoo and writes the report.

    python3 bench/run_bench.py [--quick] [--zkr-bench PATH] [--out docs/benchmarks] [--reps 3]
                               [--only CASE[,CASE...]] [--libraries zkrecipes,curator,kazoo]
                               [--port N] [--jar-dir /usr/share/java] [--note TEXT] [--tls]
                               [--zkr-bench-server PATH]

What it does:
1. Starts a standalone ZooKeeper on 127.0.0.1 through zkr_bench_server (bench/server/, built beside
   zkr_bench; --zkr-bench-server), which runs the project's own test support (zkrecipes::testing's
   TestingServer): a free port (unless --port), tickTime=2000, forceSync=yes, a data dir in a temporary
   directory; it prints its ports once the server serves. The server is always stopped at the end (the
   helper's stdin is closed), also on errors and SIGTERM/SIGINT, and dies with the helper.
2. Builds bench/java/CuratorBench.java with javac into a cache dir under the system temp dir when its
   class file is missing or older than the source.
3. Warms the server up with one unmeasured short run of every driver. Then for every case and every
   library (zkrecipes through --zkr-bench when given and present; Curator; kazoo) runs the driver
   --reps times (the zkrecipes-only zkr_async10k case once, with a longer timeout; its Curator
   counterpart, curator-threads, once per waiter count from the largest down until one survives), the reps of the
   libraries interleaved (zkrecipes, Curator, kazoo, then Curator, kazoo, zkrecipes, ...: the order
   rotates from rep to rep) so that a drift of the shared machine affects them alike and none always runs
   first, each on a fresh lock path, and reads ZooKeeper's `mntr` counters before
   and after each run. Drivers that accept --mntr (CuratorBench, kazoo_bench.py and
   any zkr_bench whose --help mentions it) also report the counters around their measured part only;
   those exact numbers are preferred. Otherwise the whole-run numbers are used, less 2 writes per
   session (createSession + closeSession), divided by measured + warmup operations (marked "~").
4. Takes medians over the reps, prints one Markdown table with ratios against Curator, and writes
   <out>.md (table + date, versions, machine, and a "Targets" section checking the targets of issue 5
   on this run), <out>.csv, and <out>.png (operations per second, and p50 / p99 latency, per case and
   library) when gnuplot is installed.

All drivers share one contract (see bench/java/CuratorBench.java):
    <driver> --connect HOSTS --scenario S --path P [--clients K] [--ops N] [--waiters W] [--warmup N]
             [--timeout-s S] [--mntr HOST:PORT]
printing one JSON line {"library","scenario","params","ops","seconds","ops_per_sec","p50_us",
"p99_us","cpu_seconds","fifo_ok","extra"} and exiting 0.

Leader failover (issue 28; `--only failover`, not part of the default lock cases): for LeaderLatch and
LeaderSelector, zkrecipes and Curator, in two modes (the leader closes; the leader's process gets SIGKILL and
its node goes at session expiry, with a 4 s session timeout, the least a server with tickTime=2000 grants),
the drivers run N failovers each, spawning every leader as a process of their own (see the failover scenario
in bench/driver/scenarios/failover.cpp). The reps rotate as above; the samples of all reps are pooled: p50 /
p99 over all failovers, ZooKeeper requests per failover summed over the measured windows. Its own table ("Leader
failover") in <out>.md and rows in <out>.csv; no plot. kazoo is not run there. A driver run that lists
fewer failovers than asked for counts as failed.

Caches (issue 39; `--only cache`, not part of the default lock cases): CuratorCache (zkrecipes, Curator) and
TreeCache (kazoo too) over a tree made once per case before its reps (the cache-populate scenario of the case's
first library; every run of the case reads that one tree): the time to initialize 10k and 100k leaves, with
heap, RSS and server watches per node (cache-init), and the write-to-listener latency over 1k leaves
(cache-events). Their own section ("Caches") in <out>.md; `cmake --build build --target bench-caches` writes
docs/benchmarks-caches.md.

TLS (issue 27; --tls): the server also opens a secureClientPort (NettyServerCnxnFactory, which then serves
the plain port too; mntr / ruok stay on the plain port) with a PKI made at run time in its work dir by
zkr_bench_server (test/testing's TestCertificates: a test CA, the server certificate with SAN DNS:localhost,
IP:127.0.0.1, one client certificate with an encrypted PEM key and a PKCS12 store), and the server counts as
ready once it also answers `ruok` over TLS. The libraries "zkrecipes-tls" (the same zkr_bench with its --tls-*
options) and "curator-tls" (CuratorBench with the ZooKeeper client's TLS system properties and the two netty
jars) connect to the secure port and run in every lock case that runs their plain counterpart (not in the
failover cases nor in curator-threads). Without --tls they are skipped.

--quick: tiny sizes (a few seconds per case), one rep unless --reps is given; asserts nothing about
speed. Exit status: 0 when every driver run succeeded and every drain kept FIFO order; 1 when a
driver crashed, timed out, printed no result, or reported fifo_ok false; 2 on a setup error.

The parts (bench/runner/): cases, servers (zkr_bench_server), drivers, running (reps, ladder, warm-up),
stats (rows over the reps), tables, plot, targets, machine, report.
"""

import argparse
import datetime
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from runner.cases import case_ids, select_cases
from runner.common import LIBRARIES, ORDER, REPO, SASL_LIBRARIES, TLS_LIBRARIES, SetupError, log
from runner.drivers import make_drivers
from runner.machine import fsync_latency_us, java_version, machine_info, source_revision
from runner.report import write_reports
from runner.running import run_cases
from runner.servers import BenchServer


def parse_args(argv):
    p = argparse.ArgumentParser(description="zkrecipes lock benchmarks: zkrecipes vs Curator vs kazoo")
    p.add_argument("--quick", action="store_true", help="tiny sizes, one rep: a smoke test")
    p.add_argument("--zkr-bench", help="path of the C++ zkr_bench driver")
    p.add_argument("--zkr-bench-mt", help="path of a zkr_bench built on the multi-threaded ZooKeeper C client "
                   "(-DZKR_ZOOKEEPER_CLIENT=mt), run as the library zkrecipes-mt")
    p.add_argument("--zkr-bench-server", help="path of zkr_bench_server, which starts the ZooKeeper server "
                   "(default: the one beside --zkr-bench)")
    p.add_argument("--out", default=str(REPO / "docs" / "benchmarks"),
                   help="output prefix: writes <out>.md, <out>.csv and <out>.png")
    p.add_argument("--reps", type=int, help="runs per case and library (default 3, --quick 1)")
    p.add_argument("--only", help="comma-separated case ids or scenarios to run (default all)")
    p.add_argument("--libraries", help="comma-separated subset of " + ",".join(ORDER)
                   + " (default: %s; with --tls also %s)" % (",".join(LIBRARIES), ",".join(TLS_LIBRARIES)))
    p.add_argument("--tls", action="store_true", help="the server also opens a TLS port (PKI made at run time): "
                   "runs zkrecipes-tls (--zkr-bench with its --tls-* options) and curator-tls beside their "
                   "plain counterparts")
    p.add_argument("--sasl", choices=["digest-md5", "gssapi"], help="the server offers this SASL mechanism (a "
                   "DIGEST-MD5 user, or a Kerberos realm of its own with a KDC) without requiring it: runs "
                   "zkrecipes-sasl and zkrecipes-native-sasl (--zkr-bench with its --sasl-* options) beside their "
                   "plain counterparts")
    p.add_argument("--port", type=int, help="ZooKeeper client port (default: a free one)")
    p.add_argument("--jar-dir", default="/usr/share/java", help="where the Debian jars are (Curator's)")
    p.add_argument("--timeout-s", type=int, help="per driver run (default 600, --quick 120)")
    p.add_argument("--data-dir", help="parent directory of the server's data dir (default: the system temp "
                   "dir); its fsync latency is measured and reported")
    p.add_argument("--note", action="append", default=[],
                   help="a line for the report's notes (repeatable), e.g. what else loaded the machine")
    args = p.parse_args(argv)
    if args.libraries is None:
        args.libraries = ",".join(LIBRARIES + (list(TLS_LIBRARIES) if args.tls else [])
                                  + (list(SASL_LIBRARIES) if args.sasl else []))
    args.libraries = [x.strip() for x in args.libraries.split(",") if x.strip()]
    if not args.zkr_bench_server and args.zkr_bench:
        args.zkr_bench_server = str(Path(args.zkr_bench).resolve().parent / "zkr_bench_server")
    return args


def run_meta(args, reps, drivers, workdir):
    """What the report says about this run before it starts."""
    return {"quick": args.quick, "reps": reps, "machine": machine_info(),
            "date": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
            "java": java_version(shutil.which("java")), "python": None, "kazoo": None, "curator": None,
            "zkr_bench": args.zkr_bench if "zkrecipes" in drivers else None, "zkrecipes": None,
            "revision": source_revision(), "data_dir": workdir, "fsync_us": fsync_latency_us(workdir),
            "tls": args.tls, "sasl": args.sasl,
            "command": "".join([" --quick" if args.quick else "", " --tls" if args.tls else "",
                                " --sasl %s" % args.sasl if args.sasl else "",
                                " --only %s" % args.only if args.only else "",
                                " --reps %d" % args.reps if args.reps else ""])}


def main(argv=None):
    args = parse_args(argv)
    reps = args.reps or (1 if args.quick else 3)
    timeout_s = args.timeout_s or (120 if args.quick else 600)

    def on_term(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGHUP, on_term)

    notes = list(args.note)
    drivers = make_drivers(args, notes)
    for n in notes:
        log(n)
    if not drivers:
        log("no benchmark driver is available")
        return 2
    if not args.zkr_bench_server or not os.access(args.zkr_bench_server, os.X_OK):
        log("no zkr_bench_server (--zkr-bench-server, or beside --zkr-bench): cannot start ZooKeeper")
        return 2
    selected = select_cases(args.quick, args.only)
    if selected is None:
        log("--only %s: no such case or scenario (case ids: %s)" % (args.only, ", ".join(case_ids(args.quick))))
        return 2

    workdir = tempfile.mkdtemp(prefix="zkr-bench-zk-", dir=args.data_dir)
    server = BenchServer(args.zkr_bench_server, workdir, args.port, args.tls, sasl=args.sasl)
    meta = run_meta(args, reps, drivers, workdir)
    try:
        t = time.monotonic()
        server.start()
        if server.pki:
            log("test PKI made in %s" % server.pki.dir)
        meta["zookeeper"] = server.version()
        log("ZooKeeper %s on 127.0.0.1:%d%s (pid %d, started in %.1f s)"
            % (meta["zookeeper"], server.port, ", TLS on :%d" % server.secure_port if server.pki else "",
               server.pid(), time.monotonic() - t))
        order = [lib for lib in ORDER if lib in drivers]
        rows, bad = run_cases(selected, drivers, order, server, reps, timeout_s, meta, notes)
    except SetupError as e:
        log("setup failed: %s" % e)
        return 2
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    write_reports(args.out, rows, meta, notes, bad)
    if bad:
        log("FAILED: " + "; ".join(bad))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
