# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""python3 -m ktool.selftest: the rules that decide a boot's pass or fail can fail
(ctest's kernel.selftest; no kernel, no QEMU).

A real console (fixtures/kunit-console.txt: the kunit.config kernel booted by boot
--kunit, 57 KUnit cases passing) passes; the same console with one kernel report
appended fails, for every kind the scan looks for, and each pattern of
scan.PROBLEM_RULES is the one that catches its report. A KCSAN data race outside
luf's code and the code the series changes passes, listed; one in it, or one the
scan cannot read whole, fails. The results channel's counters are derived as
boot documents them, and a missing piece fails. With the kernel's kunit.py (from
$LUF_KUNIT_PY, the kbuild cache, or unpacked from /usr/src/linux-source-6.1.tar.xz),
one case turned into "not ok", a suite cut short (a crash) or no KTAP at all fails.

Exit: 0 pass, 1 fail, 77 skipped (no kunit.py can be found: the other tests ran).
"""
import argparse
import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from . import ktap, results, scan, verdict

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIXTURE = os.path.join(HERE, "fixtures", "kunit-console.txt")
KSWAPD = os.path.join(HERE, "fixtures", "kcsan-kswapd.txt")
SERIES = os.path.join(HERE, "..", "..", "lib", "kernel", "patches", "series")


def lines(path):
    with open(path, errors="replace") as f:
        return f.read().replace("\r", "").splitlines()


CLEAN = lines(FIXTURE)
TOUCHED = scan.touched_functions(SERIES)

# One report per pattern of scan.PROBLEM_RULES, as Linux 6.1 prints its first line,
# holding no other pattern.
REPORTS = {
    r"Oops": "Oops: 0000 [#1] PREEMPT SMP NOPTI",
    r"BUG:": "BUG: Bad page state in process reclaim  pfn:0a1b2",
    r"WARNING:": "WARNING: CPU: 2 PID: 51 at mm/vmscan.c:1949 shrink_folio_list+0x6d/0xd40",
    r"------------\[ cut here \]": "------------[ cut here ]------------",
    r"Call Trace:": "Call Trace:",
    r"KASAN": "KASAN: null-ptr-deref in range [0x0000000000000008-0x000000000000000f]",
    r"UBSAN": "UBSAN: shift-out-of-bounds in lib/luf/luf.c:42:9",
    r"DEBUG_LOCKS_WARN_ON": "DEBUG_LOCKS_WARN_ON(1)",
    r"lockdep is turned off": "INFO: lockdep is turned off.",
    r"Kernel panic": "Kernel panic - not syncing: Fatal exception",
    r"general protection fault": "general protection fault, probably for non-canonical "
                                 "address 0xdead000000000100: 0000 [#1] PREEMPT SMP NOPTI",
    r"hard LOCKUP": "Watchdog detected hard LOCKUP on cpu 1",
    r"detected (?:expedited )?stalls?": "rcu: INFO: rcu_preempt detected expedited stalls on "
                                        "CPUs/tasks: { P73 } 21 jiffies s: 105 root: 0x0/T",
    r"blocked for more than": "INFO: task kswapd0:50 blocked for more than 120 seconds.",
    r"list_(add|del) corruption": "list_add corruption. prev->next should be next "
                                  "(ffff888003f1c0f8), but was 0000000000000000.",
    r"Out of memory": "Out of memory: Killed process 91 (checker) total-vm:1234kB",
    r"page allocation failure": "reclaim: page allocation failure: order:0, mode:0x1140cca",
    r"segfault at": "reclaim[91]: segfault at 8 ip 0000000000401a2b sp 00007ffc error 4",
    r"invalid opcode": "invalid opcode: 0000 [#1] PREEMPT SMP NOPTI",
    r"kernel BUG": "kernel BUG at mm/luf.c:512!",
    r"\bluf: .+ at \S+\.[ch]:\d+": "luf: folio allocated while its pending set is not done: "
                                   "00000000c0ffee00 at mm/luf.c:512",
    r"lazy unmap flush stays off": "luf: set-up failed (-12): lazy unmap flush stays off",
}
# Reports whose first line holds more than one pattern (selftest's list before ktool),
# and other forms of one rule's report.
MORE_REPORTS = [
    "BUG: KASAN: use-after-free in luf_alloc+0x1e/0x90",
    "BUG: KCSAN: data-race in luf_batch_fold / luf_mark_done",
    "WARNING: possible circular locking dependency detected",
    "WARNING: possible recursive locking detected",
    "WARNING: inconsistent lock state",
    "BUG: sleeping function called from invalid context at mm/page_alloc.c:5199",
    "BUG: kernel NULL pointer dereference, address: 0000000000000008",
    "BUG: unable to handle page fault for address: ffffed1000000000",
    "Oops: 0000 [#1] PREEMPT SMP KASAN",
    "general protection fault, probably for non-canonical address 0xdffffc0000000001: 0000 [#1]",
    "watchdog: BUG: soft lockup - CPU#1 stuck for 26s! [checker:91]",
    "rcu: INFO: rcu_sched self-detected stall on CPU",
    "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
    "Kernel panic - not syncing: stack-protector: Kernel stack is corrupted in: luf_drain+0x1/0x2",
]


def kcsan(title, write_top, read_top, deeper="page_cache_async_ra", kind="data-race"):
    """A KCSAN report with the shape of those 6.1.192 gave under the reclaim workload
    (@kind: kernel/kcsan/report.c's bug type)."""
    return ["=" * 66, "BUG: KCSAN: %s in %s" % (kind, title), "",
            "write to 0xffff888000c10338 of 8 bytes by task 138 on cpu 2:",
            " %s+0x3e2/0x50f" % write_top, " %s+0x74/0x7b" % deeper, " filemap_fault+0x22f/0x711",
            " handle_mm_fault+0x119/0x223", " exc_page_fault+0x342/0x4d8", "",
            "read to 0xffff888000c10338 of 8 bytes by task 139 on cpu 3:",
            " %s+0x469/0x50f" % read_top, " page_cache_async_ra+0x74/0x7b",
            " filemap_fault+0x22f/0x711", "",
            "value changed: 0x000000000000c0c0 -> 0x0000000000001970", "",
            "Reported by Kernel Concurrency Sanitizer on:",
            "CPU: 3 PID: 139 Comm: reclaim Tainted: G                 N 6.1.192 #1", "=" * 66]


def unknown_origin(fn):
    """A race at unknown origin (one stack), as kernel/kcsan/report.c prints it."""
    return ["=" * 66, "BUG: KCSAN: data-race in %s+0xe9/0x10b" % fn, "",
            "race at unknown origin, with read to 0xffff88800f3f9d40 of 1 bytes by task 35 on cpu 1:",
            " %s+0xe9/0x10b" % fn, " shrink_node+0x2c1/0x8f0", " kswapd+0x5a1/0x8c0", "",
            "value changed: 0x00 -> 0xff", "", "Reported by Kernel Concurrency Sanitizer on:", "=" * 66]


READAHEAD = kcsan("ondemand_readahead / ondemand_readahead", "ondemand_readahead", "ondemand_readahead")


class ProblemRules(unittest.TestCase):
    def test_clean_console_passes(self):
        self.assertEqual(scan.scan(CLEAN, TOUCHED), ([], []))

    def test_every_rule_has_its_report(self):
        self.assertEqual(set(REPORTS), set(scan.PROBLEM_RULES))

    def test_each_report_fails(self):
        for line in list(REPORTS.values()) + MORE_REPORTS:
            with self.subTest(line=line):
                problems, _ = scan.scan(CLEAN + [line], TOUCHED)
                self.assertEqual(problems, [line])

    def test_each_rule_is_the_one_that_catches_its_report(self):
        for rule, line in REPORTS.items():
            without = [r for r in scan.PROBLEM_RULES if r != rule]
            with self.subTest(rule=rule):
                self.assertEqual(scan.problem_lines(CLEAN + [line], without), [])

    def test_printk_prefix(self):
        line = "[   12.345678] " + REPORTS[r"WARNING:"]
        self.assertEqual(scan.scan(CLEAN + [line], TOUCHED)[0], [line])

    def test_banners_are_not_reports(self):
        for line in ("kasan: KernelAddressSanitizer initialized",
                     "kcsan: non-strict mode configured - use CONFIG_KCSAN_STRICT=y to see all data races",
                     "Kernel command line: console=ttyS0 loglevel=7 panic=-1 oops=panic rdinit=/init"):
            with self.subTest(line=line):
                self.assertEqual(scan.scan(CLEAN + [line], TOUCHED)[0], [])


class Kcsan(unittest.TestCase):
    def listed(self, report, touched=TOUCHED):
        problems, elsewhere = scan.scan(CLEAN + report, touched)
        self.assertEqual(problems, [])
        self.assertEqual(elsewhere, [report[1]])

    def fails(self, report, touched=TOUCHED):
        problems, elsewhere = scan.scan(CLEAN + report, touched)
        self.assertEqual(elsewhere, [])
        self.assertIn(report[1], problems)

    def test_series_is_read(self):
        self.assertIsNotNone(TOUCHED)
        self.assertIn("try_to_unmap_one", TOUCHED)

    def test_readahead_race_is_listed(self):
        self.listed(READAHEAD)

    def test_printk_race_is_listed(self):
        self.listed(kcsan("console_emit_next_record.constprop.0 / vprintk_emit",
                          "vprintk_emit", "console_emit_next_record.constprop.0"))

    def test_luf_frame_below_fails(self):
        self.fails(kcsan("ondemand_readahead / ondemand_readahead", "ondemand_readahead",
                         "ondemand_readahead", deeper="luf_write_fault"))

    def test_interrupted_luf_frame_is_listed(self):
        """A timer interrupt's access whose entry interrupted luf's code: the frames
        under asm_sysvec_* are not the access's (seen: do_timer / jiffies)."""
        r = kcsan("do_timer / mem_cgroup_flush_stats_delayed", "do_timer",
                  "mem_cgroup_flush_stats_delayed", deeper="tick_periodic")
        at = r.index(" filemap_fault+0x22f/0x711")
        r[at:at + 1] = [" asm_sysvec_apic_timer_interrupt+0x16/0x20", " luf_pool_collect+0x127/0x164"]
        self.listed(r)
        r[at] = " sysvec_apic_timer_interrupt+0x57/0x72"  # no entry: luf's frame counts
        self.fails(r)

    def test_spin_queue_race_under_luf_frame_is_listed(self):
        """Both accesses in osq_lock.c: a luf frame under them (a caller of
        mutex_lock()) does not count; the same frame under another race does."""
        r = kcsan("osq_lock / osq_wait_next", "osq_wait_next", "osq_lock",
                  deeper="luf_pool_free")
        self.listed(r)
        self.fails(kcsan("osq_lock / mutex_spin_on_owner", "mutex_spin_on_owner", "osq_lock",
                         deeper="luf_pool_free"))
        self.fails(kcsan("osq_lock / luf_pool_free", "luf_pool_free", "osq_lock"))

    def test_luf_access_fails(self):
        self.fails(kcsan("luf_pcpu_check_done / luf_mark_done", "luf_mark_done", "luf_pcpu_check_done"))

    def test_changed_function_fails(self):
        self.fails(kcsan("try_to_unmap_one / ondemand_readahead", "try_to_unmap_one", "ondemand_readahead"))

    def test_unreadable_series_fails_every_race(self):
        self.fails(READAHEAD, touched=None)

    def test_assert_report_fails(self):
        self.fails(kcsan("ondemand_readahead / ondemand_readahead", "ondemand_readahead",
                         "ondemand_readahead", kind="assert: race"))

    def test_unknown_origin(self):
        self.listed(unknown_origin("zone_page_state_snapshot"))
        self.fails(unknown_origin("luf_vm_events"))

    def test_printk_time_prefix(self):
        self.listed(["[  123.456789] " + l for l in READAHEAD])

    def test_report_run_into_the_next_fails(self):
        """Two reports with no line of ='s between (one lost): the first fails."""
        problems, elsewhere = scan.scan(CLEAN + READAHEAD[:-1] + READAHEAD[1:], TOUCHED)
        self.assertEqual((problems, elsewhere), ([READAHEAD[1]], [READAHEAD[1]]))

    def test_report_without_stacks_fails(self):
        self.fails(["BUG: KCSAN: data-race in ondemand_readahead / ondemand_readahead"] * 2)

    def test_messages_dropped_fails(self):
        r = list(READAHEAD)
        r.insert(next(i for i, l in enumerate(r) if l.startswith("value changed")),
                 "** 7 printk messages dropped **")
        self.fails(r)

    def test_text_before_title_fails(self):
        r = list(READAHEAD)
        r[1] = "WARNING: CPU: 1 PID: 50 at mm/luf.c:512 luf_drain+0x1/0x2 " + r[1]
        problems, elsewhere = scan.scan(CLEAN + r, TOUCHED)
        self.assertEqual((problems, elsewhere), ([r[1]], []))

    def test_unsymbolized_stack_fails(self):
        self.fails([" 0xffffffffc0201234" if l == " ondemand_readahead+0x469/0x50f" else l
                    for l in READAHEAD])

    def test_one_stack_of_two_fails(self):
        self.fails(READAHEAD[:next(i for i, l in enumerate(READAHEAD) if l.startswith("read to"))])

    def test_no_closing_line_fails(self):
        self.fails(READAHEAD[:-1])

    def test_kswapd_inlined(self):
        """6.1 inlines kswapd_try_to_sleep(), which the series changes, into kswapd():
        with the kernel's tree (System.map without the function, its source), the
        caller counts as changed; without the tree it does not."""
        report = lines(KSWAPD)
        self.listed(report)
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "src", "out"))
            os.makedirs(os.path.join(d, "src", "mm"))
            with open(os.path.join(d, "src", "out", "System.map"), "w") as f:
                f.write("ffffffff81234560 T kswapd\nffffffff81234000 T wakeup_kswapd\n")
            with open(os.path.join(d, "src", "mm", "vmscan.c"), "w") as f:
                f.write("static void kswapd_try_to_sleep(pg_data_t *pgdat)\n{\n}\n\n"
                        "static int kswapd(void *p)\n{\n\tkswapd_try_to_sleep(p);\n\treturn 0;\n}\n")
            touched = scan.touched_functions(SERIES, os.path.join(d, "bzImage"))
            self.assertIn("kswapd", touched)
            self.fails(report, touched)


