# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""tests/kernel/compare: the pristine and the patched kernel (ktool/kernels.py: one
config, with and without lib/kernel/patches) on the guest workloads, and on the
migration workloads a third between them, migration's TLB flush batched
(lib/kernel/batched), under qemu-system-x86_64 -smp 4 -m 256M (TCG), each run a fresh
boot; the JSON of their numbers, and the Markdown report of such a JSON (bench/run,
bench/kernel/notes.py).

Usage: compare [--runs N] [--short] [--workloads LIST] [--json FILE] [--chart FILE]
               [--no-switch] [--park-sweep LIST] [--sweep-chart FILE] [--baseline-off]
               [--work DIR] | --render FILE
  --runs N         boots per workload and kernel (default 3); the table shows medians
  --short          the quick version ctest runs: a 384 MiB disk read once, a 30 s
                   checker (default: a 768 MiB disk read twice by 4 pinned threads,
                   and a 90 s checker). The checker's readers read 4096 hot pages
                   each, so that luf defers many flushes under it. migrate and tier
                   run boot's defaults either way.
  --workloads LIST comma-separated, of reclaim, mixed, checker (default: these
                   three), reclaim-ext4 (reclaim over a file on ext4),
                   reclaim-tmpfs and reclaim-anon (reclaim of a file on a tmpfs and
                   of anonymous memory read by forked children, to swap on the
                   disk: boot --workload) and hotpath (guest/hotpath.c: a pipe ping-pong between
                   two CPUs, mprotect and munmap loops of a 2-CPU mm, timed; the
                   report gives luf's time per operation against pristine's with a
                   bootstrap 95% interval: run it with --runs 7 or more); the
                   migration workloads, on three kernels (pristine, batched, luf):
                   migrate (guest/migrate.c: a read-only mapping moved between two
                   NUMA nodes with move_pages() while readers read it) and tier
                   (boot --workload tier: lookups while pages are demoted to and
                   promoted from a slower memory tier); their report gives each
                   kernel's medians and spreads, and luf's shootdowns and speed
                   against batched's
  --json FILE      per workload and kernel: every run's results and their medians,
                   and the total of checker mismatches
  --chart FILE     a PNG of the medians of "TLB shootdowns" (gnuplot; skipped with a
                   note if gnuplot is missing, the table is printed first)
  --render FILE    boot nothing: print the Markdown report of a JSON file written by
                   --json (bench/run puts it in bench/RESULTS.md); with --chart, draw
                   its chart
  --no-switch      also run reclaim on the patched kernel with luf.switch_done=0:
                   a context switch does not count as a flush for luf (TCG has no
                   PCID, so every CR3 switch flushes; a PCID machine does not)
  --park-sweep LIST  also run reclaim on the patched kernel with vm.luf_park_pages
                   set to each of LIST, comma-separated percentages of the guest's
                   256 MiB (e.g. 0.25,0.5,1,2,4; kernel "luf-parkNbp", N in basis
                   points): the curve of shootdowns against memory parked
  --sweep-chart FILE  a PNG of that curve (gnuplot), with --park-sweep or --render
  --baseline-off   build no pristine kernel: the runs named "pristine" boot the
                   patched kernel with luf.reclaim=0 (nothing deferred; the report
                   says so). ctest's short form, which judges no ratio: a cold cache
                   then builds one kernel fewer. Recorded comparisons never use it.
                   Refused (exit 2) with migrate or tier, whose baselines are kernels
                   of their own (luf.reclaim=0 is neither).
  --work DIR       keep every boot's output in DIR (default: a temporary directory,
                   removed at the end), and resume there: a boot whose results in DIR
                   passed is not booted again, so a comparison that was killed (a
                   session's end, a reboot) goes on where it stopped. DIR must hold
                   runs of the same comparison (kernels' build keys, series, boot
                   arguments: DIR/plan.json), else exit 2.
Kernels: "pristine", "luf" and, with --no-switch, "luf-noswitch"; on migrate and tier
"pristine", "batched" (kernels.py's kind: migration's flush batched, as mainline since
6.4; built only for them) and "luf".
Exit: 0 pass, 1 a run failed (kernel report, timeout, workload failure) or the
checker saw a mismatch on the patched kernel, 2 usage, 77 no kernel tools.
"""
import contextlib
import fcntl
import glob
import json
import math
import os
import random
import re
import shutil
import statistics
import sys
import tempfile

from . import cli, kernels

KERNELS = ("pristine", "luf", "luf-noswitch")
WORKLOADS = ("reclaim", "mixed", "checker", "hotpath", "reclaim-ext4", "reclaim-tmpfs",
             "reclaim-anon", "migrate", "tier")
# The migration workloads (issue 29), on three kernels: one TLB shootdown per page
# moved (6.1), migration's flush batched (lib/kernel/batched), and luf.
MIGRATION = ("migrate", "tier")
MIGRATION_KERNELS = ("pristine", "batched", "luf")
# The workloads with a table of COLS (hotpath has its own).
TABLED = ("reclaim", "reclaim-ext4", "reclaim-tmpfs", "reclaim-anon", "mixed", "checker")
# (column, key of boot's results)
COLS = [("TLB shootdowns", "tlb_shootdowns"), ("nr_tlb_remote_flush", "nr_tlb_remote_flush"),
        ("..._received", "nr_tlb_remote_flush_received"), ("pages reclaimed", "pages_reclaimed"),
        ("runtime s", "runtime_s"), ("luf deferred", "nr_luf_deferred"),
        ("luf IPIs", "nr_luf_ipis"), ("luf skipped", "nr_luf_flush_skipped"),
        ("done by switch", "nr_luf_done_switch"), ("done by IPI", "nr_luf_done_ipi"),
        ("writable flushed", "nr_luf_writable_flush"), ("aborts", "nr_luf_abort"),
        ("local full flushes", "nr_tlb_local_flush_all"), ("park peak", "luf_park_peak"),
        ("mismatches", "mismatches")]

# Kept in the JSON, not shown in the tables: where luf's own flushes came from.
EXTRA = ("pingpong_ns", "mprotect_ns", "munmap_ns", "nr_luf_alloc_flush", "nr_luf_drain",
         "nr_luf_kept_flush", "nr_luf_settle_flush", "nr_luf_remote_flush", "pgscan_direct",
         "nr_tlb_local_flush_one", "luf_park_pages", "guest_memtotal_kb",
         "read_tlb_shootdowns", "read_pages_reclaimed") + tuple(
             "cpu_%s_s" % c for c in ("user", "nice", "system", "idle", "iowait", "irq",
                                      "softirq"))

# The migration workloads' table, a column per kernel: (row, key of boot's results
# or, for a key boot prints as workload.KEY, KEY; the workloads that have it).
MIGRATION_ROWS = (("TLB shootdowns", "tlb_shootdowns", MIGRATION),
                  ("TLB shootdowns while pages moved", "migrate_shootdowns", ("migrate",)),
                  ("TLB shootdowns while looking up", "workload.tlb_shootdowns", ("tier",)),
                  ("nr_tlb_remote_flush", "nr_tlb_remote_flush", MIGRATION),
                  ("..._received", "nr_tlb_remote_flush_received", MIGRATION),
                  ("pgmigrate_success", "pgmigrate_success", MIGRATION),
                  ("pages migrated while looking up", "workload.pgmigrate_success", ("tier",)),
                  ("pgdemote_kswapd", "pgdemote_kswapd", MIGRATION),
                  ("pgpromote_success", "pgpromote_success", MIGRATION),
                  ("numa_pages_migrated", "numa_pages_migrated", MIGRATION),
                  ("numa_pte_updates", "numa_pte_updates", MIGRATION),
                  ("pages migrated", "pages_migrated", ("migrate",)),
                  ("runtime s", "runtime_s", MIGRATION),
                  ("pages migrated/s", "pages_per_s", ("migrate",)),
                  ("lookups/s", "lookups_per_s", MIGRATION),
                  ("luf deferred", "nr_luf_deferred", MIGRATION))
# Kept in their JSON besides the rows' keys (workload.runtime_s: tier's own time).
MIGRATION_EXTRA = ("shootdowns_per_page", "migrate_s", "rounds", "lookups", "move_retries",
                   "bad_reads", "writes", "lost_writes", "shared_writes", "stale_reads",
                   "workload.runtime_s", "pgmigrate_fail", "pgdemote_direct", "numa_hint_faults",
                   "nr_tlb_local_flush_all", "nr_tlb_local_flush_one",
                   "function_call_interrupts")
# Their targets: luf's cut against batched's, and the shootdowns and the speed
# they are judged on, per workload: (shootdowns' key, speed's key, speed's name).
MIGRATION_CUT = 90.0
MIGRATION_JUDGED = {"migrate": ("migrate_shootdowns", "pages_per_s", "pages migrated/s"),
                    "tier": ("workload.tlb_shootdowns", "lookups_per_s", "lookups/s")}

# /proc/stat's split of the guest's CPU time over a workload, for the table
# of where a runtime went: (row, keys summed).
CPU_ROWS = (("user", ("cpu_user_s", "cpu_nice_s")), ("system", ("cpu_system_s",)),
            ("irq and softirq", ("cpu_irq_s", "cpu_softirq_s")), ("iowait", ("cpu_iowait_s",)),
            ("idle", ("cpu_idle_s",)))

# The reclaim target (issue 26): this much fewer shootdowns, with the park's
# peak at most PARK_TARGET of RAM; the other kinds of memory's (issue 28).
CUT_TARGET = 97.0
MEMORY_TARGETS = (("reclaim-ext4", 90.0), ("reclaim-tmpfs", 80.0), ("reclaim-anon", 80.0))
EXT4_TARGET = dict(MEMORY_TARGETS)["reclaim-ext4"]
# The workloads of swap-backed memory: a fill, then the read phase (guest/reclaim.c).
SWAP_WORKLOADS = ("reclaim-tmpfs", "reclaim-anon")
PARK_TARGET = 0.02
RAM_PAGES = 256 * 1024 // 4
RESAMPLES = 10000

HOT = (("pipe ping-pong, ns per round trip", "pingpong_ns"),
       ("mprotect, ns per downgrade and upgrade", "mprotect_ns"),
       ("munmap, ns per map, touch and unmap of 16 pages", "munmap_ns"))
# The hot paths' target: luf's median at most this much above pristine's, at
# the upper end of the interval.
HOT_TARGET = 2.0

# Boot's arguments per workload, short (ctest's, and capture's) and full.
RECLAIM_ARGS = {True: ["--disk-mb", "384", "--passes", "1"],
                False: ["--disk-mb", "768", "--passes", "2"]}
CHECKER_ARGS = {True: ["--disk-mb", "256", "--seconds", "30", "--wargs",
                       "--hot-pages 4096 --min-moves 2 --max-seconds 90"],
                False: ["--disk-mb", "768", "--seconds", "90", "--wargs", "--hot-pages 4096"]}


# ---- the command line ----

def invalid(msg):
    """Exit 2 with @msg and no usage (a bad value, where the option is right)."""
    sys.stdout.flush()
    sys.stderr.write(msg + "\n")
    raise SystemExit(2)


lines = cli.lines


def read(path):
    """The text of the file @path, undecodable bytes replaced."""
    with open(path, errors="replace") as f:
        return f.read()


def words(text):
    """A comma- or space-separated list as its words."""
    return text.replace(",", " ").split()


def runs_arg(name, text):
    """--runs' positive integer, else exit 2."""
    if not re.fullmatch(r"[1-9][0-9]*", text):
        invalid("%s: --runs wants a positive number, got '%s'" % (name, text))
    return int(text)


def sweep_kinds(text):
    """The sweep's kernels, "luf-parkNbp" (N the percentage in basis points), of
    --park-sweep's @text; exit 2 on a value outside 0.01-50 or a repeated bound."""
    out = []
    for pc in words(text):
        try:
            v = float(pc)
        except ValueError:
            v = math.nan
        if not 0.01 <= v <= 50:
            invalid("compare: --park-sweep wants percentages from 0.01 to 50, got '%s'" % pc)
        kind = "luf-park%dbp" % round(v * 100)
        if kind in out:
            invalid("compare: --park-sweep: %s%% is the same bound as another, to a basis "
                    "point" % pc)
        out.append(kind)
    return out


def kernels_for(w, noswitch=False, sweep=()):
    """The kernels workload @w boots, in each run's order: MIGRATION_KERNELS for
    the migration workloads, else pristine and luf, and for reclaim luf-noswitch
    (if @noswitch) and the sweep's kernels @sweep."""
    if w in MIGRATION:
        return list(MIGRATION_KERNELS)
    return ["pristine", "luf"] + (["luf-noswitch"] if w == "reclaim" and noswitch else []) + \
        (list(sweep) if w == "reclaim" else [])


def plan(workloads, runs, noswitch, sweep):
    """The boots, in order: (workload, kernel, run from 1) for each workload, run
    and kernel (kernels_for()), the kernels of each run interleaved."""
    out = []
    for w in workloads:
        ks = kernels_for(w, noswitch, sweep)
        out += [(w, k, r) for r in range(1, runs + 1) for k in ks]
    return out


def boot_args(w, k, short, baseoff):
    """Boot's arguments for workload @w on kernel @k (after --kernel and --workload)."""
    args = []
    if k == "pristine" and baseoff:
        args = ["--append", "luf.reclaim=0"]
    elif k == "luf-noswitch":
        args = ["--append", "luf.switch_done=0"]
    elif sweep_bp(k):
        # basis points of the guest's 256 MiB, in 4 KiB pages
        args = ["--append", "sysctl.vm.luf_park_pages=%d" % (sweep_bp(k) * 65536 // 10000)]
    return args + workload_args(w, short)


def workload_args(w, short):
    """Boot's arguments of workload @w, --short's if @short (hotpath and the
    migration workloads: boot's defaults)."""
    return CHECKER_ARGS[short] if w == "checker" else [] if w in ("hotpath",) + MIGRATION \
        else RECLAIM_ARGS[short]


def excused(w, k, out):
    """Whether a failed boot of workload @w on kernel @k, which printed @out, fails
    nothing: a pristine checker mismatch is a finding, not a luf failure, excused
    only if the workload failed and counted mismatches."""
    return k == "pristine" and w == "checker" and bool(
        re.search(r"^fail_reason=workload", out, re.M)) and bool(
            re.search(r"^workload\.mismatches=0*[1-9]", out, re.M))


# ---- the numbers ----

def pct_down(v):
    """@v, a percentage, to one decimal, rounded toward zero: 89.96 is "89.9",
    never "90.0", so that no printed figure crosses a target its value misses."""
    t = int(abs(v) * 10) / 10.0
    return "%.1f" % (t if v >= 0 and t else -t if t else 0.0)


def pct_out(v, up):
    """@v, a percentage, to one decimal, rounded up (toward +infinity) if @up,
    else down: an interval's ends are printed outward, so that an upper end
    of 2.04 is "2.1" against an "at most +2%" target, never "2.0"."""
    t = (math.ceil if up else math.floor)(round(v * 10, 6)) / 10.0
    return "%.1f" % (t if t else 0.0)


def signed(v):
    """pct_down(@v) with a "+" when it is above zero."""
    t = pct_down(v)
    return ("+" + t) if v > 0 and t != "0.0" else t


def iv_text(iv):
    """A bootstrap interval (lo, hi) of a difference in percent, printed outward."""
    return "%s%% to %s%%" % (pct_out(iv[0], False), pct_out(iv[1], True))


def boot_interval(a, b, stat, seed=1):
    """The 95% bootstrap interval of @stat(@a resampled, @b resampled)
    (percentile method, RESAMPLES draws of each sample with replacement,
    a fixed seed so that a JSON renders the same every time). None if
    either sample has fewer than 2 values."""
    if len(a) < 2 or len(b) < 2:
        return None
    rnd = random.Random(seed)
    vals = sorted(stat([rnd.choice(a) for _ in a], [rnd.choice(b) for _ in b])
                  for _ in range(RESAMPLES))
    return vals[int(0.025 * RESAMPLES)], vals[int(0.975 * RESAMPLES) - 1]


def med_diff_pct(x, y):
    """The difference of medians, @x's against @y's, in percent of @y's."""
    return 100.0 * (statistics.median(x) - statistics.median(y)) / statistics.median(y)


def num(run, key):
    """The number @key (or "workload.@key") of a boot's results @run, else None;
    nr_luf_abort is the sum of the per-cause counters."""
    for k in (key, "workload." + key):
        try:
            return float(run[k])
        except (KeyError, TypeError, ValueError):
            pass
    if key == "nr_luf_abort":
        vals = [num(run, k) for k in run if k.startswith("nr_luf_abort_") and "." not in k]
        vals = [v for v in vals if v is not None]
        return sum(vals) if vals else None
    return None


def collect(work, runs, short, out_path, version, provenance=None):
    """Read @work/<workload>.<kernel>.<run>.json (boot --json), write to @out_path
    the JSON: per workload and kernel every run and the medians (of COLS' keys,
    and for the migration workloads of MIGRATION_ROWS' instead); the checker
    mismatches (total, and on the patched kernels); the dict @provenance (the
    tree's commit, the series' hash, the kernels' build keys, QEMU's version,
    the command) as is. 1 if the patched kernels had any mismatch, else 0."""
    res = {}
    for f in sorted(glob.glob(os.path.join(work, "*.*.*.json"))):
        w, k, _r, _ = os.path.basename(f).split(".")
        with open(f) as fh:
            res.setdefault(w, {}).setdefault(k, []).append(json.load(fh))
    out = {"kernel_version": version, "short": short, "runs": runs,
           "guest": "qemu-system-x86_64 -accel tcg -smp 4 -m 256M, busybox initramfs, "
                    "virtio-blk disk",
           "config": "tinyconfig + tests/kernel/config/base.config + kunit.config; "
                     "patched: + lib/kernel/patches + luf.config",
           "workloads": {}, "mismatches_total": 0, "mismatches_patched": 0}
    if any("batched" in kernels_w for kernels_w in res.values()):
        out["config"] += "; batched: + lib/kernel/batched"
    if provenance:
        out["provenance"] = provenance
    for w, kernels_w in res.items():
        out["workloads"][w] = {}
        keys, extra = [c[1] for c in COLS], list(EXTRA)
        if w in MIGRATION:
            keys, extra = [r[1] for r in MIGRATION_ROWS], list(MIGRATION_EXTRA)
        for k, rs in kernels_w.items():
            med = {}
            for key in keys:
                vals = [v for v in (num(r, key) for r in rs) if v is not None]
                med[key] = statistics.median(vals) if vals else None
            mm = sum(int(num(r, "mismatches") or 0) for r in rs)
            out["mismatches_total"] += mm
            if k != "pristine":
                out["mismatches_patched"] += mm
            slim = [{key: num(r, key) for key in keys + extra} |
                    {"status": r.get("status"), "fail_reason": r.get("fail_reason", "")}
                    for r in rs]
            out["workloads"][w][k] = {"median": med, "runs": slim,
                                      "failed_runs": sum(r.get("status") != "pass" for r in rs)}
    with open(out_path, "w") as fh:
        json.dump(out, fh, indent=1, sort_keys=True)
        fh.write("\n")
    return 1 if out["mismatches_patched"] else 0


def fmt(v):
    if v is None:
        return "-"
    return "%.1f" % v if v != int(v) else "%d" % v


def rel(a, b):
    """@a against @b in percent, signed, rounded toward zero (as pct_down)."""
    if a is None or not b:
        return "-"
    v = pct_down(100.0 * (a - b) / b)
    return ("%s%%" if v.startswith("-") else "+%s%%") % v


def kernels_of(ws_w):
    """The kernels of one workload, in table order: KERNELS, then the sweep's by bound."""
    return [k for k in KERNELS if k in ws_w] + sorted(
        (k for k in ws_w if k not in KERNELS), key=lambda k: sweep_bp(k) or 0)


def sweep_bp(kernel):
    """The bound in basis points of RAM of a sweep kernel "luf-parkNbp", else None."""
    if kernel.startswith("luf-park") and kernel.endswith("bp") and kernel[8:-2].isdigit():
        return int(kernel[8:-2]) or None
    return None


def sweep_points(d):
    """(% of RAM, kernel, medians) for every sweep kernel of the reclaim workload,
    and the patched kernel's default bound among them, by bound."""
    ws = d["workloads"].get("reclaim", {})
    pts = [(sweep_bp(k) / 100.0, k, ws[k]["median"]) for k in kernels_of(ws) if sweep_bp(k)]
    bounds = [r["luf_park_pages"] for r in ws.get("luf", {}).get("runs", [])
              if r.get("luf_park_pages") is not None]
    if pts and bounds:
        pts.append((round(100.0 * statistics.median(bounds) / RAM_PAGES, 2), "luf",
                    ws["luf"]["median"]))
    return sorted(pts, key=lambda p: p[0])


def cpu_split(runs):
    """{row of CPU_ROWS: median CPU-seconds} over the passing @runs that carry
    /proc/stat's split; None if none does."""
    out = {}
    for name, keys in CPU_ROWS:
        vals = [sum(r[x] for x in keys) for r in runs
                if r.get("status") == "pass" and all(r.get(x) is not None for x in keys)]
        if not vals:
            return None
        out[name] = statistics.median(vals)
    return out


# ---- the report ----

def load(path):
    """The comparison's JSON at @path; exits 1 naming it if it is not one."""
    try:
        with open(path) as fh:
            d = json.load(fh)
        d["workloads"]  # KeyError or TypeError if it is not a comparison's
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit("compare: %s is not a comparison's JSON (%s)" % (path, e))
    return d


def render_hotpath(d, p):
    ws = d["workloads"].get("hotpath")
    if not ws or "pristine" not in ws or "luf" not in ws:
        return
    p("\nhotpath (medians of %d interleaved boot(s) per kernel; the interval is a "
      "bootstrap of the difference of medians, %d resamples):\n" % (d["runs"], RESAMPLES))
    p("| loop | pristine | luf | luf vs pristine | 95% interval | upper end <= +2% |")
    p("|---|---|---|---|---|---|")
    for name, key in HOT:
        a = [v for v in (num(r, key) for r in ws["luf"]["runs"]) if v is not None]
        b = [v for v in (num(r, key) for r in ws["pristine"]["runs"]) if v is not None]
        if not a or not b:
            continue
        iv = boot_interval(a, b, med_diff_pct)
        p("| %s | %.0f | %.0f | %s%% | %s | %s |" %
          (name, statistics.median(b), statistics.median(a), signed(med_diff_pct(a, b)),
           iv_text(iv) if iv else "-",
           "-" if not iv else "MET" if iv[1] <= HOT_TARGET else "MISSED"))


def render_cpu_time(d, p):
    """Where the guest's 4 CPUs spent reclaim's runtime, per kernel: medians of
    the CPU-seconds of each kind (so a runtime difference can be read as
    more system time, more waiting for the disk, more idle)."""
    ws = d["workloads"].get("reclaim", {})
    kinds = [k for k in KERNELS if k in ws and cpu_split(ws[k]["runs"]) is not None]
    if "luf" not in kinds or "pristine" not in kinds:
        return
    split = {k: cpu_split(ws[k]["runs"]) for k in kinds}
    rows = [(name, [split[k][name] for k in kinds]) for name, _ in CPU_ROWS]
    p("\nreclaim: where the guest's CPUs spent the runtime (/proc/stat, CPU-seconds summed "
      "over the guest's vCPUs, medians of the passing runs):\n")
    p("| CPU time | " + " | ".join(kinds) + " | luf - pristine |")
    p("|---" * (len(kinds) + 2) + "|")
    for name, cells in rows:
        p("| %s | %s | %+.1f |" % (name, " | ".join("%.1f" % c for c in cells),
                                   cells[kinds.index("luf")] - cells[kinds.index("pristine")]))


def render_sweep(d, p):
    pts = sweep_points(d)
    if not pts:
        return
    base = d["workloads"]["reclaim"].get("pristine", {}).get("median", {}).get("tlb_shootdowns")
    p("\nreclaim, vm.luf_park_pages swept (%% of the guest's 256 MiB; medians of %d run(s)):\n"
      % d["runs"])
    p("| bound, % of RAM | bound, pages | park peak, pages | TLB shootdowns | fewer than "
      "pristine | luf's flushes | drains | pages reclaimed | runtime s |")
    p("|---|---|---|---|---|---|---|---|---|")
    for pct, k, m in pts:
        runs = d["workloads"]["reclaim"][k]["runs"]
        bound, flushes, drains = ([r.get(x) for r in runs if r.get(x) is not None] for x in
                                  ("luf_park_pages", "nr_luf_remote_flush", "nr_luf_drain"))
        cut = "%s%%" % pct_down(100.0 * (base - m["tlb_shootdowns"]) / base) \
            if base and m.get("tlb_shootdowns") is not None else "-"
        p("| %g%s | %s | %s | %s | %s | %s | %s | %s | %s |" %
          (pct, " (default)" if k == "luf" else "", fmt(bound[0]) if bound else "-",
           fmt(m.get("luf_park_peak")), fmt(m.get("tlb_shootdowns")), cut,
           fmt(statistics.median(flushes)) if flushes else "-",
           fmt(statistics.median(drains)) if drains else "-",
           fmt(m.get("pages_reclaimed")), fmt(m.get("runtime_s"))))


def render(d):
    """The Markdown report of the comparison @d (as load() returns it): setup,
    targets, one table per workload, where reclaim's CPU time went (/proc/stat,
    per kernel), the park sweep's table (kernels luf-parkNbp), the hot paths'
    table and, per migration workload, a table of its three kernels and its
    targets, if @d has them; one str of lines."""
    lines = []
    p = lines.append
    ws = d["workloads"]
    what = {"reclaim": "reclaim: a %s" % ("384 MiB disk read once" if d["short"] else
                                          "768 MiB disk read twice by 4 pinned threads"),
            "mixed": "mixed: the same with a writer",
            "checker": "checker: %s" % ("30 s" if d["short"] else "90 s"),
            "hotpath": "hotpath: guest/hotpath.c's loops",
            "reclaim-ext4": "reclaim-ext4: the %s over a file of an ext4 file system "
                            "(journal on, data=ordered)" % ("reclaim workload, short," if
                                                           d["short"] else "full reclaim workload"),
            "reclaim-tmpfs": "reclaim-tmpfs: a file of 3/4 of the disk on a tmpfs, read as "
                             "reclaim reads the disk, the disk being swap",
            "reclaim-anon": "reclaim-anon: as much private anonymous memory, read by 3 "
                            "forked children, the disk being swap",
            "migrate": "migrate: guest/migrate.c's 16 MiB read-only mapping moved by "
                       "move_pages() between two NUMA nodes of 256M, twice, while readers "
                       "on the other CPUs read it",
            "tier": "tier: 60 s of random lookups by 4 threads over a 768 MiB file of ext4 "
                    "mapped shared, node 0 holding 512 MiB, while pages are demoted to and "
                    "promoted from an emulated NVDIMM onlined as a lower memory tier (its "
                    "shootdowns judged are those of the lookups)"}
    p("Linux %s, %s; %s. Medians of %d run(s) per kernel (%s)." %
      (d["kernel_version"], d["guest"], d["config"], d["runs"],
       "; ".join(what[w] for w in WORKLOADS if w in ws)))
    prov = d.get("provenance")
    if prov:
        p("Recorded from tree %s, series %s, build keys %s (pristine)%s and %s (luf), %s; "
          "`%s`." % (prov.get("tree"), prov.get("series"), prov.get("build_key_pristine"),
                     ", %s (batched)" % prov["build_key_batched"] if "build_key_batched" in prov
                     else "", prov.get("build_key_luf"), prov.get("qemu"), prov.get("invocation")))
        if prov.get("kept_runs"):
            p("")
            p("%d of these boots ran in an earlier try of the same comparison "
              "(`--work`, the same kernels, series and guest programs), whole runs of "
              "every kernel." % prov["kept_runs"])
        if str(prov.get("build_key_pristine", "")).startswith("none"):
            p("")
            p("**No pristine kernel here**: every row and target named *pristine* is the "
              "patched kernel booted with `luf.reclaim=0` (nothing deferred), ctest's short "
              "form; the recorded comparisons boot the pristine kernel.")
    p("")

    def med(w, k, key):
        return ws.get(w, {}).get(k, {}).get("median", {}).get(key)

    def col(w, k, key):
        vals = [r.get(key) for r in ws.get(w, {}).get(k, {}).get("runs", [])]
        return [v for v in vals if v is not None]

    def run_med(w, k, key):
        """The median of @key over the runs (for a key kept in the JSON only)."""
        vals = col(w, k, key)
        return statistics.median(vals) if vals else None

    def spread(w, k, key):
        vals = col(w, k, key)
        return "%s-%s" % (fmt(min(vals)), fmt(max(vals))) if vals else "-"

    def interval(w, key, fewer=False, k="luf", base="pristine"):
        """The bootstrap interval of @k's median against @base's, in percent."""
        iv = boot_interval(col(w, k, key), col(w, base, key), med_diff_pct)
        if not iv:
            return "no interval (one run each)"
        if fewer and iv[1] < 0:
            return "95%% interval %s-%s%% fewer" % (pct_out(-iv[1], False), pct_out(-iv[0], True))
        return "95% interval " + iv_text(iv)

    def per_1000(w):
        """[pristine's, luf's] medians of TLB shootdowns per 1,000 pages reclaimed on
        workload @w, or None unless both kernels have them."""
        v = [1000.0 * med(w, k, "tlb_shootdowns") / med(w, k, "pages_reclaimed")
             for k in ("pristine", "luf")
             if med(w, k, "tlb_shootdowns") is not None and med(w, k, "pages_reclaimed")]
        return v if len(v) == 2 else None

    if any(w in ws for w in TABLED):
        p("| target | measured | |")
        p("|---|---|---|")
    pr, lr = med("reclaim", "pristine", "tlb_shootdowns"), med("reclaim", "luf", "tlb_shootdowns")
    if pr and lr is not None:
        red = 100.0 * (pr - lr) / pr
        p("| reclaim: >= %.0f%% fewer TLB shootdowns | %s%% fewer (%s -> %s; %s) | %s |" %
          (CUT_TARGET, pct_down(red), fmt(pr), fmt(lr), interval("reclaim", "tlb_shootdowns", True),
           "MET" if red >= CUT_TARGET else "MISSED"))
    peaks, mem = col("reclaim", "luf", "luf_park_peak"), col("reclaim", "luf", "guest_memtotal_kb")
    if peaks:
        # RAM: the guest's 256 MiB (QEMU -m), 65,536 pages; MemTotal is what the
        # kernel manages of it (vm.luf_park_pages defaults to 2% of that).
        worst = 100.0 * max(peaks) / RAM_PAGES
        p("| reclaim: park at most %.0f%% of RAM at any time | peak %s pages in the worst "
          "run: %.2f%% of the 256 MiB%s | %s |" %
          (100 * PARK_TARGET, fmt(max(peaks)), int(worst * 100) / 100.0,
           ", %.2f%% of MemTotal" % (int(10000.0 * max(peaks) * 4 / min(mem)) / 100.0)
           if mem else "", "MET" if worst <= 100 * PARK_TARGET else "MISSED"))
    pt, lt = med("reclaim", "pristine", "runtime_s"), med("reclaim", "luf", "runtime_s")
    if pt and lt:
        iv = boot_interval(col("reclaim", "luf", "runtime_s"),
                           col("reclaim", "pristine", "runtime_s"), med_diff_pct)
        # One run each gives no interval, hence no verdict.
        verdict = "-" if iv is None else "MET" if iv[1] <= 5.0 else "MISSED"
        p("| reclaim: runtime, upper end of the 95%% interval at most +5%% | %s (%s s -> %s s; "
          "%s; runs %s s and %s s) | %s |" %
          (rel(lt, pt), fmt(pt), fmt(lt), interval("reclaim", "runtime_s"),
           spread("reclaim", "pristine", "runtime_s"), spread("reclaim", "luf", "runtime_s"),
           verdict))
    fp, fl = med("reclaim", "pristine", "nr_tlb_local_flush_all"), \
        med("reclaim", "luf", "nr_tlb_local_flush_all")
    if fp and fl is not None:
        # The concern: deferrals' TLB generation bumps turning ranged flushes into
        # full ones. Far fewer is the other way out of the band: pristine's
        # batched unmap flush (arch_tlbbatch_flush()) is a full flush, counted on
        # the CPU that sends it when that CPU is in the batch; luf sends few.
        band = abs(fl - fp) <= 0.1 * fp
        p("| reclaim: local full flushes within 10%% of pristine, or the reason | %s (%s -> %s) "
          "| %s |" % (rel(fl, fp), fmt(fp), fmt(fl), "MET" if band else
                      "MISSED: fewer; the reason is in the notes" if fl < fp else "MISSED"))
    for w, target in MEMORY_TARGETS:
        pe, le = med(w, "pristine", "tlb_shootdowns"), med(w, "luf", "tlb_shootdowns")
        if not pe or le is None:
            continue
        red = 100.0 * (pe - le) / pe
        # How much a boot reclaims varies (two-fold between boots of one kernel
        # on the swap-backed workloads), so the shootdowns per page reclaimed too.
        per = per_1000(w)
        p("| %s: >= %.0f%% fewer TLB shootdowns | %s%% fewer (%s -> %s; %s; %sruntime "
          "%s, runs %s s and %s s) | %s |" %
          (w, target, pct_down(red), fmt(pe), fmt(le), interval(w, "tlb_shootdowns", True),
           "%.1f -> %.1f per 1,000 pages reclaimed; " % tuple(per) if per else "",
           rel(med(w, "luf", "runtime_s"), med(w, "pristine", "runtime_s")),
           spread(w, "pristine", "runtime_s"), spread(w, "luf", "runtime_s"),
           "MET" if red >= target else "MISSED"))
        # The swap-backed workloads' read phase alone (guest/reclaim.c), without
        # their fill (reclaim-anon's unmaps dirty PTEs, flushed on any kernel).
        pr_, lr_ = (run_med(w, k, "read_tlb_shootdowns") for k in ("pristine", "luf"))
        if w in SWAP_WORKLOADS and pr_ and pr_ > 0 and lr_ is not None and lr_ >= 0:
            rp = [run_med(w, k, "read_pages_reclaimed") for k in ("pristine", "luf")]
            p("| %s, read phase alone (after the fill) | %s%% fewer (%s -> %s%s) | |" %
              (w, pct_down(100.0 * (pr_ - lr_) / pr_), fmt(pr_), fmt(lr_),
               "; %.1f -> %.1f per 1,000 pages reclaimed" % (1000.0 * pr_ / rp[0],
                                                            1000.0 * lr_ / rp[1])
               if all(rp) else ""))
    pm, lm = med("mixed", "pristine", "tlb_shootdowns"), med("mixed", "luf", "tlb_shootdowns")
    if pm is not None and lm is not None:
        p("| mixed: shootdowns not above pristine | %s -> %s | %s |" %
          (fmt(pm), fmt(lm), "MET" if lm <= pm else "MISSED"))
    if "checker" in ws:
        # Only runs that passed and carry a mismatch count count toward the target.
        runs = sum(1 for k, v in ws["checker"].items() if k != "pristine" for r in v["runs"]
                   if r.get("status") == "pass" and r.get("mismatches") is not None)
        p("| checker: 0 mismatches on the patched kernel, >= 3 runs that passed | %d in %d "
          "run(s) | %s |" % (d["mismatches_patched"], runs,
                              "MET" if not d["mismatches_patched"] and runs >= 3 else "MISSED"))
        per = per_1000("checker")
        if per:
            p("| checker: shootdowns per 1,000 pages reclaimed | %.1f -> %.1f | |" % tuple(per))
    ns = med("reclaim", "luf-noswitch", "tlb_shootdowns")
    if pr and ns is not None:
        p("| reclaim, luf.switch_done=0 (closest to PCID) | %s%% fewer (%s) | |" %
          (pct_down(100.0 * (pr - ns) / pr), fmt(ns)))
    for w in TABLED:
        if w not in ws:
            continue
        p("\n%s:\n" % w)
        p("| kernel | " + " | ".join(c for c, _ in COLS) + " | vs pristine | failed runs |")
        p("|---" * (len(COLS) + 3) + "|")
        base = med(w, "pristine", "tlb_shootdowns")
        for k in kernels_of(ws[w]):
            m = ws[w][k]["median"]
            p("| %s | " % k + " | ".join(fmt(m.get(key)) for _, key in COLS) + " | %s | %d |" %
              ("" if k == "pristine" else rel(m.get("tlb_shootdowns"), base),
               ws[w][k]["failed_runs"]))
    if any(w in ws for w in TABLED):
        p("\nChecker mismatches: %d on the patched kernels, %d in all." %
          (d["mismatches_patched"], d["mismatches_total"]))
    render_cpu_time(d, p)
    render_sweep(d, p)
    render_hotpath(d, p)

    def cell(w, k, key):
        """@key's median on kernel @k of workload @w, and its runs' lowest-highest
        if more than one has it; "n/a" if none does, or if it is negative: a counter
        the kernel lacks (tier prints -1 for one)."""
        m = med(w, k, key)
        m = run_med(w, k, key) if m is None else m
        if m is None or m < 0:
            return "n/a"
        return "%s (%s)" % (fmt(m), spread(w, k, key)) if len(col(w, k, key)) > 1 else fmt(m)

    def fewer(a, b):
        """@a against @b (> 0): "N% fewer", or "N% more"."""
        v = 100.0 * (b - a) / b
        return "%s%% %s" % (pct_down(abs(v)), "fewer" if v >= 0 else "more")

    for w in MIGRATION:
        if w not in ws:
            continue
        shoot, speed, speed_name = MIGRATION_JUDGED[w]
        p("\n%s (medians of %d run(s) per kernel, the runs' lowest-highest in brackets; n/a: "
          "not reported):\n" % (w, d["runs"]))
        p("| %s | %s |" % (w, " | ".join(MIGRATION_KERNELS)))
        p("|---" * (len(MIGRATION_KERNELS) + 1) + "|")
        for name, key, where in MIGRATION_ROWS:
            if w in where:
                p("| %s | %s |" % (name, " | ".join(cell(w, k, key) for k in MIGRATION_KERNELS)))
        p("| failed runs | %s |" % " | ".join(str(ws[w][k]["failed_runs"]) if k in ws[w] else
                                             "n/a" for k in MIGRATION_KERNELS))
        p("")
        p("| target | measured | |")
        p("|---|---|---|")
        # The shootdowns judged: migrate's while its pages moved, tier's while looking up.
        moved = " (while pages moved)" if shoot == "migrate_shootdowns" else \
            " (while looking up)"
        ps, bs, ls = (med(w, k, shoot) for k in MIGRATION_KERNELS)
        # A failed run (a wrong word, a stale read, a kernel report) of a kernel a
        # target compares makes that target missed.
        def verdict(ok, *kinds):
            failed = [k for k in kinds if ws[w].get(k, {}).get("failed_runs")]
            return "MISSED (failed runs: %s)" % ", ".join(failed) if ok and failed else \
                "MET" if ok else "MISSED"
        if bs and ls is not None:
            red = 100.0 * (bs - ls) / bs
            p("| %s: luf >= %.0f%% fewer TLB shootdowns than batched%s | %s (%s -> %s; %s) | %s |"
              % (w, MIGRATION_CUT, moved, fewer(ls, bs), fmt(bs), fmt(ls),
                 interval(w, shoot, True, "luf", "batched"),
                 verdict(red >= MIGRATION_CUT, "batched", "luf")))
        else:
            p("| %s: luf >= %.0f%% fewer TLB shootdowns than batched%s | n/a (batched %s, luf "
              "%s) | - |" % (w, MIGRATION_CUT, moved, cell(w, "batched", shoot),
                             cell(w, "luf", shoot)))
        if ps and bs is not None:
            p("| %s: batched fewer TLB shootdowns than pristine%s | %s (%s -> %s; %s) | %s |" %
              (w, moved, fewer(bs, ps), fmt(ps), fmt(bs),
               interval(w, shoot, True, "batched", "pristine"),
               verdict(bs < ps, "pristine", "batched")))
        else:
            p("| %s: batched fewer TLB shootdowns than pristine%s | n/a (pristine %s, batched "
              "%s) | - |" % (w, moved, cell(w, "pristine", shoot), cell(w, "batched", shoot)))
        # Faster is more pages or lookups a second: luf's median at least batched's
        # slowest run.
        bm, lm, low = med(w, "batched", speed), med(w, "luf", speed), col(w, "batched", speed)
        if bm and lm is not None and low:
            below = 100.0 * (min(low) - lm) / min(low)
            p("| %s: luf not slower than batched beyond the spread (%s) | %s (%s -> %s; runs "
              "%s and %s%s) | %s |" %
              (w, speed_name, rel(lm, bm), fmt(bm), fmt(lm), spread(w, "batched", speed),
               spread(w, "luf", speed), "; %s%% below batched's slowest run" % pct_out(below, True)
               if lm < min(low) else "", verdict(lm >= min(low), "batched", "luf")))
        else:
            p("| %s: luf not slower than batched beyond the spread (%s) | n/a (batched %s, luf "
              "%s) | - |" % (w, speed_name, cell(w, "batched", speed), cell(w, "luf", speed)))
    return "\n".join(lines) + "\n"


# ---- the charts (gnuplot) ----

CHART = """set terminal pngcairo size 800,450 noenhanced
set output "{png}"
set title "TLB shootdowns (/proc/interrupts), median of {runs} run(s), QEMU -smp 4"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set ylabel "TLB shootdowns"
set yrange [0:*]
set key top right
plot "{dat}" using 2:xtic(1) title "pristine", '' using 3 title "luf", \
\t\t     '' using 4 title "luf, switch_done=0"
"""

SWEEP_CHART = """set terminal pngcairo size 880,450 noenhanced
set output "{png}"
set title "reclaim (QEMU -smp 4 -m 256M): shootdowns against the park's bound, {runs}"
set xlabel "vm.luf_park_pages, % of RAM (log scale)"
set ylabel "TLB shootdowns (log scale)"
set logscale x 2
set logscale y 10
set key bottom left
plot "{dat}" using 1:2 with linespoints title "luf", \
\t\t\t     "{dat}" using 1:($4 == 1 ? $2 : 1/0) with points pointtype 7 pointsize 2 title \
"luf, default bound", \
\t\t\t     "{dat}" using 1:3 with lines dashtype 2 title "pristine"
"""


def chart_data(d):
    """The chart's data: per workload but hotpath, its kernels' median shootdowns."""
    out = ""
    for w in TABLED:
        ks = d["workloads"].get(w)
        if ks:
            out += " ".join(str(x) for x in [w] + [
                ks.get(k, {}).get("median", {}).get("tlb_shootdowns") or 0 for k in KERNELS]) + "\n"
    return out


def sweep_data(d):
    """The sweep's points: a "# runs N" line, then per bound: % of RAM, luf's median
    shootdowns, pristine's median, 1 for the default bound (else 0)."""
    base = d["workloads"].get("reclaim", {}).get("pristine", {}).get("median", {})
    out = "# runs %d\n" % d["runs"]
    for pct, k, m in sweep_points(d):
        if m.get("tlb_shootdowns") is not None:
            out += "%s %s %s %d\n" % (pct, m["tlb_shootdowns"], base.get("tlb_shootdowns") or 0,
                                      k == "luf")
    return out


def gnuplot(script, data, png, what, runs):
    """Run gnuplot on @script (str.format fields png, dat, runs) with @data in a
    temporary file; whether @png came out, not empty. A failure is said, not raised."""
    sys.stdout.flush()
    fd, dat = tempfile.mkstemp()
    try:
        with os.fdopen(fd, "w") as f:
            f.write(data)
        if cli.run(["gnuplot"], input=script.format(png=png, dat=dat, runs=runs)).returncode:
            cli.say("compare", "the %s failed (the table and JSON stand)" % what)
    finally:
        os.unlink(dat)
    made = os.path.exists(png) and os.path.getsize(png) > 0
    if made:
        print("compare: %s in %s" % (what, png), flush=True)
    return made


def charts(path, chart, schart):
    """Draw the PNGs of --chart and --sweep-chart (None: not asked for) of the JSON
    at @path: 0, or 1 if gnuplot left no --chart (the shell's status)."""
    d, plot = load(path), shutil.which("gnuplot")
    if chart and not plot:
        cli.say("compare", "no gnuplot: no chart (scripts/deps.sh test installs gnuplot-nox)")
    elif chart and not chart_data(d):
        cli.say("compare", "no chart: it draws %s, and none was compared" % ", ".join(TABLED))
    elif chart and not gnuplot(CHART, chart_data(d), chart, "chart", d["runs"]):
        return 1
    if schart and not plot:
        cli.say("compare", "no gnuplot: no sweep chart")
    elif schart:
        gnuplot(SWEEP_CHART, sweep_data(d), schart, "sweep chart", "one boot per point"
                if d["runs"] == 1 else "medians of %d boots per point" % d["runs"])
    return 0


# ---- the comparison ----

def qemu_version():
    """The first line of qemu-system-x86_64 --version."""
    return cli.output(["qemu-system-x86_64", "--version"]).split("\n")[0]


def build_key(img):
    """A kbuild bzImage's build key (its directory's name)."""
    return os.path.basename(os.path.dirname(img))


@contextlib.contextmanager
def work_dir(path):
    """The directory of the boots' output, as a context manager: @path, created if
    missing, kept, and locked (flock on @path/lock) while in use, so that two
    compares never boot into one; or (@path None) a temporary directory removed at
    the end."""
    if path is None:
        with tempfile.TemporaryDirectory(prefix="luf-compare.") as work:
            yield work
        return
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "lock"), "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            invalid("compare: another compare is using %s" % path)
        yield path


def resume(work, plan_):
    """Write @plan_ (what the boots ran: the kernels' build keys, the series, the
    kernel side's hash, QEMU, every boot's stem and arguments) to @work/plan.json,
    or check it against the one there: another comparison's runs must not be mixed
    into this one (exit 2). A directory with results but no plan is refused too."""
    path = os.path.join(work, "plan.json")
    try:
        with open(path) as f:
            old = json.load(f)
    except FileNotFoundError:
        old = None
        if glob.glob(os.path.join(glob.escape(work), "*.*.*.json")):
            invalid("compare: %s holds results but no plan.json: not a --work directory "
                    "of compare's" % work)
    except ValueError:
        invalid("compare: %s is not a plan compare wrote" % path)
    if old is not None and old != plan_:
        diff = sorted(k for k in plan_ if not isinstance(old, dict) or old.get(k) != plan_[k])
        invalid("compare: %s holds the runs of another comparison (its %s differ): remove it "
                "or use another --work" % (work, ", ".join(diff) or "keys"))
    with open(path + ".new", "w") as f:
        json.dump(plan_, f, indent=1)
        f.write("\n")
    os.replace(path + ".new", path)


def done(work, w, k, r):
    """Whether @work holds a finished boot of workload @w on kernel @k, run @r:
    results that passed, or a failure excused() (boot() leaves W.K.R.excused)."""
    stem = os.path.join(work, "%s.%s.%d" % (w, k, r))
    if os.path.exists(stem + ".excused"):
        return True
    try:
        with open(stem + ".json") as f:
            return json.load(f).get("status") == "pass"
    except (OSError, ValueError, AttributeError):
        return False


def kept(work, boots):
    """The (workload, run) pairs of @boots (the plan's (w, k, r, args)) whose boots
    on every kernel are done(): those are not booted again. A run is kept whole or
    not at all, so that each run's kernels stay interleaved in time."""
    runs = {}
    for w, k, r, _ in boots:
        runs.setdefault((w, r), []).append(done(work, w, k, r))
    return {wr for wr, ok in runs.items() if all(ok)}


def boot(work, w, k, r, runs, img, args):
    """Boot @img on workload @w with @args into @work/W.K.R.{txt,err,json}: 1 if the
    boot failed and is not excused, else 0."""
    stem = os.path.join(work, "%s.%s.%d" % (w, k, r))
    cli.say("compare", "%s on %s, run %d of %d" % (w, k, r, runs))
    if os.path.exists(stem + ".excused"):
        os.remove(stem + ".excused")
    with open(stem + ".txt", "w") as out, open(stem + ".err", "w") as err:
        rc = cli.run([os.path.join(cli.KDIR, "boot"), "--kernel", img, "--workload", w] + args +
                     ["--json", stem + ".json"], stdout=out, stderr=err).returncode
    fail = 0
    if rc:
        txt, tail = read(stem + ".txt"), lines(read(stem + ".err"))[-20:]
        cli.say("compare", "FAIL: %s on %s, run %d:" % (w, k, r))
        picked = [l for l in lines(txt) if re.match("(status|fail_reason)=", l)]
        sys.stderr.write("".join(l + "\n" for l in picked + tail))
        fail = 0 if excused(w, k, txt) else 1
        if not fail:
            with open(stem + ".excused", "w") as f:
                f.write("excused: a pristine checker mismatch\n")
    if not os.path.exists(stem + ".json") or not os.path.getsize(stem + ".json"):
        with open(stem + ".json", "w") as f:
            f.write('{"status": "fail", "fail_reason": "no results"}\n')
    return fail


def main(argv):
    o = dict(cli.pairs(argv, "compare", ("--runs", "--workloads", "--json", "--chart",
                                         "--park-sweep", "--sweep-chart", "--render", "--work"),
                       ("--short", "--no-switch", "--baseline-off")))
    runs = runs_arg("compare", o.get("--runs", "3"))
    workloads = words(o.get("--workloads", "reclaim,mixed,checker"))
    if not workloads:
        invalid("compare: --workloads wants one workload or more (%s)" % " ".join(WORKLOADS))
    for w in workloads:
        if w not in WORKLOADS:
            invalid("compare: unknown workload '%s'" % w)
    migration = [w for w in workloads if w in MIGRATION]
    if migration and "--baseline-off" in o:
        invalid("compare: --baseline-off is for the reclaim side: %s compare%s the pristine "
                "and batched kernels, which luf.reclaim=0 is not" %
                (" and ".join(migration), "" if len(migration) > 1 else "s"))
    sweep = sweep_kinds(o.get("--park-sweep", ""))
    chart, schart = o.get("--chart"), o.get("--sweep-chart")
    if "--render" in o:
        sys.stdout.write(render(load(o["--render"])))
        return charts(o["--render"], chart, schart)

    if not os.access(cli.TARBALL, os.R_OK) or not shutil.which("qemu-system-x86_64"):
        print("compare: SKIP: no linux-source-6.1 or QEMU (scripts/deps.sh kernel)")
        return 77
    short, baseoff = "--short" in o, "--baseline-off" in o
    with work_dir(o.get("--work")) as work:
        patched = kernels.build("luf")
        if baseoff:
            pristine, base_key = patched, "none (--baseline-off)"
        else:
            pristine = kernels.build("pristine")
            base_key = build_key(pristine)
        images = {"pristine": pristine}
        if migration:
            images["batched"] = kernels.build("batched")
        boots = [(w, k, r, boot_args(w, k, short, baseoff))
                 for w, k, r in plan(workloads, runs, "--no-switch" in o, sweep)]
        keys = {"series": kernels.series_hash(os.path.dirname(cli.SERIES)),
                "build_key_pristine": base_key, "build_key_luf": build_key(patched),
                "qemu": qemu_version()}
        if migration:
            keys["build_key_batched"] = build_key(images["batched"])
        if "--work" in o:
            side = kernels.kernel_side_hash()
            if side is None:
                invalid("compare: --work needs lib/kernel and tests/kernel committed (a "
                        "resumed comparison must run what the first try ran)")
            resume(work, dict(keys, kernel_side=side,
                              boots=[["%s.%s.%d" % b[:3]] + b[3] for b in boots]))
        keep = kept(work, boots) if "--work" in o else set()
        fail = 0
        for w, k, r, args in boots:
            if (w, r) in keep:
                cli.say("compare", "%s on %s, run %d of %d: done in an earlier try, kept"
                        % (w, k, r, runs))
                continue
            fail |= boot(work, w, k, r, runs, images.get(k, patched), args)
        try:
            version = "\n".join(l[8:] for l in read(os.path.join(os.path.dirname(patched), "info"))
                                .splitlines() if l.startswith("version "))
        except OSError:
            version = "6.1"
        path = o.get("--json") or os.path.join(work, "compare.json")
        # Where the numbers come from: this tree, the series, the kernels' build
        # keys, QEMU.
        # --work and its path are not part of the comparison.
        inv = [a for i, a in enumerate(argv) if a != "--work" and (i == 0 or argv[i - 1] !=
                                                                   "--work")]
        prov = dict(keys, tree=kernels.tree_rev(), invocation="tests/kernel/compare " +
                    " ".join(inv))
        if keep:
            prov["kept_runs"] = sum((b[0], b[2]) in keep for b in boots)
        fail |= collect(work, runs, short, path, version, prov)
        sys.stdout.write(render(load(path)))
        return charts(path, chart, schart) or fail


if __name__ == "__main__":
    cli.entry(main, "compare", __doc__, term=True)
