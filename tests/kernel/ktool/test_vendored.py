# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""Unit tests of lib/kernel/patches/vendored.py (ctest kernel.series runs it on the
real series) on a small repository and series of its own: python3 -m unittest
ktool.test_vendored (from tests/kernel)."""
import importlib.util
import pathlib
import shutil
import tempfile
import unittest

from . import cli

SPEC = importlib.util.spec_from_file_location(
    "vendored", pathlib.Path(cli.REPO) / "lib" / "kernel" / "patches" / "vendored.py")
vendored = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(vendored)

# Repository path -> content; each lands in the tree at vendored.py's kernel path.
FILES = {"include/luf/luf.h": "core header\n", "lib/flush.c": "slow path\n",
         "lib/kernel/module/luf_kunit.c": "cases\n", "lib/kernel/module/luf_kernel.c": "ops\n",
         "lib/kernel/module/luf_kernel.h": "ops header\n"}
TREE = {"include/luf/luf.h": "include/luf/luf.h", "lib/flush.c": "lib/luf/flush.c"}


def new_file(path, text):
    """A git format-patch section that creates @path with @text."""
    body = "".join("+" + l + "\n" for l in text.splitlines())
    return ("diff --git a/{0} b/{0}\nnew file mode 100644\nindex 000000000..111111111\n"
            "--- /dev/null\n+++ b/{0}\n@@ -0,0 +1,{1} @@\n{2}".format(
                path, len(text.splitlines()), body))


def changed(path):
    """A section that changes @path."""
    return ("diff --git a/{0} b/{0}\nindex 111111111..222222222 100644\n--- a/{0}\n"
            "+++ b/{0}\n@@ -1 +1 @@\n-old\n+new\n".format(path))


def patch(*sections):
    return "From 0 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] x\n\n---\n" + "".join(sections)


class Vendored(unittest.TestCase):
    def setUp(self):
        self.repo = pathlib.Path(tempfile.mkdtemp(prefix="luf-vendored."))
        self.sdir = self.repo / "lib" / "kernel" / "patches"
        for rel, text in FILES.items():
            (self.repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.repo / rel).write_text(text)
        self.sdir.mkdir(parents=True)
        core = [new_file(TREE[r], FILES[r]) for r in TREE]
        kunit = [new_file("lib/luf/" + f, FILES["lib/kernel/module/" + f])
                 for f in vendored.KUNIT_FILES]
        self.write(patch(*core), patch(new_file("mm/other.c", "x\n")), patch(*kunit))

    def tearDown(self):
        shutil.rmtree(self.repo, ignore_errors=True)

    def write(self, *texts):
        names = ["%04d-p.patch" % i for i in range(1, len(texts) + 1)]
        for n, t in zip(names, texts):
            (self.sdir / n).write_text(t)
        (self.sdir / "series").write_text("# the series\n" + "\n".join(names) + "\n")

    def check(self):
        return vendored.check(self.repo, self.sdir)[0]

    def test_in_sync(self):
        self.assertEqual(self.check(), [])
        self.assertIn("the 2 core files of 0001-p.patch and the 3 of luf_core in 0003-p.patch",
                      vendored.check(self.repo, self.sdir)[1])

    def test_core_differs(self):
        (self.repo / "lib/flush.c").write_text("slow path, edited\n")
        self.assertEqual(self.check(), ["lib/luf/flush.c: differs from lib/flush.c"])

    def test_case_file_differs(self):
        (self.repo / "lib/kernel/module/luf_kernel.h").write_text("edited\n")
        self.assertEqual(self.check(), ["lib/luf/luf_kernel.h: differs from "
                                        "lib/kernel/module/luf_kernel.h"])

    def test_new_core_file_not_vendored(self):
        (self.repo / "lib/pcpu.c").write_text("new\n")
        self.assertEqual(self.check(), ["lib/luf/pcpu.c: in the repository, not in 0001-p.patch"])

    def test_changed_again_later(self):
        texts = [(self.sdir / ("%04d-p.patch" % i)).read_text() for i in (1, 2, 3)]
        self.write(texts[0], patch(changed("include/luf/luf.h")), texts[2],
                   patch(changed("lib/luf/luf_kunit.c")))
        self.assertEqual(self.check(), ["include/luf/luf.h: changed again by 0002-p.patch",
                                        "lib/luf/luf_kunit.c: changed again by 0004-p.patch"])


if __name__ == "__main__":
    unittest.main()
