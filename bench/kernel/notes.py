#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""bench/kernel/notes.py - the kernel numbers of NOTES.md and README.md, from the data.

Every number in bench/kernel/NOTES.md, and in the README's paragraph between
the markers "kernel-numbers:begin" and "kernel-numbers:end", comes from
bench/kernel/compare.json (the short three-run comparison) and
bench/kernel/compare-full.json (the full reclaim workload), both written by
tests/kernel/compare with their provenance.

Usage: notes.py [--check | --self-test] [--out FILE] [--readme FILE] [--short JSON]
                [--full JSON] [--sweep JSON] [--hotpath JSON] [--ext4 JSON] [--swap JSON]
                [--migration JSON] [--results FILE] [--patches DIR]
  --self-test  show that --check fails: on a copy of the README with one digit
            of its kernel paragraph changed, and on a copy of the series with
            one byte added to a patch (exit 0 if both fail as they must)
  --check   exit 1 (and say which line differs) if FILE or the README's
            paragraph is not what the JSON files give, or if a JSON was
            recorded on another series than DIR's (the hash of
            tests/kernel/ktool/kernels.py's series_hash); FILE defaults to
            bench/kernel/NOTES.md, the README to README.md, DIR to
            lib/kernel/patches; and if section 4 of bench/RESULTS.md (FILE of
            --results) does not hold each JSON's report (tests/kernel/compare
            --render; the sweep's and the hot paths' JSON, bench/kernel/
            compare-sweep.json, compare-hotpath.json, compare-ext4.json,
            compare-swap.json and compare-migration.json (--migration: the
            three kernels on migrate and tier; no paragraph of the notes),
            where they exist, are checked as the others, their series too)
            and the notes, as ONLY=kernel bench/run writes them
Exit: 0 written or up to date, 1 out of date, 2 usage or unreadable input.
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KDIR = os.path.join(HERE, "..", "..", "tests", "kernel")
sys.path.insert(0, KDIR)
# tests/kernel/ktool: compare's bootstrap interval, rounding and CPU split, and
# the series' hash, are the ones the notes use (one implementation of each).
from ktool import compare as cp  # noqa: E402 pylint: disable=wrong-import-position
from ktool.kernels import series_hash  # noqa: E402 pylint: disable=wrong-import-position


def n(x):
    """An integer with thousands separators."""
    return f"{int(round(x)):,}"


def pc(v):
    """A percentage to one decimal, toward zero (compare's pct_down: one rule)."""
    return cp.pct_down(v)


def sec(v):
    """Seconds, one decimal."""
    return f"{v:.1f}"


class Cmp:
    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            self.d = json.load(f)
        self.path = path

    def med(self, w, k, field):
        v = self.d["workloads"][w][k]["median"].get(field)
        if v is None:
            v = statistics.median(self.col(w, k, field))
        return v

    def col(self, w, k, field):
        return [r[field] for r in self.d["workloads"][w][k]["runs"] if r.get(field) is not None]

    def rng(self, w, k, field, fmt=n):
        c = self.col(w, k, field)
        return f"{fmt(min(c))}-{fmt(max(c))}"

    def median_run(self, w, k):
        """The passing run whose shootdown count is nearest the median."""
        m = self.med(w, k, "tlb_shootdowns")
        runs = [r for r in self.d["workloads"][w][k]["runs"]
                if r.get("status") == "pass" and r.get("tlb_shootdowns") is not None]
        return min(runs, key=lambda r: abs(r["tlb_shootdowns"] - m))

    def cut(self, w, k="luf"):
        return 100.0 * (1 - self.med(w, k, "tlb_shootdowns") / self.med(w, "pristine", "tlb_shootdowns"))

    def prov(self):
        p = self.d["provenance"]
        return f"tree {p['tree']}, series {p['series']}"


def interval(c, w, field):
    """The 95% bootstrap interval of luf's median against pristine's, in percent."""
    iv = cp.boot_interval(c.col(w, "luf", field), c.col(w, "pristine", field), cp.med_diff_pct)
    return cp.iv_text(iv) if iv else "none (one run)"


# What luf_tree_rev's "(with local changes)" means, said where it shows.
LOCAL = ('; "with local changes": files under tests/kernel or lib/kernel (then: Markdown too) differed '
         'from that commit when the comparison ended')