# A kernel in miniature for AccessLines (its changed function named after one the
# series changes, for the verdict), in kbuild's layout: a pristine tree; a
# build's src/ with the unpatched files hard links to it (cp -al) and the patched
# ones new files; compiled from src/out/ with line tables. mm/x.c is patched:
# try_to_unmap_one() calls out once through an upstream inline helper on lines the patch
# left alone and once through it on a line the patch added; caller_fn()'s call of
# it is on a replaced line; a line of del_fn() is deleted, away from its access.
# include/h.h's hdr_read() gains a line; mm/y.c, unpatched, inlines it into
# other_fn() and holds probe() and main().
_X_C = """#include "../include/h.h"

static inline long rss_read(long *p)
{
\treturn probe(p);
}

__attribute__((noinline))
long try_to_unmap_one(long *p)
{
\tlong r = rss_read(p);

\treturn r * 3;
}

long caller_fn(long *p)
{
\treturn try_to_unmap_one(p) + 7;
}

long del_fn(long *p)
{
\tlong v = probe(p);

\tv += 2;
\treturn v;
}
"""
_X_PATCHED = _X_C.replace("\treturn r * 3;", "\tr += rss_read(p) * 5;\n\treturn r * 3;") \
    .replace("try_to_unmap_one(p) + 7", "try_to_unmap_one(p) + 8").replace("\tv += 2;\n", "")
