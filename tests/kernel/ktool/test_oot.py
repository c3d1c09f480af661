# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""Unit tests of ktool.oot's console checks (tests/kernel/run), on small canned
consoles: python3 -m unittest ktool.test_oot (from tests/kernel)."""
import os
import shutil
import tempfile
import unittest

from . import cli
from . import ktap as kunit_py
from .oot import BAD_PARAMS, MUTANTS, check, document_texts, kunit_parse


def ktap(*results, plan=3):
    """One KTAP document as the module prints it (KUnit's form, the suite a
    subtest): the suite's parameters line, the version line, the suite's plan
    (none if @plan is None) and @results ("ok" or "not ok", a directive after
    " #"; numbered in order), then the suite's own result."""
    lines = ["# luf_core: luf 1.0, 4 CPUs, order=0", "KTAP version 1", "1..1",
             "    KTAP version 1", "    # Subtest: luf_core"]
    lines += ["    1..%d" % plan] if plan is not None else []
    for i, r in enumerate(results, 1):
        status, _, directive = r.partition(" #")
        lines.append("    %s %d t%d%s" % (status, i, i, directive and " #" + directive))
    failed = any(r.startswith("not") for r in results)
    return lines + ["# luf_core: pass:%d" % len(results), "%sok 1 luf_core" % ("not " if failed else "")]


def good(plain=None, debug=None):
    """A console of a passing run, with @plain and @debug as its KTAP documents."""
    return (["luf-run: start, 4 CPUs"] +
            ["luf-run: bad-param rc=1 warns=1 " + a for a in BAD_PARAMS] +
            (plain or ktap("ok", "ok", "ok # SKIP no CPU 2")) +
            ["    # lk_stress_readonly_reclaim: 4 CPUs, 1000 rounds", "luf-run: insmod rc=0",
             "luf-run: rmmod rc=0"] +
            (debug or ktap("ok", "ok", "ok")) +
            ["luf-run: insmod-debug rc=0", "luf-run: rmmod-debug rc=0", "luf-run: done", ""])


def mutants_console(caught=MUTANTS, docs=None):
    """A --mutants console: a KTAP document per mutant, a "not ok" in those of @caught."""
    out = ["luf-run: start, 4 CPUs"]
    for m in MUTANTS:
        out += ["luf-run: mutant " + m] + (docs or {}).get(
            m, ktap("ok", "not ok" if m in caught else "ok", "ok"))
        out += ["luf-run: insmod rc=0", "luf-run: rmmod rc=0"]
    return out + ["luf-run: done"]


def fails(console, qemu_status=0, mutants=None):
    return [t for k, t in check(console, qemu_status, mutants) if k == "fail"]


class Console(unittest.TestCase):
    def test_good(self):
        out = check(good(), 0)
        self.assertEqual([t for k, t in out if k == "fail"], [])
        self.assertIn(("say", "KTAP document 1 (plain): plan 3, 3 results, 0 not ok"), out)
        self.assertIn(("say", "KTAP document 2 (LUF_DEBUG): plan 3, 3 results, 0 not ok"), out)
        self.assertIn(("say", "# lk_stress_readonly_reclaim: 4 CPUs, 1000 rounds"), out)

    def test_no_plan(self):
        self.assertEqual(fails(good(debug=ktap("ok", "ok", "ok", plan=None))),
                         ["KTAP document 2: no plan line"])

    def test_fewer_results(self):
        self.assertEqual(fails(good(plain=ktap("ok", "ok"))),
                         ["KTAP document 1: 2 results for a plan of 3"])

    def test_not_ok(self):
        self.assertEqual(fails(good(debug=ktap("ok", "not ok", "ok"))),
                         ["KTAP document 2: 1 'not ok': t2"])

    def test_one_document(self):
        c = good(debug=["luf-run: no KTAP"])
        self.assertEqual(fails(c), ["1 KTAP documents, want 2 (plain and LUF_DEBUG loads)"])

    def test_kernel_report(self):
        # What the old script's pattern caught, each a report line of its own kind.
        for report in ("BUG: unable to handle page fault for address: 0000000000000008",
                       "Oops: 0002 [#1] PREEMPT SMP NOPTI",
                       "WARNING: CPU: 1 PID: 73 at mm/page_alloc.c:5534 __alloc_pages+0x2a4",
                       "------------[ cut here ]------------", "Call Trace:",
                       "WARNING: possible circular locking dependency detected",
                       "BUG: KASAN: use-after-free in luf_flush+0x1c/0x40",
                       "UBSAN: shift-out-of-bounds in lib/luf/core/flush.c:12:3",
                       "general protection fault, probably for non-canonical address 0xdead",
                       "Kernel panic - not syncing: Fatal exception",
                       "rcu: INFO: rcu_preempt self-detected stall on CPU",
                       "rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: { P73 }",
                       "watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [kworker/1:1:40]",
                       "NMI watchdog: Watchdog detected hard LOCKUP on cpu 2",
                       "INFO: task kworker/0:1:12 blocked for more than 120 seconds."):
            with self.subTest(report=report):
                c = good()
                c.insert(c.index("luf-run: insmod rc=0"), report)
                out = check(c, 0)
                self.assertEqual([t for k, t in out if k == "fail"],
                                 ["kernel reported a problem (lines above)"])
                self.assertIn(("err", "%d:%s" % (c.index(report) + 1, report)), out)

    def test_misuse_report(self):
        c = good()
        c.insert(3, "luf: luf_batch_add: batch not initialized")
        self.assertEqual(fails(c), ["unexpected LUF_DEBUG misuse report (lines above)"])

    def test_bad_param_accepted(self):
        c = good()
        c[c.index("luf-run: bad-param rc=1 warns=1 pool=8")] = \
            "luf-run: bad-param rc=0 warns=0 pool=8"
        self.assertEqual(fails(c), ["bad parameter pool=8: want refused with one warning, got: "
                                    "luf-run: bad-param rc=0 warns=0 pool=8"])

    def test_load_failed(self):
        c = good()
        c[c.index("luf-run: insmod-debug rc=0")] = "luf-run: insmod-debug rc=1"
        self.assertEqual(fails(c), ["expected 'luf-run: insmod-debug rc=0'"])

    def test_unfinished(self):
        self.assertEqual(fails(good()[:-2], 124), ["QEMU exit status 124 (124: timeout)",
                                                   "init did not finish (no 'luf-run: done')"])