def cpu_time(f, sweep=None):
    """The runtime paragraph's account of where the time went: /proc/stat's
    CPU-seconds of the full workload (compare's split), medians per
    kernel, from the full comparison's JSON or else from the sweep's
    pristine and luf boots, if either has them."""
    for c, what in ((f, "the full comparison's boots"), (sweep, "the sweep's boots of the "
                                                          "pristine and the luf kernel")):
        ws = c.d["workloads"].get("reclaim", {}) if c else {}
        sp = {k: cp.cpu_split(ws[k]["runs"]) if k in ws else None for k in ("pristine", "luf")}
        if None not in sp.values():
            break
    else:
        return ("Where the time goes was not measured in these JSON files (no /proc/stat\n"
                "split); this is a shared two-core host under TCG, and hardware will differ.")
    runs = min(len([r for r in ws[k]["runs"] if r.get("status") == "pass"])
               for k in ("pristine", "luf"))
    rt = {k: statistics.median([r["runtime_s"] for r in ws[k]["runs"]
                                if r.get("status") == "pass" and r.get("runtime_s")])
          for k in ("pristine", "luf")}
    cover = {k: 100.0 * sum(sp[k].values()) / (4 * rt[k]) for k in ("pristine", "luf")}
    diff = sorted(((sp["luf"][name] - sp["pristine"][name], name) for name, _ in cp.CPU_ROWS),
                  key=lambda t: -abs(t[0]))
    parts = ", ".join(f"{name} {d:+.1f} s" for d, name in diff)
    same = c is f
    return (f"Where the time went (/proc/stat, CPU-seconds of the 4 vCPUs) was recorded\n"
            f"on {what} ({c.prov()}; {'medians of ' if runs > 1 else ''}{runs} "
            f"run{'s' if runs > 1 else ''} each), luf minus pristine, largest first:\n"
            f"{parts}; those boots ran {sec(rt['pristine'])} s (pristine) and "
            f"{sec(rt['luf'])} s (luf), and the split\ncovers {cover['pristine']:.0f}% and "
            f"{cover['luf']:.0f}% of 4 vCPUs times that (the rest is time /proc/stat\n"
            f"did not count; not examined). "
            + ("" if same else
               "Those are not the boots of the interval above, so\nthey do not say "
               "what costs the time at its upper end: that is not\nestablished. ")
            + "This is a shared two-core host under TCG, and hardware will\ndiffer.")


def runtime_verdict(f):
    """What the full runtime's interval says about the issue's target (upper end
    at most +5%, from at least 7 interleaved boots each)."""
    iv = cp.boot_interval(f.col("reclaim", "luf", "runtime_s"),
                          f.col("reclaim", "pristine", "runtime_s"), cp.med_diff_pct)
    if not iv:
        return ""
    said = ": its upper end is within +5%" if iv[1] <= 5.0 else ": its upper end is above +5%, the target is missed"
    if f.d["runs"] < 7:
        said += f", and from {f.d['runs']} boots each, not the 7 the issue asks for"
    return said