_H = """long probe(long *p);

static inline long hdr_read(long *p)
{
\treturn probe(p);
}
"""
_H_PATCHED = _H.replace("\treturn probe(p);", "\tlong extra = probe(p);\n\n\treturn probe(p) + extra;")
_Y_C = """#include "../include/h.h"

__attribute__((noinline))
long probe(long *p)
{
\treturn *p;
}

__attribute__((noinline))
long other_fn(long *p)
{
\treturn hdr_read(p) * 2;
}

long try_to_unmap_one(long *p);
long caller_fn(long *p);
long del_fn(long *p);

int main(void)
{
\tlong x = 1;

\treturn (int)(try_to_unmap_one(&x) + caller_fn(&x) + del_fn(&x) + other_fn(&x));
}
"""


def _calls(out, fn, target):
    """The return addresses, as offsets into @fn, of @fn's calls of @target in
    @out/vmlinux (each as a stack shows it: the next instruction's address)."""
    nm = subprocess.run(["nm", "vmlinux"], cwd=out, check=True, stdout=subprocess.PIPE,
                        text=True).stdout
    start = int(next(l.split()[0] for l in nm.splitlines() if l.endswith(" " + fn)), 16)
    dis = subprocess.run(["objdump", "-d", "--disassemble=" + fn, "vmlinux"], cwd=out,
                         check=True, stdout=subprocess.PIPE, text=True).stdout.splitlines()
    insns = [l for l in dis if re.match(r"^\s+[0-9a-f]+:\t", l)]
    return [int(insns[k + 1].split(":")[0], 16) - start
            for k, l in enumerate(insns[:-1]) if re.search(r"call.*<%s>" % target, l)]


