# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""The console scan: which lines of a serial console are kernel reports.

Any report fails a boot, with one exception: a KCSAN data race in code luf neither
is nor changes (6.1's printk, readahead and vmstat have some, seen under the
reclaim workload) is listed, not failed on.

A KCSAN report is luf's, and fails, when any frame of either stack names luf (not
counting the frames under an interrupt's or exception's entry, asm_*: the context
it interrupted, not the access's), or
the function of either racing access (its top frame) is one the series defines or
changes (named by its hunks: the hunk headers and the definitions inside the
hunks; with the kernel's tree, also every function a changed function was inlined
into: a static function absent from System.map, found by its callers in its own
file). A report the scan cannot read whole fails too: not a plain "data-race in"
report (assert: ...), other text before its title, a racing access without a
symbolized stack under it, fewer stacks than the title names, no closing line, or
printk messages dropped. A race "at unknown origin" (one stack: the other access
was not caught) is judged by its one stack. A race whose racing accesses are all in
the optimistic-spin queue of sleeping locks (osq_lock.c) is judged by its top frames
only: the queue's nodes are per-CPU and its own, whatever lock, luf's or not, spins.

Limits: only the top frame is matched against the changed functions (a race in an
out-of-line helper a changed function calls, with no luf frame in either stack, is
listed); inlining is followed only within the changed function's own .c file, so a
changed static inline function of a header (0008's bio_set_dev() in
include/linux/bio.h) does not make the functions that inline it count as changed
(a race there, dm-linear's linear_map() say, with no luf frame, is listed); files
built with KCSAN_SANITIZE := n (arch/x86/mm/, mm/page_alloc.c) are seen only at
unknown origin. Of luf's own console lines the LUF_DEBUG misuse report ("luf:
WHAT: PTR at FILE:LINE") and the series' set-up failures ("luf: set-up failed
(-12): lazy unmap flush stays off") are reports; the core's error lines ("luf:
FUNCTION: WHY", a set-up function refusing its arguments, which KUnit cases
provoke on purpose) are not.
"""
import os
import re

# What makes a console line a kernel report: one pattern per kind, each catching a
# report line no other pattern does (ktool.selftest shows each one's line, and that
# the line passes without it). Reports whose first line always holds another
# pattern need none of their own: lockdep's ("WARNING: possible circular locking
# ..."), KCSAN's, the soft lockup's and the page fault's ("BUG: ..."), the stack
# protector's ("Kernel panic - not syncing: stack-protector: ..."). The patterns
# are case-sensitive: the sanitizers' banners ("kcsan: non-strict mode configured
# - use CONFIG_KCSAN_STRICT=y ...") and the command line ("oops=panic") hold none.
PROBLEM_RULES = (
    r"Oops",
    r"BUG:",
    r"WARNING:",
    r"------------\[ cut here \]",
    r"Call Trace:",
    r"KASAN",
    r"UBSAN",
    r"DEBUG_LOCKS_WARN_ON",
    r"lockdep is turned off",
    r"Kernel panic",
    r"general protection fault",
    r"hard LOCKUP",
    r"detected (?:expedited )?stalls?",
    r"blocked for more than",
    r"list_(add|del) corruption",
    r"Out of memory",
    r"page allocation failure",
    r"segfault at",
    r"invalid opcode",
    r"kernel BUG",
    # a LUF_DEBUG misuse report (include/luf/platform/kernel.h)
    r"\bluf: .+ at \S+\.[ch]:\d+",
    # the series could not set luf up at boot (mm/luf.c): the kernel runs without it
    r"lazy unmap flush stays off",
)

# A line that opens a C function definition (name and "(" at column 0 or after the
# return type, no ";"): hunk headers and the kernel's own sources are read with it.
DEFN = re.compile(r"^(?:[A-Za-z_][\w \t*]*?[\s*])?([A-Za-z_]\w*)\s*\([^;]*$")
_NOT_FUNCTIONS = ("if", "for", "while", "switch", "return", "sizeof")

# KCSAN's report lines (printk's "[   12.345678] " prefix allowed).
_PREFIX = r"^(?:\[[^]]*\]\s*)?"
_FRAME = re.compile(_PREFIX + r"\s*([A-Za-z_][\w.]*)\+0x[0-9a-f]+/0x[0-9a-f]+")
_ACCESS = re.compile(_PREFIX + r"(?:race at unknown origin, with )?(?:\(marked\) )?"
                     r"(read|write|read-write|watchpoint)\b.* (to|of) ")
_TITLE = re.compile(_PREFIX + r"BUG: KCSAN: (.*)")
_END = re.compile(_PREFIX + r"={66}\s*$")

# The functions of kernel/locking/osq_lock.c, the queue in which a sleeping lock's
# waiters spin (mutex_optimistic_spin(), rwsem_optimistic_spin()). 6.1 reads a
# queued per-CPU node's fields plainly (osq_wait_next()'s prev->cpu against
# osq_lock()'s node->cpu); those nodes are the queue's own, so a race between two
# of these functions is the same whichever lock spins, and the frames under it
# (seen in CI: reclaim-ext4, under shrink_node and a luf frame) do not make it luf's.
OSQ_FUNCTIONS = frozenset(("osq_lock", "osq_wait_next", "osq_unlock"))


def problem_pattern(rules=PROBLEM_RULES):
    """One regular expression for @rules (a sequence of patterns)."""
    return re.compile("|".join(rules))


def problem_lines(console, rules=PROBLEM_RULES):
    """Indexes of the lines of @console (a list of str) that are kernel reports."""
    pat = problem_pattern(rules)
    return [k for k, l in enumerate(console) if pat.search(l)]


def _is_definition(line):
    d = DEFN.match(line)
    if d and not line.startswith(("#", " ", "\t")) and d.group(1) not in _NOT_FUNCTIONS:
        return d.group(1)
    return None


def series_functions(series):
    """The functions the patches of @series (a quilt series file's path) define or
    change: {name: {file, ...}}, or None if the series or a patch cannot be read."""
    names = {}
    try:
        with open(series) as f:
            patches = [l.strip() for l in f if l.strip() and not l.startswith("#")]
    except OSError:
        return None
    for p in patches:
        try:
            with open(os.path.join(os.path.dirname(series), p), errors="replace") as f:
                text = f.read()
        except OSError:
            return None
        cur = None
        for l in text.splitlines():
            g = re.match(r"^diff --git a/(\S+) b/", l)
            if g:
                cur = g.group(1)
                continue
            m = re.match(r"^@@ [^@]* @@ ?(.*)", l)
            if m:
                cand = m.group(1)
            elif l[:1] in " +-" and not l.startswith(("+++", "---")):
                cand = l[1:]
            else:
                cand = ""
            name = _is_definition(cand)
            if name:
                names.setdefault(name, set()).add(cur)
    return names


def inlined_into(changed, tree):
    """Functions of the kernel tree @tree (its out/System.map and sources) that a
    changed function of @changed (as series_functions()) was inlined into: a changed
    .c function absent from System.map, found by its callers in its own file (and
    their callers, while those are absent too)."""
    try:
        with open(os.path.join(tree, "out", "System.map")) as f:
            syms = {l.split()[2].split(".")[0] for l in f if len(l.split()) >= 3}
    except OSError:
        return set()
    found, seen = set(), set()
    todo = [(n, f) for n, fs in changed.items() for f in fs
            if f and f.endswith(".c") and n not in syms]
    while todo:
        name, f = todo.pop()
        if (name, f) in seen:
            continue
        seen.add((name, f))
        try:
            with open(os.path.join(tree, f), errors="replace") as src:
                text = src.read().splitlines()
        except OSError:
            continue
        call = re.compile(r"\b%s\s*\(" % re.escape(name))
        fn, body = None, False
        for l in text:
            d = None if body else _is_definition(l)
            if d:
                fn = d
            elif l.startswith("{"):
                body = True
            elif l.startswith("}"):
                body = False
            elif body and fn and fn != name and call.search(l) and fn not in found:
                found.add(fn)
                if fn not in syms:
                    todo.append((fn, f))
    return found


def touched_functions(series, kernel=None):
    """The set of functions a KCSAN race in counts as luf's: those @series defines or
    changes, plus (given @kernel, a bzImage in a kbuild cache entry with its src/)
    those they were inlined into. None if the series cannot be read: then every
    KCSAN report counts as luf's."""
    changed = series_functions(series)
    if changed is None:
        return None
    touched = set(changed)
    if kernel:
        tree = os.path.join(os.path.dirname(kernel), "src")
        if os.path.isdir(tree):
            touched |= inlined_into(changed, tree)
    return touched


def _base(fn):
    return fn.split(".")[0]


def kcsan_is_lufs(console, i, touched):
    """Whether the KCSAN report whose title is line @i of @console must fail the
    boot (see the module's docstring); @touched as touched_functions()."""
    m = _TITLE.match(console[i])
    t = m and re.match(r"data-race in (\S+)(?: / (\S+))?$", m.group(1).strip())
    frames, tops, readable, closed = [], set(), bool(t), False
    accesses = stacks = 0
    want_top = interrupted = False
    for b in console[i + 1:i + 2000]:
        if _END.match(b):
            closed = True
            break
        if "printk messages dropped" in b:
            readable = False
        if _ACCESS.match(b):
            accesses += 1
            want_top, interrupted = True, False
            continue
        f = _FRAME.match(b)
        if f and not interrupted:
            frames.append(_base(f.group(1)))
            interrupted = f.group(1).startswith("asm_")
            if want_top:
                tops.add(_base(f.group(1)))
                stacks += 1
        want_top = False
    if t:
        named = [x for x in t.groups() if x]
        tops |= {_base(re.sub(r"\+0x.*", "", x)) for x in named}
        # Each access the title names has its line, and a symbolized stack under it.
        readable = readable and closed and stacks == accesses == len(named)
    if tops and tops <= OSQ_FUNCTIONS:
        frames = []  # the queue's own per-CPU nodes: the lock's caller is not involved
    return (touched is None or not readable or
            any("luf" in f.lower() for f in frames + list(tops)) or bool(tops & touched))


def scan(console, touched, rules=PROBLEM_RULES):
    """Scan @console (a list of str): (problems, kcsan_elsewhere), the report lines
    that fail the boot and the KCSAN titles that are listed only."""
    lines = problem_lines(console, rules)
    elsewhere = []
    for i, l in enumerate(console):
        if "KCSAN:" in l and i in lines and not kcsan_is_lufs(console, i, touched):
            elsewhere.append(l.strip())
            lines.remove(i)
    return [console[k] for k in lines], elsewhere
