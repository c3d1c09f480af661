# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""Unit tests of ktool.compare's pure parts: the command line, the boots it
plans, medians, the bootstrap interval, the checker's verdict, the report."""
import contextlib
import hashlib
import io
import json
import os
import statistics
import tempfile
import unittest
import unittest.mock

from . import cli, compare as c

A = [311.5, 298.25, 305.0, 320.75, 301.5, 299.0, 312.25, 330.5]
B = [300.0, 296.5, 310.25, 289.0, 302.75, 295.5, 305.5, 291.25]
SMALL = {
    "kernel_version": "6.1.1", "short": True, "runs": 2, "guest": "G", "config": "C",
    "mismatches_total": 2, "mismatches_patched": 0,
    "provenance": {"tree": "abc1234", "series": "s", "build_key_pristine": "none (--baseline-off)",
                   "build_key_luf": "k", "qemu": "Q",
                   "invocation": "tests/kernel/compare --runs 2"},
    "workloads": {
        "reclaim": {
            "pristine": {"median": {"tlb_shootdowns": 1000, "runtime_s": 10.0}, "failed_runs": 0,
                         "runs": [{"tlb_shootdowns": 990, "runtime_s": 9.5},
                                  {"tlb_shootdowns": 1010, "runtime_s": 10.5}]},
            "luf": {"median": {"tlb_shootdowns": 25.5, "runtime_s": 10.25, "luf_park_peak": 1200},
                    "failed_runs": 1,
                    "runs": [{"tlb_shootdowns": 21, "runtime_s": 10.0, "luf_park_peak": 1200,
                              "guest_memtotal_kb": 230000},
                             {"tlb_shootdowns": 30, "runtime_s": 10.5, "luf_park_peak": 1100,
                              "guest_memtotal_kb": 230000}]}},
        "checker": {
            "pristine": {"median": {"tlb_shootdowns": 50}, "failed_runs": 1,
                         "runs": [{"status": "fail", "mismatches": 2}]},
            "luf": {"median": {"tlb_shootdowns": 5}, "failed_runs": 0,
                    "runs": [{"status": "pass", "mismatches": 0}]}}}}




def old_style():
    """A comparison as compare wrote them before the migration workloads: reclaim
    (with luf-noswitch, a sweep kernel and /proc/stat's split), mixed, checker,
    reclaim-anon and hotpath, three runs each."""
    cols = ("tlb_shootdowns", "nr_tlb_remote_flush", "pages_reclaimed", "runtime_s",
            "nr_luf_deferred", "nr_tlb_local_flush_all", "luf_park_peak", "mismatches")

    def kernel(rows, **same):
        runs = [dict(same, status="pass", tlb_shootdowns=t, runtime_s=s, pages_reclaimed=p,
                     cpu_user_s=1.0 + i, cpu_nice_s=0.0, cpu_system_s=s, cpu_idle_s=2.5,
                     cpu_iowait_s=0.5, cpu_irq_s=0.25, cpu_softirq_s=0.5)
                for i, (t, s, p) in enumerate(rows)]
        med = {k: statistics.median(r[k] for r in runs) if k in runs[0] else None for k in cols}
        return {"median": med, "runs": runs, "failed_runs": 0}

    luf = dict(nr_luf_deferred=9000, nr_tlb_local_flush_all=80, luf_park_peak=1100,
               luf_park_pages=1310, guest_memtotal_kb=240000, pingpong_ns=1010.0,
               mprotect_ns=2030.0, munmap_ns=5050.0)
    pristine = dict(nr_tlb_local_flush_all=100, pingpong_ns=1000.0, mprotect_ns=2000.0,
                    munmap_ns=5000.0)
    rec = lambda n: [(n, 17.5, 9000), (n + 10, 18.25, 9100), (n - 7, 18.0, 8950)]
    ws = {w: {"pristine": kernel(rec(3000), **pristine), "luf": kernel(rec(85), **luf)}
          for w in ("reclaim", "mixed", "reclaim-anon", "hotpath")}
    ws["reclaim"]["luf-noswitch"] = kernel(rec(400), **luf)
    ws["reclaim"]["luf-park50bp"] = kernel(rec(900), **dict(luf, luf_park_pages=327))
    ws["checker"] = {"pristine": kernel(rec(200), mismatches=1),
                     "luf": kernel(rec(20), mismatches=0)}
    ws["hotpath"]["luf"]["runs"][2]["pingpong_ns"] = 1100.0
    return {"kernel_version": "6.1.1", "short": False, "runs": 3, "guest": "G", "config": "C",
            "mismatches_total": 3, "mismatches_patched": 0, "workloads": ws,
            "provenance": {"tree": "t", "series": "s", "build_key_pristine": "p",
                           "build_key_luf": "l", "qemu": "Q", "kept_runs": 6,
                           "invocation": "tests/kernel/compare --runs 3"}}


