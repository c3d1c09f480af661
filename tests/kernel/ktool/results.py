# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""The results channel: what the guest's init (tests/kernel/boot) writes to its
second serial port, ttyS1, so that kernel messages never interleave with it.

  @@start, @@info k=v ..., @@info cmdline=...
  @@snap NAME UPTIME, then @@interrupts, @@vmstat, @@meminfo, @@stat, @@sysctl
      sections (/proc/interrupts, /proc/vmstat, /proc/meminfo, /proc/stat's "cpu"
      line, the park's sysctls) up to @@endsnap; NAME is before or after
  @@workload COMMAND, then the workload's own lines (KEY=VALUE or free text)
  @@trace lost=N, @@trace_error WHAT (boot --trace)
  @@setup_error WHAT (the guest's set-up before the workload failed: a mount)
  @@rc STATUS, @@done
"""
import re

_SECTIONS = {"@@interrupts": "interrupts", "@@vmstat": "vmstat", "@@meminfo": "meminfo",
             "@@stat": "stat", "@@sysctl": "sysctl"}
CPU_KINDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq")
TLB_KEYS = ("nr_tlb_remote_flush", "nr_tlb_remote_flush_received", "nr_tlb_local_flush_all",
            "nr_tlb_local_flush_one")
MIGRATION_KEYS = ("pgmigrate_success", "pgmigrate_fail", "pgdemote_kswapd", "pgdemote_direct",
                  "pgpromote_success", "numa_pages_migrated", "numa_hint_faults",
                  "numa_pte_updates")


class Channel:
    """The parsed channel: snaps {name: {uptime, interrupts (lines), vmstat, meminfo,
    sysctl (dicts of int), stat (list of int or None)}}, info {key: str}, workload
    {key: str} and workload_other (lines), command, rc (int or None), done, and from
    boot --trace: trace_lost (int or None), trace_errors (list); setup_errors (list)."""

    def __init__(self):
        self.snaps, self.info, self.workload, self.workload_other = {}, {}, {}, []
        self.command, self.rc, self.done = None, None, False
        self.trace_lost, self.trace_errors, self.setup_errors = None, [], []


def _section_line(cur, section, l):
    if section == "interrupts":
        cur["interrupts"].append(l)
    elif section == "meminfo":
        k, _, v = l.partition(":")
        f = v.split()
        if f and f[0].isdigit():
            cur["meminfo"][k] = int(f[0])
    elif section == "stat":
        f = l.split()
        if f and f[0] == "cpu" and all(x.isdigit() for x in f[1:]):
            cur["stat"] = [int(x) for x in f[1:]]
    elif section == "sysctl":
        k, _, v = l.partition(" ")
        if v.strip().isdigit():
            cur["sysctl"][k] = int(v)
    elif section == "vmstat":
        k, _, v = l.partition(" ")
        if v.strip().lstrip("-").isdigit():
            cur["vmstat"][k] = int(v)


def parse(lines):
    """Parse the channel's @lines (a list of str, \\r removed) into a Channel."""
    ch, cur, section = Channel(), None, None
    for l in lines:
        if l.startswith("@@snap "):
            _, name, up = l.split()[:3]
            cur = ch.snaps[name] = {"uptime": float(up), "interrupts": [], "vmstat": {},
                                    "meminfo": {}, "sysctl": {}, "stat": None}
            section = None
        elif l in _SECTIONS:
            section = _SECTIONS[l]
        elif l == "@@endsnap":
            cur, section = None, None
        elif l.startswith("@@info cmdline="):
            ch.info["cmdline"] = l[len("@@info cmdline="):]
        elif l.startswith("@@info "):
            for kv in l[7:].split():
                k, _, v = kv.partition("=")
                ch.info[k] = v
        elif l.startswith("@@workload"):
            section = "workload"
            ch.command = l[len("@@workload "):]
        elif l.startswith("@@rc "):
            ch.rc = int(l.split()[1])
        elif l == "@@done":
            ch.done = True
        elif l == "@@start":
            pass
        elif l.startswith("@@trace lost="):
            ch.trace_lost = int(l.split("=", 1)[1])
        elif l.startswith("@@trace_error "):
            ch.trace_errors.append(l[len("@@trace_error "):])
        elif l.startswith("@@setup_error "):
            ch.setup_errors.append(l[len("@@setup_error "):])
        elif cur is not None and section in ("interrupts", "meminfo", "stat", "sysctl", "vmstat"):
            _section_line(cur, section, l)
        elif section == "workload":
            m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=(\S*)$", l)
            if m:
                ch.workload[m.group(1)] = m.group(2)
            elif l.strip():
                ch.workload_other.append(l)
    return ch


def irq_row(lines, tag):
    """The per-CPU counts of /proc/interrupts' row @tag (e.g. TLB) in @lines, or None."""
    for l in lines:
        f = l.split()
        if f and f[0] == tag + ":":
            return [int(x) for x in f[1:] if x.isdigit()]
    return None


def counters(ch, out, fails):
    """Add to @out (a dict) what the before/after snapshots of @ch say: the
    /proc/interrupts rows TLB and CAL (sum and per CPU), the /proc/vmstat deltas of
    nr_tlb_*, pgsteal_*, pgscan_*, nr_luf_* (and nr_luf_*.after), pswpin and pswpout
    (pages read from and written to swap), pages_reclaimed,
    reclaimed_per_remote_flush, runtime_s, cpu_*_s (CPU-seconds by kind, all guest
    CPUs), luf_park_pages and luf_park_peak; append what is missing to @fails (a
    list). Returns every vmstat counter that changed, {name: delta}."""
    if "before" not in ch.snaps or "after" not in ch.snaps:
        if ch.done:
            fails.append("incomplete counter snapshots")
        return {}
    b, a = ch.snaps["before"], ch.snaps["after"]
    for tag, key in (("TLB", "tlb_shootdowns"), ("CAL", "function_call_interrupts")):
        rb, ra = irq_row(b["interrupts"], tag), irq_row(a["interrupts"], tag)
        if rb is None or ra is None or len(rb) != len(ra):
            fails.append("no %s row in /proc/interrupts" % tag)
            continue
        d = [y - x for x, y in zip(rb, ra)]
        out[key] = sum(d)
        out[key + "_per_cpu"] = ",".join(str(x) for x in d)
    vb, va = b["vmstat"], a["vmstat"]
    keys = list(TLB_KEYS)
    missing = [k for k in keys if k not in va]
    if missing:
        fails.append("no %s in /proc/vmstat (CONFIG_DEBUG_TLBFLUSH?)" % ",".join(missing))
    keys += sorted(k for k in va if k.startswith("pgsteal_") or k.startswith("pgscan_"))
    keys += sorted(k for k in va if k.startswith("nr_luf_"))
    keys += [k for k in ("pswpin", "pswpout") if k in va]
    # Migration's own (the migrate and tier workloads): moves, demotion, promotion.
    keys += [k for k in MIGRATION_KEYS if k in va]
    vm = {}
    for k in keys:
        if k in va:
            vm[k] = va[k] - vb.get(k, 0)
            out[k] = vm[k]
    for k in sorted(k for k in va if k.startswith("nr_luf_")):
        out[k + ".after"] = va[k]
    out["pages_reclaimed"] = vm.get("pgsteal_kswapd", 0) + vm.get("pgsteal_direct", 0)
    if vm.get("nr_tlb_remote_flush"):
        out["reclaimed_per_remote_flush"] = round(out["pages_reclaimed"] / vm["nr_tlb_remote_flush"], 2)
    out["runtime_s"] = round(a["uptime"] - b["uptime"], 2)
    # /proc/stat's "cpu" line, USER_HZ ticks of 10 ms: what a runtime is made of.
    if b["stat"] and a["stat"] and len(b["stat"]) >= 7 and len(a["stat"]) == len(b["stat"]):
        d = [y - x for x, y in zip(b["stat"], a["stat"])]
        for i, name in enumerate(CPU_KINDS):
            out["cpu_%s_s" % name] = round(d[i] / 100.0, 2)
    for k in ("luf_park_pages", "luf_park_peak"):
        if k in a["sysctl"]:
            out[k] = a["sysctl"][k]
    return {k: va[k] - vb.get(k, 0) for k in va if va[k] != vb.get(k, 0)}
