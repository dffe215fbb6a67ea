"""run_bench.py's parts, one concern each: cases, servers (zkr_bench_server), drivers, running (reps, ladder,
warm-up), stats (rows over the reps), tables, plot, targets, machine and report."""