def hot_paths(h):
    """The hot paths' paragraph, from compare-hotpath.json ("" without it)."""
    if h is None:
        return ""
    ws = h.d["workloads"].get("hotpath", {})
    cells = []
    for name, key in cp.HOT:
        a, b = ([r[key] for r in ws.get(k, {}).get("runs", [])
                 if r.get("status") == "pass" and r.get(key) is not None]
                for k in ("luf", "pristine"))
        if a and b:
            cells.append((name, cp.med_diff_pct(a, b), cp.boot_interval(a, b, cp.med_diff_pct)))
    if not cells:
        return ""
    sg = lambda d: ("+" if d > 0 and pc(d) != "0.0" else "") + pc(d)
    said = ";\n".join(f"{name} {sg(d)}% (interval {cp.iv_text(iv)})" if iv else
                      f"{name} {sg(d)}% (one run each: no interval)" for name, d, iv in cells)
    ends = [iv[1] for _, _, iv in cells if iv]
    if len(ends) < len(cells):
        verdict = "no verdict on the +2% target without an interval for every loop"
    elif max(ends) <= cp.HOT_TARGET:
        verdict = "every upper end is within +2%"
    elif min(ends) > cp.HOT_TARGET:
        verdict = "every upper end is beyond +2%"
    else:
        verdict = "%d of %d upper ends are beyond +2%%" % (
            sum(e > cp.HOT_TARGET for e in ends), len(ends))
    boots = h.d["runs"]
    med = lambda k, f: statistics.median(
        [r[f] for r in ws[k]["runs"] if r.get("status") == "pass" and r.get(f) is not None])
    hooks = statistics.median(
        [r["nr_luf_done_ipi"] + r["nr_luf_done_switch"] for r in ws["luf"]["runs"]
         if r.get("status") == "pass" and r.get("nr_luf_done_ipi") is not None and
         r.get("nr_luf_done_switch") is not None])
    luf_ipis = [r.get("nr_luf_ipis") for r in ws["luf"]["runs"] if r.get("status") == "pass"]
    no_ipis = (f"`nr_luf_ipis` was 0 in all {len(luf_ipis)} boots of the patched kernel: luf "
               f"sent no IPI of its own on these paths" if luf_ipis and not any(luf_ipis) else
               f"`nr_luf_ipis` was {', '.join(str(x) for x in luf_ipis)} in the patched kernel's boots")
    spread = max(max(c) / min(c) for c in
                 ([r[f] for r in ws[k]["runs"] if r.get("status") == "pass" and r.get(f)]
                  for k in ("pristine", "luf") for _, f in cp.HOT))
    return f"""
**The hot paths reclaim does not take** (`bench/kernel/compare-hotpath.json`, {boots}
interleaved boot{"s" if boots != 1 else ""} of each kernel, {h.prov()}{LOCAL if "local changes" in h.prov() else ""}):
luf against pristine, medians, {said}: {verdict}. Between boots of
one kernel the same loop's time differs by up to {spread:.1f}x on this shared
two-core host, so a 2% difference is below what it resolves; that the
medians differ is not shown either way. The kernels' shootdowns per boot
were nearly equal (medians {n(med("pristine", "tlb_shootdowns"))} and {n(med("luf", "tlb_shootdowns"))}), and {no_ipis}.
What luf adds is its TLB-flush hook ({n(hooks)} runs per boot, the median
of `nr_luf_done_ipi` + `nr_luf_done_switch`), with interrupts off, in
every TLB flush of a CPU (`flush_tlb_func()`: a CPU's own flushes inside
the measured system calls, and the flush IPIs it receives) and in every
switch of mm that loads another mm or leaves lazy TLB mode:
`luf_tlb_flush_begin()` and `_end()` of mm/luf.c, that is
`luf_flush_snapshot()` and `luf_local_flush_end()` of the core, whose
instructions `bench/micro/run` counts (`hook_idle`: reclaim deferred
nothing since the CPU's last flush, a few loads; `hook_regroup_64`:
the CPU was the last of its 64-CPU word at the group's minimum and
recomputes the group, once per move of the group). While other CPUs move
the group under it, a recomputation goes round at most
`__LUF_DONE_SUM_ROUNDS` + 1 times (`bench/micro/run` gives that in
instructions too), then recomputes the summary's `all` once, in at most
`__LUF_DONE_SUM_ROUNDS` + 1 passes of two loads per 64 CPUs, and leaves it
marked behind past that; a compare-and-swap retry is another CPU's raise
of the same word succeeding. The guest has 4 CPUs, so its recomputations
read 4 counters, not 64.
"""


def ext4_files(e):
    """The ext4 paragraph, from compare-ext4.json ("" without it)."""
    if e is None:
        return ""
    w = "reclaim-ext4"
    cut = e.cut(w)
    iv = interval(e, w, "tlb_shootdowns")
    met = "meets" if cut >= cp.EXT4_TARGET else "misses"
    return f"""
**Reclaim over a file on ext4** (`bench/kernel/compare-ext4.json`, {e.d["runs"]}
interleaved boots of each kernel, {e.prov()}{LOCAL if "local changes" in e.prov() else ""}):
the {"short " if e.d.get("short") else ""}reclaim workload over `/mnt/data`, a file of an ext4 file system (journal on,
`data=ordered`) as large as the disk the reclaim workload reads{" (384 MiB, read once)" if e.d.get("short") else ""}. The patched kernel
sent {pc(cut)}% fewer TLB shootdowns than pristine (medians
{n(e.med(w, "pristine", "tlb_shootdowns"))} and {n(e.med(w, "luf", "tlb_shootdowns"))}; 95% interval of the difference {iv}),
which {met} the 90% the issue asks for; runtime {e.rng(w, "pristine", "runtime_s", sec)} s
on pristine and {e.rng(w, "luf", "runtime_s", sec)} s on luf (the runs' range).
"""


def read_phase(w, name):
    """", in the read phase alone: ..." of workload @name of compare-swap.json, from
    reclaim's read_tlb_shootdowns ("" in a JSON recorded before it had them)."""
    if not all(w.col(name, k, "read_tlb_shootdowns") for k in ("pristine", "luf")):
        return ""
    pr, lu = (w.med(name, k, "read_tlb_shootdowns") for k in ("pristine", "luf"))
    if pr <= 0 or lu < 0:
        return ""
    return (f"; in the read phase alone, after the fill, {pc(100.0 * (1 - lu / pr))}% fewer "
            f"(medians {n(pr)} and {n(lu)})")


