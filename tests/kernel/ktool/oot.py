# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""tests/kernel/run: luf in a real Linux kernel, as the out-of-tree module
luf_selftest.ko in Debian's stock kernel (ctest's kernel_qemu and, with
--mutants, kernel_qemu_mutants). The module runs the KUnit cases of
lib/kernel/module/luf_kunit.c through the shim of KUnit's API in
lib/kernel/module/shim/ (the stock kernel has no KUnit).

 1. installs what is missing (Debian: linux-image-amd64 linux-headers-amd64
    qemu-system-x86 busybox-static cpio, and linux-source-6.1 for kunit.py);
 2. builds luf_selftest.ko with W=1 against the installed linux-headers-amd64,
    plain and LUF_DEBUG, from a copy of the repository layout: any compiler
    warning fails the run;
 3. runs the vendoring check (ktool.vendor: the guide in lib/kernel/README.md
    followed step by step in a scratch kernel-tree layout);
 4. builds a busybox initramfs (plus tests/kernel/loadmod.c, static: one
    finit_module() per load) that loads the module with bad parameters (each
    must fail with -EINVAL and one pr_warn), then with good ones (plain, then
    LUF_DEBUG with other parameters), and powers off; each good load prints
    its results as KUnit does (KTAP version 1, the suite a subtest);
 5. boots Debian's /boot/vmlinuz-<same version> under qemu-system-x86_64 (TCG,
    -smp 4, -m 512M, serial console) with a timeout;
 6. checks the console: every KTAP document needs its suite's plan line and as
    many case results as planned, no "not ok", and no kernel report
    (ktool.scan's); and the kernel's own kunit.py parse (ktool.ktap, from the
    kbuild cache or unpacked from linux-source-6.1) must read each document
    alike.

With --mutants, instead: builds one module per LUF_MUTANT_* switch (each breaks
one safety rule, see tests/MUTANTS.md), boots once, and passes only if every
mutant's KTAP report has at least one "not ok" (and the kernel itself reported
nothing): the self-test can fail.

Usage: run [--mutants]
Environment: LUF_KERNEL_TIMEOUT (QEMU seconds, default 300), LUF_KERNEL_SMP
(default 4), LUF_KERNEL_LOG (copy of the console, default
$TMPDIR/luf-kernel-console.log, -mutants.log with --mutants), LUF_KERNEL_ARGS
(extra parameters for the main load), LUF_KERNEL_KEEP=1 (keep the scratch
directory).
Exit: 0 pass, 1 fail, 77 skipped (packages missing and not installable).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from . import cli, ktap, scan, vendor

PACKAGES = ("linux-image-amd64", "linux-headers-amd64", "qemu-system-x86", "busybox-static",
            "cpio", "linux-source-6.1")
MUTANTS = ("MARK_BEFORE_FLUSH", "DIET_EARLY", "NO_SETTLE", "DEFER_WRITABLE", "NO_ABORT",
           "UGEN_LT", "SUM_AHEAD")
BAD_PARAMS = ("cpus=4095", "cpus=0,0", "order=9", "nr_keys=1", "key_lo=0", "key_hi=256",
              "batch=0", "pool=8", "rounds=0")
DEBUG_ARGS = "cpus=0,2 order=1 nr_keys=64 key_lo=3 key_hi=9 batch=8 pool=64 rounds=200"
APPEND = "console=ttyS0 panic=-1 oops=panic loglevel=7 printk.time=0 rdinit=/init"


def say(msg):
    cli.say("kernel", msg, sys.stdout)


