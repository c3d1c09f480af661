#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""Self-test of kdoc2dox.py: each comment form luf's headers use, and what
Doxygen must get for it. Run: python3 docs/kdoc2dox_test.py (ctest docs.filter)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kdoc2dox  # noqa: E402

SAMPLE = """/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/x.h - a sample header.
 *
 *   a      b
 *   c -> d
 */
#define X_ONE 1 /* one */

/* Bytes for @n CPUs. */
static inline int x_size(unsigned int n)
{
	/* inside a body: untouched */
	return n;
}

/**
 * x_init() - set up @x, see #if and <luf/luf.h>.
 * @x: storage. @n: CPUs, %X_ONE at least.
 * @a, @b: ugens.
 * Return: 0, or -EINVAL.
 */
int x_init(void *x, unsigned int n, long a, long b);

struct x_s {
	int m; /* a member */
};

/**
 * struct x_k - kernel-doc members
 * @n: the count, which
 *	goes on
 * @fn: a hook
 */
struct x_k {
	unsigned long n;
	int (*fn)(void *a,
		  int b);
};

/* a comment on nothing */

/*
 * The rules:
 *  R1. one rule
 *      that goes on
 *  R2. another
 * and after them.
 */
int x_rules(void);

/* The object around @ptr. */
/* clang-format off */
#define x_entry(ptr) \\
	((char *)(ptr))
/* clang-format on */

#if 1
#endif
"""

EXPECT = [
    "/** \\file",
    " * \\brief a sample header.",
    " * \\verbatim   a      b",
    "   c -> d \\endverbatim",
    "#define X_ONE 1 /**< one */",
    "/** Bytes for \\p n CPUs. */",
    "\t/* inside a body: untouched */",
    " * \\brief set up \\p x, see \\#if and \\<luf/luf.h\\>.",
    " * \\param x storage. \\param n CPUs, \\c X_ONE at least.",
    " * \\param a,b ugens.",
    " * \\return 0, or -EINVAL.",
    "\tint m; /**< a member */",
    "\tunsigned long n; /**< the count, which goes on */",
    "\t\t  int b); /**< a hook */",
    "/* a comment on nothing */",
    " * - <b>R1.</b> one rule",
    " *      that goes on",
    " * - <b>R2.</b> another",
    " * <p>and after them.",
    "/** The object around \\p ptr. */",
    "/* clang-format off */",
]
# Never in the output: a member's "@name:" line stays in the struct's own
# text (it is beside the member already), a " * " inside \\verbatim.
NEVER = [" * \\c n: the count, which", " *   c -> d \\endverbatim"]


def main():
    out = kdoc2dox.filter_text(SAMPLE)
    bad = 0
    if out.count("\n") != SAMPLE.count("\n"):
        print("line count changed: %d -> %d" % (SAMPLE.count("\n"), out.count("\n")))
        bad += 1
    lines = out.split("\n")
    for want in EXPECT:
        if want not in lines:
            print("missing: %r" % want)
            bad += 1
    for never in NEVER:
        if never in lines:
            print("unexpected: %r" % never)
            bad += 1
    page = kdoc2dox.md_text("<!-- SPDX-License-Identifier: MIT -->\n# Title {#t}\n\ntext\n")
    if page != "# Title {#t}\n<!-- SPDX-License-Identifier: MIT -->\n\ntext\n":
        print("--md did not put the title first: %r" % page)
        bad += 1
    page = kdoc2dox.md_text("<!-- SPDX-License-Identifier: MIT -->\n# Title <!-- doxygen: {#t} -->\n"
                            "<!-- doxygen: [TOC] -->\n<!-- pool.c: x -->\n")
    if page != "# Title {#t}\n<!-- SPDX-License-Identifier: MIT -->\n[TOC]\n<!-- pool.c: x -->\n":
        print("--md did not unwrap <!-- doxygen: ... -->: %r" % page)
        bad += 1
    strict = kdoc2dox.filter_text(SAMPLE, strict=True)
    if "/** Bytes for" in strict or "/**< one" in strict:
        print("--strict promoted a plain comment")
        bad += 1
    if bad:
        print(out)
        return 1
    print("kdoc2dox: %d forms converted as expected" % len(EXPECT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