# The SHA-256 of old_style()'s report, and of collect()'s JSON of OLD_RUNS, as
# compare wrote them before the migration workloads: bench/kernel/notes.py --check
# compares the recorded reports' text, which must not change.
OLD_REPORT = "af818aa73fe5524c25e41b2ac0282195570cdbe6942918b3e7631be4dc6a7215"
OLD_RUNS = {"reclaim.pristine.1": {"status": "pass", "tlb_shootdowns": 3000, "runtime_s": 17.5,
                                   "pgsteal_kswapd": 9000, "pages_reclaimed": 9000,
                                   "cpu_user_s": 1.5, "pgmigrate_success": 4},
            "reclaim.luf.1": {"status": "pass", "tlb_shootdowns": 85, "nr_luf_abort_a": 1,
                              "workload.pingpong_ns": "1010", "luf_park_peak": 1100},
            "checker.luf.1": {"status": "fail", "fail_reason": "timeout",
                              "workload.mismatches": "0"}}
OLD_JSON = "447b7bdbf6f419a781819e576381bdaaafed2389367a6d7f2f407c9c687cff7f"


def migration(shoot, speed, **missing):
    """A comparison of the migration workloads, three runs a kernel: per kernel,
    the medians @shoot of migrate's shootdowns while pages moved (tier's: twice
    as many TLB shootdowns while looking up) and @speed of its pages a second (tier's lookups), the
    runs at the median -1, +0 and +1, and 0.9, 1 and 1.1 times it; @missing:
    {kernel: the keys its runs leave out}."""
    ws = {}
    for w, sk, vk in (("migrate", "migrate_shootdowns", "pages_per_s"),
                      ("tier", "workload.tlb_shootdowns", "lookups_per_s")):
        ws[w] = {}
        for k in c.MIGRATION_KERNELS:
            runs = [{"status": "pass", sk: shoot[k] + d, vk: round(speed[k] * f),
                     "runtime_s": 10.0,
                     "pgmigrate_success": 8192, "tlb_shootdowns": 2 * shoot[k] + d,
                     "workload.tlb_shootdowns": 2 * shoot[k] + d}
                    for d, f in ((-1, 0.9), (0, 1.0), (1, 1.1))]
            runs = [{x: v for x, v in r.items() if x not in missing.get(k, ())} for r in runs]
            med = {key: statistics.median(r[key] for r in runs) if key in runs[0] else None
                   for _, key, _ in c.MIGRATION_ROWS}
            ws[w][k] = {"median": med, "runs": runs, "failed_runs": 0}
    return {"kernel_version": "6.1.1", "short": False, "runs": 3, "guest": "G", "config": "C",
            "mismatches_total": 0, "mismatches_patched": 0, "workloads": ws,
            "provenance": {"tree": "t", "series": "s", "build_key_pristine": "p",
                           "build_key_batched": "b", "build_key_luf": "l", "qemu": "Q",
                           "invocation": "tests/kernel/compare --workloads migrate,tier"}}


def main_patches(boot, collect):
    """The patches that let compare's main() run with no kernel and no QEMU: @boot
    and @collect stand for compare's own; a kernel kind K builds /c/K-key/bzImage."""
    return [unittest.mock.patch.object(c, name, value) for name, value in (
        ("boot", boot), ("qemu_version", lambda: "Q"), ("collect", collect),
        ("render", lambda d: ""), ("load", lambda p: {}), ("charts", lambda *a: 0))] + [
            unittest.mock.patch.object(c.kernels, "build", lambda k: "/c/%s-key/bzImage" % k),
            unittest.mock.patch.object(c.kernels, "tree_rev", lambda: "t"),
            unittest.mock.patch.object(c.kernels, "kernel_side_hash", lambda: "h"),
            unittest.mock.patch.object(c.os, "access", lambda p, m: True),
            unittest.mock.patch.object(c.shutil, "which", lambda p: p)]


def exit_status(f, *args):
    """The exit status @f(*@args) raises (SystemExit), its stderr silenced; None
    if it returns."""
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            f(*args)
        except SystemExit as e:
            return e.code
    return None


