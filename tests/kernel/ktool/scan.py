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
file), unless the kernel has line tables (the kcsan kernel: AccessLines) and the
race is upstream's: both accesses seen (not at unknown origin), every frame of both
stacks, inline frames and all, resolved by addr2line to a line the patches did not
add or replace nor delete next to, no frame named luf, and no changed line in the
function each access is in (try_to_unmap_one()'s update_hiwater_rss(), a plain
read-compare-write of mm->hiwater_rss, seen in CI between kswapd and direct reclaim
in one mm, is upstream's). A report the scan cannot read whole fails too: not a plain "data-race in"
report (assert: ...), other text before its title, a racing access without a
symbolized stack under it, fewer stacks than the title names, no closing line, or
printk messages dropped. A race "at unknown origin" (one stack: the other access
was not caught) is judged by its one stack. A race whose racing accesses are all in
the optimistic-spin queue of sleeping locks (osq_lock.c) is judged by its top frames
only: the queue's nodes are per-CPU and its own, whatever lock, luf's or not, spins.

Limits: an unchanged line is not unchanged behaviour: a lock the patches removed
from a caller around an upstream access, or a condition changed on another line,
is not seen by the line rule (the function of the access must be unchanged, its
callers need not be). Only the top frame is matched against the changed functions (a race in an
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
import difflib
import os
import re
import subprocess

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
_FRAME = re.compile(_PREFIX + r"\s*([A-Za-z_][\w.]*)\+(0x[0-9a-f]+)/0x[0-9a-f]+")
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


class AccessLines:
    """Where the accesses of a KCSAN report are in the source of the kernel that
    printed it: @tree is a kbuild build's src/ (the patched tree, its out/vmlinux
    with line tables and out/System.map), @pristine the unpacked tarball it was
    copied from (kbuild's cp -al: an unpatched file is the same inode in both)."""

    def __init__(self, tree, pristine):
        self.tree, self.pristine = tree, pristine
        self.out = os.path.join(tree, "out")
        self._syms, self._changed, self._text = None, {}, {}

    @classmethod
    def of_kernel(cls, kernel):
        """The AccessLines of @kernel (a bzImage in a kbuild cache entry, whose key
        file names the tarball), or None when its tree, vmlinux, System.map, key or
        pristine tree is missing."""
        if not kernel:
            return None
        tree = os.path.join(os.path.dirname(os.path.abspath(kernel)), "src")
        if not all(os.path.isfile(os.path.join(tree, "out", f)) for f in ("vmlinux", "System.map")):
            return None
        # kbuild's key names the tarball; its pristine tree is src/<sha256[:16]>/.
        bdir = os.path.dirname(tree)
        try:
            with open(os.path.join(bdir, "key"), errors="replace") as f:
                sha = next(l.split()[2] for l in f if l.startswith("source sha256 "))
        except (OSError, StopIteration, IndexError):
            return None
        pristine = os.path.join(os.path.dirname(os.path.dirname(bdir)), "src", sha[:16],
                                "linux-source-6.1")
        return cls(tree, pristine) if os.path.isdir(pristine) else None

    def _symbols(self):
        if self._syms is None:
            self._syms = {}
            with open(os.path.join(self.out, "System.map"), errors="replace") as f:
                for l in f:
                    w = l.split()
                    if len(w) >= 3 and w[1] in "tTwW":
                        self._syms.setdefault(w[2], []).append(int(w[0], 16))
        return self._syms

    def _address(self, fn, off):
        addrs = self._symbols().get(fn, [])
        # A name two static functions share is ambiguous; offset 0 is no call's return.
        return addrs[0] + off - 1 if len(addrs) == 1 and off > 0 else None

    def _rel(self, where):
        """addr2line's FILE:LINE as (file relative to the tree, line), or None. An
        object an incremental build copied from an earlier build names that build's
        tree (kbuild rebuilt everything whose sources differ): its path counts as
        this tree's."""
        m = re.match(r"(.+):(\d+)(?: \(discriminator \d+\))?$", where)
        if not m:
            return None
        path = os.path.normpath(os.path.join(self.out, m.group(1)))
        rel = os.path.relpath(path, self.tree)
        if rel.startswith(".."):
            other = re.match(r".*/builds/[0-9a-f]+/src/(.+)$", path)
            if not other or other.group(1).startswith(("..", "out/")):
                return None
            rel = other.group(1)
        return rel, int(m.group(2))

    def chains(self, frames):
        """The frames @frames ((function, offset) pairs: return addresses in a stack
        KCSAN printed) as source: {frame: [(function, file relative to the tree,
        line), ...], the innermost inline frame first, or None if addr2line cannot
        place every inline frame of it in the tree}. One addr2line run."""
        out = {f: None for f in frames}
        addrs = {}
        for f in frames:
            a = self._address(*f)
            if a is not None:
                addrs.setdefault(a, []).append(f)
        if not addrs:
            return out
        try:
            p = subprocess.run(["addr2line", "-a", "-f", "-i", "-e",
                                os.path.join(self.out, "vmlinux")] +
                               ["0x%x" % a for a in addrs], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, errors="replace",
                               check=False, timeout=300)
        except (OSError, subprocess.TimeoutExpired):
            return out
        if p.returncode != 0:
            return out
        cur, chain = None, []
        for l in p.stdout.splitlines() + ["0x-end"]:
            if l.startswith("0x"):
                if cur is not None:
                    ok = chain and len(chain) % 2 == 0
                    res = []
                    for name, where in zip(chain[0::2], chain[1::2]):
                        loc = self._rel(where)
                        if name == "??" or loc is None:
                            ok = False
                            break
                        res.append((name,) + loc)
                    for f in addrs.get(cur, []):
                        out[f] = res if ok else None
                cur, chain = (int(l, 16) if l != "0x-end" else None), []
            else:
                chain.append(l)
        return out

    def changed_sites(self, fn, inlined):
        """The offsets into @fn, as a stack shows them (a return address), of the
        code inlined into it from @inlined on lines the patches changed: where a
        race must count as the series' (tests/kernel/ci kcsan's fixture)."""
        syms = self._symbols()
        if len(syms.get(fn, [])) != 1:
            return []
        start = syms[fn][0]
        end = min((a for v in syms.values() for a in v if a > start), default=start)
        frames = [(fn, off) for off in range(1, end - start + 1)]
        return [off for (_, off), chain in self.chains(frames).items() if chain and
                any(name == inlined and self.changed(rel, line) for name, rel, line in chain)]

    def changed(self, rel, line):
        """Whether line @line of the tree's file @rel is one the patches added or
        replaced, or next to lines they deleted (a new file's every line)."""
        return line in self._changed_lines(rel)

    def _changed_lines(self, rel):
        if rel not in self._changed:
            new_path = os.path.join(self.tree, rel)
            old_path = os.path.join(self.pristine, rel)
            try:
                same = os.path.samefile(new_path, old_path)
            except OSError:
                same = False
            lines = set()
            if not same:
                new = self._lines(rel)
                try:
                    with open(old_path, errors="replace") as f:
                        old = f.read().splitlines()
                except OSError:
                    old = []
                sm = difflib.SequenceMatcher(None, old, new, autojunk=False)
                for op, _, _, j1, j2 in sm.get_opcodes():
                    if op in ("replace", "insert"):
                        lines.update(range(j1 + 1, j2 + 1))
                    elif op == "delete":
                        lines.update((j1, j1 + 1))
            self._changed[rel] = lines
        return self._changed[rel]

    def _lines(self, rel):
        if rel not in self._text:
            with open(os.path.join(self.tree, rel), errors="replace") as f:
                self._text[rel] = f.read().splitlines()
        return self._text[rel]

    def body_changed(self, name, rel, line):
        """Whether the definition of function @name around line @line of @rel has a
        changed line (True too when it cannot be found: a macro's, say)."""
        text = self._lines(rel)
        first = None
        for k in range(min(line, len(text)) - 1, -1, -1):
            if _is_definition(text[k]) == name:
                first = k + 1
                break
        if first is None:
            return True
        last = next((k + 1 for k in range(line - 1, len(text)) if text[k].startswith("}")), None)
        if last is None:
            return True
        return any(first <= n <= last for n in self._changed_lines(rel))

    def upstream(self, stacks):
        """Whether the accesses whose stacks are @stacks (each a list of (function,
        offset) frames, the access's first) are upstream's: every frame resolves,
        inline frames and all; no frame is named luf; no frame's line (the access's,
        every call site's) is one the patches changed; and the function each access
        is in has no changed line. False when anything cannot be read."""
        try:
            chains = self.chains([f for s in stacks for f in s])
            for s in stacks:
                if not s:
                    return False
                for k, f in enumerate(s):
                    chain = chains.get(f)
                    if not chain:
                        return False
                    for name, rel, line in chain:
                        if "luf" in name.lower() or self.changed(rel, line):
                            return False
                    if k == 0 and self.body_changed(*chain[0]):
                        return False
            return True
        except (OSError, UnicodeError, ValueError):
            return False


def _base(fn):
    return fn.split(".")[0]


def kcsan_is_lufs(console, i, touched, lines=None):
    """Whether the KCSAN report whose title is line @i of @console must fail the
    boot (see the module's docstring); @touched as touched_functions(), @lines an
    AccessLines of the kernel that printed it, or None."""
    m = _TITLE.match(console[i])
    t = m and re.match(r"data-race in (\S+)(?: / (\S+))?$", m.group(1).strip())
    frames, tops, readable, closed = [], set(), bool(t), False
    access_stacks = []  # each access's frames, (function, offset), down to an entry
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
            access_stacks.append([])
            continue
        f = _FRAME.match(b)
        if f and not interrupted:
            frames.append(_base(f.group(1)))
            if access_stacks:
                access_stacks[-1].append((f.group(1), int(f.group(2), 16)))
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
    changed = tops & touched if touched is not None else set()
    # Both accesses seen (not at unknown origin: the other may be uninstrumented
    # code the series changes), each wholly on lines the patches left alone.
    if changed and readable and lines is not None and len(access_stacks) == 2 and \
            lines.upstream(access_stacks):
        changed = set()
    return (touched is None or not readable or
            any("luf" in f.lower() for f in frames + list(tops)) or bool(changed))


def scan(console, touched, rules=PROBLEM_RULES, access_lines=None):
    """Scan @console (a list of str): (problems, kcsan_elsewhere), the report lines
    that fail the boot and the KCSAN titles that are listed only; @touched as
    touched_functions(), @access_lines an AccessLines of the kernel, or None."""
    lines = problem_lines(console, rules)
    elsewhere = []
    for i, l in enumerate(console):
        if "KCSAN:" in l and i in lines and not kcsan_is_lufs(console, i, touched, access_lines):
            elsewhere.append(l.strip())
            lines.remove(i)
    return [console[k] for k in lines], elsewhere
