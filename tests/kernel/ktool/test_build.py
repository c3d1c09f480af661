# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""Unit tests of ktool.build (kbuild): the key text and key, the tarball memo, the
requested-config check, series parsing and the --make check. The expected keys are
what the shell kbuild computed for the same inputs (printf '%s\\n' "$ktext" |
sha256sum | cut -c1-16), so a warm cache stays warm."""
import os
import tempfile
import unittest

from . import build, cli

SHA_TAR = "cf5f23f8c5412fac44f7496ff6cc0b899c5b262e1522d4088cc8672362879b83"  # "tar\n"
SHA_BASE = "e7e1b2c0a9031fbc9e999438d6d65847f80ddd76244dfc5a1efac71731d40f85"
SHA_EXTRA = "1ed051b720af897a22532dd79521b4a4838778723b2859a61cc9dbac52756ecf"
SHA_SERIES = "2e1131194e7042263b8586f2380ff4d914e19286b90ed473aaec7099bd04e8b7"
SHA_X = "73cb3858a687a8494ca3323053016282f3dad39d42cf62ca4e79dda2aac7d9ac"
SHA_Y = "3bb2abb69ebb27fbfe63c7639624c6ec5e331b841a5bc8c3ebc10b9285e90877"


class Tmp(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        return path


class Key(Tmp):
    def setUp(self):
        super().setUp()
        self.tarball = self.write("t.tar.xz", "tar\n")
        self.frags = [self.write("f/base.config", "CONFIG_A=y\n"),
                      self.write("f/extra.config", "# CONFIG_B is not set\n")]
        self.series = self.write("h/series", "# comment\n../p/0001-x.patch\n0002-y.patch -p1\n")
        self.write("p/0001-x.patch", "x\n")
        self.write("h/0002-y.patch", "y\n")

    def test_text_and_key(self):
        srcsha = build.tarball_sha(self.tarball, os.path.join(self.dir, "memo"))
        lines = build.key_text(srcsha, "gcc 1", "ld 2", self.frags, ["W=1", "KCFLAGS=-O2 -g"],
                               self.series, build.read_series(self.series))
        self.assertEqual(lines, [
            "luf-kbuild recipe 1", "source sha256 " + SHA_TAR, "compiler gcc 1", "linker ld 2",
            "base ARCH=x86_64 tinyconfig", "fragment %s base.config" % SHA_BASE,
            "fragment %s extra.config" % SHA_EXTRA, "make W=1", "make KCFLAGS=-O2 -g",
            "series " + SHA_SERIES, "patch %s ../p/0001-x.patch" % SHA_X,
            "patch %s 0002-y.patch" % SHA_Y])
        self.assertEqual(build.key_of(lines), "323e22fe95d34729")

    def test_pristine(self):
        lines = build.key_text(SHA_TAR, "gcc 1", "ld 2", self.frags[:1], [], None, [])
        self.assertEqual(lines[5:], ["fragment %s base.config" % SHA_BASE, "series none"])
        self.assertEqual(build.key_of(lines), "4d98196a3a2ab84e")

    def test_tarball_memo(self):
        memo = os.path.join(self.dir, "memo")
        self.assertEqual(build.tarball_sha(self.tarball, memo), SHA_TAR)
        st = os.stat(self.tarball)
        with open(memo) as f:
            line = f.read()
        self.assertEqual(line, "%s %d %d %d %s\n" % (self.tarball, st.st_size,
                                                    int(st.st_mtime), st.st_ino, SHA_TAR))
        with open(memo, "w") as f:  # the memo is believed while the stat matches
            f.write(line.replace(SHA_TAR, "f" * 64))
        self.assertEqual(build.tarball_sha(self.tarball, memo), "f" * 64)
        os.utime(self.tarball, (st.st_atime + 5, st.st_mtime + 5))
        self.assertEqual(build.tarball_sha(self.tarball, memo), SHA_TAR)


class Unmet(Tmp):
    def test_last_fragment_decides(self):
        a = self.write("a.config", "CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\nCONFIG_D=y\n"
                       "# a comment: CONFIG_E=y\nCONFIG_F=\"x\"\nCONFIG_G=y\n")
        b = self.write("b/b.config", "# CONFIG_B is not set\nCONFIG_C=m\nCONFIG_G=n\n")
        config = self.write(".config", "CONFIG_A=y\nCONFIG_B=y\n# CONFIG_C is not set\n"
                            "CONFIG_F=\"y\"\nCONFIG_H=y\n")
        self.assertEqual(build.unmet([a, b], config), [
            "  CONFIG_B: requested n in b.config, .config has CONFIG_B=y",
            "  CONFIG_C: requested m in b.config, .config has it unset",
            "  CONFIG_D: requested y in a.config, .config has it unset",
            "  CONFIG_F: requested \"x\" in a.config, .config has CONFIG_F=\"y\""])
        self.assertEqual(build.unmet([b, a], config), [
            "  CONFIG_D: requested y in a.config, .config has it unset",
            "  CONFIG_F: requested \"x\" in a.config, .config has CONFIG_F=\"y\"",
            "  CONFIG_G: requested y in a.config, .config has it unset"])
        self.assertEqual(build.unmet([a, b], a), [
            "  CONFIG_B: requested n in b.config, .config has CONFIG_B=y",
            "  CONFIG_C: requested m in b.config, .config has it unset",
            "  CONFIG_G: requested n in b.config, .config has CONFIG_G=y"])

    def test_all_there(self):
        a = self.write("a.config", "CONFIG_A=y\n# CONFIG_B is not set\n")
        self.assertEqual(build.unmet([a], self.write(".config", "CONFIG_A=y\n")), [])


class Series(Tmp):
    def test_parse(self):
        for p in ("a.patch", "b.patch", "../c.patch"):
            self.write(os.path.join("s", p), "")
        s = self.write("s/series", "# SPDX\n\n  a.patch -p1\n# b.patch\n"
                       "b.patch # why\n\t../c.patch\t-p1 # why\n")
        self.assertEqual(build.read_series(s), ["a.patch", "b.patch", "../c.patch"])

    def test_missing_patch(self):
        s = self.write("s/series", "# comment\nmissing.patch\n")
        with self.assertRaisesRegex(cli.Fail, "series: no such patch: .*/s/missing.patch"):
            build.read_series(s)

    def test_only_p1(self):
        self.write("s/a.patch", "")
        s = self.write("s/series", "a.patch -p0\n")
        with self.assertRaisesRegex(cli.Fail, r"only -p1 patches are supported \('a.patch -p0'\)"):
            build.read_series(s)


class Options(unittest.TestCase):
    def test_makevars(self):
        build.check_makevars(["W=1", "KCFLAGS=-O2 -g", "_X=", "LLVM=1", "C=1"])
        for bad in ("1W=2", "W", "=x", "-j4", "W-X=1", " W=1"):
            with self.assertRaisesRegex(cli.Fail, "--make wants VAR=VAL, got '%s'" % bad):
                build.check_makevars([bad])

    def test_parse(self):
        o = build.parse(["--fragment", "a", "--make", "W=1", "--fragment", "b", "--cold",
                         "--name", "n"])
        self.assertEqual((o.fragment, o.make, o.name, o.cold, o.series), (["a", "b"], ["W=1"],
                                                                          "n", True, None))
        for bad in (["--name"], ["--series", ""], ["--keep-going"], ["-h"]):
            with self.assertRaises(cli.Usage):
                build.parse(bad)


if __name__ == "__main__":
    unittest.main()