class CommandLine(unittest.TestCase):
    def test_runs(self):
        self.assertEqual(c.runs_arg("compare", "12"), 12)
        for bad in ("0", "01", "x", "-1", "1.5"):
            self.assertEqual(exit_status(c.runs_arg, "compare", bad), 2, bad)

    def test_sweep(self):
        self.assertEqual(c.sweep_kinds("0.25,1 4"), ["luf-park25bp", "luf-park100bp",
                                                     "luf-park400bp"])
        for bad in ("60", "0.009", "x", "nan", "0.5,0.501"):
            self.assertEqual(exit_status(c.sweep_kinds, bad), 2, bad)

    def test_parse(self):
        flags, valued = ("--short",), ("--runs", "--wargs")
        self.assertEqual(
            cli.pairs(["--runs", "2", "--short", "--wargs", ""], "x", valued, flags, ("--wargs",)),
            [("--runs", "2"), ("--short", True), ("--wargs", "")])
        for bad, msg in ((["--bogus"], "x: unknown argument: --bogus"), (["-h"], ""),
                         (["--runs"], "x: --runs wants a value"),
                         (["--runs", ""], "x: --runs wants a value")):
            with self.assertRaises(cli.Usage) as e:
                cli.pairs(bad, "x", valued, flags)
            self.assertEqual(str(e.exception), msg)

    def test_lines(self):
        """Lines as grep and tail count them."""
        self.assertEqual([c.lines(t) for t in ("", "a\n", "a\n\nb")], [[], ["a"], ["a", "", "b"]])

    def test_main_validates_first(self):
        for bad in (["--workloads", "reclaim,foo"], ["--runs", "0"], ["--park-sweep", "51"],
                    ["--workloads", ","], ["--workloads", " "]):
            self.assertEqual(exit_status(c.main, bad + ["--render", "/nonexistent"]), 2, bad)

    def test_baseline_off(self):
        """--baseline-off stays for the reclaim side; the migration workloads refuse it
        (their baselines are kernels of their own)."""
        for w in ("migrate", "tier", "reclaim,tier"):
            with contextlib.redirect_stderr(io.StringIO()) as err, \
                    self.assertRaises(SystemExit) as e:
                c.main(["--workloads", w, "--baseline-off", "--render", "/nonexistent"])
            self.assertEqual(e.exception.code, 2, w)
            self.assertIn("compare: --baseline-off is for the reclaim side", err.getvalue())
        self.assertNotEqual(exit_status(c.main, ["--workloads", "reclaim", "--baseline-off",
                                                 "--render", "/nonexistent"]), 2)


class Boots(unittest.TestCase):
    def test_plan(self):
        """Runs interleave the kernels; only reclaim gets noswitch and the sweep."""
        self.assertEqual(c.plan(["reclaim", "checker"], 2, True, ["luf-park25bp"]), [
            ("reclaim", k, r) for r in (1, 2) for k in ("pristine", "luf", "luf-noswitch",
                                                         "luf-park25bp")] +
            [("checker", k, r) for r in (1, 2) for k in ("pristine", "luf")])

    def test_kernels_for(self):
        """The migration workloads boot pristine, batched and luf, and nothing else;
        the others as before."""
        for w in ("migrate", "tier"):
            self.assertEqual(c.kernels_for(w, True, ["luf-park25bp"]), ["pristine", "batched",
                                                                        "luf"])
        self.assertEqual(c.kernels_for("reclaim", True, ["luf-park25bp"]),
                         ["pristine", "luf", "luf-noswitch", "luf-park25bp"])
        for w in ("mixed", "checker", "hotpath", "reclaim-ext4", "reclaim-tmpfs", "reclaim-anon"):
            self.assertEqual(c.kernels_for(w, True, ["luf-park25bp"]), ["pristine", "luf"], w)
        self.assertEqual(c.plan(["migrate", "mixed"], 2, True, []), [
            ("migrate", k, r) for r in (1, 2) for k in ("pristine", "batched", "luf")] +
            [("mixed", k, r) for r in (1, 2) for k in ("pristine", "luf")])

    def test_boot_args(self):
        self.assertEqual(c.boot_args("reclaim", "pristine", True, True),
                         ["--append", "luf.reclaim=0", "--disk-mb", "384", "--passes", "1"])
        self.assertEqual(c.boot_args("reclaim", "pristine", False, False),
                         ["--disk-mb", "768", "--passes", "2"])
        self.assertEqual(c.boot_args("mixed", "luf-park25bp", True, False)[:2],
                         ["--append", "sysctl.vm.luf_park_pages=163"])
        self.assertEqual(c.boot_args("hotpath", "luf-noswitch", False, False),
                         ["--append", "luf.switch_done=0"])
        self.assertEqual(c.boot_args("checker", "luf", False, False)[-2:],
                         ["--wargs", "--hot-pages 4096"])
        for short in (True, False):
            self.assertEqual(c.boot_args("migrate", "batched", short, False), [])
            self.assertEqual(c.boot_args("tier", "pristine", short, False), [])