def reclaimed_range(w):
    """How much the boots of compare-swap.json reclaimed, per workload."""
    parts = []
    for name, _ in cp.MEMORY_TARGETS:
        if name in w.d["workloads"]:
            c = [v for k in ("pristine", "luf") for v in w.col(name, k, "pages_reclaimed")]
            if c:
                parts.append(f"{name} {n(min(c))}-{n(max(c))}")
    return ("Pages reclaimed per boot (both kernels): " + ", ".join(parts) +
            "; the report of the JSON gives the shootdowns per 1,000 pages reclaimed too."
            if parts else "")


def anon_miss(w):
    """Why reclaim-anon misses its target, said only where it does."""
    name, target = "reclaim-anon", dict(cp.MEMORY_TARGETS)["reclaim-anon"]
    if name not in w.d["workloads"] or w.cut(name) >= target:
        return ""
    return """
A reclaim pass sends one shootdown for all the unmaps it did not defer, so while
the first unmaps of dirty pages are spread over the passes, a pass with one of
them among its folios costs the shootdown it would have cost on pristine: the
reclaim-anon read phase's saving stays small while its children read each page
twice."""


def swap_memory(w):
    """The swap-backed memory paragraph, from compare-swap.json ("" without it)."""
    if w is None:
        return ""
    rows = []
    for name, target in cp.MEMORY_TARGETS:
        if name not in w.d["workloads"]:
            continue
        cut = w.cut(name)
        rows.append(f"{name} {pc(cut)}% fewer (medians {n(w.med(name, 'pristine', 'tlb_shootdowns'))} and "
                    f"{n(w.med(name, 'luf', 'tlb_shootdowns'))}; {interval(w, name, 'tlb_shootdowns')}; "
                    f"{n(w.med(name, 'luf', 'nr_luf_deferred'))} deferred), which "
                    f"{'meets' if cut >= target else 'misses'} the {target:.0f}% the issue asks for, "
                    f"runtime {w.rng(name, 'pristine', 'runtime_s', sec)} s on pristine and "
                    f"{w.rng(name, 'luf', 'runtime_s', sec)} s on luf{read_phase(w, name)}")
    return f"""
**Swap-backed memory** (`bench/kernel/compare-swap.json`, {w.d["runs"]} interleaved boots
of each kernel, {w.prov()}{LOCAL if "local changes" in w.prov() else ""}): the reclaim workload over a
file on a tmpfs (reclaim-tmpfs) and over private anonymous memory read by 3 forked
children (reclaim-anon), 3/4 of the disk each, the disk being swap. The patched kernel
sent: {"; ".join(rows)}. The fill comes first and is counted: reclaim-tmpfs
writes its file with write(), which maps nothing, and its readers map every page
clean; reclaim-anon writes its memory through the parent's mapping, and fork()
copies the parent's dirty PTEs into the children, so reclaim's first unmap of each
page finds dirty translations, which luf never defers (flushed as on pristine):
only a page read back from swap, mapped clean, is deferred when reclaimed again.{anon_miss(w)} {"This series defers no flush of anonymous or shmem folios, so these are a baseline: how much two boots of one kernel differ here." if not any(w.med(x, "luf", "nr_luf_deferred") for x, _ in cp.MEMORY_TARGETS if x in w.d["workloads"]) else reclaimed_range(w)}
"""


