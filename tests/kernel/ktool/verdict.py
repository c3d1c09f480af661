# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""python3 -m ktool.verdict: what tests/kernel/boot decides once QEMU has exited.

  ktool.verdict --console FILE --results FILE --series FILE [--kernel BZIMAGE]
                [--qemu-status N] [--elapsed S] [--timeout S] [--workload NAME]
                [--kunit-py KUNIT.PY --kunit-json FILE] [--json FILE]

Prints the results as key=value lines (ktool/boot.py's docstring lists them),
the reports and the workload's free text to stderr; --json writes them as one
object, with the report lines, every vmstat counter that changed and the
snapshots' /proc/meminfo. Exit 0 pass, 1 fail: a kernel report (ktool.scan), QEMU
timed out or failed, the guest did not finish, a counter is missing, the workload
failed, or (with --kunit-py) a KUnit case failed, crashed or is missing.
"""
import argparse
import json
import sys

from . import ktap, results, scan


def _lines(path):
    with open(path, errors="replace") as f:
        return f.read().replace("\r", "").splitlines()


def _stderr_list(title, lines, limit, unit=""):
    sys.stderr.write(title)
    for l in lines[:limit]:
        sys.stderr.write("  " + l + "\n")
    if len(lines) > limit:
        sys.stderr.write("  ... %d more%s\n" % (len(lines) - limit, unit))


def verdict(a):
    """The results of one boot, from the parsed arguments @a: (out dict, the JSON
    object's extras, fails list)."""
    console = _lines(a.console)
    channel = results.parse(_lines(a.results))
    out = {"status": "pass", "fail_reason": "", "kernel": a.kernel or "", "workload": a.workload}
    fails = []

    problems, elsewhere = scan.scan(console, scan.touched_functions(a.series, a.kernel),
                                    access_lines=scan.AccessLines.of_kernel(a.kernel))
    out["kcsan_reports_elsewhere"] = len(elsewhere)
    if elsewhere:
        _stderr_list("boot: KCSAN reports in code luf neither is nor changes (listed, not failed):\n",
                     elsewhere, len(elsewhere))
    out["kernel_problems"] = len(problems)
    if problems:
        fails.append("kernel problem on the console")
        _stderr_list("boot: kernel problems on the console:\n", problems, 60)

    if a.qemu_status in (124, 137):
        fails.append("timeout after %s s" % a.timeout)
    elif a.qemu_status != 0:
        fails.append("QEMU exit status %d" % a.qemu_status)

    if channel.command is not None:
        out["workload_command"] = channel.command
    if channel.trace_lost is not None:
        out["trace_lost"] = channel.trace_lost
    fails += ["tracing: " + e for e in channel.trace_errors]
    fails += ["guest set-up: " + e for e in channel.setup_errors]
    for k in ("nproc", "kernel", "memtotal_kb"):
        if k in channel.info:
            out["guest_" + k] = channel.info[k]
    if not channel.done and a.workload != "check-console":
        fails.append("the guest did not finish (no @@done on ttyS1)")
    vm_all = results.counters(channel, out, fails)

    if channel.rc is not None:
        out["workload_rc"] = channel.rc
        if channel.rc != 0:
            fails.append("workload exit status %d" % channel.rc)
    for k, v in channel.workload.items():
        out["workload." + k] = v
    if channel.workload_other:
        _stderr_list("boot: workload output:\n", channel.workload_other, 100, " lines")

    if a.kunit_py:
        rc, text = ktap.parse(a.kunit_py, a.console, a.kunit_json)
        if rc == 0:
            for l in text.splitlines():
                if "Testing complete" in l:
                    sys.stderr.write("  kunit.py: " + l + "\n")
        else:
            for l in text.splitlines():
                sys.stderr.write("  kunit.py: " + l + "\n")
        out["kunit_rc"] = rc
        counts = ktap.count_cases(a.kunit_json)
        if counts is not None:
            out["kunit_cases_passed"] = counts.get("PASS", 0)
            out["kunit_cases_failed"] = counts.get("FAIL", 0) + counts.get("ERROR", 0)
            out["kunit_cases_skipped"] = counts.get("SKIP", 0)
        failed = counts["failed"] if counts else []
        if failed:
            out["kunit_failed_cases"] = ",".join(failed)
        if rc != 0:  # kunit.py also fails a console where no case ran
            kunit_why = ("KUnit cases failed: " + ", ".join(failed) if failed else
                         "kunit.py parse: crashed or missing KUnit cases (none reported failed)")
            if failed and counts.get("ERROR"):
                kunit_why += " (and %d crashed or missing)" % counts["ERROR"]
            fails.append(kunit_why)

    out["qemu_seconds"] = a.elapsed
    if fails:
        out["status"] = "fail"
        out["fail_reason"] = "; ".join(fails)
    extra = {"workload_output": channel.workload_other, "kernel_problem_lines": problems,
             "vmstat_delta_all": vm_all,
             "meminfo_kb": {n: s["meminfo"] for n, s in channel.snaps.items()}}
    return out, extra, fails


def main(argv):
    ap = argparse.ArgumentParser(prog="ktool.verdict")
    ap.add_argument("--console", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--series", required=True)
    ap.add_argument("--kernel", default="")
    ap.add_argument("--qemu-status", type=int, default=0)
    ap.add_argument("--elapsed", type=int, default=0)
    ap.add_argument("--timeout", default="0")
    ap.add_argument("--workload", default="check-console")
    ap.add_argument("--kunit-py", default="")
    ap.add_argument("--kunit-json", default="")
    ap.add_argument("--json", default="")
    a = ap.parse_args(argv)
    if a.kunit_py and not a.kunit_json:
        ap.error("--kunit-py needs --kunit-json")
    out, extra, fails = verdict(a)
    for k, v in out.items():
        print("%s=%s" % (k, v))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(out, **extra), f, indent=1)
            f.write("\n")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
