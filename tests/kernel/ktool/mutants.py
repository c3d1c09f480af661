# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""python3 -m ktool.mutants: each rule of ktool that ktool.selftest does not switch
off by itself (the scan's patterns it does), switched off in a scratch copy of the
package, must make ktool.selftest fail (ctest's kernel.selftest_mutants).

Exit: 0 every mutant caught, 1 one was not (or a mutant no longer applies: the code
it edits changed), 77 skipped (ktool.selftest skips on this machine).
"""
import os
import shutil
import subprocess
import sys
import tempfile

from . import ktap

HERE = os.path.dirname(os.path.abspath(__file__))
SERIES_DIR = os.path.join(HERE, "..", "..", "..", "lib", "kernel", "patches")

# (file, the rule's code, the same with the rule switched off, name)
MUTANTS = [
    ("scan.py", '_TITLE = re.compile(_PREFIX + r"BUG: KCSAN: (.*)")',
     '_TITLE = re.compile(r".*BUG: KCSAN: (.*)")', "text before a KCSAN title"),
    ("scan.py", 'if "printk messages dropped" in b:', "if False:", "printk dropped lines"),
    ("scan.py", "readable and closed and", "readable and", "closing line"),
    ("scan.py", "stacks == accesses == len(named)", "True", "a stack per access"),
    ("scan.py", "for f in frames + list(tops))", "for f in list(tops))", "a luf frame"),
    ("scan.py", 'interrupted = f.group(1).startswith("asm_")', "interrupted = False",
     "interrupted frames"),
    ("scan.py", "if tops and tops <= OSQ_FUNCTIONS:", "if False:", "spin-queue races"),
    ("scan.py", " or bool(changed))", ")", "a changed function"),
    ("scan.py", "touched |= inlined_into(changed, tree)", "pass", "inlined functions"),
    ("scan.py", 'if op in ("replace", "insert"):', 'if op == "insert":', "replaced lines"),
    ("scan.py", 'elif op == "delete":', "elif False:", "deleted lines"),
    ("scan.py", '"luf" in name.lower() or self.changed', "self.changed", "a luf inline frame"),
    ("scan.py", "for name, rel, line in chain:", "for name, rel, line in chain[:1]:",
     "outer inline frames"),
    ("scan.py", "for k, f in enumerate(s):", "for k, f in enumerate(s[:1]):", "calling frames"),
    ("scan.py", "if k == 0 and self.body_changed(*chain[0]):", "if False:",
     "the accessing function's body"),
    ("scan.py", "len(access_stacks) == 2 and", "", "unknown origin with line tables"),
    ("scan.py", "rel = other.group(1)", "rel = rel", "incremental builds' paths"),
    ("scan.py", "lines.upstream(access_stacks):", "False:", "upstream lines"),
    ("verdict.py", "access_lines=scan.AccessLines.of_kernel(a.kernel))", "access_lines=None)",
     "the kernel's line tables"),
    ("scan.py", 'r"data-race in (\\S+)', 'r"(?:data-race|assert: race) in (\\S+)', "assert reports"),
    ("scan.py", "(?:race at unknown origin, with )?", "", "races at unknown origin"),
    ("scan.py", "return (touched is None or not readable or", "return (not readable or",
     "an unreadable series"),
    ("scan.py", '_PREFIX = r"^(?:\\[[^]]*\\]\\s*)?"', '_PREFIX = r"^"', "printk time prefix"),
    ("verdict.py", 'fails.append("kernel problem on the console")', "pass", "kernel reports"),
    ("verdict.py", 'fails.append("timeout after %s s" % a.timeout)', "pass", "QEMU timeout"),
    ("verdict.py", "if not channel.done and", "if False and", "guest not finished"),
    ("verdict.py", 'fails.append("workload exit status %d" % channel.rc)', "pass",
     "workload exit status"),
    ("verdict.py", "fails.append(kunit_why)", "pass", "KUnit"),
    ("results.py", 'fails.append("no %s row in /proc/interrupts" % tag)', "pass",
     "/proc/interrupts row"),
    ("results.py",
     'fails.append("no %s in /proc/vmstat (CONFIG_DEBUG_TLBFLUSH?)" % ",".join(missing))', "pass",
     "/proc/vmstat counters"),
    ("results.py", 'fails.append("incomplete counter snapshots")', "pass", "counter snapshots"),
]


def selftest(kernel_dir, kunit_py):
    """Run ktool.selftest from @kernel_dir (a tests/kernel) with the kunit.py @kunit_py:
    (exit status, failed tests)."""
    env = dict(os.environ, PYTHONPATH=kernel_dir, PYTHONDONTWRITEBYTECODE="1",
               LUF_KUNIT_PY=kunit_py or "")
    p = subprocess.run([sys.executable, "-m", "ktool.selftest"], cwd=kernel_dir, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    failed = [l.split()[1] for l in p.stdout.splitlines() if l.startswith(("FAIL: ", "ERROR: "))]
    return p.returncode, failed


def main():
    with tempfile.TemporaryDirectory(prefix="luf-ktool-mutants.") as scratch:
        kdir = os.path.join(scratch, "tests", "kernel")
        os.makedirs(kdir)
        shutil.copytree(HERE, os.path.join(kdir, "ktool"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(os.path.join(HERE, "..", "fixtures"), os.path.join(kdir, "fixtures"))
        # The series, and the batched migration flush it starts with (../batched/).
        for d in ("patches", "batched"):
            shutil.copytree(os.path.join(SERIES_DIR, "..", d),
                            os.path.join(scratch, "lib", "kernel", d))
        # One kunit.py for every run (unpacking it from the tarball takes a while).
        kunit_py = ktap.find_or_unpack(scratch)
        rc, failed = selftest(kdir, kunit_py)
        if rc == 77:
            print("ktool.mutants: SKIP: ktool.selftest skips here (no kunit.py)")
            return 77
        if rc != 0:
            print("ktool.mutants: FAIL: ktool.selftest fails unmutated: %s" % " ".join(failed))
            return 1
        bad = 0
        for f, rule, off, name in MUTANTS:
            path = os.path.join(kdir, "ktool", f)
            with open(path) as fh:
                orig = fh.read()
            if orig.count(rule) != 1:
                print("ktool.mutants: FAIL %-26s no longer applies (%s)" % (name, f))
                bad += 1
                continue
            with open(path, "w") as fh:
                fh.write(orig.replace(rule, off))
            rc, failed = selftest(kdir, kunit_py)
            with open(path, "w") as fh:
                fh.write(orig)
            if rc == 0:
                print("ktool.mutants: FAIL %-26s switched off, every test still passes" % name)
                bad += 1
            else:
                print("ktool.mutants: ok   %-26s caught by %s" % (name, ", ".join(failed)))
        print("mutants caught: %d/%d" % (len(MUTANTS) - bad, len(MUTANTS)))
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