def render(short, full, hot=None, sweep=None, ext4=None, swap=None):
    s, f = short, full
    rf = f.median_run("reclaim", "luf")
    f_flushes, f_drains = rf["nr_luf_remote_flush"], rf["nr_luf_drain"]
    f_pages = rf["pages_reclaimed"]
    bound = rf.get("luf_park_pages")
    peaks = f.col("reclaim", "luf", "luf_park_peak")
    who = ("the drains, not the bound, set" if f_drains * 2 > f_flushes else
           "the bound, not the drains, sets")
    cpk = lambda c, k: 1000.0 * c.med("checker", k, "tlb_shootdowns") / c.med("checker", k, "pages_reclaimed")
    lfa = lambda k: f.med("reclaim", k, "nr_tlb_local_flush_all")
    noswitch = "luf-noswitch" in s.d["workloads"].get("reclaim", {})
    out = f"""<!-- SPDX-License-Identifier: GPL-2.0-only OR MIT -->
<!-- Written by bench/kernel/notes.py from compare.json, compare-full.json, compare-sweep.json, compare-hotpath.json, compare-ext4.json and compare-swap.json: edit the script. -->
### Reading the kernel numbers

**Two comparisons.** Under TCG the issue's reclaim workload (a 768 MiB
disk read twice by 4 pinned threads) ran {sec(min(f.col("reclaim", "luf", "runtime_s") + f.col("reclaim", "pristine", "runtime_s")))}-{sec(max(f.col("reclaim", "luf", "runtime_s") + f.col("reclaim", "pristine", "runtime_s")))} s per boot in the full comparison, so
the three-run comparison above uses a 384 MiB disk read once (`--short`)
and a 30 s checker with 4096 hot pages per reader. The full reclaim
workload ran {f.d["runs"]} interleaved boots of each kernel (`bench/kernel/compare-full.json`,
{f.prov()}{LOCAL if "local changes" in f.prov() else ""}; its report is above the notes):
{n(f.med("reclaim", "pristine", "tlb_shootdowns"))} TLB shootdowns on the pristine kernel (runs {f.rng("reclaim", "pristine", "tlb_shootdowns")}) and
{n(f.med("reclaim", "luf", "tlb_shootdowns"))} on the patched one ({f.rng("reclaim", "luf", "tlb_shootdowns")}), **{pc(f.cut("reclaim"))}% fewer**, for
{n(f.med("reclaim", "luf", "pages_reclaimed"))} pages reclaimed ({n(f.med("reclaim", "pristine", "pages_reclaimed"))} on the pristine kernel;
{n(f.med("reclaim", "luf", "nr_luf_deferred"))} deferred translations).

**The memory it costs: at most {n(max(peaks))} pages parked** (`vm.luf_park_peak`, the
largest of the {len(peaks)} runs' peaks, a sysctl rather than a /proc/meminfo or
/proc/vmstat line: {int(10000.0 * max(peaks) / 65536) / 100:.2f}% of the guest's 256 MiB, {int(10000.0 * max(peaks) * 4 / min(f.col("reclaim", "luf", "guest_memtotal_kb"))) / 100:.2f}% of its MemTotal; the bound,
`vm.luf_park_pages`, is {n(bound)} pages, 2% of the RAM the kernel counted at
boot, before init memory was freed; a pass may add its folios before the
bound is applied). Reclaimed pages
wait on one pend list; past the bound one flush for the union of their
CPUs returns them all, so the bound sets how many pages a shootdown pays
for: {n(f_pages)} pages for {n(f_flushes)} flushes in the median run, about
{n(f_pages / f_flushes)} each (more than the bound: pages whose CPUs had all flushed
since, at a switch or an IPI, went back without a flush of luf's), of
which {n(f_drains)} flushes were drains ({who} the count). Until
issue 26, direct reclaim drained the park for every allocation it left
short, and most flushes were such drains (the comparison recorded on
series 72eba01f42e56f9e, in the history of this file's JSON). Order-0
allocations now go round again and wait for the bound; higher orders,
the allocator before the OOM killer, CMA, offlining and the idle work
still drain.
CPUs in lazy TLB mode get no IPI from luf (they catch up with the mm's
TLB generation, which every deferral bumps, before they run it again).
In the median run luf counted a CPU done {n(rf["nr_luf_done_switch"])} times at a context switch
and {n(rf["nr_luf_done_ipi"])} times at a flush IPI: TCG has no PCID, so every switch of mm
flushes{"" if noswitch else "; no run of this series has luf.switch_done=0 (a switch counting for nothing, closer to a PCID machine), so how much of the saving the switches give is not measured here"}.
"""
    if noswitch:
        out += f"""
**Context switches are not where the savings come from.** With
`luf.switch_done=0` (a context switch no longer counts as a flush, the
closest TCG gets to a PCID machine: TCG has no PCID, so every CR3 switch
flushes) the short reduction is {pc(s.cut("reclaim", "luf-noswitch"))}% instead of {pc(s.cut("reclaim"))}%.
"""
    out += f"""
**Runtime, with its interval.** The full workload's median is
{sec(f.med("reclaim", "luf", "runtime_s"))} s on the patched kernel against {sec(f.med("reclaim", "pristine", "runtime_s"))} s (runs {f.rng("reclaim", "luf", "runtime_s", sec)} s
against {f.rng("reclaim", "pristine", "runtime_s", sec)} s): the difference of medians has the 95% bootstrap
interval {interval(f, "reclaim", "runtime_s")} ({f.d["runs"]} boots each, 10,000 resamples){runtime_verdict(f)}. The short
workload: {sec(s.med("reclaim", "luf", "runtime_s"))} s against {sec(s.med("reclaim", "pristine", "runtime_s"))} s, interval {interval(s, "reclaim", "runtime_s")} ({s.d["runs"]} boots
each). {cpu_time(f, sweep)}
{hot_paths(hot)}{ext4_files(ext4)}{swap_memory(swap)}
**Local full flushes:** {n(lfa("luf"))} on the patched kernel against {n(lfa("pristine"))}
(`nr_tlb_local_flush_all`, medians of the full workload): {"within 10%: the TLB generation bumps of deferrals do not turn the CPUs' later ranged flushes into full ones here" if abs(lfa("luf") - lfa("pristine")) <= 0.1 * lfa("pristine") else ("%s%% more than pristine's: the TLB generation bumps of deferrals leave CPUs behind, so later ranged flushes become full ones (not measured further)" % pc(100.0 * (lfa("luf") - lfa("pristine")) / lfa("pristine")) if lfa("luf") > lfa("pristine") else "%s%% fewer than pristine's, outside the issue's 10%% band on the low side; the reason, read from the 6.1 source and not measured: pristine's batched unmap flush (`arch_tlbbatch_flush()`) is a full flush, counted on the CPU that sends it when that CPU is in the batch, and luf sends few of them" % pc(100.0 * (lfa("pristine") - lfa("luf")) / lfa("pristine")))}.

**Mixed: {pc(s.cut("mixed"))}% fewer shootdowns, nothing writable deferred.** Every
writable or dirty translation is flushed as before (`nr_luf_writable_flush`
{n(max(s.col("mixed", "luf", "nr_luf_writable_flush")))} in every run; in the debug kernels of ctest, `CONFIG_LUF_DEBUG` checks
in `try_to_unmap_one()` that luf never defers one), and each write fault on the writable mapping settles the mm's domain
({s.rng("mixed", "luf", "nr_luf_abort")} aborts per run), which is why the saving is smaller.

**Checker: {n(sum(s.col("checker", "luf", "mismatches")))} mismatches in {len(s.col("checker", "luf", "mismatches"))} runs on the patched kernel**, with a median
of {n(s.med("checker", "luf", "nr_luf_deferred"))} deferred flushes per run under it; the same checker sees stale
reads on a kernel that frees folios before their flush
(`kernel.mm_mutants`). The patched kernel reclaimed {n(s.med("checker", "luf", "pages_reclaimed"))} pages (median)
against the pristine kernel's {n(s.med("checker", "pristine", "pages_reclaimed"))}, so its {pc(s.cut("checker"))}% fewer
shootdowns are {"also fewer" if cpk(s, "luf") < cpk(s, "pristine") else "not fewer"} per page reclaimed: {cpk(s, "luf"):.1f} per 1,000 pages
against {cpk(s, "pristine"):.1f}.
"""
    return out