def _report(*stacks):
    """A KCSAN report with one access per stack (each [(function, offset), ...]);
    one stack: a race at unknown origin."""
    title = " / ".join(s[0][0] for s in stacks)
    r = ["=" * 66, "BUG: KCSAN: data-race in %s" % title, ""]
    kinds = ["write to", "read to"] if len(stacks) == 2 else ["race at unknown origin, with read to"]
    for kind, stack in zip(kinds, stacks):
        r.append("%s 0xffff888000868180 of 8 bytes by task 40 on cpu 1:" % kind)
        r += [" %s+0x%x/0x200" % f for f in stack] + [""]
    return r + ["value changed: 0x00000000000063cc -> 0x000000000000642d", "",
                "Reported by Kernel Concurrency Sanitizer on:", "=" * 66]


@unittest.skipUnless(all(shutil.which(t) for t in ("gcc", "addr2line", "objdump", "nm")),
                     "no gcc or binutils")
class AccessLinesTest(unittest.TestCase):
    """A race in a changed function whose accesses are wholly on lines the patches
    did not change is listed (kcsan kernels have line tables); one an added or
    replaced line, a deletion in the accessing function, or an unresolvable frame
    touches fails, and so does one at unknown origin."""

    @classmethod
    def setUpClass(cls):
        """Build the miniature once; each test gets a copy (cp -a keeps the links)."""
        cls.template = tempfile.mkdtemp(prefix="luf-selftest.")
        cls.at(cls, cls.template)
        for t in (cls.pristine, cls.tree):
            os.makedirs(os.path.join(t, "mm"))
            os.makedirs(os.path.join(t, "include"))
        os.makedirs(cls.out)
        with open(os.path.join(cls.tree, "..", "key"), "w") as f:
            f.write("luf-kbuild recipe 1\nsource sha256 cafe%s\n" % ("0" * 60))
        for rel, old, new in (("mm/x.c", _X_C, _X_PATCHED), ("include/h.h", _H, _H_PATCHED),
                              ("mm/y.c", _Y_C, None)):
            with open(os.path.join(cls.pristine, rel), "w") as f:
                f.write(old)
            if new is None:
                os.link(os.path.join(cls.pristine, rel), os.path.join(cls.tree, rel))
            else:
                with open(os.path.join(cls.tree, rel), "w") as f:
                    f.write(new)
        cls.build(cls)
        calls = _calls(cls.out, "try_to_unmap_one", "probe")
        one = lambda fn, target: (fn, _calls(cls.out, fn, target)[0])  # noqa: E731
        cls.raw_sites = (calls, one("caller_fn", "try_to_unmap_one"), one("del_fn", "probe"),
                         one("other_fn", "probe"), one("main", "try_to_unmap_one"))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.template, ignore_errors=True)

    def at(self, d):
        """Point the paths at the miniature under @d."""
        self.d = d
        self.pristine = os.path.join(d, "src", "cafe" + "0" * 12, "linux-source-6.1")
        self.tree = os.path.join(d, "builds", "beef", "src")
        self.out = os.path.join(self.tree, "out")

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        subprocess.run(["cp", "-a", self.template + "/.", self.tmp.name], check=True)
        self.at(self.tmp.name)
        self.lines = scan.AccessLines.of_kernel(self.bzimage())

    def build(self, cwd=None):
        """Compile the tree (from @cwd, absolute paths, as another build's tree), with
        no sibling calls, as the kernel's KCSAN builds."""
        srcs = ["../mm/x.c", "../mm/y.c"] if cwd is None else \
            [os.path.join(cwd, "mm", "x.c"), os.path.join(cwd, "mm", "y.c")]
        subprocess.run(["gcc", "-g", "-O2", "-fno-optimize-sibling-calls", "-o",
                        os.path.join(self.out, "vmlinux")] + srcs,
                       cwd=cwd or self.out, check=True)
        nm = subprocess.run(["nm", "vmlinux"], cwd=self.out, check=True,
                            stdout=subprocess.PIPE, text=True).stdout
        with open(os.path.join(self.out, "System.map"), "w") as f:
            f.write(nm)

    def bzimage(self):
        return os.path.join(self.tree, "..", "bzImage")

    def tearDown(self):
        self.tmp.cleanup()

    def sites(self):
        """try_to_unmap_one()'s call through rss_read() on unchanged lines, the one on
        the added line; caller_fn()'s call of it; del_fn()'s, other_fn()'s and main()'s
        calls of what they call."""
        calls, caller, dele, other, main = self.raw_sites
        self.assertEqual(len(calls), 2)
        chains = self.lines.chains([("try_to_unmap_one", c) for c in calls])
        up = [c for c in calls if chains[("try_to_unmap_one", c)][1][2] == 11]
        self.assertEqual(len(up), 1, chains)
        added = next(c for c in calls if c != up[0])
        return (("try_to_unmap_one", up[0]), ("try_to_unmap_one", added), caller, dele, other,
                main)

    def test_kernel_tree_found(self):
        self.assertIsNotNone(self.lines)
        self.assertEqual(os.path.realpath(self.lines.pristine), os.path.realpath(self.pristine))
        key = os.path.join(self.tree, "..", "key")
        os.rename(key, key + ".gone")
        self.assertIsNone(scan.AccessLines.of_kernel(self.bzimage()))
        os.rename(key + ".gone", key)
        self.assertIsNotNone(scan.AccessLines.of_kernel(self.bzimage()))
        os.unlink(os.path.join(self.out, "vmlinux"))
        self.assertIsNone(scan.AccessLines.of_kernel(self.bzimage()))

    def test_chains_and_changed_lines(self):
        up, added, caller, dele, other, main = self.sites()
        chains = self.lines.chains([up, added, caller, dele, other, main, ("no_such_fn", 4)])
        self.assertEqual(chains[up], [("rss_read", "mm/x.c", 5), ("try_to_unmap_one", "mm/x.c", 11)])
        self.assertEqual(chains[added], [("rss_read", "mm/x.c", 5), ("try_to_unmap_one", "mm/x.c", 13)])
        self.assertEqual(chains[caller], [("caller_fn", "mm/x.c", 19)])
        self.assertEqual(chains[dele], [("del_fn", "mm/x.c", 24)])
        self.assertEqual(chains[other][0], ("hdr_read", "include/h.h", 5))
        self.assertIsNone(chains[("no_such_fn", 4)])
        # Added (13), replaced (19), next to a deletion (25, 26).
        self.assertEqual([n for n in range(1, 30) if self.lines.changed("mm/x.c", n)],
                         [13, 19, 25, 26])
        self.assertEqual([n for n in range(1, 10) if self.lines.changed("include/h.h", n)], [5, 6, 7])
        self.assertFalse(any(self.lines.changed("mm/y.c", n) for n in range(1, 30)))
        self.assertFalse(self.lines.body_changed("rss_read", "mm/x.c", 5))
        self.assertTrue(self.lines.body_changed("del_fn", "mm/x.c", 24))

    def test_upstream_race_in_changed_function_listed(self):
        up, added, caller, dele, other, main = self.sites()
        touched = {"try_to_unmap_one", "caller_fn", "del_fn"}
        report = _report([up, main], [up, main])
        self.assertEqual(scan.scan(CLEAN + report, touched, access_lines=self.lines),
                         ([], [report[1]]))
        # Without line tables the function alone decides, as before.
        self.assertEqual(scan.scan(CLEAN + report, touched)[0], [report[1]])
        cases = {"an access on the added line's call": ([up, main], [added, main]),
                 "a caller's call on a replaced line": ([up, caller], [up, main]),
                 "a deletion in the accessing function": ([up, main], [dele, main]),
                 "the other access in a changed inline": ([up, main], [other, main]),
                 "an unresolvable frame": ([up, main], [up, ("no_such_fn", 4)]),
                 "a race at unknown origin": ([up, main],)}
        for why, stacks in cases.items():
            with self.subTest(why=why):
                report = _report(*stacks)
                self.assertEqual(scan.scan(CLEAN + report, touched, access_lines=self.lines),
                                 ([report[1]], []))

    def test_changed_sites(self):
        """Where a race must count as the series' (ci kcsan's kswapd fixture)."""
        sites = self.lines.changed_sites("other_fn", "hdr_read")
        self.assertTrue(sites)
        for off in sites:
            chain = self.lines.chains([("other_fn", off)])[("other_fn", off)]
            self.assertEqual(chain[0][:2], ("hdr_read", "include/h.h"))
            self.assertTrue(self.lines.changed(*chain[0][1:]))
        self.assertEqual(self.lines.changed_sites("try_to_unmap_one", "rss_read"), [])

    def test_verdict_uses_line_tables(self):
        up, main = self.sites()[0], self.sites()[5]
        report = _report([up, main], [up, main])
        with tempfile.TemporaryDirectory() as scratch:
            out, fails = run_verdict(scratch, CLEAN + report, channel(), workload="reclaim",
                                     kernel=self.bzimage())
            self.assertEqual((fails, out["kcsan_reports_elsewhere"]), ([], 1))
            _, fails = run_verdict(scratch, CLEAN + report, channel(), workload="reclaim")
            self.assertEqual(fails, ["kernel problem on the console"])

    def test_luf_inline_frame_fails(self):
        """An inline helper named luf on the chain makes the access luf's."""
        up = self.sites()[0]
        for t in (self.pristine, self.tree):
            path = os.path.join(t, "mm", "x.c")
            with open(path) as f:
                text = f.read()
            os.unlink(path)
            with open(path, "w") as f:
                f.write(text.replace("rss_read", "luf_rss_read"))
        self.build()
        lines = scan.AccessLines.of_kernel(self.bzimage())
        self.assertEqual(lines.chains([up])[up][0], ("luf_rss_read", "mm/x.c", 5))
        self.assertFalse(lines.upstream([[up]]))

    def test_incremental_build_paths(self):
        """Objects an incremental build copied name the seed build's tree."""
        seed = os.path.join(self.tmp.name, "builds", "5eed", "src")
        shutil.copytree(self.tree, seed, ignore=shutil.ignore_patterns("out"))
        self.build(cwd=seed)
        up, main = self.sites()[0], self.sites()[5]
        self.assertTrue(self.lines.upstream([[up, main]]))

    def test_unreadable_tree_is_not_upstream(self):
        up, main = self.sites()[0], self.sites()[5]
        self.assertTrue(self.lines.upstream([[up, main]]))
        lines = scan.AccessLines.of_kernel(self.bzimage())
        os.unlink(os.path.join(self.tree, "mm", "x.c"))
        self.assertFalse(lines.upstream([[up, main]]))

