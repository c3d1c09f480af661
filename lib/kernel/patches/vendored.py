#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""The files the series vendors into a kernel tree from the repository.

Patch 0001 of the series adds luf's core to the tree: include/luf/ (every
header but the user-space platform/user.h and error.h) and
lib/luf/<concept>.c (the repository's lib/<concept>.c). The patch that adds
KUnit's suite luf_core adds its case file and the IPI backend it runs on
(KUNIT_FILES: the out-of-tree module's, which builds the same cases). They
must stay byte-identical to the repository's.

Usage: vendored.py   exit 1 and name every file that differs or is missing
                    on either side (ctest kernel.series); after a change to
                    the core, run refresh (lib/kernel/README.md)
"""
import argparse
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[2]
# User space only: the platform shim, and the error record (a kernel logs instead).
NOT_VENDORED = {"include/luf/platform/user.h", "include/luf/error.h"}
# The files of the suite luf_core, in the kernel tree's lib/luf/ and the repository's
# lib/kernel/module/.
KUNIT_FILES = ("luf_kunit.c", "luf_kernel.c", "luf_kernel.h")


def repo_files(repo):
    """Map of kernel-tree path -> path in @repo for every core file vendored."""
    out = {}
    for p in sorted((repo / "include/luf").rglob("*.h")):
        rel = p.relative_to(repo).as_posix()
        if rel not in NOT_VENDORED:
            out[rel] = p
    for p in sorted((repo / "lib").glob("*.c")):
        out["lib/luf/" + p.name] = p
    return out


def patches(sdir):
    """The patches the series file of @sdir names, in order, but those of another
    directory (the batched migration flush the series starts with, ../batched/):
    they vendor nothing."""
    out = [sdir / l for l in (l.split("#", 1)[0].strip()
                              for l in (sdir / "series").read_text().splitlines())
           if l and not l.startswith("../")]
    if not out:
        sys.exit("vendored.py: the series file names no patch")
    return out


def compare(want, have, where, repo):
    """Messages for each file of @want (tree path -> path in the repository @repo)
    and @have (tree path -> content the patch @where creates) missing on a side or
    differing."""
    bad = []
    for path in sorted(set(want) | set(have)):
        if path not in have:
            bad.append(f"{path}: in the repository, not in {where}")
        elif path not in want:
            bad.append(f"{path}: in {where}, not in the repository")
        elif have[path] != want[path].read_bytes():
            bad.append(f"{path}: differs from {want[path].relative_to(repo)}")
    return bad


def split_sections(text):
    """(head, [(path, section text)]) of a git format-patch file."""
    parts = re.split(r"(?m)^(?=diff --git )", text)
    sections = []
    for part in parts[1:]:
        m = re.match(r"diff --git a/(\S+) b/(\S+)", part)
        sections.append((m.group(2), part))
    return parts[0], sections


def new_file_content(section):
    """The content a 'new file' section creates, or None if it is not one."""
    if "\nnew file mode " not in section.split("@@", 1)[0]:
        return None
    body = section.split("\n@@", 1)
    if len(body) < 2:
        return b""
    lines = body[1].split("\n")[1:]
    out = []
    no_eol = False
    for ln in lines:
        if ln.startswith("+"):
            out.append(ln[1:])
        elif ln.startswith("\\ No newline"):
            no_eol = True
        elif ln.startswith("--") or ln == "":
            break
    text = "\n".join(out) + ("" if no_eol else "\n")
    return text.encode()


def check(repo, sdir):
    """(problems, summary line) of the series in @sdir against the repository @repo."""
    series = patches(sdir)
    head, sections = split_sections(series[0].read_text())
    want = repo_files(repo)
    kunit = {"lib/luf/" + f: repo / "lib/kernel/module" / f for f in KUNIT_FILES}
    have = {path: new_file_content(sec) for path, sec in sections
            if path.startswith("include/luf/") or re.fullmatch(r"lib/luf/[^/]+\.c", path)}
    bad = compare(want, have, series[0].name, repo)
    # The suite's files, in the patch that creates them; no later patch may
    # change a vendored file (the tree would then differ from the repository).
    have, where = {}, "the series"
    for patch in series[1:]:
        for path, sec in split_sections(patch.read_text())[1]:
            created = new_file_content(sec)
            if path in kunit and created is not None and path not in have:
                have[path], where = created, patch.name
            elif path in want or path in kunit:
                bad.append(f"{path}: changed again by {patch.name}")
    bad += compare(kunit, have, where, repo)
    return bad, (f"the {len(want)} core files of {series[0].name} and the "
                 f"{len(kunit)} of luf_core in {where} match the repository")


def main():
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()
    bad, summary = check(REPO, HERE)
    for b in bad:
        print("vendored.py:", b, file=sys.stderr)
    if bad:
        print(f"vendored.py: {len(bad)} file(s) out of sync: refresh the series "
              "(lib/kernel/README.md)", file=sys.stderr)
        return 1
    print("vendored.py: " + summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