BEGIN = "<!-- kernel-numbers:begin (bench/kernel/notes.py writes this paragraph) -->"
END = "<!-- kernel-numbers:end -->"


def fewer(a, b):
    """@a against @b (> 0): "N% fewer", or "N% more" (to one decimal, toward zero)."""
    return f"{pc(100.0 * (b - a) / b)}% fewer" if a <= b else f"{pc(100.0 * (a - b) / b)}% more"


def migration_sentences(m):
    """The README's migration sentences, from compare-migration.json (@m; "" without
    it): each workload's judged shootdowns and speed on the three kernels."""
    if m is None:
        return ""
    k3 = ("pristine", "batched", "luf")
    mv = [m.med("migrate", k, "migrate_shootdowns") for k in k3]
    ps = [m.med("migrate", k, "pages_per_s") for k in k3]
    tl = [m.med("tier", k, "workload.tlb_shootdowns") for k in k3]
    ls = [m.med("tier", k, "lookups_per_s") for k in k3]
    moved = m.med("migrate", "luf", "pages_migrated")
    return f"""
On migration (medians of {m.d["runs"]} boots per kernel, 6.1, the batched kernel and
luf's): {n(moved)} page moves between two nodes under readers (a region moved
there and back), {n(mv[0])}, {n(mv[1])} and {n(mv[2])} "TLB shootdowns" while the pages
moved (luf {fewer(mv[2], mv[1])} than the batched kernel; the issue's target is 90%), at {n(ps[0])}, {n(ps[1])} and {n(ps[2])}
pages a second; on memory tiering (lookups while pages are demoted to and promoted
from an emulated NVDIMM), {n(tl[0])}, {n(tl[1])} and {n(tl[2])} while the lookups ran
(luf {fewer(tl[2], tl[1])} than the batched kernel), at {n(ls[0])}, {n(ls[1])} and
{n(ls[2])} lookups a second. Measured on {m.prov()} (bench/kernel/compare-migration.json)."""