def channel(after_tlb="TLB:  10  20  30  40  TLB shootdowns", done=True, rc=0, vm_after=None):
    """A results channel as the guest's init writes it."""
    vm_before = {"nr_tlb_remote_flush": 5, "nr_tlb_remote_flush_received": 15,
                 "nr_tlb_local_flush_all": 1, "nr_tlb_local_flush_one": 2,
                 "pgsteal_kswapd": 100, "pgsteal_direct": 0, "nr_luf_deferred": 0}
    vm_after = vm_after or dict(vm_before, nr_tlb_remote_flush=9, pgsteal_kswapd=900,
                                pgsteal_direct=100, nr_luf_deferred=77)

    def snap(name, up, tlb, vm, stat):
        return (["@@snap %s %s" % (name, up), "@@interrupts",
                 "           CPU0       CPU1       CPU2       CPU3", tlb,
                 "CAL:   1   1   1   1   Function call interrupts", "@@vmstat"] +
                ["%s %d" % kv for kv in vm.items()] +
                ["@@meminfo", "MemTotal:         230000 kB", "@@stat", stat,
                 "@@sysctl", "luf_park_pages 1223", "luf_park_peak 512", "@@endsnap"])
    out = ["@@start", "@@info nproc=4 kernel=6.1.192 memtotal_kb=230000",
           "@@info cmdline=console=ttyS0 luf.idle_ms=0"]
    out += snap("before", "10.00", "TLB:   1   2   3   4   TLB shootdowns", vm_before,
                "cpu 100 0 200 1000 0 0 10 0 0 0")
    out += ["@@workload /bin/reclaim --threads 4 --passes 2", "pages_read=196608",
            "reclaim: pass 1 done"]
    out += snap("after", "172.50", after_tlb, vm_after, "cpu 300 0 900 1100 5 0 30 0 0 0")
    out += ["@@rc %d" % rc] + (["@@done"] if done else [])
    return out


