# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""Unit tests of ktool.compare's pure parts: the command line, the boots it
plans, medians, the bootstrap interval, the checker's verdict, the report."""
import contextlib
import io
import json
import os
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
        for bad in (["--workloads", "reclaim,foo"], ["--runs", "0"], ["--park-sweep", "51"]):
            self.assertEqual(exit_status(c.main, bad + ["--render", "/nonexistent"]), 2, bad)


class Boots(unittest.TestCase):
    def test_plan(self):
        """Runs interleave the kernels; only reclaim gets noswitch and the sweep."""
        self.assertEqual(c.plan(["reclaim", "checker"], 2, True, ["luf-park25bp"]), [
            ("reclaim", k, r) for r in (1, 2) for k in ("pristine", "luf", "luf-noswitch",
                                                         "luf-park25bp")] +
            [("checker", k, r) for r in (1, 2) for k in ("pristine", "luf")])

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

        patches = [unittest.mock.patch.object(c, name, value) for name, value in (
            ("boot", boot), ("qemu_version", lambda: "Q"), ("collect", collect),
            ("render", lambda d: ""), ("load", lambda p: {}), ("charts", lambda *a: 0))]
        patches += [unittest.mock.patch.object(c.kernels, "build",
                                               lambda k: "/c/%s-key/bzImage" % k),
                    unittest.mock.patch.object(c.kernels, "tree_rev", lambda: "t"),
                    unittest.mock.patch.object(c.kernels, "kernel_side_hash", lambda: "h"),
                    unittest.mock.patch.object(c.os, "access", lambda p, m: True),
                    unittest.mock.patch.object(c.shutil, "which", lambda p: p)]
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

if __name__ == "__main__":
    unittest.main()
