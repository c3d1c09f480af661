#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""tests/kernel/compare.py - the numbers of tests/kernel/compare.

compare.py collect WORKDIR RUNS SHORT JSON VERSION [PROVENANCE]
    reads WORKDIR/<workload>.<kernel>.<run>.json (tests/kernel/boot --json), writes
    JSON: per workload and kernel every run and the medians; the checker mismatches
    (total, and on the patched kernels); PROVENANCE (a JSON object: the tree's commit,
    the series' hash, the kernels' build keys, QEMU's version, the command) as is.
    Exit 1 if the patched kernels had any mismatch.
compare.py render JSON
    prints the Markdown report: setup, targets, one table per workload, where
    reclaim's CPU time went (/proc/stat, per kernel), the park sweep's table
    (kernels luf-parkNbp) and the hot paths' table, if the JSON has them.
compare.py sweep-data JSON
    prints the sweep's points for gnuplot: a "# runs N" line, then per bound:
    % of RAM, luf's median shootdowns, pristine's median, 1 for the default
    bound (else 0).
"""
import glob
import json
import math
import os
import random
import statistics
import sys

KERNELS = ("pristine", "luf", "luf-noswitch")
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
EXTRA = ("pingpong_ns", "mprotect_ns", "munmap_ns", "nr_luf_alloc_flush", "nr_luf_drain", "nr_luf_kept_flush", "nr_luf_settle_flush",
         "nr_luf_remote_flush", "pgscan_direct", "nr_tlb_local_flush_one", "luf_park_pages",
         "guest_memtotal_kb") + tuple("cpu_%s_s" % c for c in (
             "user", "nice", "system", "idle", "iowait", "irq", "softirq"))

# /proc/stat's split of the guest's CPU time over a workload, for the table
# of where a runtime went: (row, keys summed).
CPU_ROWS = (("user", ("cpu_user_s", "cpu_nice_s")), ("system", ("cpu_system_s",)),
            ("irq and softirq", ("cpu_irq_s", "cpu_softirq_s")), ("iowait", ("cpu_iowait_s",)),
            ("idle", ("cpu_idle_s",)))

# The reclaim target (issue 26): this much fewer shootdowns, with the park's
# peak at most PARK_TARGET of RAM.
CUT_TARGET = 97.0
PARK_TARGET = 0.02
RAM_PAGES = 256 * 1024 // 4
RESAMPLES = 10000


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
    for k in (key, "workload." + key):
        try:
            return float(run[k])
        except (KeyError, TypeError, ValueError):
            pass
    if key == "nr_luf_abort":  # the sum of the per-cause counters
        vals = [num(run, k) for k in run if k.startswith("nr_luf_abort_") and "." not in k]
        vals = [v for v in vals if v is not None]
        return sum(vals) if vals else None
    return None


def collect(work, runs, short, out_path, version, provenance=None):
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
    if provenance:
        out["provenance"] = json.loads(provenance)
    for w, kernels in res.items():
        out["workloads"][w] = {}
        for k, rs in kernels.items():
            med = {}
            for _, key in COLS:
                vals = [v for v in (num(r, key) for r in rs) if v is not None]
                med[key] = statistics.median(vals) if vals else None
            mm = sum(int(num(r, "mismatches") or 0) for r in rs)
            out["mismatches_total"] += mm
            if k != "pristine":
                out["mismatches_patched"] += mm
            slim = [{key: num(r, key) for key in [c[1] for c in COLS] + list(EXTRA)} |
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


def kernels(ws_w):
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
    pts = [(sweep_bp(k) / 100.0, k, ws[k]["median"]) for k in kernels(ws) if sweep_bp(k)]
    bounds = [r["luf_park_pages"] for r in ws.get("luf", {}).get("runs", [])
              if r.get("luf_park_pages") is not None]
    if pts and bounds:
        pts.append((round(100.0 * statistics.median(bounds) / RAM_PAGES, 2), "luf",
                    ws["luf"]["median"]))
    return sorted(pts, key=lambda p: p[0])


def sweep_data(path):
    with open(path) as fh:
        d = json.load(fh)
    base = d["workloads"].get("reclaim", {}).get("pristine", {}).get("median", {})
    print("# runs %d" % d["runs"])
    for pct, k, m in sweep_points(d):
        if m.get("tlb_shootdowns") is not None:
            print(pct, m["tlb_shootdowns"], base.get("tlb_shootdowns") or 0, int(k == "luf"))


HOT = (("pipe ping-pong, ns per round trip", "pingpong_ns"),
       ("mprotect, ns per downgrade and upgrade", "mprotect_ns"),
       ("munmap, ns per map, touch and unmap of 16 pages", "munmap_ns"))
# The hot paths' target: luf's median at most this much above pristine's, at
# the upper end of the interval.
HOT_TARGET = 2.0


def render_hotpath(d):
    ws = d["workloads"].get("hotpath")
    if not ws or "pristine" not in ws or "luf" not in ws:
        return
    print("\nhotpath (medians of %d interleaved boot(s) per kernel; the interval is a "
          "bootstrap of the difference of medians, %d resamples):\n" % (d["runs"], RESAMPLES))
    print("| loop | pristine | luf | luf vs pristine | 95% interval | upper end <= +2% |")
    print("|---|---|---|---|---|---|")
    for name, key in HOT:
        a = [v for v in (num(r, key) for r in ws["luf"]["runs"]) if v is not None]
        b = [v for v in (num(r, key) for r in ws["pristine"]["runs"]) if v is not None]
        if not a or not b:
            continue
        iv = boot_interval(a, b, med_diff_pct)
        print("| %s | %.0f | %.0f | %s%% | %s | %s |" %
              (name, statistics.median(b), statistics.median(a),
               signed(med_diff_pct(a, b)),
               iv_text(iv) if iv else "-",
               "-" if not iv else "MET" if iv[1] <= HOT_TARGET else "MISSED"))


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


def render_cpu_time(d):
    """Where the guest's 4 CPUs spent reclaim's runtime, per kernel: medians of
    the CPU-seconds of each kind (so a runtime difference can be read as
    more system time, more waiting for the disk, more idle)."""
    ws = d["workloads"].get("reclaim", {})
    kinds = [k for k in KERNELS if k in ws and cpu_split(ws[k]["runs"]) is not None]
    if "luf" not in kinds or "pristine" not in kinds:
        return
    split = {k: cpu_split(ws[k]["runs"]) for k in kinds}
    rows = [(name, [split[k][name] for k in kinds]) for name, _ in CPU_ROWS]
    print("\nreclaim: where the guest's CPUs spent the runtime (/proc/stat, CPU-seconds summed "
          "over the guest's vCPUs, medians of the passing runs):\n")
    print("| CPU time | " + " | ".join(kinds) + " | luf - pristine |")
    print("|---" * (len(kinds) + 2) + "|")
    for name, cells in rows:
        print("| %s | %s | %+.1f |" % (name, " | ".join("%.1f" % c for c in cells),
                                       cells[kinds.index("luf")] - cells[kinds.index("pristine")]))


def render_sweep(d):
    pts = sweep_points(d)
    if not pts:
        return
    base = d["workloads"]["reclaim"].get("pristine", {}).get("median", {}).get("tlb_shootdowns")
    print("\nreclaim, vm.luf_park_pages swept (%% of the guest's 256 MiB; medians of %d run(s)):\n"
          % d["runs"])
    print("| bound, % of RAM | bound, pages | park peak, pages | TLB shootdowns | fewer than "
          "pristine | luf's flushes | drains | pages reclaimed | runtime s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for pct, k, m in pts:
        runs = d["workloads"]["reclaim"][k]["runs"]
        bound = [r.get("luf_park_pages") for r in runs if r.get("luf_park_pages") is not None]
        flushes = [r.get("nr_luf_remote_flush") for r in runs if r.get("nr_luf_remote_flush") is not None]
        drains = [r.get("nr_luf_drain") for r in runs if r.get("nr_luf_drain") is not None]
        cut = "%s%%" % pct_down(100.0 * (base - m["tlb_shootdowns"]) / base) \
            if base and m.get("tlb_shootdowns") is not None else "-"
        print("| %g%s | %s | %s | %s | %s | %s | %s | %s | %s |" %
              (pct, " (default)" if k == "luf" else "", fmt(bound[0]) if bound else "-", fmt(m.get("luf_park_peak")),
               fmt(m.get("tlb_shootdowns")), cut,
               fmt(statistics.median(flushes)) if flushes else "-",
               fmt(statistics.median(drains)) if drains else "-",
               fmt(m.get("pages_reclaimed")), fmt(m.get("runtime_s"))))


def render(path):
    try:
        with open(path) as fh:
            d = json.load(fh)
        ws = d["workloads"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit("compare: %s is not a comparison's JSON (%s)" % (path, e))
    what = {"reclaim": "reclaim: a %s" % ("384 MiB disk read once" if d["short"] else
                                          "768 MiB disk read twice by 4 pinned threads"),
            "mixed": "mixed: the same with a writer",
            "checker": "checker: %s" % ("30 s" if d["short"] else "90 s"),
            "hotpath": "hotpath: guest/hotpath.c's loops"}
    print("Linux %s, %s; %s. Medians of %d run(s) per kernel (%s)." %
          (d["kernel_version"], d["guest"], d["config"], d["runs"],
           "; ".join(what[w] for w in ("reclaim", "mixed", "checker", "hotpath") if w in ws)))
    prov = d.get("provenance")
    if prov:
        print("Recorded from tree %s, series %s, build keys %s (pristine) and %s (luf), %s; "
              "`%s`." % (prov.get("tree"), prov.get("series"), prov.get("build_key_pristine"),
                         prov.get("build_key_luf"), prov.get("qemu"), prov.get("invocation")))
        if str(prov.get("build_key_pristine", "")).startswith("none"):
            print()
            print("**No pristine kernel here**: every row and target named *pristine* is the "
                  "patched kernel booted with `luf.reclaim=0` (nothing deferred), ctest's short "
                  "form; the recorded comparisons boot the pristine kernel.")
    print()

    def med(w, k, key):
        return ws.get(w, {}).get(k, {}).get("median", {}).get(key)

    def col(w, k, key):
        vals = [r.get(key) for r in ws.get(w, {}).get(k, {}).get("runs", [])]
        return [v for v in vals if v is not None]

    def spread(w, k, key):
        vals = col(w, k, key)
        return "%s-%s" % (fmt(min(vals)), fmt(max(vals))) if vals else "-"

    def interval(w, key, fewer=False):
        """The bootstrap interval of luf's median against pristine's, in percent."""
        iv = boot_interval(col(w, "luf", key), col(w, "pristine", key), med_diff_pct)
        if not iv:
            return "no interval (one run each)"
        if fewer and iv[1] < 0:
            return "95%% interval %s-%s%% fewer" % (pct_out(-iv[1], False), pct_out(-iv[0], True))
        return "95% interval " + iv_text(iv)

    if any(w in ws for w in ("reclaim", "mixed", "checker")):
        print("| target | measured | |")
        print("|---|---|---|")
    p, l = med("reclaim", "pristine", "tlb_shootdowns"), med("reclaim", "luf", "tlb_shootdowns")
    if p and l is not None:
        red = 100.0 * (p - l) / p
        print("| reclaim: >= %.0f%% fewer TLB shootdowns | %s%% fewer (%s -> %s; %s) | %s |" %
              (CUT_TARGET, pct_down(red), fmt(p), fmt(l), interval("reclaim", "tlb_shootdowns", True),
               "MET" if red >= CUT_TARGET else "MISSED"))
    peaks, mem = col("reclaim", "luf", "luf_park_peak"), col("reclaim", "luf", "guest_memtotal_kb")
    if peaks:
        # RAM: the guest's 256 MiB (QEMU -m), 65,536 pages; MemTotal is what the
        # kernel manages of it (vm.luf_park_pages defaults to 2% of that).
        worst = 100.0 * max(peaks) / RAM_PAGES
        print("| reclaim: park at most %.0f%% of RAM at any time | peak %s pages in the worst "
              "run: %.2f%% of the 256 MiB%s | %s |" %
              (100 * PARK_TARGET, fmt(max(peaks)), int(worst * 100) / 100.0,
               ", %.2f%% of MemTotal" % (int(10000.0 * max(peaks) * 4 / min(mem)) / 100.0)
               if mem else "", "MET" if worst <= 100 * PARK_TARGET else "MISSED"))
    pt, lt = med("reclaim", "pristine", "runtime_s"), med("reclaim", "luf", "runtime_s")
    if pt and lt:
        iv = boot_interval(col("reclaim", "luf", "runtime_s"), col("reclaim", "pristine", "runtime_s"),
                           med_diff_pct)
        # One run each gives no interval, hence no verdict.
        verdict = "-" if iv is None else "MET" if iv[1] <= 5.0 else "MISSED"
        print("| reclaim: runtime, upper end of the 95%% interval at most +5%% | %s (%s s -> %s s; "
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
        print("| reclaim: local full flushes within 10%% of pristine, or the reason | %s (%s -> %s) "
              "| %s |" % (rel(fl, fp), fmt(fp), fmt(fl), "MET" if band else
                          "MISSED: fewer; the reason is in the notes" if fl < fp else "MISSED"))
    pm, lm = med("mixed", "pristine", "tlb_shootdowns"), med("mixed", "luf", "tlb_shootdowns")
    if pm is not None and lm is not None:
        print("| mixed: shootdowns not above pristine | %s -> %s | %s |" %
              (fmt(pm), fmt(lm), "MET" if lm <= pm else "MISSED"))
    if "checker" in ws:
        # Only runs that passed and carry a mismatch count count toward the target.
        runs = sum(1 for k, v in ws["checker"].items() if k != "pristine" for r in v["runs"]
                   if r.get("status") == "pass" and r.get("mismatches") is not None)
        print("| checker: 0 mismatches on the patched kernel, >= 3 runs that passed | %d in %d "
              "run(s) | %s |" % (d["mismatches_patched"], runs,
                                  "MET" if not d["mismatches_patched"] and runs >= 3 else "MISSED"))
        per = [(k, 1000.0 * med("checker", k, "tlb_shootdowns") / med("checker", k, "pages_reclaimed"))
               for k in ("pristine", "luf") if med("checker", k, "tlb_shootdowns") is not None and
               med("checker", k, "pages_reclaimed")]
        if len(per) == 2:
            print("| checker: shootdowns per 1,000 pages reclaimed | %.1f -> %.1f | |" %
                  (per[0][1], per[1][1]))
    ns = med("reclaim", "luf-noswitch", "tlb_shootdowns")
    if p and ns is not None:
        print("| reclaim, luf.switch_done=0 (closest to PCID) | %s%% fewer (%s) | |" %
              (pct_down(100.0 * (p - ns) / p), fmt(ns)))
    for w in ("reclaim", "mixed", "checker"):
        if w not in ws:
            continue
        print("\n%s:\n" % w)
        print("| kernel | " + " | ".join(c for c, _ in COLS) + " | vs pristine | failed runs |")
        print("|---" * (len(COLS) + 3) + "|")
        base = med(w, "pristine", "tlb_shootdowns")
        for k in kernels(ws[w]):
            m = ws[w][k]["median"]
            print("| %s | " % k + " | ".join(fmt(m.get(key)) for _, key in COLS) + " | %s | %d |" %
                  ("" if k == "pristine" else rel(m.get("tlb_shootdowns"), base),
                   ws[w][k]["failed_runs"]))
    if "checker" in ws or "mixed" in ws or "reclaim" in ws:
        print("\nChecker mismatches: %d on the patched kernels, %d in all." %
              (d["mismatches_patched"], d["mismatches_total"]))
    render_cpu_time(d)
    render_sweep(d)
    render_hotpath(d)


if __name__ == "__main__":
    if len(sys.argv) in (7, 8) and sys.argv[1] == "collect":
        sys.exit(collect(sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5],
                         sys.argv[6], sys.argv[7] if len(sys.argv) == 8 else None))
    if len(sys.argv) == 3 and sys.argv[1] == "render":
        render(sys.argv[2])
        sys.exit(0)
    if len(sys.argv) == 3 and sys.argv[1] == "sweep-data":
        sweep_data(sys.argv[2])
        sys.exit(0)
    sys.stderr.write(__doc__)
    sys.exit(2)
