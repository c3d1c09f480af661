# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""Unit tests of ktool.ci's rules, from small canned outputs of boot, its consoles and
checkpatch.pl (python3 -m unittest ktool.test_ci; no kernel, no QEMU)."""
import contextlib
import glob
import inspect
import io
import os
import re
import subprocess
import tempfile
import unittest
import unittest.mock

from . import ci

RECLAIM = """status=pass
fail_reason=
guest_nproc=4
kunit_cases_passed=55
kunit_cases_skipped=2
nr_luf_deferred=114955
nr_luf_deferred.after=114955
"""
CHECKER = """status=pass
nr_luf_deferred=50025
nr_luf_abort_write_fault=0
nr_luf_abort_write_other=351
  mismatch lines and other stderr are not results
"""
COHERENCE = "status=pass\nworkload.shared_luf_defer=0\nworkload.shared_unmark_errno=22\n" + \
    "".join("workload.%s_rounds=3\nworkload.%s_windows=%d\nworkload.%s_new_seen=3\n"
            % (w, w, 2 if w in ("pwrite", "map", "dio", "mount") else 0, w)
            for w in ("pwrite", "map", "dio", "mount", "flight", "aio", "shared", "part")) + \
    "workload.flight_tested=3\nworkload.aio_tested=1\nworkload.rounds=24\n"
EXT4 = "status=pass\n" + "".join("workload.%s_rounds=3\nworkload.%s_windows=1\n"
                                 "workload.%s_new_seen=3\n" % (w, w, w)
                                 for w in ("pwrite", "map", "dio", "punch", "truncate"))
PEERS = """status=pass
fail_reason=
workload.fio_rc=0
workload.fio_reclaimed=61377
workload.fio_deferred=4012
workload.stress_rc=0
workload.stress_reclaimed=8811
workload.stress_deferred=950
"""
ANON = "status=pass\nworkload.anon_rounds=3\nworkload.anon_windows=3\nworkload.anon_new_seen=3\n"
TMPFS = "status=pass\nworkload.hole_rounds=3\nworkload.hole_windows=3\nworkload.hole_new_seen=3\n"


MIGRATE = """status=pass
fail_reason=
nr_luf_deferred=4096
workload.pages_migrated=32768
workload.lookups=70000
workload.writes=9000
workload.lost_writes=0
workload.shared_writes=800
workload.stale_reads=0
workload.shootdowns_per_page=0.0100
"""
TIER = """status=pass
fail_reason=
workload.nr_luf_deferred=4096
workload.lookups=70000
workload.pgdemote_kswapd=900
workload.pgpromote_success=800
"""


def edit(text, old, new):
    """@text with its line @old replaced by @new (None: removed); @old must be there."""
    lines = text.splitlines()
    assert old in lines, old
    return "".join(l + "\n" for l in (new if l == old else l for l in lines) if l is not None)


def scripted(step, outs):
    """A ci.Ci of @step whose boots return @outs' (stdout, exit status) in turn:
    (it, the --wargs of each boot ("" if none), the messages it said)."""
    c, booted, said = ci.Ci(step, None), [], []
    workloads = c.workloads = []  # the --workload of each boot

    def boot(*args, **kw):
        booted.append(args[args.index("--wargs") + 1] if "--wargs" in args else "")
        workloads.append(args[args.index("--workload") + 1])
        out, rc = outs.pop(0)
        return subprocess.CompletedProcess(args, rc, out, None)

    def say(msg, fail=False):
        said.append(msg)
        c.fail |= fail
    c.boot, c.say = boot, say
    return c, booted, said


class Rules(unittest.TestCase):
    def test_parse_kv(self):
        kv = ci.parse_kv("boot: progress\nstatus=pass\nnr_luf_deferred.after=7\n  a=b\nx=1=2\n")
        self.assertEqual(kv, {"status": "pass", "nr_luf_deferred.after": "7", "x": "1=2"})
        self.assertEqual((ci.num(None), ci.num(""), ci.num("12"), ci.num("x")), (0, 0, 12, 0))
        self.assertEqual(ci.lines("a\x0cb\n\nc\n"), ["a\x0cb", "", "c"])
        self.assertEqual((ci.lines(""), ci.lines("a")), ([], ["a"]))

    def test_swap_floors(self):
        out = "status=pass\nnr_luf_deferred=25503\nnr_luf_held=22\n"
        self.assertEqual(ci.swap_fails(out, "reclaim-anon"), [])
        for old, new in (("nr_luf_deferred=25503", "nr_luf_deferred=9999"),
                         ("nr_luf_deferred=25503", None), ("nr_luf_held=22", "nr_luf_held=0"),
                         ("nr_luf_held=22", None)):
            f = ci.swap_fails(edit(out, old, new), "reclaim-tmpfs")
            self.assertEqual(len(f), 1)
            self.assertIn("FAIL: reclaim-tmpfs deferred", f[0])
        # An anonymous folio is held only if its write to swap outlived its pass.
        self.assertEqual(ci.swap_fails(edit(out, "nr_luf_held=22", "nr_luf_held=0"),
                                       "reclaim-anon"), [])

    def test_sanitizer_floors(self):
        self.assertEqual(ci.sanitizer_fails(RECLAIM), [])
        for old, new, what in (("guest_nproc=4", "guest_nproc=1", "not 4 CPUs"),
                               ("guest_nproc=4", None, "not 4 CPUs"),
                               ("kunit_cases_skipped=2", "kunit_cases_skipped=15", "not 4 CPUs"),
                               ("kunit_cases_skipped=2", "kunit_cases_skipped=1", "not 4 CPUs"),
                               ("nr_luf_deferred=114955", "nr_luf_deferred=49999", "49999"),
                               ("nr_luf_deferred=114955", None, "deferred no flushes")):
            fails = ci.sanitizer_fails(edit(RECLAIM, old, new))
            self.assertEqual(len(fails), 1, (old, new))
            self.assertIn(what, fails[0])
        self.assertEqual(ci.sanitizer_fails(edit(RECLAIM, "nr_luf_deferred=114955",
                                                 "nr_luf_deferred=50000")), [])
        self.assertTrue(ci.sanitizer_fails(RECLAIM.replace("guest_nproc=4", "guest_nproc=1"))[0]
                        .endswith(": guest_nproc=1 kunit_cases_skipped=2 "))

    def test_checker_floors(self):
        self.assertIsNone(ci.checker_fails(CHECKER))
        self.assertIsNone(ci.checker_fails(edit(CHECKER, "nr_luf_deferred=50025",
                                                "nr_luf_deferred=5000")))
        self.assertIn("deferred 4999 flushes", ci.checker_fails(
            edit(CHECKER, "nr_luf_deferred=50025", "nr_luf_deferred=4999")))
        self.assertIn("(0 write aborts)", ci.checker_fails(
            edit(CHECKER, "nr_luf_abort_write_other=351", "nr_luf_abort_write_other=0")))
        self.assertIsNone(ci.checker_fails(edit(edit(
            CHECKER, "nr_luf_abort_write_other=351", None), "nr_luf_abort_write_fault=0",
            "nr_luf_abort_write_fault=1")))

    def test_peers(self):
        """Each part of the rule fails a run alone: the boot, each suite's exit status,
        and a suite that ran without reclaim or without a deferred flush."""
        self.assertEqual(ci.peers_fails(PEERS), [])
        for old, new, msg in (
                ("status=pass", "status=fail", "FAIL: the peers boot failed: no status"),
                ("workload.fio_rc=0", "workload.fio_rc=1", "FAIL: fio exited 1"),
                ("workload.stress_rc=0", "workload.stress_rc=137", "FAIL: stress-ng exited 137"),
                ("workload.stress_rc=0", None, "FAIL: stress-ng exited without a result"),
                ("workload.fio_reclaimed=61377", "workload.fio_reclaimed=0",
                 "FAIL: no page was reclaimed while fio ran: it proves nothing"),
                ("workload.stress_reclaimed=8811", "workload.stress_reclaimed=0",
                 "FAIL: no page was reclaimed while stress-ng ran: it proves nothing"),
                ("workload.fio_deferred=4012", "workload.fio_deferred=0",
                 "FAIL: luf deferred no flush while fio ran: it proves nothing"),
                ("workload.stress_deferred=950", None,
                 "FAIL: luf deferred no flush while stress-ng ran: it proves nothing")):
            self.assertEqual(ci.peers_fails(edit(PEERS, old, new)), [msg], (old, new))
        # A boot that never got to the suites fails on every count.
        self.assertEqual(len(ci.peers_fails("status=fail\nfail_reason=timeout after 1500 s\n")),
                         7)

    def test_migrate(self):
        """Each part of the rule fails a run alone: the boot, readers, writers or
        the second process that did nothing, and luf that deferred nothing."""
        self.assertEqual(ci.migrate_fails(MIGRATE), [])
        for old, new, msg in (
                ("status=pass", "status=fail", "FAIL: the migrate boot failed: status fail"),
                ("workload.writes=9000", "workload.writes=0", "FAIL: the migrate workload's "
                 "writers or readers did nothing: it proves nothing"),
                ("workload.lookups=70000", None, "FAIL: the migrate workload's writers or "
                 "readers did nothing: it proves nothing"),
                ("workload.shared_writes=800", "workload.shared_writes=0", "FAIL: the migrate "
                 "workload's writers or readers did nothing: it proves nothing"),
                ("nr_luf_deferred=4096", "nr_luf_deferred=0", "FAIL: luf deferred no flush of "
                 "the migrate workload's read-only pages")):
            self.assertEqual(ci.migrate_fails(edit(MIGRATE, old, new)), [msg], (old, new))

    def test_src_ref(self):
        """The provocation's boot fails if it failed or luf held nothing, each
        alone; a boot that printed nothing fails both."""
        ok = "status=pass\nnr_luf_held=48\nworkload.bad_reads=0\n"
        failed = "FAIL: MIGRATE_SRC_REF: the migrate boot failed: "
        held = "FAIL: MIGRATE_SRC_REF: luf held no source (nr_luf_held=%s): the boot proves " \
            "nothing of the hold"
        self.assertEqual(ci.src_ref_fails(ok), [])
        for old, new, msg in (("status=pass", "status=fail\nfail_reason=workload failed",
                               failed + "workload failed"),
                              ("status=pass", None, failed + "status missing"),
                              ("nr_luf_held=48", "nr_luf_held=0", held % "0"),
                              ("nr_luf_held=48", None, held % "none")):
            self.assertEqual(ci.src_ref_fails(edit(ok, old, new)), [msg], (old, new))
        self.assertEqual(ci.src_ref_fails(""), [failed + "status missing", held % "none"])

    def test_tier(self):
        """Each part of the rule fails a run alone: the boot, lookups without
        demotion or promotion, and luf that deferred nothing."""
        self.assertEqual(ci.tier_fails(TIER), [])
        idle = "FAIL: the tier workload's lookups ran without demotion and promotion: it " \
            "proves nothing"
        for old, new, msg in (
                ("status=pass", "status=fail", "FAIL: the tier boot failed: status fail"),
                ("workload.lookups=70000", None, idle),
                ("workload.pgdemote_kswapd=900", "workload.pgdemote_kswapd=0", idle),
                ("workload.pgpromote_success=800", None, idle),
                ("workload.nr_luf_deferred=4096", "workload.nr_luf_deferred=-1", "FAIL: luf "
                 "deferred no flush of the tier workload's migrations while it looked up")):
            self.assertEqual(ci.tier_fails(edit(TIER, old, new)), [msg], (old, new))

    def test_peers_step(self):
        for out, failed in ((PEERS, False), (edit(PEERS, "workload.fio_rc=0",
                                                  "workload.fio_rc=1"), True)):
            c, booted, said = scripted("peers", [(out, int(failed))])
            with unittest.mock.patch.object(ci.kernels, "build", lambda kind: "bz"), \
                    contextlib.redirect_stdout(io.StringIO()) as shown:
                c.peers()
            self.assertEqual((c.fail, c.workloads, booted),
                             (failed, ["peers"], ["--fio-mb 64 --stress-seconds 30"]))
            self.assertIn("  luf: workload.stress_deferred=950\n", shown.getvalue())
            self.assertEqual(said, ["FAIL: fio exited 1"] if failed else [])
        # Without the Debian programs a step boots with: skipped, saying which.
        real = os.access
        for step, tools, why in (
                ("peers", ci.boot.PEERS, "no fio or stress-ng"),
                ("migrate", ci.boot.TIER_TOOLS, "no ndctl, which the tier boot needs")):
            with unittest.mock.patch.object(ci.os, "access", lambda p, m, t=tools:
                                            real(p, m) and p not in t), \
                    unittest.mock.patch.object(ci.shutil, "which", lambda c: "/usr/bin/" + c), \
                    unittest.mock.patch.object(ci.cli, "TARBALL", __file__), \
                    contextlib.redirect_stdout(io.StringIO()) as shown:
                self.assertEqual(ci.main([step]), 77)
            self.assertEqual(shown.getvalue(), "kernel.%s: SKIP: %s (scripts/deps.sh kernel)\n"
                             % (step, why))

    def test_scan_catches(self):
        console = "boot\n[  3.1] BUG: KASAN: slab-use-after-free in luf_test_bad_access\n"
        self.assertIsNone(ci.scan_missing(console, ["BUG: KASAN"]))
        self.assertEqual(ci.scan_missing(console, ["BUG: KASAN", "sleeping function"]),
                         "sleeping function")
        self.assertEqual(ci.scan_missing("BUG: KCSAN: data-race in printk / vprintk\n",
                                         ["BUG: KCSAN: data-race in .*luf_test_"]),
                         "BUG: KCSAN: data-race in .*luf_test_")

    def test_coherence(self):
        self.assertEqual((ci.coherence_fails(COHERENCE), ci.unmet(COHERENCE)), ([], []))
        for w in ("pwrite", "map", "dio", "mount"):
            for new in ("workload.%s_windows=0" % w, None):
                out = edit(COHERENCE, "workload.%s_windows=2" % w, new)
                self.assertEqual((ci.coherence_fails(out), ci.unmet(out)), ([], [w]))
                self.assertEqual(ci.unmet(out, ["aio", w]), [w])
                self.assertEqual(ci.unmet_fails([w]), ["FAIL: the %s writer met no stale "
                                                       "translation: it proves nothing" % w])
        for new in ("workload.part_new_seen=2", "workload.part_new_seen=03", None):
            f = ci.coherence_fails(edit(COHERENCE, "workload.part_new_seen=3", new))
            self.assertEqual(len(f), 1)
            self.assertIn("the part writer's witness read the new version in", f[0])
        for old, new in (("workload.shared_luf_defer=0", "workload.shared_luf_defer=1"),
                         ("workload.shared_luf_defer=0", None),
                         ("workload.shared_unmark_errno=22", "workload.shared_unmark_errno=0")):
            f = ci.coherence_fails(edit(COHERENCE, old, new))
            self.assertEqual(len(f), 1)
            self.assertIn("queue/luf_defer of the shared writer's disk", f[0])
            self.assertEqual(ci.coherence_fails(edit(COHERENCE, old, new), shared=False), [])
        for w in ("flight", "aio"):
            out = COHERENCE.replace("workload.%s_tested=" % w, "x=")
            self.assertEqual((ci.coherence_fails(out), ci.unmet(out)), ([], [w]))
            self.assertEqual(ci.unmet_fails([w]), ["FAIL: no round of the %s writer reclaimed "
                                                   "the page during its write: it proves "
                                                   "nothing" % w])

    def test_coherence_retries(self):
        # A writer that met nothing boots again, with the others that did not, up to
        # three boots; a boot that fails (stale reads) ends the step at once.
        def step(outs):
            c, booted, said = scripted("coherence", outs)
            with contextlib.redirect_stdout(io.StringIO()), \
                    unittest.mock.patch.object(ci.kernels, "build", lambda kind: "bz"):
                c.coherence()
            self.workloads = c.workloads
            return c.fail, booted, [m for m in said if m.startswith("FAIL")]
        no_map = edit(COHERENCE, "workload.map_windows=2", "workload.map_windows=0")
        rest = [(ANON, 0), (EXT4, 0), (TMPFS, 0)]  # the first run's other workloads
        first = ["", "", "", ""]  # its four boots' extra arguments: none
        map1 = "workload.map_windows=1\n"
        only_map = "status=pass\nworkload.map_rounds=3\nworkload.map_new_seen=3\n"
        self.assertEqual(step([(COHERENCE, 0), *rest]), (False, first, []))
        self.assertEqual(self.workloads, ["coherence", "coherence-anon", "coherence-ext4",
                                          "coherence-tmpfs"])
        # Each ext4 writer must meet a window.
        for w in ("pwrite", "map", "dio", "punch", "truncate"):
            out = edit(EXT4, "workload.%s_windows=1" % w, "workload.%s_windows=0" % w)
            self.assertEqual(ci.unmet(out, [k for k in ci.MUST_MEET if k.startswith("ext4:")]),
                             ["ext4:" + w])
        # So must the hole writer (coherence-tmpfs).
        self.assertEqual(ci.unmet(TMPFS.replace("hole_windows=3", "hole_windows=0"),
                                  ["tmpfs:hole"]), ["tmpfs:hole"])
        # So must the anon writer (coherence-anon).
        self.assertEqual(ci.unmet(ANON.replace("anon_windows=3", "anon_windows=0"),
                                  ["anon:anon"]), ["anon:anon"])
        self.assertEqual(step([(no_map, 0), *rest, (only_map + map1, 0)]),
                         (False, first + ["--writers map"], []))
        self.assertEqual(step([(no_map, 0), *rest, (only_map, 0), (only_map, 0)]),
                         (True, first + ["--writers map", "--writers map"],
                          ["FAIL: the map writer met no stale translation: it proves nothing"]))
        # coherence-ext4's writers retry apart from the disk's, with their own names.
        no_punch = edit(EXT4, "workload.punch_windows=1", "workload.punch_windows=0")
        self.assertEqual(step([(no_map, 0), (ANON, 0), (no_punch, 0), (TMPFS, 0),
                               (only_map + map1, 0), (no_punch, 0), (no_punch, 0)]),
                         (True, first + ["--writers map", "--writers punch", "--writers punch"],
                          ["FAIL: the ext4:punch writer met no stale translation: it proves "
                           "nothing"]))
        stale = "FAIL: a reader saw old contents after new ones, or the boot failed"
        self.assertEqual(step([(no_map, 0), *rest, (only_map.replace("pass", "fail"), 1)]),
                         (True, first + ["--writers map"], [stale + " (coherence)"]))
        self.assertEqual(step([(no_map, 0), *rest, (only_map + map1, 1)]),
                         (True, first + ["--writers map"], [stale + " (coherence)"]))
        self.assertEqual(step([(no_map.replace("pass", "fail"), 1)]),
                         (True, [""], [stale + " (coherence)"]))
        self.assertEqual(step([(COHERENCE, 0), (ANON, 0), (EXT4.replace("pass", "fail"), 1)]),
                         (True, ["", "", ""], [stale + " (coherence-ext4)"]))
        # The first boot's other rules (it runs every writer) fail it too.
        for old, new in (("workload.shared_unmark_errno=22", "workload.shared_unmark_errno=0"),
                         ("workload.part_new_seen=3", "workload.part_new_seen=2")):
            fail, booted, said = step([(edit(COHERENCE, old, new), 0), *rest])
            self.assertEqual((fail, booted, len(said)), (True, first, 1))
        # A retried writer's rounds must see the new version too.
        fail, booted, said = step([(no_map, 0), *rest, (only_map.replace(
            "new_seen=3", "new_seen=2") + "workload.map_windows=1\n", 0)])
        self.assertEqual((fail, booted), (True, first + ["--writers map"]))
        self.assertIn("the map writer's witness read the new version in 2 of 3", said[0])

    def test_park(self):
        self.assertFalse(ci.nothing_parked("workload.parked_kb=1024\n"))
        self.assertTrue(ci.nothing_parked("workload.parked_kb=0\n"))
        self.assertTrue(ci.nothing_parked("status=fail\n"))

    def test_core_mutants(self):
        names = ci.core_mutants()
        self.assertEqual(names, sorted(set(names)))
        self.assertIn("DONE_RELAXED", names)
        self.assertIn("DONE_RELAXED", ci.NOT_IN_KUNIT)
        self.assertTrue(all(n and n == n.upper() and not n.startswith("LUF_") for n in names))

    def test_kunit_mutants(self):
        out = "status=fail\nfail_reason=KUnit cases failed: luf.luf_test_abort\n"
        con = "".join("    not ok %d luf_test_%s\n" % (i, c) for i, c in enumerate("fbdacebf"))
        self.assertEqual(ci.kunit_caught(1, out, con + "not ok 1 luf\n"),
                         (True, "caught by: luf_test_a luf_test_b luf_test_c luf_test_d "
                                "luf_test_e luf_test_f "))
        self.assertEqual(ci.kunit_caught(1, out, "not ok 1 luf\n"), (True, "caught by: "))
        self.assertEqual(ci.kunit_caught(0, out, con)[0], False)
        self.assertIsNone(ci.kunit_caught(1, "fail_reason=timeout after 600 s\n", con)[0])
        self.assertIsNone(ci.kunit_caught(1, out, "    ok 3 luf_test_b\n")[0])

    def test_stale_reads(self):
        out = "workload.pwrite_stale_reads=3\nworkload.map_stale_reads=0\n"
        self.assertEqual(ci.stale_caught("M", ["pwrite", "map", "dio"], out), [
            (True, "M: caught by the coherence workload's pwrite writer: 3 stale reads"),
            (False, "M: NOT caught by the coherence workload's map writer (map_stale_reads=0)"),
            (False, "M: NOT caught: the coherence workload printed nothing for its dio writer "
                    "(fail_reason=none)")])
        self.assertEqual(ci.stale_caught("M", ["ext4:truncate"], "fail_reason=workload exit "
                                         "status 2\nworkload.pwrite_stale_reads=3\n"),
                         [(False, "M: NOT caught: the coherence-ext4 workload printed nothing "
                                  "for its truncate writer (fail_reason=workload exit status 2)")])
        self.assertEqual(ci.stale_caught("M", ["ext4:truncate"], "workload.truncate_stale_reads"
                                         "=9\n"),
                         [(True, "M: caught by the coherence-ext4 workload's truncate writer: 9 "
                                 "stale reads")])
        # The rules and the writers that show them: the new settle point over the disk
        # and over ext4, and the ext4 truncate writer for the file settles.
        table = dict(ci.MM_STALE)
        self.assertEqual(table["WRITE_BEGIN_NO_SETTLE"].split(), ["pwrite", "ext4:pwrite"])
        self.assertIn("ext4:truncate", table["NO_FILE_ABORT"].split())

    def test_stale_retries_ext4(self):
        # Each workload's writers boot apart; those not caught boot again.
        def step(outs):
            c, booted, said = scripted("mm-mutants", outs)
            c.mm = "bz"
            with contextlib.redirect_stdout(io.StringIO()):
                c.stale("M", "pwrite", "ext4:pwrite", "ext4:punch")
            return c.fail, list(zip(c.workloads, booted)), [m for m in said
                                                             if m.startswith("M: NOT")]
        disk, ext4 = "workload.pwrite_stale_reads=2\n", "workload.punch_stale_reads=1\n"
        self.assertEqual(step([(disk, 1), (ext4 + "workload.pwrite_stale_reads=4\n", 1)]),
                         (False, [("coherence", "--writers pwrite"),
                                  ("coherence-ext4", "--writers pwrite,punch")], []))
        self.assertEqual(step([(disk, 1), (ext4, 1), (ext4, 1), (ext4, 1)]),
                         (True, [("coherence", "--writers pwrite"),
                                 ("coherence-ext4", "--writers pwrite,punch"),
                                 ("coherence-ext4", "--writers pwrite"),
                                 ("coherence-ext4", "--writers pwrite")],
                          ["M: NOT caught: the coherence-ext4 workload printed nothing for its "
                           "pwrite writer (fail_reason=none)"]))

    def test_scratch_kept_on_failure(self):
        for step, rc in (("kunit", 0), ("kunit", 1), ("compare", 77), ("series", 1)):
            c = ci.Ci(step, None)
            with unittest.mock.patch.object(ci, "run_step", lambda c, step, rc=rc: rc), \
                    contextlib.redirect_stdout(io.StringIO()) as out:
                self.assertEqual(ci.in_scratch(c, step), rc)
            kept = step == "kunit" and rc == 1
            self.assertEqual(os.path.isdir(c.work), kept)
            self.assertEqual(out.getvalue(), "" if not kept else
                             "kernel.kunit: kept %s (the step's consoles and failed boots)\n"
                             % c.work)
            if kept:
                os.rmdir(c.work)

    def test_checker_retries(self):
        # A checker boot below the floors boots again, up to three; a failed one
        # (a mismatch) fails the step at once.
        def step(outs):
            c, _, said = scripted("debug", outs)
            with contextlib.redirect_stdout(io.StringIO()):
                c.checker_floors("bz")
            # The debug kernel's checker writes a file on ext4.
            self.assertEqual(set(c.workloads), {"checker-ext4"})
            return c.fail, len(outs), [m for m in said if m.startswith("FAIL")], len(said)
        low = edit(CHECKER, "nr_luf_deferred=50025", "nr_luf_deferred=1029")
        self.assertEqual(step([(CHECKER, 0), (CHECKER, 0)]), (False, 1, [], 0))
        self.assertEqual(step([(low, 0), (CHECKER, 0), (CHECKER, 0)]), (False, 1, [], 1))
        fail, left, fails, n = step([(low, 0), (low, 0), (low, 0), (CHECKER, 0)])
        self.assertEqual((fail, left, n), (True, 1, 3))
        self.assertEqual(fails, ["FAIL: " + ci.checker_fails(low)])
        self.assertEqual(step([(CHECKER.replace("pass", "fail"), 1), (CHECKER, 0)]),
                         (True, 1, ["FAIL: the checker's boot failed (a mismatch, or a kernel "
                                    "report)"], 1))
        self.assertEqual(step([(low, 0), (low.replace("pass", "fail"), 1), (CHECKER, 0)])[:3],
                         (True, 1, ["FAIL: the checker's boot failed (a mismatch, or a kernel "
                                    "report)"]))

    def test_stale_retries(self):
        # A writer not caught boots again, alone, up to three boots in all.
        def step(outs):
            c, booted, _ = scripted("mm-mutants", [(o, 0) for o in outs])
            with contextlib.redirect_stdout(io.StringIO()):
                c.stale("M", "pwrite", "map")
            return c.fail, booted
        hit, miss = "workload.%s_stale_reads=5\n", "workload.%s_stale_reads=0\n"
        self.assertEqual(step([hit % "pwrite" + hit % "map"]),
                         (False, ["--writers pwrite,map"]))
        self.assertEqual(step([hit % "pwrite" + miss % "map", miss % "map", hit % "map"]),
                         (False, ["--writers pwrite,map", "--writers map", "--writers map"]))
        self.assertEqual(step([miss % "pwrite" + hit % "map", miss % "pwrite",
                               miss % "pwrite"]),
                         (True, ["--writers pwrite,map", "--writers pwrite",
                                 "--writers pwrite"]))

    def test_mm_mutants(self):
        for mutant, caught, missed, say in (
                ("RECLAIM_NO_FLUSH", "workload.mismatches=2", "workload.mismatches=0",
                 "RECLAIM_NO_FLUSH: caught by the checker (run 1): 2 stale reads, e.g.:"),
                ("WRITE_BEGIN_NO_SETTLE", "workload.mismatches=3", "workload.mismatches=0",
                 "WRITE_BEGIN_NO_SETTLE: caught by the checker over ext4 (run 1): 3 stale "
                 "reads, e.g.:"),
                ("ALLOC_NO_DRAIN", "workload.hog=signal9\nworkload.parked_max_kb=9",
                 "workload.hog=ok", "ALLOC_NO_DRAIN: caught by the oom workload: the "
                 "allocation was OOM-killed with 9 kB parked"),
                ("OFFLINE_NO_DRAIN", "workload.offline_rc=4\nworkload.offline_s=10.0",
                 "workload.offline_rc=1", "OFFLINE_NO_DRAIN: caught by the offline workload: "
                 "workload.offline_s=10.0 "),
                ("PARK_UNBOUNDED", "workload.parked_max_kb=260", "workload.parked_max_kb=256",
                 "PARK_UNBOUNDED: caught by the pageout workload: 260 kB parked, bound 256 kB"),
                ("MIGRATE_FLUSH_LATE", "workload.lost_writes=3", "workload.lost_writes=0",
                 "MIGRATE_FLUSH_LATE: caught by the migrate workload's writers (run 1): 3 "
                 "lost writes"),
                ("MIGRATE_SRC_UNFLUSHED", "workload.bad_reads=7", "workload.bad_reads=0",
                 "MIGRATE_SRC_UNFLUSHED: caught by the migrate workload's readers (run 1): 7 "
                 "bad reads"),
                ("MIGRATE_MIXED_NO_FLUSH", "workload.stale_reads=9", "workload.stale_reads=0",
                 "MIGRATE_MIXED_NO_FLUSH: caught by the migrate workload's readers (run 1): 9 "
                 "stale reads"),
                ("MIGRATE_KEEP_UNHELD", "workload.bad_reads=5", "workload.bad_reads=0",
                 "MIGRATE_KEEP_UNHELD: caught by the migrate workload's readers (run 1): 5 "
                 "bad reads")):
            self.assertEqual(ci.mm_caught(mutant, caught + "\n"), (True, say))
            key = missed.split("=")[0].split(".")[1]
            self.assertEqual(ci.mm_caught(mutant, missed + "\n"), (
                False, "%s: NOT caught (%s)" % (mutant, missed.split(".", 1)[1])))
            self.assertEqual(ci.mm_caught(mutant, "status=fail\n"),
                             (False, "%s: NOT caught (%s=none)" % (mutant, key)))

    def test_kunit_cases(self):
        self.assertTrue(ci.case_failed("    not ok 7 luf_test_lazy_cpu\n", "luf_test_lazy_cpu"))
        self.assertFalse(ci.case_failed("    ok 7 luf_test_lazy_cpu\n", "luf_test_lazy_cpu"))
        self.assertFalse(ci.case_failed("    not ok 7 luf_test_lazy_cpu_2\n", "luf_test_lazy_cpu"))

    def test_defer_dirty(self):
        hit = "WARNING: CPU: 1 PID: 44 at mm/rmap.c:1600 try_to_unmap_one+0x5/0x9"
        self.assertEqual(ci.grep("boot\n" + hit + "\n", ci.DIRTY), [hit])
        self.assertFalse(ci.grep("WARNING: CPU: 1 PID: 44 at mm/vmscan.c:1600\n", ci.DIRTY))
        self.assertFalse(ci.grep("luf: at mm/rmap.c\n", ci.DIRTY))

    def test_checkpatch(self):
        clean = "total: 0 errors, 0 warnings, 4 checks, 4145 lines checked\n"
        self.assertEqual(ci.checkpatch_total("x.patch has style problems\n" + clean),
                         (clean.strip(), True))
        self.assertEqual(ci.checkpatch_total("total: 0 errors, 0 warnings, 51 lines checked\n"),
                         ("total: 0 errors, 0 warnings, 51 lines checked", True))
        self.assertEqual(ci.checkpatch_total("total: 0 errors, 1 warnings, 51 lines checked\n")[1],
                         False)
        self.assertEqual(ci.checkpatch_total("total: 2 errors, 0 warnings, 51 lines checked\n")[1],
                         False)
        self.assertEqual(ci.checkpatch_total("Can't open x.patch\n"), ("", False))
        out = "WARNING: a\n1\n2\n3\n4\nERROR: b\n5\nWARNING: c\n6\n7\n8\n9\n10\nERROR: d\n"
        self.assertEqual(ci.after_context(out, r"^(ERROR|WARNING):"), [
            "WARNING: a", "1", "2", "3", "--", "ERROR: b", "5", "WARNING: c", "6", "7", "8",
            "--", "ERROR: d"])

    def test_harness_series(self):
        """The harness series names the same files, in order: the patches' own
        (p/) and the batched one's (b/) as ../ paths from its directory (h/)."""
        with tempfile.TemporaryDirectory() as d:
            def write(name, text):
                os.makedirs(os.path.join(d, os.path.dirname(name)), exist_ok=True)
                with open(os.path.join(d, name), "w") as f:
                    f.write(text)
                return os.path.join(d, name)
            s = write("p/series", "# c\n../b/z.patch\na.patch\nb.patch\n")
            h = write("h/series", "# c\n../b/z.patch\n../p/a.patch\n../p/b.patch\nh.patch\n")
            self.assertTrue(ci.harness_lists_series(s, h))
            self.assertEqual(ci.series_lines(h), ["../b/z.patch", "../p/a.patch",
                                                  "../p/b.patch", "h.patch"])
            for text in ("# c\n../b/z.patch\n../p/b.patch\n../p/a.patch\nh.patch\n",
                         "# c\n../b/z.patch\n../p/a.patch\nh.patch\n",
                         "# c\n../p/z.patch\n../p/a.patch\n../p/b.patch\nh.patch\n"):
                h = write("h/series", text)
                self.assertFalse(ci.harness_lists_series(s, h), text)
        self.assertTrue(ci.harness_lists_series(ci.cli.SERIES, os.path.join(
            ci.cli.KDIR, "harness", "series")))


    def test_every_mm_mutant_boots(self):
        """Every memory-manager rule the harness can switch off, and every
        provocation, has its boot in mm-mutants: the names its message lists, and
        every luf_mutant("NAME") its code tests is listed (the core's rules, the mm's,
        a provocation, or a misbehaving KUnit case)."""
        path = glob.glob(os.path.join(ci.cli.KDIR, "harness", "0001-*.patch"))[0]
        with open(path) as f:
            text = f.read()
        msg, code = text.split("\n---\n", 1)
        core, mm, provoked, bad = (re.findall(r"^ ([A-Z_]+):", part, re.M) for part in
                                   re.split(r"^luf\.mutant=NAME, .*$", msg, flags=re.M)[1:])
        tested = set(re.findall(r'luf_mutant\("([A-Z_]+)"\)', code))
        self.assertEqual(tested - {"NAME"}, set(core + mm + provoked + bad))
        booted = [m for m, *_ in ci.MM_STALE + ci.MM_WORKLOAD + ci.MM_KUNIT]
        booted += re.findall(r'(?:mm_boot|checker_caught|caught_in_boots)\("([A-Z_]+)"',
                             inspect.getsource(ci.Ci))
        self.assertEqual(sorted(set(booted)), sorted(mm + provoked))
        self.assertGreater(len(mm), 20)

if __name__ == "__main__":
    unittest.main()