class Results(unittest.TestCase):
    def derive(self, lines):
        ch = results.parse(lines)
        out, fails = {}, []
        results.counters(ch, out, fails)
        return ch, out, fails

    def test_counters(self):
        ch, out, fails = self.derive(channel())
        self.assertEqual(fails, [])
        self.assertEqual(out["tlb_shootdowns"], 90)
        self.assertEqual(out["tlb_shootdowns_per_cpu"], "9,18,27,36")
        self.assertEqual(out["function_call_interrupts"], 0)
        self.assertEqual(out["nr_tlb_remote_flush"], 4)
        self.assertEqual(out["pages_reclaimed"], 900)
        self.assertEqual(out["reclaimed_per_remote_flush"], 225.0)
        self.assertEqual(out["nr_luf_deferred"], 77)
        self.assertEqual(out["nr_luf_deferred.after"], 77)
        self.assertEqual(out["runtime_s"], 162.5)
        self.assertEqual((out["cpu_user_s"], out["cpu_system_s"], out["cpu_idle_s"]), (2.0, 7.0, 1.0))
        self.assertEqual((out["luf_park_pages"], out["luf_park_peak"]), (1223, 512))
        self.assertEqual(ch.workload, {"pages_read": "196608"})
        self.assertEqual(ch.workload_other, ["reclaim: pass 1 done"])
        self.assertEqual(ch.info["cmdline"], "console=ttyS0 luf.idle_ms=0")
        self.assertEqual((ch.rc, ch.done), (0, True))

    def test_missing_tlb_row_fails(self):
        _, _, fails = self.derive(channel(after_tlb="NMI:  0 0 0 0  Non-maskable interrupts"))
        self.assertEqual(fails, ["no TLB row in /proc/interrupts"])

    def test_missing_tlb_counter_fails(self):
        vm = {"pgsteal_kswapd": 1}
        _, _, fails = self.derive(channel(vm_after=vm))
        self.assertEqual(len(fails), 1)
        self.assertIn("CONFIG_DEBUG_TLBFLUSH", fails[0])

    def test_missing_snapshot_fails(self):
        lines = [l for l in channel() if not l.startswith("@@snap after")]
        _, _, fails = self.derive(lines)
        self.assertEqual(fails, ["incomplete counter snapshots"])

    def test_not_done_and_rc(self):
        ch = results.parse(channel(done=False, rc=3))
        self.assertEqual((ch.done, ch.rc), (False, 3))