class Numbers(unittest.TestCase):
    def test_rounding(self):
        """Percentages toward zero; an interval's ends outward."""
        self.assertEqual([c.pct_down(v) for v in (89.96, -3.27, -0.04)], ["89.9", "-3.2", "0.0"])
        self.assertEqual(c.pct_out(2.04, True), "2.1")
        self.assertEqual(c.pct_out(2.0, True), "2.0")
        self.assertEqual(c.pct_out(-1.01, False), "-1.1")
        self.assertEqual([c.signed(v) for v in (0.04, 1.26)], ["0.0", "+1.2"])

    def test_bootstrap(self):
        """The seed is fixed: the interval of a recorded JSON renders the same."""
        self.assertEqual(c.boot_interval(A, B, c.med_diff_pct),
                         (-0.6644518272425249, 7.5440067057837386))
        self.assertEqual(c.iv_text(c.boot_interval(A, B, c.med_diff_pct)), "-0.7% to 7.6%")
        self.assertIsNone(c.boot_interval(A[:1], B, c.med_diff_pct))

    def test_medians(self):
        with tempfile.TemporaryDirectory() as work:
            runs = {"reclaim.luf.1": {"status": "pass", "tlb_shootdowns": 10, "nr_luf_abort_a": 1,
                                      "nr_luf_abort_b": 2, "workload.mismatches": "0"},
                    "reclaim.luf.2": {"status": "fail", "tlb_shootdowns": "13"},
                    "reclaim.luf.3": {"status": "pass", "tlb_shootdowns": 100},
                    "checker.pristine.1": {"status": "fail", "workload.mismatches": "4"},
                    "checker.luf.1": {"status": "pass", "workload.mismatches": "0"}}
            for name, r in runs.items():
                with open(os.path.join(work, name + ".json"), "w") as f:
                    json.dump(r, f)
            out = os.path.join(work, "out")
            self.assertEqual(c.collect(work, 3, True, out, "6.1", {"tree": "t"}), 0)
            with open(out) as f:
                d = json.load(f)
        luf = d["workloads"]["reclaim"]["luf"]
        self.assertEqual(luf["median"]["tlb_shootdowns"], 13)
        self.assertEqual(luf["median"]["nr_luf_abort"], 3)
        self.assertIsNone(luf["median"]["pages_reclaimed"])
        self.assertEqual(luf["failed_runs"], 1)
        self.assertEqual((d["mismatches_total"], d["mismatches_patched"]), (4, 0))
        self.assertEqual((d["provenance"], d["short"], d["runs"]), ({"tree": "t"}, True, 3))


    def test_medians_migration(self):
        """The migration workloads keep their rows' keys and their extras; the
        JSON's config names the batched kernel; the others' JSON is as before."""
        with tempfile.TemporaryDirectory() as work:
            runs = {"migrate.batched.1": {"status": "pass", "tlb_shootdowns": 40,
                                          "pgmigrate_success": 8192, "runtime_s": 3.5,
                                          "workload.migrate_shootdowns": "25",
                                          "workload.pages_per_s": "22251",
                                          "workload.lookups": "6261106"},
                    "tier.luf.1": {"status": "pass", "tlb_shootdowns": 7, "runtime_s": 31.0,
                                   "workload.runtime_s": "29.5",
                                   "workload.lookups_per_s": "1000"}}
            for name, r in runs.items():
                with open(os.path.join(work, name + ".json"), "w") as f:
                    json.dump(r, f)
            out = os.path.join(work, "out")
            self.assertEqual(c.collect(work, 1, False, out, "6.1"), 0)
            with open(out) as f:
                d = json.load(f)
            self.assertTrue(d["config"].endswith("; batched: + lib/kernel/batched"))
            m = d["workloads"]["migrate"]["batched"]
            self.assertEqual(set(m["median"]), {key for _, key, _ in c.MIGRATION_ROWS})
            self.assertEqual((m["median"]["migrate_shootdowns"], m["median"]["pages_per_s"],
                              m["median"]["pgdemote_kswapd"], m["runs"][0]["lookups"]),
                             (25, 22251, None, 6261106))
            t = d["workloads"]["tier"]["luf"]["runs"][0]
            self.assertEqual((t["runtime_s"], t["workload.runtime_s"], t["lookups_per_s"]),
                             (31.0, 29.5, 1000))
            for name in runs:
                os.remove(os.path.join(work, name + ".json"))
            for name, r in OLD_RUNS.items():
                with open(os.path.join(work, name + ".json"), "w") as f:
                    json.dump(r, f)
            c.collect(work, 1, True, out, "6.1", {"tree": "t"})
            with open(out, "rb") as f:
                self.assertEqual(hashlib.sha256(f.read()).hexdigest(), OLD_JSON)


