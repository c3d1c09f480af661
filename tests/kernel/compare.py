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
    prints the Markdown report: setup, targets, one table per workload.
"""
import glob
import json
import os
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
        ("mismatches", "mismatches")]


# Kept in the JSON, not shown in the tables: where luf's own flushes came from.
EXTRA = ("nr_luf_alloc_flush", "nr_luf_drain", "nr_luf_kept_flush", "nr_luf_settle_flush",
         "nr_luf_remote_flush", "pgscan_direct")


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
    return "%+.1f%%" % (100.0 * (a - b) / b) if a is not None and b else "-"


def render(path):
    try:
        with open(path) as fh:
            d = json.load(fh)
        ws = d["workloads"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        sys.exit("compare: %s is not a comparison's JSON (%s)" % (path, e))
    print("Linux %s, %s; %s. Medians of %d run(s) per kernel%s." %
          (d["kernel_version"], d["guest"], d["config"], d["runs"],
           " (short workloads: a 384 MiB disk read once, a 30 s checker)" if d["short"] else
           " (reclaim and mixed: a 768 MiB disk read twice by 4 pinned threads; "
           "checker: 90 s)"))
    prov = d.get("provenance")
    if prov:
        print("Recorded from tree %s, series %s, build keys %s (pristine) and %s (luf), %s; "
              "`%s`." % (prov.get("tree"), prov.get("series"), prov.get("build_key_pristine"),
                         prov.get("build_key_luf"), prov.get("qemu"), prov.get("invocation")))
    print()

    def med(w, k, key):
        return ws.get(w, {}).get(k, {}).get("median", {}).get(key)

    print("| target | measured | |")
    print("|---|---|---|")
    p, l = med("reclaim", "pristine", "tlb_shootdowns"), med("reclaim", "luf", "tlb_shootdowns")
    if p and l is not None:
        red = 100.0 * (p - l) / p
        print("| reclaim: >= 90%% fewer TLB shootdowns | %.1f%% fewer (%s -> %s) | %s |" %
              (red, fmt(p), fmt(l), "MET" if red >= 90 else "MISSED"))
    def spread(w, k, key):
        vals = [r.get(key) for r in ws.get(w, {}).get(k, {}).get("runs", [])]
        vals = [v for v in vals if v is not None]
        return "%s-%s" % (fmt(min(vals)), fmt(max(vals))) if vals else "-"

    pt, lt = med("reclaim", "pristine", "runtime_s"), med("reclaim", "luf", "runtime_s")
    if pt and lt:
        print("| reclaim: runtime no worse than +5%% | %s (%s s -> %s s; runs %s s and %s s) | %s |" %
              (rel(lt, pt), fmt(pt), fmt(lt), spread("reclaim", "pristine", "runtime_s"),
               spread("reclaim", "luf", "runtime_s"), "MET" if lt <= 1.05 * pt else "MISSED"))
    pm, lm = med("mixed", "pristine", "tlb_shootdowns"), med("mixed", "luf", "tlb_shootdowns")
    if pm is not None and lm is not None:
        print("| mixed: shootdowns not above pristine | %s -> %s | %s |" %
              (fmt(pm), fmt(lm), "MET" if lm <= pm else "MISSED"))
    if "checker" in ws:
        runs = sum(len(v["runs"]) for k, v in ws["checker"].items() if k != "pristine")
        print("| checker: 0 mismatches on the patched kernel, >= 3 runs | %d in %d run(s) | %s |" %
              (d["mismatches_patched"], runs,
               "MET" if not d["mismatches_patched"] and runs >= 3 else "MISSED"))
    ns = med("reclaim", "luf-noswitch", "tlb_shootdowns")
    if p and ns is not None:
        print("| reclaim, luf.switch_done=0 (closest to PCID) | %.1f%% fewer (%s) | |" %
              (100.0 * (p - ns) / p, fmt(ns)))
    for w in ("reclaim", "mixed", "checker"):
        if w not in ws:
            continue
        print("\n%s:\n" % w)
        print("| kernel | " + " | ".join(c for c, _ in COLS) + " | vs pristine | failed runs |")
        print("|---" * (len(COLS) + 3) + "|")
        base = med(w, "pristine", "tlb_shootdowns")
        for k in KERNELS:
            if k not in ws[w]:
                continue
            m = ws[w][k]["median"]
            print("| %s | " % k + " | ".join(fmt(m.get(key)) for _, key in COLS) + " | %s | %d |" %
                  ("" if k == "pristine" else rel(m.get("tlb_shootdowns"), base),
                   ws[w][k]["failed_runs"]))
    print("\nChecker mismatches: %d on the patched kernels, %d in all." %
          (d["mismatches_patched"], d["mismatches_total"]))


if __name__ == "__main__":
    if len(sys.argv) in (7, 8) and sys.argv[1] == "collect":
        sys.exit(collect(sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1", sys.argv[5],
                         sys.argv[6], sys.argv[7] if len(sys.argv) == 8 else None))
    if len(sys.argv) == 3 and sys.argv[1] == "render":
        render(sys.argv[2])
        sys.exit(0)
    sys.stderr.write(__doc__)
    sys.exit(2)