def run_verdict(scratch, console, channel_lines=(), workload="check-console", qemu_status=0,
                kunit_py="", kernel=""):
    """ktool.verdict on @console and @channel_lines (lists of lines) in @scratch: (the
    results, the failures); what it says on stderr is dropped."""
    paths = {}
    for name, text in (("console", console), ("results", channel_lines)):
        paths[name] = os.path.join(scratch, name + ".txt")
        with open(paths[name], "w") as f:
            f.write("\n".join(text) + "\n")
    js = os.path.join(scratch, "kunit.json")
    if os.path.exists(js):
        os.remove(js)
    a = argparse.Namespace(console=paths["console"], results=paths["results"], series=SERIES,
                           kernel=kernel, qemu_status=qemu_status, elapsed=1, timeout="600",
                           workload=workload, kunit_py=kunit_py, kunit_json=js, json="")
    with contextlib.redirect_stderr(io.StringIO()):
        out, _, fails = verdict.verdict(a)
    return out, fails


class Verdict(unittest.TestCase):
    def setUp(self):
        self.scratch = tempfile.mkdtemp(prefix="luf-selftest.")

    def tearDown(self):
        shutil.rmtree(self.scratch, ignore_errors=True)

    def test_clean_boot_passes(self):
        out, fails = run_verdict(self.scratch, CLEAN, channel(), workload="reclaim")
        self.assertEqual((fails, out["status"], out["tlb_shootdowns"]), ([], "pass", 90))

    def test_report_fails(self):
        out, fails = run_verdict(self.scratch, CLEAN + [REPORTS["BUG:"]], channel(), workload="reclaim")
        self.assertEqual((fails, out["kernel_problems"]), (["kernel problem on the console"], 1))

    def test_listed_race_passes(self):
        out, fails = run_verdict(self.scratch, CLEAN + READAHEAD, channel(), workload="reclaim")
        self.assertEqual((fails, out["kcsan_reports_elsewhere"]), ([], 1))

    def test_unfinished_guest_fails(self):
        _, fails = run_verdict(self.scratch, CLEAN, channel(done=False), workload="reclaim")
        self.assertEqual(fails, ["the guest did not finish (no @@done on ttyS1)"])

    def test_workload_status_fails(self):
        _, fails = run_verdict(self.scratch, CLEAN, channel(rc=3), workload="reclaim")
        self.assertEqual(fails, ["workload exit status 3"])

    def test_setup_error_fails(self):
        lines = channel()
        lines.insert(1, "@@setup_error cannot mount /dev/vda (ext4)")
        _, fails = run_verdict(self.scratch, CLEAN, lines, workload="reclaim-ext4")
        self.assertEqual(fails, ["guest set-up: cannot mount /dev/vda (ext4)"])

    def test_timeout_fails(self):
        _, fails = run_verdict(self.scratch, CLEAN, channel(), workload="reclaim", qemu_status=124)
        self.assertEqual(fails, ["timeout after 600 s"])