class Verdict(unittest.TestCase):
    def test_patched_mismatch_fails(self):
        with tempfile.TemporaryDirectory() as work:
            with open(os.path.join(work, "checker.luf.1.json"), "w") as f:
                json.dump({"status": "pass", "workload.mismatches": "1"}, f)
            self.assertEqual(c.collect(work, 1, True, os.path.join(work, "o"), "6.1"), 1)

    def test_pristine_mismatch_excused(self):
        """A pristine checker mismatch is a finding: excused if the workload failed
        and counted mismatches, nothing else is."""
        out = "status=fail\nfail_reason=workload\nworkload.mismatches=3\n"
        self.assertTrue(c.excused("checker", "pristine", out))
        self.assertFalse(c.excused("checker", "luf", out))
        self.assertFalse(c.excused("reclaim", "pristine", out))
        self.assertFalse(c.excused("checker", "pristine", out.replace("=3", "=00")))
        self.assertFalse(c.excused("checker", "pristine", out.replace("workload\n", "timeout\n")))


class Report(unittest.TestCase):
    def test_render(self):
        text = c.render(SMALL).splitlines()
        self.assertEqual(text[0], "Linux 6.1.1, G; C. Medians of 2 run(s) per kernel (reclaim: "
                                  "a 384 MiB disk read once; checker: 30 s).")
        self.assertTrue(text[3].startswith("**No pristine kernel here**"))
        self.assertEqual(text[7:11], [
            "| reclaim: >= 97% fewer TLB shootdowns | 97.4% fewer (1000 -> 25.5; 95% interval "
            "96.9-98.0% fewer) | MET |",
            "| reclaim: park at most 2% of RAM at any time | peak 1200 pages in the worst run: "
            "1.83% of the 256 MiB, 2.08% of MemTotal | MET |",
            "| reclaim: runtime, upper end of the 95% interval at most +5% | +2.5% (10 s -> "
            "10.2 s; 95% interval -4.8% to 10.6%; runs 9.5-10.5 s and 10-10.5 s) | MISSED |",
            "| checker: 0 mismatches on the patched kernel, >= 3 runs that passed | 0 in 1 run(s) "
            "| MISSED |"])
        self.assertIn("| luf | 25.5 | - | - | - | 10.2 | " + "- | " * 8 + "1200 | - | -97.4% | 1 |",
                      text)
        self.assertEqual(text[-1], "Checker mismatches: 0 on the patched kernels, 2 in all.")
        self.assertEqual(c.chart_data(SMALL), "reclaim 1000 25.5 0\nchecker 50 5 0\n")


    def test_render_ext4(self):
        def ext4(luf):
            runs = lambda n, t: [{"tlb_shootdowns": n, "runtime_s": t}] * 3
            d = dict(SMALL, short=False, runs=3)
            d["workloads"] = {"reclaim-ext4": {
                "pristine": {"median": {"tlb_shootdowns": 1000, "runtime_s": 10.0},
                             "failed_runs": 0, "runs": runs(1000, 10.0)},
                "luf": {"median": {"tlb_shootdowns": luf, "runtime_s": 11.0}, "failed_runs": 0,
                        "runs": runs(luf, 11.0)}}}
            return c.render(d).splitlines()
        text = ext4(100)
        self.assertIn("reclaim-ext4: the full reclaim workload over a file of an ext4 file "
                      "system (journal on, data=ordered)", text[0])
        row = [l for l in text if l.startswith("| reclaim-ext4: >= 90% fewer")]
        self.assertEqual(row, ["| reclaim-ext4: >= 90% fewer TLB shootdowns | 90.0% fewer "
                               "(1000 -> 100; 95% interval 90.0-90.0% fewer; runtime +10.0%, "
                               "runs 10-10 s and 11-11 s) | MET |"])
        self.assertTrue([l for l in ext4(100.1) if l.startswith("| reclaim-ext4: >= 90%")][0]
                        .endswith("| MISSED |"))
        self.assertIn("reclaim-ext4:", text)
        # The swap-backed workloads: the read phase alone too, from the runs.
        d = dict(SMALL, short=False, runs=3)
        runs = lambda n, t, r: [{"tlb_shootdowns": n, "runtime_s": t, "read_tlb_shootdowns": r,
                                 "read_pages_reclaimed": 2000}] * 3
        d["workloads"] = {"reclaim-anon": {
            "pristine": {"median": {"tlb_shootdowns": 1000, "runtime_s": 10.0}, "failed_runs": 0,
                         "runs": runs(1000, 10.0, 400)},
            "luf": {"median": {"tlb_shootdowns": 700, "runtime_s": 10.0}, "failed_runs": 0,
                    "runs": runs(700, 10.0, 20)}}}
        rows = [l for l in c.render(d).splitlines() if l.startswith("| reclaim-anon")]
        self.assertTrue(rows[0].startswith("| reclaim-anon: >= 80% fewer TLB shootdowns | 30.0% "
                                           "fewer (1000 -> 700;"), rows)
        self.assertTrue(rows[0].endswith("| MISSED |"))
        self.assertEqual(rows[1], "| reclaim-anon, read phase alone (after the fill) | 95.0% "
                                  "fewer (400 -> 20; 200.0 -> 10.0 per 1,000 pages reclaimed) | |")
        self.assertEqual(c.chart_data(dict(SMALL, workloads={"reclaim-ext4": {
            "pristine": {"median": {"tlb_shootdowns": 9}}}})), "reclaim-ext4 9 0 0\n")


    def test_render_unchanged(self):
        """A comparison without the migration workloads renders as it did before
        them, report and chart."""
        text = c.render(old_style())
        self.assertEqual(hashlib.sha256(text.encode()).hexdigest(), OLD_REPORT, text)
        self.assertNotIn("batched", text)
        self.assertEqual(c.chart_data(old_style()), "reclaim 3000 85 400\nreclaim-anon 3000 85 "
                                                    "0\nmixed 3000 85 0\nchecker 200 20 0\n")

    def test_chart_migration_only(self):
        """A comparison of the migration workloads alone has no bar to draw: --chart
        says so and succeeds, gnuplot not run (it would fail on an empty range)."""
        d = migration({"pristine": 20000, "batched": 25, "luf": 2},
                      {"pristine": 90, "batched": 25000, "luf": 24000})
        self.assertEqual(c.chart_data(d), "")
        with tempfile.TemporaryDirectory() as tmp, \
                unittest.mock.patch.object(c, "load", lambda p: d), \
                unittest.mock.patch.object(c.shutil, "which", lambda x: "/usr/bin/gnuplot"), \
                unittest.mock.patch.object(c, "gnuplot") as plot, \
                contextlib.redirect_stderr(io.StringIO()) as err:
            self.assertEqual(c.charts("x.json", os.path.join(tmp, "c.png"), None), 0)
        plot.assert_not_called()
        self.assertIn("no chart", err.getvalue())

    def test_render_migration(self):
        """One column per kernel, medians with the runs' spread, n/a for what a
        kernel did not report; the targets' verdicts computed, met and missed."""
        d = migration({"pristine": 20000, "batched": 25, "luf": 2},
                      {"pristine": 90, "batched": 25000, "luf": 24000},
                      batched={"pgmigrate_success"})
        text = c.render(d).splitlines()
        self.assertIn("build keys p (pristine), b (batched) and l (luf), Q;", text[1])
        self.assertIn("(migrate: guest/migrate.c's 16 MiB read-only mapping", text[0])
        self.assertIn("| migrate | pristine | batched | luf |", text)
        self.assertIn("| TLB shootdowns while pages moved | 20000 (19999-20001) | 25 (24-26) | "
                      "2 (1-3) |", text)
        self.assertIn("| pgmigrate_success | 8192 (8192-8192) | n/a | 8192 (8192-8192) |", text)
        self.assertIn("| pgpromote_success | n/a | n/a | n/a |", text)
        # A counter the kernel lacks (tier prints -1): n/a, not a number.
        for k, v in (("pristine", -1), ("luf", 5)):
            d["workloads"]["tier"][k]["median"]["nr_luf_deferred"] = v
            for r in d["workloads"]["tier"][k]["runs"]:
                r["nr_luf_deferred"] = v
        self.assertIn("| luf deferred | n/a | n/a | 5 (5-5) |", c.render(d).splitlines())
        self.assertIn("| pages migrated/s | 90 (81-99) | 25000 (22500-27500) | 24000 "
                      "(21600-26400) |", text)
        self.assertEqual(len([l for l in text if l.startswith("| pages migrated/s")]), 1)
        self.assertIn("| failed runs | 0 | 0 | 0 |", text)
        rows = [l for l in text if l.startswith("| migrate: ")]
        self.assertEqual(rows, [
            "| migrate: luf >= 90% fewer TLB shootdowns than batched (while pages moved) | "
            "92.0% fewer (25 -> 2; 95% interval 87.5-96.2% fewer) | MET |",
            "| migrate: batched fewer TLB shootdowns than pristine (while pages moved) | "
            "99.8% fewer (20000 -> 25; 95% interval 99.8-99.9% fewer) | MET |",
            "| migrate: luf not slower than batched beyond the spread (pages migrated/s) | "
            "-4.0% (25000 -> 24000; runs 22500-27500 and 21600-26400) | MET |"])
        self.assertTrue([l for l in text if l.startswith("| tier: luf >= 90%")][0]
                        .startswith("| tier: luf >= 90% fewer TLB shootdowns than batched "
                                    "(while looking up) | 92.0% fewer (50 -> 4;"))
        # Missed: luf cuts too little and is slower than batched's slowest run;
        # batched no better than pristine.
        d = migration({"pristine": 20, "batched": 25, "luf": 3},
                      {"pristine": 90, "batched": 25000, "luf": 20000})
        rows = [l for l in c.render(d).splitlines() if l.startswith("| migrate: ")]
        self.assertTrue(rows[0].startswith("| migrate: luf >= 90% fewer TLB shootdowns than "
                                           "batched (while pages moved) | 88.0% fewer (25 -> 3;"))
        self.assertTrue(rows[0].endswith("| MISSED |"), rows[0])
        self.assertTrue(rows[1].startswith("| migrate: batched fewer TLB shootdowns than pristine "
                                           "(while pages moved) | 25.0% more (20 -> 25;"))
        self.assertTrue(rows[1].endswith("| MISSED |"), rows[1])
        self.assertEqual(rows[2], "| migrate: luf not slower than batched beyond the spread "
                                  "(pages migrated/s) | -20.0% (25000 -> 20000; runs 22500-27500 "
                                  "and 18000-22000; 11.2% below batched's slowest run) | MISSED |")
        # What a kernel did not report, or a kernel that did not run: no verdict.
        d = migration({"pristine": 20, "batched": 25, "luf": 3},
                      {"pristine": 90, "batched": 25000, "luf": 20000},
                      luf={"lookups_per_s", "tlb_shootdowns", "workload.tlb_shootdowns"})
        del d["workloads"]["migrate"]["pristine"]
        text = c.render(d).splitlines()
        self.assertIn("| failed runs | n/a | 0 | 0 |", text)
        rows = [l for l in text if l.startswith("| migrate: batched") or
                l.startswith("| tier: ")]
        self.assertEqual(rows, [
            "| migrate: batched fewer TLB shootdowns than pristine (while pages moved) | n/a "
            "(pristine n/a, batched 25 (24-26)) | - |",
            "| tier: luf >= 90% fewer TLB shootdowns than batched (while looking up) | n/a "
            "(batched 50 (49-51), luf n/a) | - |",
            rows[2],
            "| tier: luf not slower than batched beyond the spread (lookups/s) | n/a (batched "
            "25000 (22500-27500), luf n/a) | - |"])
        self.assertTrue(rows[2].endswith("| MISSED |"), rows[2])
        # A failed run meets no target, whatever its numbers; only the targets that
        # compare its kernel.
        d = migration({"pristine": 20000, "batched": 25, "luf": 2},
                      {"pristine": 90, "batched": 25000, "luf": 25000})
        d["workloads"]["migrate"]["luf"]["failed_runs"] = 1
        rows = [l for l in c.render(d).splitlines() if l.startswith("| migrate: ")]
        self.assertTrue(rows[0].endswith("| MISSED (failed runs: luf) |"), rows[0])
        self.assertTrue(rows[1].endswith("| MET |"), rows[1])
        self.assertTrue(rows[2].endswith("| MISSED (failed runs: luf) |"), rows[2])
        d["workloads"]["migrate"]["luf"]["failed_runs"] = 0
        d["workloads"]["migrate"]["pristine"]["failed_runs"] = 2
        rows = [l for l in c.render(d).splitlines() if l.startswith("| migrate: ")]
        self.assertEqual([r.split(" | ")[-1] for r in rows],
                         ["MET |", "MISSED (failed runs: pristine) |", "MET |"])


