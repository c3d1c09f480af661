#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""The core files that the series' first patch vendors into a kernel tree.

Patch 0001 of the series adds luf's core to the tree: include/luf/ (every
header but the user-space platform/user.h and error.h) and
lib/luf/<concept>.c (the repository's lib/<concept>.c). They must stay
byte-identical to the repository's.

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


def repo_files():
    """Map of kernel-tree path -> repository path for every vendored file."""
    out = {}
    for p in sorted((REPO / "include/luf").rglob("*.h")):
        rel = p.relative_to(REPO).as_posix()
        if rel not in NOT_VENDORED:
            out[rel] = p
    for p in sorted((REPO / "lib").glob("*.c")):
        out["lib/luf/" + p.name] = p
    return out


def first_patch():
    for line in (HERE / "series").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            return HERE / line
    sys.exit("vendored.py: the series file names no patch")


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


def main():
    argparse.ArgumentParser(description=__doc__.split("\n")[0]).parse_args()

    patch = first_patch()
    head, sections = split_sections(patch.read_text())
    want = repo_files()
    have = {}
    for path, sec in sections:
        if path.startswith("include/luf/") or re.fullmatch(r"lib/luf/[^/]+\.c", path):
            have[path] = new_file_content(sec)

    bad = []
    for path in sorted(set(want) | set(have)):
        if path not in have:
            bad.append(f"{path}: in the repository, not in {patch.name}")
        elif path not in want:
            bad.append(f"{path}: in {patch.name}, not in the repository")
        elif have[path] != want[path].read_bytes():
            bad.append(f"{path}: differs from {want[path].relative_to(REPO)}")

    for b in bad:
        print("vendored.py:", b, file=sys.stderr)
    if bad:
        print(f"vendored.py: {len(bad)} file(s) out of sync: refresh the series "
              "(lib/kernel/README.md)", file=sys.stderr)
        return 1
    print(f"vendored.py: the {len(want)} core files of {patch.name} match the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main())
