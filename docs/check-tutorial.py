#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""The tutorial's code is the example's code: every code block of a
Markdown page that a marker names is, byte for byte, the region of the
example file it names.

Usage: check-tutorial.py PAGE.md EXAMPLE_DIR

A marker is an HTML comment on the line right above a fenced block:

  <!-- pool.c: create -->     the lines between the two "[create]" marker
  ```c                        lines of EXAMPLE_DIR/pool.c (the markers
  ...                         themselves left out, as Doxygen's \\snippet)
  ```
  <!-- pool.c -->             the whole file

The page is plain Markdown (GitHub and Doxygen render it alike), so it
fails too on a Doxygen \\snippet or \\include command left in it, on a
```c block without a marker, and on a region of an example that no block
shows. Exit 0 when every block matches, 1 otherwise, 2 on a usage error.
"""
import os
import re
import sys

MARKER = re.compile(r"^<!-- ([\w.-]+\.[ch])(?:: ([\w-]+))? -->$")
FENCE = re.compile(r"^```")


def regions(path):
    """{name: text} of every "/* [name] */" pair of marker lines."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out, start = {}, {}
    for i, line in enumerate(lines):
        m = re.match(r"^\s*/\* \[([\w-]+)\] \*/\s*$", line)
        if not m:
            continue
        name = m.group(1)
        if name in start:
            out[name] = "\n".join(lines[start.pop(name) + 1:i]) + "\n"
        elif name in out:
            raise ValueError("%s: region [%s] marked twice" % (path, name))
        else:
            start[name] = i
    if start:
        raise ValueError("%s: region [%s] is not closed" % (path, ", ".join(start)))
    return out


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: check-tutorial.py PAGE.md EXAMPLE_DIR\n")
        return 2
    page, exdir = argv[1], argv[2]
    with open(page, encoding="utf-8") as f:
        lines = f.read().split("\n")
    bad, blocks, shown = 0, 0, set()
    cache = {}

    def fail(lineno, msg):
        nonlocal bad
        print("%s:%d: %s" % (page, lineno, msg))
        bad += 1

    i = 0
    while i < len(lines):
        line = lines[i]
        if re.match(r"^\s*[\\@](snippet|include|dontinclude)\b", line):
            fail(i + 1, "a Doxygen command, shown as text on GitHub: %s" % line.strip())
        m = MARKER.match(line)
        if FENCE.match(line):
            # A block without a marker: only code that is not C.
            end = next((j for j in range(i + 1, len(lines)) if FENCE.match(lines[j])), None)
            if end is None:
                fail(i + 1, "code block not closed")
                break
            if line.strip() in ("```c", "```C"):
                fail(i + 1, "a C block with no <!-- file: region --> marker above it")
            i = end + 1
            continue
        if not m:
            i += 1
            continue
        fname, region = m.group(1), m.group(2)
        if i + 1 >= len(lines) or lines[i + 1] != "```c":
            fail(i + 1, "marker not followed by a ```c line")
            i += 1
            continue
        end = next((j for j in range(i + 2, len(lines)) if FENCE.match(lines[j])), None)
        if end is None:
            fail(i + 2, "code block not closed")
            break
        got = "\n".join(lines[i + 2:end]) + "\n"
        path = os.path.join(exdir, fname)
        try:
            if path not in cache:
                with open(path, encoding="utf-8") as f:
                    cache[path] = (f.read(), regions(path))
        except (OSError, ValueError) as e:
            fail(i + 1, str(e))
            i = end + 1
            continue
        whole, regs = cache[path]
        if region is None:
            want = whole
        elif region in regs:
            want = regs[region]
            shown.add((path, region))
        else:
            fail(i + 1, "%s has no region [%s]" % (path, region))
            i = end + 1
            continue
        blocks += 1
        if got != want:
            g, w = got.split("\n"), want.split("\n")
            k = next((k for k in range(max(len(g), len(w)))
                      if k >= len(g) or k >= len(w) or g[k] != w[k]), 0)
            fail(i + 3 + k, "the block differs from %s%s at its line %d:\n  page:    %r\n"
                 "  example: %r" % (fname, " [%s]" % region if region else "", k + 1,
                                    g[k] if k < len(g) else "(end of block)",
                                    w[k] if k < len(w) else "(end of region)"))
        i = end + 1
    for path, (_, regs) in sorted(cache.items()):
        for region in sorted(regs):
            if (path, region) not in shown:
                print("%s: region [%s] is shown by no block of %s" % (path, region, page))
                bad += 1
    if blocks == 0:
        print("%s: no marked code block" % page)
        bad += 1
    if bad:
        print("check-tutorial: FAIL: %d problem(s)" % bad)
        return 1
    print("check-tutorial: %d blocks of %s match their example" % (blocks, page))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