class Resume(unittest.TestCase):
    """--work DIR: whole runs done there are kept; another comparison's DIR, or one
    in use, is refused."""

    def test_plan_file(self):
        with tempfile.TemporaryDirectory() as d:
            p = {"series": "s", "build_key_luf": "k", "boots": [["reclaim.luf.1", "--x"]]}
            c.resume(d, p)
            c.resume(d, dict(p))  # the same comparison again
            with contextlib.redirect_stderr(io.StringIO()) as err, \
                    self.assertRaises(SystemExit) as e:
                c.resume(d, dict(p, build_key_luf="k2"))
            self.assertEqual(e.exception.code, 2)
            self.assertIn("(its build_key_luf differ)", err.getvalue())
            with open(os.path.join(d, "plan.json"), "w") as f:
                f.write("{")
            self.assertEqual(exit_status(c.resume, d, p), 2)
            os.remove(os.path.join(d, "plan.json"))
            with open(os.path.join(d, "reclaim.luf.1.json"), "w") as f:
                f.write('{"status": "pass"}')
            self.assertEqual(exit_status(c.resume, d, p), 2)  # results, no plan

    def test_done_and_kept(self):
        with tempfile.TemporaryDirectory() as d:
            for stem, text in (("reclaim.luf.1.json", '{"status": "pass"}'),
                               ("reclaim.pristine.1.json", '{"status": "pass"}'),
                               ("reclaim.luf.2.json", '{"status": "pass"}'),
                               ("reclaim.pristine.2.json", '{"status": "fail"}'),
                               ("checker.pristine.1.json", '{"status": "fail"}'),
                               ("checker.pristine.1.excused", ""),
                               ("checker.luf.1.json", "{"), ("mixed.luf.1.json", "[]")):
                with open(os.path.join(d, stem), "w") as f:
                    f.write(text)
            self.assertEqual([c.done(d, *b) for b in (
                ("reclaim", "luf", 1), ("reclaim", "pristine", 2), ("checker", "pristine", 1),
                ("checker", "luf", 1), ("mixed", "luf", 1), ("mixed", "luf", 2))],
                [True, False, True, False, False, False])
            boots = [(w, k, r, []) for w in ("reclaim", "checker") for r in (1, 2)
                     for k in ("pristine", "luf")]
            self.assertEqual(c.kept(d, boots), {("reclaim", 1)})

    def test_one_user(self):
        with tempfile.TemporaryDirectory() as d:
            with c.work_dir(d):
                self.assertEqual(exit_status(lambda: c.work_dir(d).__enter__()), 2)
            with c.work_dir(d) as w:
                self.assertEqual(w, d)

    def test_main_keeps_whole_runs(self):
        booted, provs = [], []

        def boot(work, w, k, r, runs, img, args):
            booted.append("%s.%s.%d" % (w, k, r))
            with open(os.path.join(work, "%s.%s.%d.json" % (w, k, r)), "w") as f:
                f.write('{"status": "pass"}' if (w, k, r) != ("reclaim", "luf", 2) else "{}")
            return 0

        def collect(work, runs, short, path, version, prov):
            provs.append(prov)
            return 0

        patches = main_patches(boot, collect)
        with tempfile.TemporaryDirectory() as d, contextlib.ExitStack() as stack:
            for p in patches:
                stack.enter_context(p)
            stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
            args = ["--runs", "2", "--workloads", "reclaim", "--work", d]
            self.assertEqual(c.main(args), 0)
            self.assertEqual(booted, ["reclaim.pristine.1", "reclaim.luf.1", "reclaim.pristine.2",
                                      "reclaim.luf.2"])
            self.assertNotIn("kept_runs", provs[0])
            self.assertEqual(provs[0]["invocation"],
                             "tests/kernel/compare --runs 2 --workloads reclaim")
            del booted[:]
            self.assertEqual(c.main(args), 0)
            # luf's run 2 did not pass: run 2 boots again on both kernels.
            self.assertEqual(booted, ["reclaim.pristine.2", "reclaim.luf.2"])
            self.assertEqual(provs[1]["kept_runs"], 2)
            self.assertEqual(exit_status(c.main, ["--runs", "3"] + args[2:]), 2)
            self.assertEqual(len(booted), 2)
            stack.enter_context(unittest.mock.patch.object(c.kernels, "kernel_side_hash",
                                                           lambda: None))
            with tempfile.TemporaryDirectory() as d2:  # local changes, a new directory
                self.assertEqual(exit_status(c.main, args[:-1] + [d2]), 2)
            self.assertEqual(len(booted), 2)
            del booted[:]
            self.assertEqual(c.main(args[:-2]), 0)  # no --work: a scratch directory
            self.assertEqual(len(booted), 4)

    def test_main_migration(self):
        """The migration workloads boot the batched kernel too, which the plan of
        --work and the provenance name; the reclaim side's plan does not."""
        booted, provs = [], []

        def boot(work, w, k, r, runs, img, args):
            booted.append(("%s.%s.%d" % (w, k, r), img))
            with open(os.path.join(work, "%s.%s.%d.json" % (w, k, r)), "w") as f:
                f.write('{"status": "pass"}')
            return 0

        def collect(work, runs, short, path, version, prov):
            provs.append(prov)
            return 0

        patches = main_patches(boot, collect)
        with tempfile.TemporaryDirectory() as d, tempfile.TemporaryDirectory() as d2, \
                contextlib.ExitStack() as stack:
            for p in patches:
                stack.enter_context(p)
            stack.enter_context(contextlib.redirect_stderr(io.StringIO()))
            self.assertEqual(c.main(["--runs", "1", "--workloads", "tier,reclaim", "--work", d]),
                             0)
            self.assertEqual(booted, [("tier.pristine.1", "/c/pristine-key/bzImage"),
                                      ("tier.batched.1", "/c/batched-key/bzImage"),
                                      ("tier.luf.1", "/c/luf-key/bzImage"),
                                      ("reclaim.pristine.1", "/c/pristine-key/bzImage"),
                                      ("reclaim.luf.1", "/c/luf-key/bzImage")])
            self.assertEqual(provs[0]["build_key_batched"], "batched-key")
            with open(os.path.join(d, "plan.json")) as f:
                self.assertEqual(json.load(f)["build_key_batched"], "batched-key")
            self.assertEqual(c.main(["--runs", "1", "--workloads", "reclaim", "--work", d2]), 0)
            self.assertNotIn("build_key_batched", provs[1])
            with open(os.path.join(d2, "plan.json")) as f:
                self.assertNotIn("build_key_batched", json.load(f))

if __name__ == "__main__":
    unittest.main()