def readme_block(short, full, mig=None):
    s, f = short, full
    peaks = f.col("reclaim", "luf", "luf_park_peak")
    return f"""{BEGIN}
Measured there (QEMU TCG, `-smp 4 -m 256M`): on the full reclaim
workload (768 MiB read twice, medians of {f.d["runs"]} interleaved boots per kernel)
{pc(f.cut("reclaim"))}% fewer "TLB shootdowns" than the pristine kernel ({n(f.med("reclaim", "pristine", "tlb_shootdowns"))} to
{n(f.med("reclaim", "luf", "tlb_shootdowns"))}), with at most {n(max(peaks))} pages parked ({int(10000.0 * max(peaks) / 65536) / 100:.2f}% of RAM), in
{sec(f.med("reclaim", "luf", "runtime_s"))} s against {sec(f.med("reclaim", "pristine", "runtime_s"))} s (95% interval of the difference {interval(f, "reclaim", "runtime_s")});
on the short workloads (medians of {s.d["runs"]} runs) {pc(s.cut("reclaim"))}% fewer on reclaim
({n(s.med("reclaim", "pristine", "tlb_shootdowns"))} to {n(s.med("reclaim", "luf", "tlb_shootdowns"))}), {pc(s.cut("mixed"))}% fewer on the mixed workload, where
nothing writable or dirty is deferred, and {n(sum(s.col("checker", "luf", "mismatches")))} checker mismatches in
{len(s.col("checker", "luf", "mismatches"))} runs. Measured on {f.prov()} (full) and {s.prov()} (short); each
JSON also names the kernels' build keys and QEMU's version.{migration_sentences(mig)}
{END}"""


def splice(text, block):
    """@text with its marked paragraph replaced by @block; None without markers."""
    i, j = text.find(BEGIN), text.find(END)
    if i < 0 or j < i:
        return None
    return text[:i] + block + text[j + len(END):]


