# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""The kernels ci, compare, record and capture build, and where a recorded run
came from.

Every kind starts from the same config (tinyconfig + base.config +
kunit.config), so the pristine kernel is the patched one without the series:
  pristine  no patches
  batched   lib/kernel/batched: migration's TLB flush batched, as mainline since 6.4
            (the baseline of the migration workloads)
  luf       lib/kernel/patches + luf.config (luf's KUnit suite, CONFIG_LUF_RECLAIM)
  mutant    luf + luf-debug.config + the test harness (tests/kernel/harness):
            boot it with luf.mutant=NAME to switch one of luf's rules off, the
            core's or the memory manager's (one build serves them all; LUF_DEBUG
            for the rule only its checks can see, DEFER_DIRTY)
  debug     mutant + debug.config (KASAN, lockdep, DEBUG_VM, ...): the harness
            changes no behaviour unless luf.mutant=NAME is given, and lets the
            sanitizer steps show their scan can fail (BAD_ACCESS) without a
            second build
  kcsan     debug with KCSAN instead of KASAN (kcsan.config; BAD_RACE)
  trace     pristine + trace.config (tracepoints and kprobe events: capture)
"""
import hashlib
import os
import subprocess

from . import cli

CFG = os.path.join(cli.KDIR, "config")
HARNESS = os.path.join(cli.KDIR, "harness", "series")
BATCHED = os.path.join(cli.REPO, "lib", "kernel", "batched", "series")
KINDS = ("pristine", "batched", "luf", "mutant", "debug", "kcsan", "trace")
KEEP = "24"  # every kernel of ci and compare stays cached


def kbuild_args(kind):
    """The kbuild arguments of @kind (one of KINDS), the common fragments first."""
    def frag(*names):
        return [a for n in names for a in ("--fragment", os.path.join(CFG, n + ".config"))]

    common = frag("base", "kunit")
    if kind == "pristine":
        return common + ["--name", "pristine"]
    if kind == "batched":
        return common + ["--name", "batched", "--series", BATCHED]
    if kind == "trace":
        return common + ["--name", "trace"] + frag("trace")
    if kind == "luf":
        return common + ["--name", "luf", "--series", cli.SERIES] + frag("luf")
    if kind == "mutant":
        return common + ["--name", "mutant", "--series", HARNESS] + \
            frag("luf", "luf-debug") + ["--incremental-from", "luf"]
    if kind in ("debug", "kcsan"):
        return common + ["--name", kind, "--series", HARNESS] + \
            frag("luf", "luf-debug", "debug") + (frag("kcsan") if kind == "kcsan" else [])
    raise cli.Usage("unknown kernel kind '%s' (%s)" % (kind, " ".join(KINDS)))


def build(kind, *extra):
    """Build @kind (or find it in the cache) with kbuild and the extra kbuild
    arguments @extra; its bzImage's path. Progress goes to stderr; raises Fail
    if the kernel does not build."""
    env = dict(os.environ)
    env.setdefault("LUF_KERNEL_KEEP", KEEP)
    p = subprocess.run([os.path.join(cli.KDIR, "kbuild")] + kbuild_args(kind) + list(extra),
                       stdout=subprocess.PIPE, text=True, env=env, check=False)
    lines = p.stdout.splitlines()
    if p.returncode or not lines:
        raise cli.Fail("the %s kernel did not build (kbuild exit %d)" % (kind, p.returncode))
    return lines[-1]


def series_hash(sdir):
    """The hash of the series file in @sdir and its patches, in order: the
    "series" of a recorded run (record, compare's JSON); 16 hex digits."""
    h = hashlib.sha256()
    with open(os.path.join(sdir, "series"), "rb") as f:
        text = f.read()
    h.update(text)
    for line in text.decode().splitlines():
        if line.startswith("#"):
            continue
        for word in line.split():
            with open(os.path.join(sdir, word), "rb") as f:
                h.update(f.read())
    return h.hexdigest()[:16]


def kernel_side_hash():
    """The hash (16 hex digits) of what a kernel comparison's boots run besides the
    kernels: lib/kernel and tests/kernel (the guest programs, boot, the verdict) as
    committed, but the recorded runs and Markdown; None if the working tree differs
    from the commit there (tree_rev() says "with local changes")."""
    if tree_rev().endswith(" (with local changes)"):
        return None
    out = cli.output(["git", "-C", cli.REPO, "ls-tree", "-r", "HEAD", "lib/kernel",
                      "tests/kernel"])
    keep = [l for l in out.splitlines() if not l.endswith(".md") and
            "\ttests/kernel/runs/" not in l]
    return hashlib.sha256("\n".join(keep).encode()).hexdigest()[:16]


def tree_rev():
    """This tree's commit, with " (with local changes)" if lib/kernel or
    tests/kernel (but the recorded runs in tests/kernel/runs and Markdown)
    differ from it."""
    rev = cli.output(["git", "-C", cli.REPO, "rev-parse", "--short", "HEAD"]).strip()
    dirty = cli.run(["git", "-C", cli.REPO, "diff", "--quiet", "HEAD", "--", "lib/kernel",
                     "tests/kernel", ":!tests/kernel/runs", ":!*.md"]).returncode
    return rev + (" (with local changes)" if dirty else "")