class KUnit(unittest.TestCase):
    parser = None

    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.mkdtemp(prefix="luf-selftest.")
        cls.parser = ktap.find_or_unpack(cls.scratch)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.scratch, ignore_errors=True)

    def verdict(self, console):
        """ktool.verdict's KUnit results and failures for @console (a list of lines)."""
        if not self.parser:
            self.skipTest("no kunit.py (scripts/deps.sh kernel installs linux-source-6.1)")
        return run_verdict(self.scratch, console, kunit_py=self.parser)

    def test_cases_pass(self):
        out, fails = self.verdict(CLEAN)
        self.assertEqual(fails, [])
        self.assertEqual((out["kunit_rc"], out["kunit_cases_passed"], out["kunit_cases_failed"]),
                         (0, 57, 0))

    def test_one_case_not_ok_fails(self):
        c = [re.sub(r"^    ok 5 list_test_list_replace$", "    not ok 5 list_test_list_replace", l)
             for l in CLEAN]
        self.assertNotEqual(c, CLEAN)
        out, fails = self.verdict(c)
        self.assertEqual(fails, ["KUnit cases failed: list-kunit-test.list_test_list_replace"])
        self.assertEqual((out["kunit_cases_failed"], out["kunit_failed_cases"]),
                         (1, "list-kunit-test.list_test_list_replace"))

    def test_suite_cut_short_fails(self):
        c, skip = [], False
        for l in CLEAN:
            if skip and "Freeing unused kernel image (initmem)" not in l:
                continue
            skip = False
            c.append(l)
            if "ok 20 list_test_list_is_singular" in l:
                skip = True
        self.assertLess(len(c), len(CLEAN))
        self.assertIn("kunit.py parse: crashed or missing KUnit cases (none reported failed)",
                      self.verdict(c)[1])

    def test_no_ktap_fails(self):
        c = [l for l in CLEAN if not re.search(r"KTAP|ok [0-9]|^ *1\.\.|^ *# ", l)]
        self.assertNotEqual(self.verdict(c)[1], [])


def main():
    r = unittest.main(module=__name__, exit=False, verbosity=2).result
    if not r.wasSuccessful():
        return 1
    return 77 if r.skipped else 0


if __name__ == "__main__":
    sys.exit(main())
