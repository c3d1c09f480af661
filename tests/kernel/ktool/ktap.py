# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""KUnit results through the kernel's own parser: tools/testing/kunit/kunit.py
parse reads the KTAP on a console and exits nonzero on a failed, crashed or
missing case; its --json output gives the counts."""
import glob
import json
import os
import subprocess
import sys

from . import cli


def find_parser(kernel=None, cache=None):
    """The kunit.py to use: $LUF_KUNIT_PY, else the one in the source tree @kernel (a
    bzImage in a kbuild cache entry) was built from, else any in the kbuild @cache's
    unpacked sources; None if there is none."""
    cands = [os.environ.get("LUF_KUNIT_PY", "")]
    if kernel:
        cands.append(os.path.join(os.path.dirname(kernel), "src/tools/testing/kunit/kunit.py"))
    if cache:
        cands += sorted(glob.glob(os.path.join(
            cache, "src/*/linux-source-6.1/tools/testing/kunit/kunit.py")))
    return next((c for c in cands if c and os.access(c, os.R_OK)), None)


def find_or_unpack(scratch, kernel=None):
    """find_parser()'s kunit.py (the kbuild cache's: cli.cache_dir()), else the one
    in linux-source-6.1's tarball, unpacked into @scratch; None if neither (the
    tarball comes with scripts/deps.sh kernel)."""
    p = find_parser(kernel, cli.cache_dir())
    if not p and os.access(cli.TARBALL, os.R_OK):
        subprocess.run(["tar", "-xJf", cli.TARBALL, "-C", scratch,
                        "linux-source-6.1/tools/testing/kunit"], check=True)
        p = os.path.join(scratch, "linux-source-6.1/tools/testing/kunit/kunit.py")
    return p


def parse(parser, console, json_path):
    """Run @parser (a kunit.py) on the console file @console, writing its JSON to
    @json_path: (exit status, its output as text)."""
    # --json=FILE: with "--json FILE input_file" argparse takes input_file for an
    # unrecognized argument, and kunit.py exits 2.
    p = subprocess.run([sys.executable, parser, "parse", "--json=" + json_path, console],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace", check=False)
    return p.returncode, p.stdout


def count_cases(json_path):
    """{PASS, FAIL, SKIP, ERROR: number of cases, "failed": [SUITE.CASE of each
    FAIL]} from kunit.py's JSON (ERROR: a case that crashed or never reported),
    None if it cannot be read."""
    try:
        with open(json_path) as f:
            kj = json.load(f)
    except (OSError, ValueError):
        return None
    counts = {"PASS": 0, "FAIL": 0, "SKIP": 0, "ERROR": 0, "failed": []}

    def walk(t):
        for c in t.get("test_cases", []):
            s = c.get("status", "ERROR")
            counts[s] = counts.get(s, 0) + 1
            if s == "FAIL":
                counts["failed"].append("%s.%s" % (t.get("name", "?"), c.get("name", "?")))
        for s in t.get("sub_groups", []):
            walk(s)
    walk(kj)
    return counts


def main(argv):
    """python3 -m ktool.ktap find [--kernel BZIMAGE] [--cache DIR]: print find_parser()'s
    answer; exit 1 if there is none."""
    import argparse
    ap = argparse.ArgumentParser(prog="ktool.ktap")
    ap.add_argument("command", choices=["find"])
    ap.add_argument("--kernel")
    ap.add_argument("--cache")
    a = ap.parse_args(argv)
    p = find_parser(a.kernel, a.cache)
    if not p:
        return 1
    print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
