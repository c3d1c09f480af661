#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""Predicted against measured TLB shootdowns per kernel workload (issue 18).

Usage: kernel_table.py LUF_REPLAY TRACE_DIR COMPARE_JSON [DATA_FILE]

For each TRACE_DIR/<workload>.trace.gz (tests/kernel/capture), luf-replay
--cpus 4 predicts the IPIs each policy needs; beside them stand the "TLB
shootdowns" measured by the traced boots (<workload>.boots: every traced
boot of the capture, median [min-max]; else the trace's own boot,
<workload>.json) and the medians of tests/kernel/compare (COMPARE_JSON):
pristine against batched, the patched kernel against luf. Prints a
Markdown table; DATA_FILE, if given, gets one line per workload for
gnuplot. Exit 1 if a replay fails.
"""
import json
import os
import subprocess
import sys


def err(pred, meas):
    if not meas:
        return "-"
    return "%+.1f%%" % (100.0 * (pred - meas) / meas)


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    replay, tdir, cjson = argv[1], argv[2], argv[3]
    data = argv[4] if len(argv) > 4 else None
    comp = {}
    if os.path.exists(cjson):
        with open(cjson) as f:
            comp = json.load(f).get("workloads", {})
    rows, lines = [], []
    for w in ("reclaim", "mixed", "checker"):
        tr = os.path.join(tdir, w + ".trace.gz")
        if not os.path.exists(tr):
            continue
        p = subprocess.run([replay, "--json", "--quiet", "--cpus", "4", tr],
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.stderr.write("kernel_table: luf-replay %s: exit %d: %s" % (tr, p.returncode, p.stderr))
            return 1
        r = json.loads(p.stdout)
        pol = r["policies"]
        own = r.get("kernel", {}).get("measured_shootdowns", 0)
        traced, cell = 0, "-"
        bf = os.path.join(tdir, w + ".boots")
        jf = os.path.join(tdir, w + ".json")
        if os.path.exists(bf):
            with open(bf) as f:
                boots = sorted(int(x) for x in f.read().split())
            if boots:
                traced = boots[len(boots) // 2] if len(boots) % 2 else \
                    (boots[len(boots) // 2 - 1] + boots[len(boots) // 2]) // 2
                cell = "%d [%d-%d], %d boots" % (traced, boots[0], boots[-1], len(boots))
        elif os.path.exists(jf):
            with open(jf) as f:
                traced = int(json.load(f).get("tlb_shootdowns", 0))
            cell = "%d, 1 boot" % traced

        def med(kernel):
            v = comp.get(w, {}).get(kernel, {}).get("median", {}).get("tlb_shootdowns")
            return int(v) if v is not None else 0

        b = pol["batched"]["nr_tlb_remote_flush_received"]
        lu = pol["luf"]["nr_tlb_remote_flush_received"]
        im = pol["immediate"]["nr_tlb_remote_flush_received"]
        mp, ml = med("pristine"), med("luf")
        rows.append("| %s | %s | %d | %s | %d | %s | %d | %d | %s | %d | %d |" % (
            w, cell, b, err(b, traced), mp, err(b, mp), im, lu, err(lu, ml), ml,
            r["bounds"]["cpus_flushed"]))
        lines.append("%s %d %d %d %d" % (w, mp, b, ml, lu))
    print("| workload | traced pristine boots: measured | batched predicts | error | "
          "pristine median (compare) | error | immediate predicts | luf predicts | error | "
          "patched median (compare) | CPU-flush bound |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(row)
    if data:
        with open(data, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
