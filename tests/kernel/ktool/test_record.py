# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""Unit tests of ktool.record's and ktool.capture's pure parts: a recorded run's
line, record's command line, what capture keeps of a boot."""
import unittest
from unittest import mock

from . import capture, cli, record

OUT = "boot: progress\nstatus=pass\nfail_reason=\nworkload.moves=4\nworkload.x=a b \nkcsan=0\n"


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
        for bad in (["--workload", "w"], ["--kind", "luf"],
                    ["--kind", "luf", "--series-rev", "HEAD", "--workload", "w"],
                    ["--kind", "foo", "--workload", "w"],
                    ["--kind", "luf", "--workload", "w", "--runs", "0"],
                    ["--kind", "luf", "--workload", "w", "--keys", "("],
                    ["--kind", "luf", "--workload", "w", "--wargs"]):
            with mock.patch.object(record.kernels, "build", side_effect=AssertionError("built")):
                self.assertRaises(cli.Usage, record.main, bad)


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
