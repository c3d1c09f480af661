# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""Unit tests of ktool.record's and ktool.capture's pure parts: a recorded run's
line, record's command line, what capture keeps of a boot."""
import contextlib
import unittest
from unittest import mock

from . import capture, cli, record

OUT = "boot: progress\nstatus=pass\nfail_reason=\nworkload.moves=4\nworkload.x=a b \nkcsan=0\n"


@contextlib.contextmanager
def recording(run):
    """record.main() with a built kernel, fixed provenance and @run for cli.run."""
    with mock.patch.object(record.kernels, "build", return_value="/k/bzImage"), \
            mock.patch.object(record.kernels, "series_hash", return_value="s"), \
            mock.patch.object(record.kernels, "tree_rev", return_value="t"), \
            mock.patch.object(record.compare, "build_key", return_value="b"), \
            mock.patch.object(record.compare, "qemu_version", return_value="q"), \
            mock.patch.object(record.cli, "run", run):
        yield


class Record(unittest.TestCase):
    def test_run_line(self):
        """The kept keys in boot's order, "workload." dropped, one space apart."""
        self.assertEqual(record.run_line(2, OUT, record.KEYS),
                         "run 2: status=pass fail_reason= moves=4 x=a b ")
        self.assertEqual(record.run_line(1, OUT, r"^workload\.m"), "run 1: moves=4")
        self.assertEqual(record.run_line(1, "", record.KEYS), "run 1: ")

    def test_usage(self):
        """One of --kind and --series-rev, a workload, a known kind, a count of runs:
        refused before any kernel is built."""
        for bad in (["--workload", "none"], ["--kind", "luf"],
                    ["--kind", "luf", "--series-rev", "HEAD", "--workload", "none"],
                    ["--kind", "foo", "--workload", "none"],
                    ["--kind", "luf", "--workload", "none", "--runs", "0"],
                    ["--kind", "luf", "--workload", "none", "--keys", "("],
                    ["--kind", "luf", "--workload", "none", "--wargs"],
                    ["--kind", "luf", "--workload", "none", "--boot", "--mem '160M"],
                    ["--kind", "luf", "--workload", "none", "--boot", "--workload none"],
                    ["--kind", "luf", "--workload", "none", "--boot", "--kernel=/k"],
                    ["--kind", "luf", "--workload", "none", "--out", "/nonexistent/dir/f"],
                    ["--kind", "luf", "--workload", "nosuch"],
                    ["--kind", "luf", "--workload", "reclaim", "--boot", "--mem 10X"],
                    ["--kind", "luf", "--workload", "reclaim", "--boot", "--smp abc"],
                    ["--kind", "luf", "--workload", "reclaim", "--boot", "--bogus 1"],
                    ["--kind", "luf", "--workload", "migrate", "--boot", "--seconds 9"],
                    ["--series-rev", "no-such-rev-x", "--workload", "none"]):
            with mock.patch.object(record.kernels, "build", side_effect=AssertionError("built")):
                with self.assertRaises(cli.Usage) as c:
                    record.main(bad)
                self.assertTrue(str(c.exception), bad)  # each refusal says why
        # A workload the kind's machine cannot run (the sanitizer kernels' microvm).
        with mock.patch.object(record.kernels, "build", side_effect=AssertionError("built")):
            with self.assertRaises(cli.Fail) as c:
                record.main(["--kind", "debug", "--workload", "tier"])
            self.assertIn("pc machine only", str(c.exception))

    def test_no_boot(self):
        """A boot that printed no status (it never booted) fails the recording, and
        no file is written."""
        with recording(mock.Mock(return_value=mock.Mock(
                returncode=1, stdout="boot: FAIL: workload w runs on the pc machine only\n"))), \
                mock.patch("sys.stderr"), mock.patch("builtins.open") as opened:
            self.assertRaises(cli.Fail, record.main, ["--kind", "debug", "--workload", "none",
                                                      "--out", "/tmp/x.txt"])
        opened.assert_not_called()

    def test_boot_options(self):
        """--wargs, --append and --boot reach every boot, and the header names them
        as a shell would read them back."""
        runs = []

        def run(argv, **_):
            runs.append(argv)
            return mock.Mock(returncode=0, stdout=OUT)
        with recording(mock.Mock(side_effect=run)), mock.patch("sys.stdout") as out:
            self.assertEqual(record.main(["--kind", "debug", "--workload", "coherence-tmpfs",
                                          "--runs", "2",
                                          "--wargs", "--writers hole", "--boot",
                                          "--mem 160M --passes 1"]), 0)
        self.assertEqual(len(runs), 2)
        self.assertEqual(runs[1][1:], ["--kernel", "/k/bzImage", "--workload", "coherence-tmpfs",
                                       "--wargs",
                                       "--writers hole", "--mem", "160M", "--passes", "1"])
        text = "".join(c.args[0] for c in out.write.call_args_list)
        self.assertIn("# boot: --workload coherence-tmpfs --wargs '--writers hole' --mem 160M "
                      "--passes 1\n", text)
        self.assertIn("run 2: status=pass", text)
        self.assertIn("workload coherence-tmpfs, 2 runs\n", text)


class Capture(unittest.TestCase):
    def test_values(self):
        self.assertEqual(capture.values("trace_lost=0\nx=1\ntrace_lost=2\n", "trace_lost"),
                         ["0", "2"])
        self.assertEqual(capture.values("trace_lost_x=1\n", "trace_lost"), [])

    def test_anonymous(self):
        """The image's path names this machine's cache: its key only is kept."""
        self.assertEqual(
            capture.anonymous('{\n "kernel": "/home/u/.cache/luf/kernel/builds/a013ced48da002e4/'
                              'bzImage",\n "x": "/builds/0/bzImage"\n}'),
            '{\n "kernel": "trace kernel a013ced48da002e4 (tests/kernel/ktool/kernels.py trace)",\n'
            ' "x": "/builds/0/bzImage"\n}')
        self.assertEqual(capture.anonymous('"kernel": "/tmp/abc1/bzImage"'),
                         '"kernel": "/tmp/abc1/bzImage"')


if __name__ == "__main__":
    unittest.main()
