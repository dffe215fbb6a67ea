#!/usr/bin/env python3
"""Interleaved A/B rounds: Curator and one or more zkr_bench builds, one scenario, one warm server.

Single benchmark runs on a small shared machine vary by +-20%, so comparing two builds in separate runs says
little. This starts one ZooKeeper server (as run_bench.py does, through the zkr_bench_server beside the first
build), warms every driver once, then runs ROUNDS rounds of [Curator, build 1, build 2, ...] (the order reversed
every other round) and prints each driver's median handoffs or pairs per second, its ratio to Curator, its client
CPU, the server's CPU per operation and the server's transaction-log flushes (fsyncs, `zk_cnt_fsynctime`) per
operation.

    python3 bench/ab_rounds.py build/bench/zkr_bench /tmp/other/zkr_bench
    SCEN=uncontended EXTRA="--ops 3000" ROUNDS=8 python3 bench/ab_rounds.py build/bench/zkr_bench

Environment: SCEN (default contended), EXTRA (driver options, default "--clients 8 --ops 3000"), ROUNDS (6).
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner.drivers import build_curator_bench  # noqa: E402
from runner.servers import BenchServer, mntr  # noqa: E402


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    java, javac = shutil.which("java"), shutil.which("javac")
    scen = os.environ.get("SCEN", "contended")
    rounds = int(os.environ.get("ROUNDS", "6"))
    extra = os.environ.get("EXTRA", "--clients 8 --ops 3000").split()
    helper = os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), "zkr_bench_server")
    workdir = tempfile.mkdtemp(prefix="zkr-ab-")
    srv = BenchServer(helper, workdir)
    srv.start()
    hz = os.sysconf("SC_CLK_TCK")

    def server_cpu():
        fields = open("/proc/%d/stat" % srv.pid()).read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / hz

    drivers = [("curator", build_curator_bench(java, javac, "/usr/share/java"))]
    drivers += [("%d:%s" % (i + 1, b), [b]) for i, b in enumerate(sys.argv[1:])]
    rate, cpu, scpu, fsyncs = ({n: [] for n, _ in drivers} for _ in range(4))
    count = 0

    def run(argv, path):
        a = argv + ["--connect", "127.0.0.1:%d" % srv.port, "--scenario", scen, "--path", path] + extra
        r = subprocess.run(a, capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            raise SystemExit("%s failed: %s" % (" ".join(argv), r.stderr[-2000:]))
        return json.loads(r.stdout.strip().splitlines()[-1])

    try:
        for i, (_, argv) in enumerate(drivers):
            run(argv, "/ab-warm-%d" % i)
        for rd in range(rounds):
            for name, argv in (drivers if rd % 2 == 0 else list(reversed(drivers))):
                count += 1
                before = server_cpu()
                flushes = int(mntr(srv.port)["zk_cnt_fsynctime"])
                j = run(argv, "/ab-%d" % count)
                flushes = int(mntr(srv.port)["zk_cnt_fsynctime"]) - flushes
                ops = j["ops"]
                rate[name].append(j["ops_per_sec"])
                cpu[name].append(1e6 * j["cpu_seconds"] / ops)
                scpu[name].append(1e6 * (server_cpu() - before) / j["extra"].get("total_ops", ops))
                fsyncs[name].append(flushes / j["extra"].get("total_ops", ops))
    finally:
        srv.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    base = statistics.median(rate["curator"])
    base_cpu = statistics.median(cpu["curator"])
    print("%s, %d rounds, %s" % (scen, rounds, " ".join(extra)))
    for name, _ in drivers:
        print("%-40s %7.0f/s  x%.2f  client CPU %5.0f us/op (x%.2f)  server CPU %5.0f us/op  fsyncs/op %.2f  [%s]"
              % (name, statistics.median(rate[name]), statistics.median(rate[name]) / base,
                 statistics.median(cpu[name]), statistics.median(cpu[name]) / base_cpu,
                 statistics.median(scpu[name]), statistics.median(fsyncs[name]),
                 " ".join("%.0f" % x for x in rate[name])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
