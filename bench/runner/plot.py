"""The report's plot (gnuplot): operations per second, and p50 / p99 latency, per case and library."""

import shutil
import subprocess
import tempfile
from pathlib import Path


def write_plot(png, rows, libs):
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        return "plot skipped: gnuplot is not installed (Debian: gnuplot-nox)"
    try:
        terms = subprocess.run([gnuplot, "-e", "set terminal"], capture_output=True, text=True,
                               timeout=30)
        text = terms.stdout + terms.stderr
    except (OSError, subprocess.TimeoutExpired) as e:
        return "plot skipped: %s" % e
    term = "pngcairo" if "pngcairo" in text else ("png" if " png " in text or "\npng" in text else None)
    if not term:
        return "plot skipped: this gnuplot has no png terminal"
    labels = []
    for r in rows:
        if r["row"] not in labels:
            labels.append(r["row"])
    libs = [lib for lib in libs if any(r["library"] == lib for r in rows)]

    def num(v):
        return ("%.1f" % v) if v else "NaN"

    with tempfile.TemporaryDirectory() as tmp:
        # One line per row: the label, then per library its ops/s, p50 and p99 (µs).
        dat = Path(tmp) / "bench.dat"
        by = {(r["row"], r["library"]): r for r in rows}
        with open(dat, "w") as f:
            for lab in labels:
                cols = []
                for lib in libs:
                    r = by.get((lab, lib)) or {}
                    cols += [num(r.get("ops_per_sec")), num(r.get("p50_us")), num(r.get("p99_us"))]
                f.write('"%s"\t' % lab.replace('"', "'") + "\t".join(cols) + "\n")
        rate = ", ".join("'%s' using %d title '%s'" % (dat, 3 * i + 2, lib) for i, lib in enumerate(libs))
        # Latency: a bar at the p50 with a whisker up to the p99.
        lat = ", ".join("'%s' using %d:%d:%d:xtic(1) title '%s'" % (dat, 3 * i + 3, 3 * i + 3, 3 * i + 4, lib)
                        for i, lib in enumerate(libs))
        common = ["set style data histograms", "set style fill solid 0.85 border -1", "set boxwidth 0.9",
                  "set logscale y", "set format y '%.0f'", "set grid ytics", "set datafile missing 'NaN'",
                  "set lmargin 10", "set rmargin 24",
                  "set xrange [-0.6:%.1f]" % (len(labels) - 0.4)]
        script = "\n".join([
            "set terminal %s size 1400,1300" % term,
            "set output '%s'" % png,
            "set multiplot layout 2,1",
            ] + common + [
            "set style histogram clustered gap 1",
            "set title 'zkrecipes lock benchmarks: operations per second (median, log scale)'",
            "set key outside top center horizontal", "unset xtics",
            "set tmargin 4", "set bmargin 1", "set ylabel 'ops/s'", "set yrange [1:*]",
            "plot " + rate,
            "set title 'latency per operation, µs: bar = p50, whisker = p99 (median over reps, log scale)'",
            "set style histogram errorbars gap 1 lw 1", "unset key",
            "set xtics rotate by -35 scale 0 font ',9'",
            "set tmargin 3", "set bmargin 11", "set ylabel 'µs'", "set yrange [10:*]",
            "plot " + lat,
            "unset multiplot", ""])
        gp = Path(tmp) / "bench.gp"
        gp.write_text(script)
        r = subprocess.run([gnuplot, str(gp)], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            return "plot failed: %s" % (r.stderr.strip()[-500:])
    return None
