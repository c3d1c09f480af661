# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""tests/kernel/record: boot one kernel N times on one workload and write what
each run printed, with where it came from, so that a number quoted in a README
can be traced to the run that produced it (tests/kernel/runs/).

Usage: record (--kind KIND | --series-rev REV) --workload W [--runs N]
              [--wargs "ARGS"] [--append "CMDLINE"] [--boot "OPTIONS"] [--keys REGEX]
              [--out FILE]
  --kind K          a kernel of ktool/kernels.py built from this tree: pristine,
                    batched (lib/kernel/batched: the migration workloads' baseline),
                    luf, or one carrying the harness (its series hash is the
                    harness series': the patches, then the harness): mutant
                    (pass --append luf.mutant=NAME), debug (KASAN, lockdep,
                    DEBUG_VM) or kcsan, which boot on microvm (boot --machine)
  --series-rev REV  the luf kernel of another revision's series (its
                    lib/kernel/patches at REV, this tree's configs): how the
                    series behaved before a change ("seen failing")
  --workload W      as boot --workload; --wargs/--append go to boot as they are
  --boot OPTIONS    more of boot's options, split as the shell would (e.g. "--mem
                    160M --disk-mb 128 --passes 1 --timeout 1500"); not
                    --kernel, --workload, --wargs or --append, which record sets
  --runs N          default 3
  --keys REGEX      result keys to keep, a Python regular expression searched in
                    each line boot prints (default: status, fail_reason,
                    kernel_problems, nr_luf_deferred and every workload.* key)
  --out FILE        default: standard output
The header names the date, this tree's commit (and whether it had local
changes), the series' hash (sha256 of the series file and its patches, in
order), the kernel's build key, QEMU's version and the boot command.
Exit: 0 recorded (whatever the runs' status), 1 a kernel would not build or a
boot printed no status (it never booted: nothing is written), 2 usage.
"""
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

from . import boot, cli, compare, kernels

# boot's options that record sets itself (--boot may not).
OWN = ("--kernel", "--workload", "--wargs", "--append", "--check-console")
RECORDED = ("pristine", "batched", "luf", "mutant", "debug", "kcsan")
KEYS = r"^(status|fail_reason|kernel_problems|nr_luf_deferred|workload\.[A-Za-z0-9_]+)="


def run_line(i, out, keys):
    """Run @i's line: the lines of boot's output @out that the regular expression
    @keys finds, without "workload.", joined by spaces."""
    return "run %d: %s" % (i, " ".join(re.sub(r"^workload\.", "", l)
                                       for l in compare.lines(out) if re.search(keys, l)))


def rev_series(rev, sdir):
    """Write the series of revision @rev (lib/kernel/patches/series and its
    patches) to the directory @sdir (the batched patches it names as ../batched/
    to @sdir/../batched); the short commit. Raises Usage if @rev
    names no commit, Fail if git cannot show a file."""
    p = cli.run(["git", "-C", cli.REPO, "rev-parse", "--short", rev + "^{commit}"],
                stdout=subprocess.PIPE)
    if p.returncode:
        raise cli.Usage("record: --series-rev %s names no commit" % rev)
    commit = p.stdout.strip()
    os.mkdir(sdir)
    series = cli.output(["git", "-C", cli.REPO, "show", commit + ":lib/kernel/patches/series"])
    for name in ["series"] + [w for l in series.splitlines() if not l.startswith("#")
                              for w in l.split()]:
        # A patch of lib/kernel/batched (../batched/NAME) goes beside @sdir, as there.
        path = os.path.normpath(os.path.join("lib/kernel/patches", name))
        dest = os.path.normpath(os.path.join(sdir, name))
        if not re.fullmatch(r"(\.\./batched/)?[\w.-]+", name) or name.startswith("."):
            raise cli.Fail("%s's series names %s: neither a patch beside it nor one of "
                           "../batched/" % (commit, name))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        with open(dest, "wb") as f:
            if cli.run(["git", "-C", cli.REPO, "show", "%s:%s" % (commit, path)],
                       stdout=f).returncode:
                raise cli.Fail("no %s in %s" % (path, commit))
    return commit


def main(argv):
    opts = cli.pairs(argv, "record", ("--kind", "--series-rev", "--workload", "--runs",
                                      "--wargs", "--append", "--boot", "--keys", "--out"),
                     maybe_empty=("--wargs", "--append", "--boot"))
    o = dict(opts)
    kind, rev, workload = o.get("--kind"), o.get("--series-rev"), o.get("--workload")
    bargs = [x for kv in opts if kv[0] in ("--wargs", "--append") for x in kv]
    try:
        more = shlex.split(o.get("--boot", ""))
    except ValueError as e:
        raise cli.Usage("record: --boot: %s" % e) from e
    own = [a for a in more if a.split("=")[0] in OWN]
    if own:
        raise cli.Usage("record: --boot may not set %s: record's own options do" % own[0])
    bargs += more
    if not workload:
        raise cli.Usage("record: --workload is required")
    if workload not in boot.WORKLOADS:
        raise cli.Usage("record: unknown workload '%s' (%s)" % (workload, " ".join(boot.WORKLOADS)))
    if bool(kind) == bool(rev):
        raise cli.Usage("record: give one of --kind and --series-rev")
    if kind not in (None,) + RECORDED:
        raise cli.Usage("record: --kind is one of %s, not '%s'" % (", ".join(RECORDED), kind))
    runs, keys = o.get("--runs", "3"), o.get("--keys", KEYS)
    if not re.fullmatch("[1-9][0-9]*", runs):
        raise cli.Usage("record: --runs wants a whole number of runs, 1 or more, not '%s'" % runs)
    runs = int(runs)
    dest = o.get("--out")
    if dest and (os.path.isdir(dest) or not os.access(os.path.dirname(dest) or ".", os.W_OK)):
        raise cli.Usage("record: --out %s: not a file in a writable directory" % dest)
    try:
        re.compile(keys)
    except re.error as e:
        raise cli.Usage("record: --keys: %s" % e) from e

    # boot's own checks of its arguments before any build (a cold one takes minutes):
    # an empty file stands for the kernel; the sanitizer kernels boot on microvm.
    with tempfile.NamedTemporaryFile(prefix="luf-record.") as k:
        machine = ["--machine", "microvm"] if kind in ("debug", "kcsan") else []
        boot.options(["--kernel", k.name, "--workload", workload] + machine + bargs)

    with tempfile.TemporaryDirectory(prefix="luf-record.") as work:
        if rev:
            sdir = os.path.join(work, "series")
            commit = rev_series(rev, sdir)
            # The luf kernel's kbuild arguments, its name and series replaced
            # (kbuild takes the last of each).
            img = kernels.build("luf", "--name", "luf-" + commit, "--series",
                                os.path.join(sdir, "series"), "--incremental-from", "luf")
            what = "the luf kernel of revision %s's series" % commit
        else:
            sdir = os.path.dirname({"luf": cli.SERIES, "batched": kernels.BATCHED}.get(
                kind, kernels.HARNESS))
            img = kernels.build(kind)
            what = "the %s kernel" % kind
        series = "none (pristine)" if kind == "pristine" else kernels.series_hash(sdir) + (
            " (lib/kernel/patches of %s)" % commit if rev else "")
        out = ["# tests/kernel/record: %s, workload %s, %d run%s" % (what, workload, runs,
                                                                   "s" if runs > 1 else ""),
               "# date: " + time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()),
               "# tree: " + kernels.tree_rev(), "# series: " + series,
               "# kernel: build key " + compare.build_key(img),
               "# qemu: " + compare.qemu_version(),
               "# boot: --workload %s %s" % (workload, shlex.join(bargs))]
    for i in range(1, runs + 1):
        p = cli.run([os.path.join(cli.KDIR, "boot"), "--kernel", img, "--workload", workload] +
                    bargs, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        # boot's usage errors (an unknown workload, a bad option) are this call's.
        if p.returncode == 2:
            sys.stderr.write(p.stdout)
            return 2
        # A boot that printed no status never booted (a workload the machine
        # cannot run, a missing tool): nothing to record.
        if not re.search(r"^status=", p.stdout, re.M):
            sys.stderr.write(p.stdout)
            raise cli.Fail("run %d did not boot (no status): nothing recorded" % i)
        out.append(run_line(i, p.stdout, keys))
    text = "".join(l + "\n" for l in out)
    if not dest:
        sys.stdout.write(text)
        return 0
    try:
        with open(dest, "w") as f:
            f.write(text)
    except OSError as e:
        raise cli.Fail(str(e)) from e
    return 0


if __name__ == "__main__":
    cli.entry(main, "record", __doc__, term=True)