class Documents(unittest.TestCase):
    def test_split(self):
        texts = document_texts(good())
        self.assertEqual(len(texts), 2)
        self.assertTrue(all(t.startswith("KTAP version 1\n") for t in texts))
        self.assertIn("    # Subtest: luf_core\n", texts[1])


class KunitPy(unittest.TestCase):
    """kunit_parse() with the kernel's kunit.py (from the kbuild cache, or unpacked
    from linux-source-6.1; skipped without either)."""

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="luf-test-oot.")

    def tearDown(self):
        shutil.rmtree(self.work, ignore_errors=True)

    def parse(self, console):
        if not (kunit_py.find_parser(None, cli.cache_dir()) or os.access(cli.TARBALL, os.R_OK)):
            self.skipTest("no kunit.py and no linux-source-6.1")
        return kunit_parse(console, self.work)

    def test_both_documents_read(self):
        self.assertEqual(self.parse(good()), [])

    def test_failed_case(self):
        fails = self.parse(good(debug=ktap("ok", "not ok", "ok")))
        self.assertEqual(len(fails), 1)
        self.assertTrue(fails[0].startswith("kunit.py parse of KTAP document 2: exit 1"), fails)


class Mutants(unittest.TestCase):
    def test_all_caught(self):
        out = check(mutants_console(), 0, MUTANTS)
        self.assertEqual([t for k, t in out if k == "fail"], [])
        self.assertIn(("say", "mutant LUF_MUTANT_NO_SETTLE caught: 1 not ok (t2)"), out)

    def test_not_caught(self):
        self.assertEqual(fails(mutants_console(caught=MUTANTS[1:]), 0, MUTANTS),
                         ["mutant LUF_MUTANT_%s NOT caught: every test passed" % MUTANTS[0]])

    def test_incomplete(self):
        c = mutants_console(docs={"UGEN_LT": ktap("not ok")})
        self.assertEqual(fails(c, 0, MUTANTS), ["mutant UGEN_LT: incomplete report (1 of 3)"])

    def test_kernel_report(self):
        c = mutants_console()
        c.insert(5, "BUG: kernel NULL pointer dereference, address: 0000000000000000")
        self.assertEqual(fails(c, 0, MUTANTS), ["kernel reported a problem (lines above)"])

    def test_not_loaded(self):
        c = mutants_console()
        # The last mutant's last case result and its suite's lines, its load's and
        # rmmod's lines, "done".
        del c[-6:]
        self.assertEqual(fails(c, 0, MUTANTS), [
            "init did not finish (no 'luf-run: done')", "not every mutant module loaded",
            "mutant SUM_AHEAD: incomplete report (2 of 3)"])

    def test_missing_document(self):
        c = mutants_console(docs={"SUM_AHEAD": []})
        self.assertEqual(fails(c, 0, MUTANTS), ["6 KTAP documents for 7 mutants"])


if __name__ == "__main__":
    unittest.main()