def packages():
    """Install the missing PACKAGES (as root, or through sudo -n); False (and a SKIP
    line said) if some are missing and cannot be installed."""
    missing = [p for p in PACKAGES if "install ok installed" not in cli.run(
        ["dpkg-query", "-W", "-f=${Status}", p], stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL).stdout]
    if not missing:
        return True
    sudo = []
    if os.getuid() != 0:
        if not shutil.which("sudo") or cli.run(["sudo", "-n", "true"], stderr=subprocess.DEVNULL,
                                               stdout=subprocess.DEVNULL).returncode:
            say("SKIP: missing %s; as root: apt-get install %s" % ((" ".join(missing),) * 2))
            return False
        sudo = ["sudo", "-n"]
    say("installing " + " ".join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for cmd in (["update", "-qq"], ["install", "-y", "-qq", "--no-install-recommends", *missing]):
        if cli.run(sudo + ["apt-get", *cmd], env=env, stdout=sys.stderr).returncode:
            say("SKIP: could not install " + " ".join(missing))
            return False
    return True


def module(work, kdir, variant, ko, *args):
    """Build luf_selftest.ko against @kdir with W=1 (vendor.w1_build(), the make
    arguments @args, the log in @work/build-@variant.log) from a copy of the
    repository layout in @work/@variant (include/, lib/*.c, lib/kernel/ without
    the module's build output: Kbuild finds ../../../include); copy it to
    @work/initramfs/@ko."""
    dst = os.path.join(work, variant)
    shutil.copytree(os.path.join(cli.REPO, "include"), os.path.join(dst, "include"), symlinks=True)
    vendor.copy_core(os.path.join(dst, "lib"))
    shutil.copytree(os.path.join(cli.REPO, "lib", "kernel"), os.path.join(dst, "lib", "kernel"),
                    symlinks=True, ignore=lambda d, names: [
                        n for n in names if d == vendor.MODULE and n.endswith((".o", ".ko"))])
    mod = os.path.join(dst, "lib", "kernel", "module")
    vendor.w1_build(kdir, mod, os.path.join(work, "build-%s.log" % variant), *args)
    shutil.copy(os.path.join(mod, "luf_selftest.ko"), os.path.join(work, "initramfs", ko))


def init_script(mutants, main_args):
    """The initramfs' /init: the loads, each followed by a "luf-run: ..." line."""
    s = ["#!/bin/busybox sh", "/bin/busybox --install -s /bin",
         "mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev",
         'echo "luf-run: start, $(nproc) CPUs"']
    rmmod = 'rmmod luf_selftest; echo "luf-run: rmmod%s rc=$?"'
    if mutants:
        for m in mutants:
            s += ['echo "luf-run: mutant %s"' % m,
                  'loadmod /luf_selftest_%s.ko rounds=200; echo "luf-run: insmod rc=$?"' % m,
                  rmmod % ""]
    else:
        for a in BAD_PARAMS:
            s += ["dmesg -c >/dev/null; loadmod /luf_selftest.ko %s; rc=$?" % a,
                  "w=$(dmesg | grep -c 'luf_core: invalid parameter')",
                  'echo "luf-run: bad-param rc=$rc warns=$w %s"' % a]
        s += ['loadmod /luf_selftest.ko %s; echo "luf-run: insmod rc=$?"' % main_args, rmmod % "",
              "loadmod /luf_selftest_debug.ko " + DEBUG_ARGS, 'echo "luf-run: insmod-debug rc=$?"',
              rmmod % "-debug"]
    return "\n".join(s + ['echo "luf-run: done"', "poweroff -f"]) + "\n"


def initramfs(work, mutants, main_args):
    """Write @work/initramfs.cpio.gz from @work/initramfs (the modules already in
    it): busybox, loadmod and init_script()."""
    ird = os.path.join(work, "initramfs")
    shutil.copy("/bin/busybox", os.path.join(ird, "bin", "busybox"))
    # One finit_module() per load (busybox insmod retries a failed load with init_module()).
    if cli.run(["gcc", "-static", "-O2", "-Wall", "-Wextra", "-Werror", "-o", os.path.join(
            ird, "bin", "loadmod"), os.path.join(cli.KDIR, "loadmod.c")]).returncode:
        raise cli.Fail("cannot build tests/kernel/loadmod.c statically (libc6-dev)")
    vendor.write(os.path.join(ird, "init"), init_script(mutants, main_args))
    os.chmod(os.path.join(ird, "init"), 0o755)
    cli.initramfs(ird, os.path.join(work, "initramfs.cpio.gz"))


def ktap_documents(console):
    """The KTAP documents of @console (a list of lines): per top-level "KTAP
    version 1" line, [the suite's plan (-1 without a plan line), its case
    results, names of the failed cases ("not ok")]. A document's suite is a
    subtest, its lines indented by four spaces, as KUnit prints them.

    Its own reading besides the kernel's kunit.py parse (kunit_parse()): that
    reads only a console's first KTAP document (the module prints one per
    load: 2, or 7 with --mutants), so kunit_parse() gives it one at a time."""
    docs = []
    for l in console:
        if l == "KTAP version 1":
            docs.append([-1, 0, []])
        elif docs and re.fullmatch(r" {4}1\.\.[0-9]+", l):
            docs[-1][0] = int(l.split("..")[1])
        elif docs and re.match(r" {4}(not )?ok [0-9]+ ", l):
            docs[-1][1] += 1
            if l.lstrip().startswith("not"):
                docs[-1][2].append(l.split()[3])
    return docs


def document_texts(console):
    """Each top-level KTAP document of @console as text, for kunit.py."""
    starts = [k for k, l in enumerate(console) if l == "KTAP version 1"] + [len(console)]
    return ["\n".join(console[a:b]) + "\n" for a, b in zip(starts, starts[1:])]


def kunit_parse(console, work):
    """The kernel's kunit.py parse on each KTAP document of @console (a passing
    run's): a list of failures, one if there is no kunit.py to run."""
    parser = ktap.find_or_unpack(work)
    if not parser:
        return ["no kunit.py: install linux-source-6.1 (bash scripts/deps.sh kernel)"]
    out = []
    for d, text in enumerate(document_texts(console), 1):
        path = os.path.join(work, "ktap-%d.txt" % d)
        vendor.write(path, text)
        rc, log = ktap.parse(parser, path, path + ".json")
        counts = ktap.count_cases(path + ".json") or {}
        if rc or counts.get("PASS", 0) + counts.get("SKIP", 0) != ktap_documents(
                text.split("\n"))[0][0]:
            out.append("kunit.py parse of KTAP document %d: exit %d, %s\n%s"
                       % (d, rc, counts, log[-2000:]))
        else:
            say("kunit.py parse of KTAP document %d: %d passed, %d skipped"
                % (d, counts["PASS"], counts["SKIP"]))
    return out


def check(console, qemu_status, mutants=None):
    """The verdict on @console (the lines of a run's console) after QEMU exited with
    @qemu_status; with @mutants (the LUF_MUTANT_* names, in load order) the
    mutants' one. A list of (kind, text) in order: "say" a progress line, "err" a
    console line for stderr (numbered, as grep -n), "fail" a failure."""
    out = []

    def bad(msg):
        out.append(("fail", msg))

    def listed(lines, msg):
        out.extend(("err", "%d:%s" % (k + 1, console[k])) for k in lines)
        if lines:
            bad(msg)

    if qemu_status:
        bad("QEMU exit status %d (124: timeout)" % qemu_status)
    if not any(l.startswith("luf-run: done") for l in console):
        bad("init did not finish (no 'luf-run: done')")
    listed(scan.problem_lines(console), "kernel reported a problem (lines above)")
    docs = ktap_documents(console)
    if mutants:
        if console.count("luf-run: insmod rc=0") != len(mutants):
            bad("not every mutant module loaded")
        for d, (plan, n, nok) in enumerate(docs):
            m = mutants[d] if d < len(mutants) else "?"
            if plan < 1 or n < plan:
                bad("mutant %s: incomplete report (%d of %d)" % (m, n, plan))
            if nok:
                out.append(("say", "mutant LUF_MUTANT_%s caught: %d not ok (%s)"
                            % (m, len(nok), ",".join(nok))))
            else:
                bad("mutant LUF_MUTANT_%s NOT caught: every test passed" % m)
        if len(docs) != len(mutants):
            bad("%d KTAP documents for %d mutants" % (len(docs), len(mutants)))
        return out
    listed([k for k, l in enumerate(console) if l.startswith("luf: ")],
           "unexpected LUF_DEBUG misuse report (lines above)")
    # Each bad load: refused (loadmod exits 1), exactly one pr_warn line.
    for a in BAD_PARAMS:
        if "luf-run: bad-param rc=1 warns=1 " + a not in console:
            got = [l for l in console if "bad-param" in l and " " + a in l]
            bad("bad parameter %s: want refused with one warning, got: %s"
                % (a, "\n".join(got) or "none"))
    for m in ("insmod rc=0", "rmmod rc=0", "insmod-debug rc=0", "rmmod-debug rc=0"):
        if "luf-run: " + m not in console:
            bad("expected 'luf-run: %s'" % m)
    # One KTAP document per good load, each complete.
    for d, (plan, n, nok) in enumerate(docs, 1):
        if plan < 1:
            bad("KTAP document %d: no plan line" % d)
        if n < plan:
            bad("KTAP document %d: %d results for a plan of %d" % (d, n, plan))
        if nok:
            bad("KTAP document %d: %d 'not ok': %s" % (d, len(nok), ",".join(nok)))
        out.append(("say", "KTAP document %d (%s): plan %d, %d results, %d not ok"
                    % (d, "plain" if d == 1 else "LUF_DEBUG", plan, n, len(nok))))
    if len(docs) != 2:
        bad("%d KTAP documents, want 2 (plain and LUF_DEBUG loads)" % len(docs))
    out += [("say", l.strip()) for l in console
            if re.match(r" *# lk_stress_[a-z_]+: ([0-9]+ CPUs|IPIs|violations)", l)]
    return out


def boot(work, ver, mutants):
    """Boot Debian's kernel @ver on @work/initramfs.cpio.gz: (the console's lines,
    QEMU's exit status (124: timed out))."""
    env = os.environ.get
    timeout, smp = env("LUF_KERNEL_TIMEOUT") or "300", env("LUF_KERNEL_SMP") or "4"
    log_copy = env("LUF_KERNEL_LOG") or os.path.join(
        env("TMPDIR") or "/tmp", "luf-kernel-console%s.log" % ("-mutants" if mutants else ""))
    console = os.path.join(work, "console.log")
    say("booting /boot/vmlinuz-%s under QEMU (TCG, -smp %s, timeout %s s)" % (ver, smp, timeout))
    t0 = time.time()
    with open(console, "wb") as f:
        qrc = cli.run(["timeout", "-k", "10", timeout, "qemu-system-x86_64", "-accel", "tcg",
                       "-smp", smp, "-m", "512M", "-nographic", "-no-reboot",
                       "-kernel", "/boot/vmlinuz-" + ver,
                       "-initrd", os.path.join(work, "initramfs.cpio.gz"), "-append", APPEND],
                      stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT).returncode
    with open(console, "rb") as f:
        text = f.read().replace(b"\r", b"")
    with open(console + ".txt", "wb") as f:
        f.write(text)
    try:
        shutil.copy(console + ".txt", log_copy)
    except OSError:
        pass
    say("QEMU exited with %d after %d s; console: %s" % (qrc, time.time() - t0, log_copy))
    return text.decode(errors="replace").split("\n"), qrc


def verdict(console, qrc, mutants, t_start, work):
    """Print check()'s verdict (and kunit_parse()'s, on a run without @mutants), the
    run's time since @t_start and, on a failure, the console's luf lines; the exit
    status."""
    out = check(console, qrc, mutants)
    if not mutants and not any(kind == "fail" for kind, _ in out):
        out += [("fail", f) for f in kunit_parse(console, work)]
    for kind, msg in out:
        if kind == "say":
            say(msg)
        else:
            sys.stderr.write(("kernel: FAIL: %s\n" if kind == "fail" else "%s\n") % msg)
    say("total %d s" % (time.time() - t_start))
    if any(kind == "fail" for kind, _ in out):
        say("console excerpt (luf lines):")
        luf = [l for l in console if re.match(r" *(luf|KTAP|1\.\.|ok |not ok |# )", l)]
        sys.stderr.write("".join(l + "\n" for l in luf[-80:]))
        return 1
    say("PASS")
    return 0


def run(work, ver, kdir, mutants, t_start):
    """Steps 2 to 6 in the scratch directory @work; the exit status."""
    ird = os.path.join(work, "initramfs")
    for d in ("bin", "proc", "sys", "dev"):
        os.makedirs(os.path.join(ird, d))
    if mutants:
        for m in mutants:
            module(work, kdir, m, "luf_selftest_%s.ko" % m, "KCFLAGS=-DLUF_MUTANT_" + m)
        say("built %d mutant modules: %s" % (len(mutants), " ".join(mutants)))
    else:
        t0 = time.time()
        module(work, kdir, "plain", "luf_selftest.ko")
        say("W=1 build: luf_selftest.ko in %d s, no warnings" % (time.time() - t0))
        module(work, kdir, "debug", "luf_selftest_debug.ko", "CONFIG_LUF_DEBUG=y")
        say("W=1 build (LUF_DEBUG): no warnings")
        # 3. The vendoring guide, followed as a new user would.
        try:
            vendor.check(os.path.join(work, "vendor"), kdir)
        except cli.Fail as e:
            cli.say("vendor", "FAIL: %s" % e)
            raise cli.Fail("vendoring check failed") from e
    initramfs(work, mutants, os.environ.get("LUF_KERNEL_ARGS", ""))
    return verdict(*boot(work, ver, mutants), mutants, t_start, work)


def main(argv):
    if argv not in ([], ["--mutants"]):
        raise cli.Usage("run: unknown arguments: %s" % " ".join(argv))
    mutants = MUTANTS if argv else None
    t_start = time.time()
    if not packages():
        return 77
    # The newest version with both headers and a kernel image (need not be the running one).
    vers = [d[len("/usr/src/linux-headers-"):] for d in vendor.headers()
            if os.path.exists(os.path.join(d, "Makefile"))]
    vers = [v for v in vers if os.access("/boot/vmlinuz-" + v, os.R_OK)]
    if not vers:
        raise cli.Fail("no /usr/src/linux-headers-*-amd64 with a matching /boot/vmlinuz-*")
    ver = vers[-1]
    kdir = "/lib/modules/%s/build" % ver
    if not os.path.exists(kdir):
        kdir = "/usr/src/linux-headers-" + ver
    say("kernel %s, headers %s" % (ver, kdir))
    work = tempfile.mkdtemp(prefix="luf-kernel.", dir=os.environ.get("TMPDIR") or "/tmp")
    try:
        return run(work, ver, kdir, mutants, t_start)
    finally:
        if os.environ.get("LUF_KERNEL_KEEP"):
            say("kept " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    cli.entry(main, "kernel", __doc__, term=True)
