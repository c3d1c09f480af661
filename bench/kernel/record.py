#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""bench/kernel/record.py - record every kernel comparison of bench/ again, resumably.

After a change to the series (lib/kernel/patches), every JSON of bench/kernel
must be recorded again on it (notes.py --check fails until then). This runs the
command each bench/kernel/COMMAND* file holds (short, hot paths, sweep, full,
ext4, swap, migration: about two hours and forty minutes of boots on an idle
2-core machine: the issues' least run counts, the ext4 comparison in its short
form; of that, the migration phase about twenty minutes: 3 runs of 3 kernels
on 2 workloads, migrate's boots ~100 s on the pristine kernel and ~20 s on
the others, 3 x 140 s, and tier's nine boots 60-90 s each; a cold kbuild
cache adds the kernels' builds, the batched one's among them), each with
"--work DIR/SERIES/NAME" (tests/kernel/compare --work): run again after it was
killed, it boots only what has no passed results yet. Then it writes
NOTES.md, the README's kernel paragraph and section 4 of bench/RESULTS.md from
the new JSON (notes.py, ONLY=kernel bench/run) and checks them (notes.py
--check). Keep the machine idle meanwhile: the runtimes are compared.

Usage: record.py [--only LIST] [--work DIR] [--dry-run]
  --only LIST  comma-separated, of short, hotpath, sweep, full, ext4, swap,
               migration (default: all, in that order); the docs are written only
               after all seven
  --work DIR   where the boots' output stays (default
               ${XDG_CACHE_HOME:-~/.cache}/luf/record); SERIES is the series'
               hash, so a changed series starts afresh. The same series with
               other kernels (a config or compiler change), or other guest
               programs, is refused (compare exits 2 and says what differs):
               remove DIR/SERIES, or DIR/SERIES/NAME, to start that afresh
  --dry-run    print the commands, run nothing
Exit: 0 recorded and the docs up to date, 1 a comparison or the check failed,
2 usage.
"""
import argparse
import os
import shlex
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "kernel"))
from ktool import kernels  # noqa: E402  (the series' hash compare records)

# name -> the file holding its command, in the order they run.
PHASES = (("short", "COMMAND"), ("hotpath", "COMMAND-hotpath"), ("sweep", "COMMAND-sweep"),
          ("full", "COMMAND-full"), ("ext4", "COMMAND-ext4"), ("swap", "COMMAND-swap"),
          ("migration", "COMMAND-migration"))


def commands(names, work):
    """[(name, argv)] of the phases @names, each with its --work under @work."""
    series = kernels.series_hash(os.path.join(ROOT, "lib", "kernel", "patches"))
    out = []
    for name, fname in PHASES:
        if name in names:
            with open(os.path.join(HERE, fname), encoding="utf-8") as f:
                argv = shlex.split(f.read().strip())
            out.append((name, argv + ["--work", os.path.join(work, series, name)]))
    return out


def main():
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(n for n, _ in PHASES))
    ap.add_argument("--work", default=os.path.join(xdg, "luf", "record"))
    ap.add_argument("--dry-run", action="store_true")
    a = ap.parse_args()
    names = a.only.replace(",", " ").split()
    unknown = [n for n in names if n not in dict(PHASES)]
    if unknown or not names:
        ap.error("--only takes %s; got %s" % (", ".join(n for n, _ in PHASES), a.only or "nothing"))
    steps = commands(names, os.path.abspath(a.work))
    if len(names) == len(PHASES):
        steps += [("notes", [sys.executable, "bench/kernel/notes.py"]),
                  ("results", ["env", "ONLY=kernel", "bash", "bench/run"]),
                  ("check", [sys.executable, "bench/kernel/notes.py", "--check"])]
    for name, argv in steps:
        if a.dry_run:
            print(shlex.join(argv))
            continue
        print("record: %s: %s" % (name, shlex.join(argv)), file=sys.stderr, flush=True)
        rc = subprocess.run(argv, cwd=ROOT, check=False).returncode
        if rc:
            print("record: FAIL: %s exited %d" % (name, rc), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
