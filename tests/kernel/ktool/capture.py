# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""tests/kernel/capture: the pristine kernel's own events under the workloads of
tests/kernel/compare --short, for luf-replay (issue 18): the "trace" kernel of
ktool/kernels.py (pristine + config/trace.config) boots under QEMU (TCG, -smp 4)
with tracefs's trace_pipe streamed out of the guest (tests/kernel/boot --trace),
one boot per workload. The guest gets 64 MiB more RAM than compare's 256M: the
ring buffers (16 MiB per CPU) take it, so the page cache left to reclaim is about
the same.

Usage: capture [--workloads LIST] [--runs N] [--out DIR]
  --workloads LIST  comma-separated, of reclaim, mixed, checker (default: all three)
  --runs N          traced boots per workload (default 3): the first one's trace is
                    kept, every boot's measured "TLB shootdowns" (one traced boot
                    varies by about 20% from the next)
  --out DIR         where <workload>.trace.gz, <workload>.json (the kept boot's
                    results) and <workload>.boots (each boot's TLB shootdowns, one
                    per line) go (default: bench/traces/kernel)
A boot counts only if the ring buffer lost nothing (trace_lost=0 in its results).
Exit: 0, 1 a boot failed or lost events, 2 usage, 77 no kernel tools.
"""
import os
import re
import shutil
import tempfile

from . import cli, compare, kernels


def values(out, key):
    """The values of the lines "@key=VALUE" of boot's output @out."""
    return [l[len(key) + 1:] for l in compare.lines(out) if l.startswith(key + "=")]


def anonymous(results):
    """boot's JSON @results (text) without this machine's cache path: the image's
    path becomes its build key."""
    return re.sub(r'"kernel": "[^"]*/builds/([0-9a-f]+)/bzImage"',
                  r'"kernel": "trace kernel \1 (tests/kernel/ktool/kernels.py trace)"', results)


def capture(w, runs, img, tmp, out):
    """@runs traced boots of @img on workload @w in the directory @tmp; the first
    good one's trace and results, and every good boot's shootdowns, go to @out.
    1 if a boot failed or lost events, else 0."""
    boots, kept, fail = [], False, 0
    for r in range(1, runs + 1):
        stem = os.path.join(tmp, "%s.%d" % (w, r))
        with open(stem + ".txt", "w") as f:
            rc = cli.run([os.path.join(cli.KDIR, "boot"), "--kernel", img, "--workload", w] +
                         compare.workload_args(w, True) +
                         ["--mem", "320M", "--trace", stem + ".trace.gz", "--json", stem + ".json"],
                         stdout=f).returncode
        if rc:
            cli.say("capture", "%s: boot %d failed (%s.txt)" % (w, r, stem))
            fail = 1
            continue
        txt = compare.read(stem + ".txt")
        lost = "\n".join(values(txt, "trace_lost"))
        if lost != "0":
            cli.say("capture", "%s: boot %d: the ring buffer lost %s events" % (w, r, lost or "?"))
            fail = 1
            continue
        boots += values(txt, "tlb_shootdowns")
        if kept:
            continue
        with open(stem + ".json") as f, open(os.path.join(tmp, w + ".json"), "w") as g:
            g.write(anonymous(f.read()))
        os.rename(stem + ".trace.gz", os.path.join(tmp, w + ".trace.gz"))
        kept = True
    if kept:
        with open(os.path.join(tmp, w + ".boots"), "w") as f:
            f.write("".join(b + "\n" for b in boots))
        for name in (w + ".trace.gz", w + ".json", w + ".boots"):
            shutil.move(os.path.join(tmp, name), os.path.join(out, name))
        trace = os.path.join(out, w + ".trace.gz")
        print("capture: %s: %s (%d KiB); TLB shootdowns measured: %s" %
              (w, trace, (os.stat(trace).st_blocks + 1) // 2, "".join(b + " " for b in boots)),
              flush=True)
    return fail


def main(argv):
    o = dict(cli.pairs(argv, "capture", ("--workloads", "--out", "--runs")))
    workloads = compare.words(o.get("--workloads", "reclaim,mixed,checker"))
    for w in workloads:
        if w not in ("reclaim", "mixed", "checker"):
            compare.invalid("capture: unknown workload '%s'" % w)
    runs = compare.runs_arg("capture", o.get("--runs", "3"))
    if not shutil.which("qemu-system-x86_64"):
        cli.say("capture", "no qemu-system-x86_64 (scripts/deps.sh kernel)")
        return 77
    if not os.access(cli.TARBALL, os.R_OK) and not os.environ.get("LUF_KERNEL_TARBALL"):
        cli.say("capture", "no linux-source-6.1 (scripts/deps.sh kernel)")
        return 77
    img = kernels.build("trace")
    out = o.get("--out", os.path.join(cli.REPO, "bench", "traces", "kernel"))
    os.makedirs(out, exist_ok=True)
    fail = 0
    for w in workloads:
        with tempfile.TemporaryDirectory() as tmp:
            fail |= capture(w, runs, img, tmp, out)
    return fail


if __name__ == "__main__":
    cli.entry(main, "capture", __doc__, term=True)
