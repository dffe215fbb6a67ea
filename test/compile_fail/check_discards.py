#!/usr/bin/env python3
"""api.discard_results: every test/compile_fail/discard_*.cpp drops the result of one call that must be used,
and the compiler must say so for each of them.

    check_discards.py <generated all_discard_snippets.inc> -- <compiler and flags...>

Compiles all the snippets as one translation unit (one compile, instead of one per snippet) with
-Wunused-result as a warning, then requires a warning about an ignored result located in each snippet's file.
Fails, naming them, when a snippet draws no such warning (its [[nodiscard]] was lost) or when the compile
fails for any other reason. api.use_results proves the snippets compile with the result used.
"""
import os
import re
import subprocess
import sys
import tempfile


def main(argv):
    if "--" not in argv or argv.index("--") != 2:
        print("usage: check_discards.py <all_discard_snippets.inc> -- <compiler and flags...>", file=sys.stderr)
        return 2
    inc = argv[1]
    compiler = argv[3:]
    with open(inc) as f:
        snippets = re.findall(r'#include "([^"]+)"', f.read())
    if not snippets:
        print(f"check_discards: no snippet in {inc}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        unit = os.path.join(tmp, "all_discards.cpp")
        with open(unit, "w") as f:
            f.write(f'#include "{inc}"\n')
        run = subprocess.run(compiler + ["-Wno-error=unused-result", "-Wunused-result", unit],
                             capture_output=True, text=True)
    if run.returncode != 0:
        print(run.stderr, file=sys.stderr)
        print("check_discards: the snippets do not compile (api.use_results says whether the snippets or the"
              " harness are wrong)", file=sys.stderr)
        return 1
    warned = set()
    for line in run.stderr.splitlines():
        m = re.match(r"(.+?):\d+:\d+: warning: .*(ignoring return value|nodiscard)", line)
        if m:
            warned.add(os.path.realpath(m.group(1)))
    missing = [s for s in snippets if os.path.realpath(s) not in warned]
    for s in missing:
        print(f"check_discards: {os.path.basename(s)}: its dropped result draws no warning ([[nodiscard]] lost?)")
    print(f"check_discards: {len(snippets) - len(missing)} of {len(snippets)} dropped results warned about")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