def self_test(a):
    """--check must fail on a changed digit, a changed patch and a --baseline-off JSON."""
    import re
    import shutil
    import subprocess
    import tempfile

    def check(readme, patches, full=a.full):
        return subprocess.run([sys.executable, os.path.abspath(__file__), "--check", "--readme",
                               readme, "--patches", patches, "--out", a.out, "--short", a.short,
                               "--full", full, "--sweep", a.sweep, "--hotpath", a.hotpath,
                               "--ext4", a.ext4, "--swap", a.swap, "--migration", a.migration,
                               "--results", a.results],
                              capture_output=True, text=True)

    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        with open(a.readme, encoding="utf-8") as fh:
            text = fh.read()
        i = text.find(BEGIN) + len(BEGIN)
        m = re.search(r"[0-9](?=[0-9]*\.[0-9]%)", text[i:])  # a digit of the first percentage
        readme = os.path.join(tmp, "README.md")
        with open(readme, "w", encoding="utf-8") as fh:
            d = text[i + m.start()]
            fh.write(text[:i + m.start()] + str((int(d) + 1) % 10) + text[i + m.start() + 1:])
        # The series' directory with its siblings: the series names patches of
        # ../batched too.
        kdir = os.path.join(tmp, "kernel")
        shutil.copytree(os.path.dirname(os.path.abspath(a.patches)), kdir)
        patches = os.path.join(kdir, os.path.basename(os.path.abspath(a.patches)))
        base = check(a.readme, a.patches)
        if base.returncode != 0:
            print("notes.py: self-test: --check fails on the tree itself:\n" + base.stderr,
                  file=sys.stderr)
            return 1
        r = check(readme, a.patches)
        print(f"notes.py: self-test: a digit changed in the README: exit {r.returncode}: "
              f"{r.stderr.strip()}")
        bad += r.returncode != 1
        with open(os.path.join(patches, "series"), encoding="utf-8") as fh:
            first = next(l for l in fh if l.strip() and not l.startswith("#")).split()[0]
        with open(os.path.join(patches, first), "a", encoding="utf-8") as fh:
            fh.write("\n")
        r = check(a.readme, patches)
        print(f"notes.py: self-test: a byte added to {first}: exit {r.returncode}: "
              f"{r.stderr.strip()}")
        bad += r.returncode != 1
        with open(a.full, encoding="utf-8") as fh:
            d = json.load(fh)
        d["provenance"]["build_key_pristine"] = "none (--baseline-off)"
        full = os.path.join(tmp, "compare-full.json")
        with open(full, "w", encoding="utf-8") as fh:
            json.dump(d, fh)
        r = check(a.readme, a.patches, full)
        print(f"notes.py: self-test: a --baseline-off JSON: exit {r.returncode}: "
              f"{r.stderr.strip()}")
        bad += r.returncode != 1 or "--baseline-off" not in r.stderr
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    ap.add_argument("--out", default=os.path.join(HERE, "NOTES.md"))
    ap.add_argument("--short", default=os.path.join(HERE, "compare.json"))
    ap.add_argument("--full", default=os.path.join(HERE, "compare-full.json"))
    ap.add_argument("--sweep", default=os.path.join(HERE, "compare-sweep.json"))
    ap.add_argument("--hotpath", default=os.path.join(HERE, "compare-hotpath.json"))
    ap.add_argument("--ext4", default=os.path.join(HERE, "compare-ext4.json"))
    ap.add_argument("--swap", default=os.path.join(HERE, "compare-swap.json"))
    ap.add_argument("--migration", default=os.path.join(HERE, "compare-migration.json"))
    ap.add_argument("--results", default=os.path.join(HERE, "..", "RESULTS.md"))
    ap.add_argument("--readme", default=os.path.join(HERE, "..", "..", "README.md"))
    ap.add_argument("--patches", default=os.path.join(HERE, "..", "..", "lib", "kernel", "patches"))
    a = ap.parse_args()
    if a.self_test:
        return self_test(a)
    try:
        short, full = Cmp(a.short), Cmp(a.full)
        opt = lambda p: Cmp(p) if os.path.exists(p) else None
        text = render(short, full, opt(a.hotpath), opt(a.sweep), opt(a.ext4), opt(a.swap))
        block = readme_block(short, full, opt(a.migration))
        with open(a.readme, encoding="utf-8") as fh:
            readme = fh.read()
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError) as e:
        print(f"notes.py: cannot read the comparisons or the README: {e!r}", file=sys.stderr)
        return 2
    new_readme = splice(readme, block)
    if new_readme is None:
        print(f"notes.py: {a.readme} has no kernel-numbers markers", file=sys.stderr)
        return 2
    if a.check:
        try:
            tree = series_hash(a.patches)
        except OSError as e:
            print(f"notes.py: cannot hash the series: {e}", file=sys.stderr)
            return 2
        cmps = [short, full] + [Cmp(p) for p in (a.sweep, a.hotpath, a.ext4, a.swap,
                                                 a.migration) if os.path.exists(p)]
        for c in cmps:
            if c.d["provenance"]["series"] != tree:
                print(f"notes.py: {c.path} was recorded on series {c.d['provenance']['series']}, "
                      f"the tree's is {tree}: record the comparison again (tests/kernel/compare "
                      "--json), then run bench/kernel/notes.py", file=sys.stderr)
                return 1
            if str(c.d["provenance"].get("build_key_pristine", "")).startswith("none"):
                print(f"notes.py: {c.path} was recorded with --baseline-off: its baseline is the "
                      "patched kernel with luf.reclaim=0, not the pristine kernel: record it "
                      "again without that option", file=sys.stderr)
                return 1
        try:
            with open(a.out, encoding="utf-8") as fh:
                have = fh.read()
        except OSError as e:
            print(f"notes.py: {e}", file=sys.stderr)
            return 1
        if have != text:
            for i, (x, y) in enumerate(zip(have.splitlines(), text.splitlines()), 1):
                if x != y:
                    print(f"notes.py: {a.out}:{i} differs from the JSON:\n  have: {x}\n  want: {y}",
                          file=sys.stderr)
                    break
            else:
                print(f"notes.py: {a.out} differs from the JSON in length", file=sys.stderr)
            print("notes.py: run bench/kernel/notes.py to write it", file=sys.stderr)
            return 1
        if new_readme != readme:
            print(f"notes.py: the kernel numbers in {a.readme} differ from the JSON; "
                  "run bench/kernel/notes.py to write them", file=sys.stderr)
            return 1
        return check_results(a.results, [a.short, a.full, a.sweep, a.hotpath, a.ext4, a.swap,
                                         a.migration], text)
    with open(a.out, "w", encoding="utf-8") as fh:
        fh.write(text)
    if new_readme != readme:
        with open(a.readme, "w", encoding="utf-8") as fh:
            fh.write(new_readme)
    return 0


def check_results(results, jsons, notes):
    """Section 4 of RESULTS.md must hold each JSON's report (compare --render)
    and the notes, as bench/run wrote them from these files."""
    import subprocess
    try:
        with open(results, encoding="utf-8") as fh:
            have = fh.read()
    except OSError as e:
        print(f"notes.py: {e}", file=sys.stderr)
        return 1
    for j in jsons:
        if not os.path.exists(j):
            continue
        r = subprocess.run([os.path.join(KDIR, "compare"), "--render", j], capture_output=True,
                           text=True)
        if r.returncode or r.stdout not in have:
            print(f"notes.py: {results} does not hold the report of {j}: run "
                  "ONLY=kernel bench/run BUILD_DIR", file=sys.stderr)
            return 1
    body = "\n".join(l for l in notes.splitlines() if not l.startswith("<!--"))
    if body not in have:
        print(f"notes.py: {results} does not hold bench/kernel/NOTES.md: run "
              "ONLY=kernel bench/run BUILD_DIR", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
