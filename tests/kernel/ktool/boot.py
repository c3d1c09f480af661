# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""tests/kernel/boot - boot a kernel under QEMU (TCG) with a generated busybox
initramfs, run one guest workload, print machine-readable results.

Usage: boot --kernel BZIMAGE [--workload NAME] [--kunit] [--disk-mb N] [--threads N]
            [--passes N] [--seconds N] [--wargs "ARGS"] [--append "CMDLINE"]
            [--console FILE] [--json FILE] [--timeout S] [--smp N] [--mem SIZE]
            [--machine pc|microvm] [--trace FILE] [--verbose] [--keep]
       boot --check-console FILE [--kunit] [--json FILE]
  --workload NAME  none (boot, snapshot, power off), reclaim, mixed, checker, coherence
                   (guest/coherence.c; the last CPU is isolated with isolcpus=;
                   three more virtio disks and three NVMe controllers, one in an
                   NVMe subsystem, for its writers: see the coherence case), offline
                   (guest/offline.c; a 128 MiB QEMU pc-dimm, memhp_default_state=offline),
                   idle (offline --idle: parked memory released on idle), pageout
                   (offline --pageout 1024: one MADV_PAGEOUT of 1 GiB stays within
                   vm.luf_park_pages; default --mem 1536M --disk-mb 1100), oom
                   (offline --oom 128: an allocation that needs parked memory gets
                   it, not the OOM killer), hotpath (guest/hotpath.c: pipe ping-pong,
                   mprotect and munmap loops, timed), kunit (= none --kunit);
                   reclaim-ext4, checker-ext4, coherence-ext4: the workload over
                   the file /mnt/data of an ext4 image made by mkfs.ext4 -d
                   (journal on, mounted data=ordered; coherence's file writers
                   pwrite, map, dio, punch and truncate); reclaim-tmpfs,
                   reclaim-anon: reclaim of swap-backed memory, the virtio disk
                   being the guest's swap (mkswap, swapon): reclaim --fill over a
                   file of 3/4 of the disk on a tmpfs (size=0) read by --threads
                   threads, or reclaim --anon: as much private anonymous memory
                   read by --threads forked children (default 3, on CPUs 1-3).
                   Their writes (the fill) are inside the counters and
                   runtime_s; workload.runtime_s is the read phase alone.
                   coherence-anon: coherence's anon writer (a write fault on
                   private anonymous memory swapped in again), the disk as swap;
                   coherence-tmpfs: coherence's writers pwrite, map, punch,
                   truncate and hole over a sparse file on a tmpfs, the disk
                   as swap;
                   peers (guest/peers.c): Debian's fio (verify=crc32c, mmap and
                   psync engines) and stress-ng (vm class, --verify) from a second
                   disk (peers_image(), mounted on /peers) while reclaim-ext4's
                   reclaim runs over /mnt/data;
                   migrate (guest/migrate.c): two NUMA nodes of --mem each (QEMU's
                   -numa; node 0 the first half of the CPUs, node 1 the rest; on
                   microvm, which has no ACPI, the kernel's numa=fake=2 with
                   CONFIG_NUMA_EMU), a read-only mapping moved between them with
                   move_pages() while readers on the other CPUs read it;
                   tier (guest/tier.c): memory tiering, node 0 of --mem (default
                   512M) with every CPU, node 1 an emulated 1 GiB NVDIMM (QEMU's
                   nvdimm=on, ACPI NFIT) that Debian's ndctl makes a device-DAX
                   namespace, onlined as system RAM by the dax kmem driver (a
                   lower memory tier); demotion_enabled=1 and
                   kernel.numa_balancing=2 (tiering); random lookups over the
                   file /mnt/data of an ext4 image of --disk-mb (default 768,
                   larger than node 0). migrate and tier take their programs'
                   options (threads, seconds, size) in --wargs. Default: none.
  --kunit          parse the console with the kernel's own KUnit parser
                   (tools/testing/kunit/kunit.py parse, from the kernel's source tree
                   in the kbuild cache) and fail on any failed, crashed or missing case
                   or on a console without any KUnit result
  --disk-mb N      size of the virtio-blk disk (default 768, more than the 256M of RAM)
  --threads N      workload threads (reclaim/mixed: default 4; reclaim-anon: forked
                   readers, default 3; checker: readers, nr_cpus-1)
  --passes N       reclaim/mixed passes (default 2)
  --seconds N      checker run length (default 90; the checker runs on until its hot set
                   has moved 4 times, at most 3 N + 60 s: see guest/checker.c)
  --wargs "ARGS"   extra arguments for the workload program (e.g. "--stagger 0",
                   "--write-every 4", "--hot-pages 128")
  --append "..."   extra kernel command line (repeatable: joined with spaces)
  --console FILE   keep a copy of the serial console (\\r removed)
  --json FILE      write the results as one JSON object
  --trace FILE     trace the workload (a kernel with tests/kernel/config/trace.config):
                   the events of tests/kernel/capture streamed from tracefs's
                   trace_pipe to a third serial port, written gzip'd to FILE; the
                   results gain trace_lost (events the ring buffer dropped, per CPU
                   summed: must be 0 for a usable trace)
  --timeout S      QEMU wall-clock limit (default: 300 for none, else 600 + what the workload needs)
  --smp N, --mem SIZE   guest CPUs and RAM (default 4 and 256M)
  --machine M      QEMU's pc or microvm (default: microvm for a kernel built
                   without PCI and with virtio-mmio command-line devices, which
                   the .config kbuild keeps beside its bzImage says: the sanitizer
                   kernels; else pc). microvm runs the workloads that need one
                   disk only: none, kunit, hotpath, reclaim, mixed, checker, their
                   -ext4 forms, reclaim-tmpfs, reclaim-anon and coherence-ext4,
                   -tmpfs and -anon
  --verbose        stream the console to stderr while the guest runs
  --keep           keep the scratch directory (a failed boot keeps it without its
                   initramfs, and says where)
  --check-console FILE   boot nothing: run the console checks (kernel problems, and
                   KUnit with --kunit) on an existing console log; shows the scan can fail
Results (stdout, key=value, one per line): status, fail_reason, kernel, workload,
tlb_shootdowns (the "TLB shootdowns" row of /proc/interrupts, summed over CPUs,
delta over the workload), tlb_shootdowns_per_cpu, function_call_interrupts(_per_cpu),
the /proc/vmstat deltas nr_tlb_remote_flush, nr_tlb_remote_flush_received,
nr_tlb_local_flush_all, nr_tlb_local_flush_one, pgsteal_*, pgscan_*, every nr_luf_*
line (delta, and nr_luf_*.after = the value after the workload), pswpin and pswpout
(pages read from and written to swap), pages_reclaimed
(pgsteal_kswapd + pgsteal_direct), reclaimed_per_remote_flush, runtime_s (guest wall
clock over the workload), luf_park_pages and luf_park_peak (patched kernels: the
park's bound and the most it held during the workload, in pages; vm.luf_park_peak
is reset as the workload starts), cpu_user_s, cpu_nice_s, cpu_system_s, cpu_idle_s,
cpu_iowait_s, cpu_irq_s, cpu_softirq_s (/proc/stat's "cpu" line over the workload:
CPU-seconds of all guest CPUs by kind), workload.KEY=VALUE (the workload's own result lines),
workload_rc, kernel_problems (count; the lines go to stderr), kcsan_reports_elsewhere
(KCSAN data races in code luf neither is nor changes: listed on stderr, not failed
on; see the scan below), kunit_* (with --kunit).
Exit: 0 pass, 1 fail (kernel problem, workload failure, timeout, KUnit), 2 usage.
Environment: LUF_KERNEL_CACHE (as kbuild), LUF_KUNIT_PY (the kunit.py to use), TMPDIR.
"""
import contextlib
import fcntl
import glob
import gzip
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import types

from . import cli, ktap, verdict

GUEST = os.path.join(cli.KDIR, "guest")
WORKLOADS = ("none", "reclaim", "mixed", "checker", "coherence", "offline", "idle", "pageout",
             "oom", "hotpath", "kunit", "reclaim-ext4", "checker-ext4", "coherence-ext4",
             "reclaim-tmpfs", "reclaim-anon", "coherence-anon", "coherence-tmpfs", "peers",
             "migrate", "tier")
MICROVM = ("none", "kunit", "reclaim", "mixed", "checker", "hotpath", "reclaim-ext4",
           "checker-ext4", "reclaim-tmpfs", "reclaim-anon", "coherence-ext4", "coherence-anon",
           "coherence-tmpfs", "migrate")
# WORKLOAD-ext4: WORKLOAD over the file /mnt/data of an ext4 file system (journal on,
# data=ordered) that fills the disk, made on the host by mkfs.ext4 -d (ext4_image()).
FS_SUFFIX = "-ext4"
# WORKLOAD-SWAP: WORKLOAD over swap-backed memory, the disk being the swap: a file on
# a tmpfs or private anonymous memory (reclaim --fill, --anon), of SWAP_SHARE of the disk.
SWAP_SUFFIXES = ("-tmpfs", "-anon")
SWAP_SHARE = (3, 4)
# The peers workload's suites (Debian's fio and stress-ng), copied into its image
# with the shared libraries ldd names for them, and what ldd does not name: the
# dynamic loader the guest runs them through, and libgcc_s.so.1, which glibc
# dlopens for pthread_cancel().
PEERS = ("/usr/bin/fio", "/usr/bin/stress-ng")
PEERS_EXTRA = ("/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/libgcc_s.so.1")
# Free space in the peers image for the suites' files (fio's two of 160 MiB), in MiB.
PEERS_FREE_MB = 400
# The peers image's file naming the directories of its libraries (paths in the
# image, ':' between them): the guest prefixes each with the mount point and hands
# them to the loader (--library-path).
PEERS_LIBPATH = "library-path"
# The peers workload's QEMU limit: its warm-up and suites should take up to about 10
# minutes of guest time (estimated, not measured yet), as much again on a loaded host,
# and the boot.
PEERS_TIMEOUT = 1500
# The coherence writers that write a file (the others need a disk of their own).
FILE_WRITERS = "pwrite,map,dio,punch,truncate"
# coherence-tmpfs: those a tmpfs takes (no O_DIRECT), and the hole writer, over a
# sparse file of TMPFS_FILE_MB on the tmpfs (7 slots of 3 rounds of 4097 pages).
TMPFS_WRITERS = "pwrite,map,punch,truncate,hole"
TMPFS_FILE_MB = 400
# The migrate workload's QEMU limit (its default run moves 8,192 pages; under TCG
# the pristine kernel, a flush per page, moved about 1,100 a second:
# bench/kernel/compare-migration.json; under 100 while the region was dirty
# anonymous memory).
MIGRATE_TIMEOUT = 900
# The tier workload's lower tier: an emulated NVDIMM of this many MiB on node 1,
# and the program (Debian's ndctl) that makes its namespace a device-DAX one in
# the guest, copied into the initramfs with the shared libraries ldd names for it.
TIER_PMEM_MB = 1024
# The tier workload's QEMU limit: the first reads of the disk's file (768 MiB by
# default), the lookups (60 s by default) and the boot.
TIER_TIMEOUT = 900
TIER_TOOLS = ("/usr/bin/ndctl",)
# What the guest's init runs before the tier workload: the NVDIMM's namespace in
# device-DAX mode (2 MiB aligned, as the kmem driver onlines memory blocks); the
# device handed from device_dax to the kmem driver and its memory blocks onlined
# (movable), as daxctl reconfigure-device --mode=system-ram does (daxctl wants
# kmod to load kmem, built in here); then demotion and NUMA balancing's tiering
# mode.
TIER_SETUP = r"""/usr/bin/ndctl create-namespace -f -e namespace0.0 -m devdax -a 2M >/dev/null 2>&3 &&
	echo dax0.0 >/sys/bus/dax/drivers/device_dax/unbind &&
	echo dax0.0 >/sys/bus/dax/drivers/kmem/new_id &&
	(
		n=0
		for b in /sys/devices/system/node/node1/memory*; do
			[ -e "$b/state" ] || continue
			n=$((n + 1))
			grep -q '^online' "$b/state" || echo online_movable >"$b/state" || exit 1
		done
		[ "$n" -gt 0 ]
	) &&
	echo 1 >/sys/kernel/mm/numa/demotion_enabled &&
	echo 2 >/proc/sys/kernel/numa_balancing ||
	r "@@setup_error cannot make the NVDIMM a lower memory tier (ndctl, dax kmem)"
"""
# option: (attribute, its default; None for a flag)
OPTIONS = {"--kernel": ("kernel", ""), "--workload": ("workload", "none"),
           "--kunit": ("kunit", None), "--disk-mb": ("disk_mb", "768"),
           "--threads": ("threads", ""), "--passes": ("passes", "2"),
           "--seconds": ("seconds", "90"), "--wargs": ("wargs", ""), "--append": ("append", ""),
           "--console": ("console", ""), "--json": ("json", ""), "--timeout": ("timeout", ""),
           "--smp": ("smp", "4"), "--mem": ("mem", "256M"), "--machine": ("machine", ""),
           "--verbose": ("verbose", None), "--keep": ("keep", None), "--trace": ("trace", ""),
           "--check-console": ("check_console", "")}


def say(msg):
    cli.say("boot", msg)


def auto_machine(config):
    """The machine for a kernel of the .config text @config: QEMU's microvm for a kernel
    built without PCI and with virtio-mmio devices from the command line (the sanitizer
    kernels, config/debug.config), else pc."""
    lines = config.splitlines()
    if "CONFIG_PCI=y" not in lines and "CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES=y" in lines:
        return "microvm"
    return "pc"


def options(argv):
    """The command line @argv checked and completed (defaults, the machine, the
    timeout) as a namespace: the numbers as int (threads and timeout None if not
    given), kernel a real path. Raises Usage, or Fail for a missing kernel image or
    console log or a workload the machine cannot run."""
    o = types.SimpleNamespace(**{a: False if d is None else d for a, d in OPTIONS.values()})
    given = set()
    for arg, v in cli.pairs(argv, "boot", [a for a, (_, d) in OPTIONS.items() if d is not None],
                            [a for a, (_, d) in OPTIONS.items() if d is None],
                            ("--wargs", "--append")):
        attr = OPTIONS[arg][0]
        given.add(attr)
        setattr(o, attr, o.append + " " + v if arg == "--append" and o.append else v)
    if o.check_console:
        if not os.access(o.check_console, os.R_OK):
            raise cli.Fail("no such console log: %s" % o.check_console)
        o.kernel = o.kernel or o.check_console
    else:
        if not o.kernel:
            raise cli.Usage("boot: --kernel BZIMAGE is required")
        if not os.access(o.kernel, os.R_OK):
            raise cli.Fail("no such kernel image: %s" % o.kernel)
    o.kernel = os.path.realpath(o.kernel)
    # kbuild keeps the build's .config beside its bzImage's tree.
    kcfg = os.path.join(os.path.dirname(o.kernel), "src", "out", ".config")
    if not o.machine:
        o.machine = "pc"
        if not o.check_console and os.access(kcfg, os.R_OK):
            with open(kcfg, errors="replace") as f:
                o.machine = auto_machine(f.read())
    if o.workload not in WORKLOADS:
        raise cli.Usage("boot: unknown workload '%s' (%s)" % (o.workload, " ".join(WORKLOADS)))
    if o.machine == "microvm":
        if o.workload not in MICROVM:
            raise cli.Fail("workload %s runs on the pc machine only (its devices, or not tried on "
                           "microvm): a kernel with PCI and ACPI" % o.workload)
        if o.trace:
            raise cli.Fail("--trace needs the pc machine (a virtio serial port on PCI)")
    elif o.machine != "pc":
        raise cli.Usage("boot: --machine wants pc or microvm, got '%s'" % o.machine)
    for attr in ("disk_mb", "passes", "seconds", "smp", "threads", "timeout"):
        v = getattr(o, attr)
        setattr(o, attr, cli.positive(v, "boot") if v else None)
    if o.workload == "kunit":
        o.workload, o.kunit = "none", True
    # o.base: the workload's program; o.fs: the file system it runs over, if any.
    o.fs = "ext4" if o.workload.endswith(FS_SUFFIX) else ""
    o.swap = next((s[1:] for s in SWAP_SUFFIXES if o.workload.endswith(s)), "")
    o.base = o.workload[:o.workload.rindex("-")] if o.fs or o.swap else o.workload
    if o.swap and o.disk_mb < 8:
        raise cli.Usage("boot: %s wants --disk-mb 8 or more (its swap; 3/4 of it is "
                        "the data)" % o.workload)
    if o.base == "peers":  # the pressure: reclaim over reclaim-ext4's file system
        o.fs = "ext4"
    if o.base == "tier":  # the table: the disk's ext4 file (see guest/tier.c)
        o.fs = "ext4"
    # pageout holds 1 GiB of the disk's page cache at once.
    if o.workload == "pageout":
        o.mem = o.mem if "mem" in given else "1536M"
        o.disk_mb = o.disk_mb if "disk_mb" in given else 1100
    if o.base in ("migrate", "tier"):
        # Their programs take their options in --wargs (guest/migrate.c, guest/tier.c);
        # tier's disk holds its table, migrate has none.
        unused = {"seconds", "threads", "passes"} | ({"disk_mb"} if o.base == "migrate" else set())
        unused = sorted("--" + a.replace("_", "-") for a in given & unused)
        if unused:
            raise cli.Usage("boot: %s does not use %s (its program's options go in --wargs: "
                            "see guest/%s.c)" % (o.workload, " ".join(unused), o.base))
    if o.workload == "migrate":
        if o.smp < 2:
            raise cli.Usage("boot: migrate wants --smp 2 or more (a CPU on each node)")
    if o.workload == "tier":
        o.mem = o.mem if "mem" in given else "512M"
        if o.timeout is None:
            o.timeout = TIER_TIMEOUT
    mem_mb(o.mem)
    if o.wargs and o.workload == "none" and not o.check_console:
        raise cli.Fail("--wargs needs a workload")
    if o.timeout is None:
        if o.workload == "none":
            o.timeout = 300
        elif o.base == "checker":
            o.timeout = 3 * o.seconds + 360  # the checker may run to 3 S + 60
        elif o.base == "peers":
            o.timeout = PEERS_TIMEOUT
        elif o.base == "migrate":
            o.timeout = MIGRATE_TIMEOUT
        else:
            o.timeout = 600 + o.disk_mb * o.passes * (o.threads or 4) // 4
        o.timeout += 600 if o.kunit else 0
    return o


def guest_programs(cache):
    """The directory of the guest programs (every guest/*.c, static), built once per
    content of guest/ and gcc version into @cache/guest/SUM; raises Fail if one does
    not build."""
    h = hashlib.sha256()
    for src in sorted(glob.glob(os.path.join(glob.escape(GUEST), "*.[ch]"))):
        with open(src, "rb") as f:
            h.update(f.read())
    h.update(subprocess.run(["gcc", "--version"], stdout=subprocess.PIPE, check=False).stdout)
    gdir = os.path.join(cache, "guest", h.hexdigest()[:16])
    if os.path.exists(os.path.join(gdir, "done")):
        return gdir
    os.makedirs(os.path.dirname(gdir), exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="tmp.", dir=os.path.dirname(gdir))
    for src in sorted(glob.glob(os.path.join(glob.escape(GUEST), "*.c"))):
        exe = os.path.join(tmp, os.path.basename(src)[:-2])
        if cli.run(["gcc", "-static", "-O2", "-g0", "-Wall", "-Wextra", "-Werror", "-pthread",
                    "-o", exe, src]).returncode:
            raise cli.Fail("cannot build %s statically (libc6-dev)" % src)
    open(os.path.join(tmp, "done"), "w").close()
    shutil.rmtree(gdir, ignore_errors=True)
    try:
        os.rename(tmp, gdir)
    except OSError:  # another run may have won
        shutil.rmtree(tmp)
    return gdir


def signature_image(cache, gdir, mb):
    """The checker's deterministic signature image of @mb MiB (cached, keyed by
    guest/common.h, which defines the signature format; generated once under a
    lock by @gdir's checker, replacing the size's images of other formats): its
    path. Raises Fail if it cannot be generated."""
    with open(os.path.join(GUEST, "common.h"), "rb") as f:
        key = hashlib.sha256(f.read()).hexdigest()[:12]
    disks = os.path.join(cache, "disks")
    img = os.path.join(disks, "sig-%dM-%s.img" % (mb, key))
    if os.path.exists(img):
        return img
    os.makedirs(disks, exist_ok=True)
    with open(os.path.join(disks, "lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not os.path.exists(img):
            for old in glob.glob(os.path.join(glob.escape(disks), "sig-%dM-*.img" % mb)):
                os.remove(old)
            say("generating the signature image (%d MiB)" % mb)
            if cli.run([os.path.join(gdir, "checker"), "--gen", img + ".tmp", "--disk-mb",
                        str(mb)], stdout=subprocess.DEVNULL).returncode:
                raise cli.Fail("cannot generate the signature image")
            os.rename(img + ".tmp", img)
    return img


def mkfs_ext4_argv(mkfs, src, img, mb, inodes=64):
    """mkfs.ext4's command line for an image @img of ext4 holding the directory @src
    (@mb MiB of data): journal on, 4 KiB blocks, at least @inodes inodes, no reserved
    blocks, root-owned files, room for the journal, the inode tables and the extent
    tree."""
    return [mkfs, "-q", "-F", "-b", "4096", "-m", "0", "-N", str(inodes), "-E",
            "root_owner=0:0", "-d", src, img, "%dM" % (mb + mb // 8 + 80)]


def mkfs_ext4():
    """mkfs.ext4's path; raises Fail if there is none (e2fsprogs)."""
    mkfs = shutil.which("mkfs.ext4") or "/sbin/mkfs.ext4"
    if not os.access(mkfs, os.X_OK):
        raise cli.Fail("no mkfs.ext4 (e2fsprogs)")
    return mkfs


def recipe_key(mkfs, argv, h):
    """Add to the hash @h an image's recipe: the mkfs.ext4 command line @argv (made
    with placeholder paths), the version of mke2fs @mkfs and its configuration file
    (the features come from there); returns its first 12 hex digits."""
    h.update(" ".join(argv).encode())
    h.update(subprocess.run([mkfs, "-V"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            check=False).stdout)
    conf = os.environ.get("MKE2FS_CONFIG", "/etc/mke2fs.conf")
    if os.path.exists(conf):
        with open(conf, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:12]


def make_image(img, stale, what, fill, argv):
    """The cached ext4 image @img, made unless it exists: under the lock of its
    directory, the images the glob @stale matches removed first, a scratch directory
    filled by @fill(DIR) and made into the image by the mkfs.ext4 command line
    @argv(DIR, IMAGE); @what names it in messages. Its path; raises Fail, leaving
    nothing behind, if it cannot be made."""
    if os.path.exists(img):
        return img
    with open(os.path.join(os.path.dirname(img), "lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(img):
            return img
        for old in glob.glob(stale):
            os.remove(old)
        say("making " + what)
        try:
            with tempfile.TemporaryDirectory(dir=os.path.dirname(img)) as tmp:
                fill(tmp)
                if cli.run(argv(tmp, img + ".tmp"), stdout=subprocess.DEVNULL).returncode:
                    raise cli.Fail("mkfs.ext4 -d failed")
                os.rename(img + ".tmp", img)
        except OSError as e:
            raise cli.Fail("cannot make %s: %s" % (what, e)) from e
        finally:
            if os.path.exists(img + ".tmp"):
                os.remove(img + ".tmp")
    return img


def ext4_image(cache, gdir, mb):
    """An ext4 image whose file /data holds the signature image of @mb MiB, made by
    mkfs.ext4 -d (e2fsprogs) with no root; cached beside the signature image, named
    by a key of its recipe (recipe_key()), replacing that size's images of other
    recipes. Its path; raises Fail if mkfs.ext4 is missing or fails."""
    sig = signature_image(cache, gdir, mb)
    mkfs = mkfs_ext4()
    key = recipe_key(mkfs, mkfs_ext4_argv("mkfs.ext4", "D", "I", mb), hashlib.sha256())
    return make_image(sig[:-len(".img")] + "-ext4-" + key + ".img",
                      glob.escape(sig[:-len(".img")]) + "-ext4-*",
                      "the ext4 image (%d MiB of data)" % mb,
                      lambda tmp: os.link(sig, os.path.join(tmp, "data")),
                      lambda tmp, img: mkfs_ext4_argv(mkfs, tmp, img, mb))


def shared_libraries(exe):
    """The paths of the shared libraries `ldd @exe` names, the dynamic loader
    included (as ldd prints them: not resolved); raises Fail if one is not found."""
    libs = []
    for l in cli.output(["ldd", exe]).splitlines():
        if "not found" in l:
            raise cli.Fail("%s: %s" % (exe, l.strip()))
        m = re.search(r"(/\S+) \(0x[0-9a-f]+\)$", l)
        if m:
            libs.append(m.group(1))
    return libs


def tier_files():
    """TIER_TOOLS, the shared libraries ldd names for them and the dynamic loader:
    what the tier workload's set-up runs in the guest (TIER_SETUP). Raises Fail if a
    tool is missing or ldd cannot find a library."""
    missing = [p for p in TIER_TOOLS if not os.access(p, os.X_OK)]
    if missing:
        raise cli.Fail("no %s (scripts/deps.sh kernel: Debian's ndctl)" % " or ".join(missing))
    return sorted(set(TIER_TOOLS).union(*(shared_libraries(p) for p in TIER_TOOLS)))


def peers_image(cache, free_mb=PEERS_FREE_MB):
    """The peers workload's second disk: an ext4 image (mkfs.ext4 -d, no root) of
    PEERS, PEERS_EXTRA and the shared libraries ldd names for PEERS, each at its host
    path (the contents of what a symbolic link names), the file PEERS_LIBPATH (the
    directories of the libraries), an empty /work and about @free_mb MiB free.
    Cached in @cache/disks, named by a key of those paths and contents and of the
    recipe (recipe_key()), replacing the peers images of other keys. Its path;
    raises Fail if fio or stress-ng is missing, ldd cannot find a library or
    mkfs.ext4 fails."""
    missing = [p for p in PEERS if not os.access(p, os.X_OK)]
    if missing:
        raise cli.Fail("no %s (scripts/deps.sh kernel)" % " or ".join(missing))
    files = sorted(set(PEERS + PEERS_EXTRA).union(*(shared_libraries(p) for p in PEERS)))
    h, pages = hashlib.sha256(), 0
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        h.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
        pages += (len(data) + 4095) >> 12
    mb = (pages >> 8) + 1 + free_mb
    mkfs = mkfs_ext4()
    key = recipe_key(mkfs, mkfs_ext4_argv("mkfs.ext4", "D", "I", mb, 256), h)
    libdirs = ":".join(sorted({os.path.dirname(p) for p in files if p not in PEERS}))

    def fill(tmp):
        for path in files:
            dst = os.path.join(tmp, path.lstrip("/"))
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy(path, dst)
        os.mkdir(os.path.join(tmp, "work"))
        with open(os.path.join(tmp, PEERS_LIBPATH), "w") as f:
            f.write(libdirs + "\n")
    disks = os.path.join(cache, "disks")
    os.makedirs(disks, exist_ok=True)
    return make_image(os.path.join(disks, "peers-%s.img" % key),
                      os.path.join(glob.escape(disks), "peers-*.img"),
                      "the peers image (%d MiB, %d files)" % (mb, len(files)), fill,
                      lambda tmp, img: mkfs_ext4_argv(mkfs, tmp, img, mb, 256))


def mem_mb(size):
    """The MiB of a QEMU -m size @size ("256M", "1G"); raises Usage for another form."""
    m = re.fullmatch(r"([1-9][0-9]*)([MG])", size)
    if not m:
        raise cli.Usage("boot: --mem wants a size in M or G (256M, 1G), not '%s'" % size)
    return int(m.group(1)) << (10 if m.group(2) == "G" else 0)


def numa_nodes(size, smp):
    """QEMU's -m, -smp and options for two NUMA nodes of @size each (a -m size):
    node 0 holds the first half of the @smp CPUs (at least one), node 1 the rest
    (none with one CPU). Each CPU is a socket of its own: with QEMU's default of
    one socket, CPUs of both nodes would share a last-level cache, which the
    kernel warns about at boot (a WARNING the console scan fails)."""
    mb, half = mem_mb(size), max(1, smp // 2)
    topo = "%d,sockets=%d,cores=1,threads=1" % (smp, smp)
    opts = []
    for node, (lo, hi) in enumerate(((0, half - 1), (half, smp - 1))):
        cpus = ",cpus=%d-%d" % (lo, hi) if hi >= lo else ""
        opts += ["-object", "memory-backend-ram,id=n%d,size=%dM" % (node, mb),
                 "-numa", "node,nodeid=%d%s,memdev=n%d" % (node, cpus, node)]
    return "%dM" % (2 * mb), topo, opts


def plan(o, work, img=None, peers=None):
    """The boot of the options @o (as options() returns them) in the scratch
    directory @work; @img is the disk's image if it has one (the checker's signature
    image, or for a WORKLOAD-ext4 and peers the ext4 image), @peers the peers
    workload's second disk (peers_image()), both attached with snapshot=on. Returns
    (the workload's command line in the guest, the command line running QEMU under
    timeout, {scratch disk image: size in MiB} to create first)."""
    def w(name):
        return os.path.join(work, name)

    def disk(name, opts="", ident=""):
        return ["-drive", "file=%s,format=raw,if=%s,cache=unsafe%s" % (
            w(name), "none,id=" + ident if ident else "virtio", opts)]

    threads, isol = o.threads or (3 if o.swap == "anon" else 4), "isolcpus=%d" % (o.smp - 1)
    disks, drive, extra, mem, smp = {}, [], [], o.mem, str(o.smp)
    if img:  # snapshot=on keeps the writers' changes out of the image
        drive = ["-drive", "file=%s,format=raw,if=virtio,cache=unsafe,snapshot=on" % img]
    elif o.workload not in ("none", "migrate", "tier"):
        disks[w("disk.img")] = o.disk_mb
        drive = disk("disk.img")
    cmd, pre = {
        "none": ("", ""),
        "reclaim": ("/bin/reclaim --threads %d --passes %d" % (threads, o.passes), ""),
        "mixed": ("/bin/reclaim --threads %d --passes %d --write-every 8"
                  % (threads, o.passes), ""),
        "checker": ("/bin/checker --seconds %d" % o.seconds
                    + (" --threads %d" % o.threads if o.threads else ""), ""),
        # hotpath gets --wargs twice, here and as every workload below (as in the shell)
        "hotpath": ("/bin/hotpath" + (" " + o.wargs if o.wargs else ""), ""),
        # The reader runs on the last CPU: keep other tasks off it (a kernel thread
        # there flushes its TLB and closes the window the workload opens on purpose).
        # luf.idle_ms=0: luf's idle drain would close the windows these open on purpose.
        "coherence": ("/bin/coherence", isol + " luf.idle_ms=0"),
        "idle": ("/bin/offline --idle", isol),
        "pageout": ("/bin/offline --pageout 1024", isol),
        "oom": ("/bin/offline --oom 128", isol + " luf.idle_ms=0"),
        # A memory block to offline: a pc-dimm whose blocks stay offline at boot.
        "offline": ("/bin/offline", "memhp_default_state=offline %s luf.idle_ms=0" % isol),
        "peers": ("/bin/peers", ""),
        "migrate": ("/bin/migrate", ""),
        "tier": ("/bin/tier", ""),
    }[o.base]
    if o.fs:
        cmd += " --dev /mnt/data" + (" --writers " + FILE_WRITERS if o.base == "coherence" else "")
    if o.swap == "anon" and o.base == "coherence":
        cmd += " --writers anon"
    elif o.swap and o.base == "coherence":
        cmd += " --dev /mnt/data --writers " + TMPFS_WRITERS
    elif o.swap:
        mb = o.disk_mb * SWAP_SHARE[0] // SWAP_SHARE[1]
        cmd += " --anon %d" % mb if o.swap == "anon" else " --fill %d --dev /mnt/data" % mb
    if o.workload == "coherence":  # (coherence-ext4's writers need no other disk)
        # A second disk (/dev/vdb) for the mount writer's file system; a third
        # (/dev/vdc) for the flight writer, its writes throttled to 1 MiB/s so that a
        # direct write stays in flight for a few tenths of a second; a fourth
        # (/dev/vdd) for the target writer (the NVMe target's backend); an NVMe
        # controller of serial luf for the passthru and dm writers, one of serial
        # luf-zeroes for the zeroes writer, and one in an NVMe subsystem for the
        # mpath writer (native multipath gives its namespace a head disk apart from
        # the path's queue); one image attached twice (/dev/vde, /dev/vdf: image
        # locking off) for the shared writer.
        disks.update({w(d + ".img"): 64 if d == "fs" else 16
                      for d in ("fs", "flight", "nvme", "zeroes", "mpath", "target", "shared")})
        shared = disk("shared.img", ",file.locking=off")
        extra = disk("fs.img") + disk("flight.img", ",throttling.bps-write=1048576") \
            + disk("target.img") \
            + disk("nvme.img", ident="nvm") + ["-device", "nvme,serial=luf,drive=nvm"] \
            + disk("zeroes.img", ident="nvz") + ["-device", "nvme,serial=luf-zeroes,drive=nvz"] \
            + disk("mpath.img", ident="nvmp") + ["-device", "nvme-subsys,id=nvms,nqn=luf-mpath",
                                                 "-device", "nvme,serial=lufmp,subsys=nvms",
                                                 "-device", "nvme-ns,drive=nvmp,nsid=1"] \
            + shared + shared
    elif o.base == "peers":  # the suites' disk (/dev/vdb), mounted on /peers
        extra = ["-drive", "file=%s,format=raw,if=virtio,cache=unsafe,snapshot=on" % peers]
    elif o.workload == "migrate" and o.machine == "microvm":
        # No SRAT without ACPI: the kernel splits the memory into two nodes itself.
        mem, pre = "%dM" % (2 * mem_mb(o.mem)), " ".join(a for a in (pre, "numa=fake=2") if a)
    elif o.workload == "migrate":
        mem, smp, extra = numa_nodes(o.mem, o.smp)
    elif o.workload == "tier":
        # Node 0: the RAM and every CPU; node 1: nothing until the NVDIMM is onlined.
        disks[w("pmem.img")] = TIER_PMEM_MB
        mem += ",slots=2,maxmem=4G"
        extra = ["-machine", "nvdimm=on",
                 "-object", "memory-backend-ram,id=n0,size=%dM" % mem_mb(o.mem),
                 "-numa", "node,nodeid=0,cpus=0-%d,memdev=n0" % (o.smp - 1),
                 "-numa", "node,nodeid=1",
                 "-object", "memory-backend-file,id=pm1,mem-path=%s,size=%dM"
                 % (w("pmem.img"), TIER_PMEM_MB),
                 "-device", "nvdimm,id=nv1,memdev=pm1,node=1"]
    elif o.workload == "offline":
        mem += ",slots=2,maxmem=1G"
        extra = ["-object", "memory-backend-ram,id=m1,size=128M", "-device",
                 "pc-dimm,id=d1,memdev=m1"]
    cmd += " " + o.wargs if o.wargs else ""
    append = " ".join(a for a in (pre, o.append) if a)
    # microvm (no ACPI, no PCI; qboot's MP table lists every CPU): the disk is a
    # virtio-mmio device, which QEMU names on the kernel command line; a second 8250
    # at the ISA address of ttyS1 carries the results (options() lets no workload
    # that needs the pc machine's devices get here). A reboot's default methods
    # restart the machine, and QEMU's -no-reboot misses it; a triple fault
    # (reboot=t) ends QEMU.
    if o.machine == "microvm":
        if drive:
            drive = ["-drive", drive[1].replace("if=virtio", "if=none,id=lufd1", 1),
                     "-device", "virtio-blk-device,drive=lufd1"]
        machine = ["-M", "microvm,acpi=off", "-serial", "file:" + w("console.raw"),
                   "-chardev", "file,id=lufres,path=" + w("results.raw"),
                   "-device", "isa-serial,chardev=lufres,index=1"]
        append = " ".join(a for a in ("reboot=t", append) if a)
    else:
        machine = ["-serial", "file:" + w("console.raw"), "-serial", "file:" + w("results.raw")]
    if o.trace:
        machine += ["-device", "virtio-serial-pci", "-chardev",
                    "file,id=luftrace,path=" + w("trace.raw"),
                    "-device", "virtserialport,chardev=luftrace,name=luftrace"]
    argv = ["timeout", "-k", "10", str(o.timeout), "qemu-system-x86_64", "-accel", "tcg",
            "-smp", smp, "-m", mem, "-nographic", "-no-reboot", "-monitor", "none",
            "-nic", "none"] + machine + [
            "-kernel", o.kernel, "-initrd", w("initramfs.cpio.gz"), "-append",
            "console=ttyS0 loglevel=7 panic=-1 oops=panic rdinit=/init" +
            (" " + append if append else "")] + drive + extra
    return cmd, argv, disks


# --trace: the guest's tracing (the events tests/kernel/capture reads). kprobe
# arguments follow the x86-64 calling convention of Linux 6.1: try_to_unmap_one(folio,
# vma, ...) with vma->vm_mm at offset 16 and vma->vm_flags at 32; folio_mark_dirty(folio)
# (try_to_unmap_one's call for a dirty PTE); try_to_unmap_flush() (the batch end);
# switch_mm_irqs_off(prev, next) (a CPU loads another address space: a full TLB flush
# without PCID, as under TCG); enter_lazy_tlb() (a kernel thread or idle on the CPU).
KPROBES = (("unmap", "try_to_unmap_one folio=%di:x64 mm=+16(%si):x64 vmflags=+32(%si):x64"),
           ("dirty", "folio_mark_dirty folio=%di:x64"), ("batch", "try_to_unmap_flush"),
           ("switch", "switch_mm_irqs_off prev=%di:x64 next=%si:x64"),
           ("wp", "do_wp_page mm=+16(+0(%di)):x64"), ("lazy", "enter_lazy_tlb"))
TRACE_START = """T=/sys/kernel/tracing
mount -t tracefs nodev $T || r "@@trace_error no tracefs"
echo 0 > $T/tracing_on
echo 16384 > $T/buffer_size_kb
echo 0 > $T/options/irq-info
""" + "".join("echo 'p:luf/%s %s' >> $T/kprobe_events || r \"@@trace_error kprobe %s\"\n"
              % (name, probe, name) for name, probe in KPROBES) + """echo 1 > $T/events/luf/enable
echo 1 > $T/events/kmem/mm_page_alloc/enable
echo 'reason == 1' > $T/events/tlb/tlb_flush/filter
echo 1 > $T/events/tlb/tlb_flush/enable
port=
for p in /sys/class/virtio-ports/*; do
	[ "$(cat $p/name 2>/dev/null)" = luftrace ] && port=/dev/$(basename $p)
done
[ -n "$port" ] || r "@@trace_error no virtio port luftrace"
cat $T/trace_pipe > $port &
tp=$!
echo 1 > $T/tracing_on"""
TRACE_STOP = """echo 0 > $T/tracing_on
sleep 2
kill $tp
lost=0
for f in $T/per_cpu/cpu*/stats; do
	n=$(sed -n 's/^overrun: *//p' $f)
	lost=$((lost + ${n:-0}))
done
r "@@trace lost=$lost\""""
# The guest's /init: snapshots the counters around the workload and writes
# everything to the second serial port (ttyS1), so that kernel messages on the
# console (ttyS0) never interleave with results.
INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs tmpfs /tmp
stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>/dev/ttyS1
r() { echo "$@" >&3; }
snap() {
	r "@@snap $1 $(cut -d' ' -f1 /proc/uptime)"
	r "@@interrupts"
	cat /proc/interrupts >&3
	r "@@vmstat"
	cat /proc/vmstat >&3
	r "@@meminfo"
	cat /proc/meminfo >&3
	r "@@stat"
	grep '^cpu ' /proc/stat >&3
	r "@@sysctl"
	for f in luf_park_pages luf_park_peak; do
		[ -r /proc/sys/vm/$f ] && echo "$f $(cat /proc/sys/vm/$f)" >&3
	done
	r "@@endsnap"
}
echo "luf-boot: init started"
r "@@start"
r "@@info nproc=$(nproc) kernel=$(uname -r) memtotal_kb=$(sed -n 's/^MemTotal: *\([0-9]*\).*/\1/p' /proc/meminfo)"
r "@@info cmdline=$(cat /proc/cmdline)"
%(start)s
snap before
# The park's peak from here on (vm.luf_park_peak, patched kernels only).
[ -w /proc/sys/vm/luf_park_peak ] && echo 0 >/proc/sys/vm/luf_park_peak
r "@@workload %(cmd)s"
echo "luf-boot: workload start: %(cmd)s"
rc=0
if [ -n "%(cmd)s" ]; then
	%(cmd)s >&3 2>&3
	rc=$?
fi
echo "luf-boot: workload end: rc=$rc"
%(stop)s
snap after
r "@@rc $rc"
r "@@done"
exec 3>&-
reboot -f
"""


def init_text(cmd, trace, fs="", swap="", peers=False, tier=False):
    """The guest's /init running the command line @cmd (none if empty); @trace: with
    the tracing of --trace around it; @fs: the disk's file system, mounted on /mnt
    first; @swap (tmpfs or anon): the disk is swap, swapped on first (and for
    tmpfs an unbounded tmpfs mounted on /mnt); @peers: the second disk (the peers
    image, ext4) mounted on /peers too; @tier: the NVDIMM made a lower memory tier
    first (TIER_SETUP)."""
    mount = "mkdir -p /mnt && mount -t %s -o data=ordered /dev/vda /mnt || " \
        "r \"@@setup_error cannot mount /dev/vda (%s)\"" % (fs, fs) if fs else ""
    if peers:
        mount += "\nmkdir -p /peers && mount -t ext4 -o data=ordered /dev/vdb /peers || " \
            "r \"@@setup_error cannot mount /dev/vdb (the peers image)\""
    if swap:
        mount = "mkswap /dev/vda >/dev/null && swapon /dev/vda || " \
            "r \"@@setup_error cannot swap on /dev/vda\""
    if swap == "tmpfs":
        mount += "\nmkdir -p /mnt && mount -t tmpfs -o size=0 tmpfs /mnt || " \
            "r \"@@setup_error cannot mount a tmpfs on /mnt\""
    if swap == "tmpfs" and cmd.startswith("/bin/coherence"):  # its file, sparse
        mount += "\ntruncate -s %dM /mnt/data || r \"@@setup_error cannot make /mnt/data\"" \
            % TMPFS_FILE_MB
    if tier:
        mount += "\n" + TIER_SETUP
    return INIT % {"cmd": cmd, "start": "\n".join(x for x in (mount, TRACE_START if trace else "") if x),
                   "stop": TRACE_STOP if trace else ""}


def initramfs(work, gdir, init, files=()):
    """Write @work/initramfs.cpio.gz: busybox, the guest programs of @gdir in /bin,
    the /init text @init, and @files (host paths: each copied to its path, the file a
    symbolic link names)."""
    ird = os.path.join(work, "initramfs")
    for d in ("bin", "proc", "sys", "dev", "tmp"):
        os.makedirs(os.path.join(ird, d))
    for exe in ["/bin/busybox"] + glob.glob(os.path.join(glob.escape(gdir), "*")):
        if os.path.basename(exe) != "done":
            shutil.copy(exe, os.path.join(ird, "bin"))
    for path in files:
        dst = os.path.join(ird, path.lstrip("/"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy(path, dst)
    path = os.path.join(ird, "init")
    with open(path, "w") as f:
        f.write(init)
    os.chmod(path, os.stat(path).st_mode | 0o111)
    cli.initramfs(ird, os.path.join(work, "initramfs.cpio.gz"))


def strip_cr(src, dst=None):
    """The bytes of the file @src (empty if it does not exist) without \\r; written
    to @dst if given."""
    try:
        with open(src, "rb") as f:
            data = f.read().replace(b"\r", b"")
    except FileNotFoundError:
        data = b""
    if dst:
        with open(dst, "wb") as f:
            f.write(data)
    return data


def last_lines(path, n):
    """The last @n lines of the text file @path that are not empty (\\r removed)."""
    return [l for l in strip_cr(path).decode(errors="replace").split("\n") if l][-n:]


def run_qemu(o, argv, work):
    """Run @argv (QEMU under timeout) with TMPDIR=@work, streaming the console to
    stderr with --verbose, else saying its last line every minute; QEMU is ended
    if this is interrupted. Returns (exit status as the shell gives it: 124 after
    a timeout, seconds it ran)."""
    console, shown = os.path.join(work, "console.raw"), 0

    def stream():
        data = strip_cr(console)
        sys.stderr.buffer.write(data[shown:])
        sys.stderr.flush()
        return len(data)

    t0 = last = int(time.time())
    with open(os.path.join(work, "qemu.out"), "wb") as out:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                             env=dict(os.environ, TMPDIR=work))
    try:
        while True:
            try:
                rc = p.wait(1)
                break
            except subprocess.TimeoutExpired:
                pass
            now = int(time.time())
            if o.verbose:
                shown = stream()
            elif now - last >= 60:
                last = now
                say("running for %d s: %s" % (now - t0, "".join(last_lines(console, 1))[:100]))
    finally:
        if p.poll() is None:
            p.terminate()  # timeout passes it on to QEMU
    if o.verbose:
        stream()
    return (128 - rc if rc < 0 else rc), int(time.time()) - t0


def run_guest(o, cache, work):
    """Build and boot the guest of the options @o in @work and leave its console
    and results channel in @work/console.txt and results.txt (\\r removed), the
    trace in o.trace; (QEMU's exit status, seconds it ran)."""
    gdir = guest_programs(cache)
    img = ext4_image(cache, gdir, o.disk_mb) if o.fs else \
        signature_image(cache, gdir, o.disk_mb) if o.base == "checker" else None
    peers = peers_image(cache) if o.base == "peers" else None
    cmd, argv, disks = plan(o, work, img, peers)
    for path, mb in disks.items():
        with open(path, "wb") as f:
            f.truncate(mb << 20)
    initramfs(work, gdir, init_text(cmd, o.trace, o.fs, o.swap, bool(peers), o.base == "tier"),
              tier_files() if o.base == "tier" else ())
    say("booting %s/%s (%s-smp %d -m %s, workload %s%s%s, timeout %d s)" % (
        os.path.basename(os.path.dirname(o.kernel)), os.path.basename(o.kernel),
        "" if o.machine == "pc" else o.machine + " ", o.smp, argv[argv.index("-m") + 1],
        o.workload,
        ": " + cmd if cmd else "", ", KUnit" if o.kunit else "", o.timeout))
    qrc, elapsed = run_qemu(o, argv, work)
    strip_cr(os.path.join(work, "console.raw"), os.path.join(work, "console.txt"))
    strip_cr(os.path.join(work, "results.raw"), os.path.join(work, "results.txt"))
    if o.console:
        shutil.copy(os.path.join(work, "console.txt"), o.console)
    if o.trace:
        data = strip_cr(os.path.join(work, "trace.raw"))
        with gzip.open(o.trace, "wb", 9) as f:
            f.write(data)
        say("trace: %d lines in %s (%d KiB)" % (data.count(b"\n"), o.trace,
                                                (os.stat(o.trace).st_blocks + 1) // 2))
    with open(os.path.join(work, "qemu.out"), errors="replace") as f:
        said = f.read().splitlines()
    if said:
        say("QEMU said:")
        sys.stderr.write("".join("  %s\n" % l for l in said))
    return qrc, elapsed


def interrupted(signum, frame):
    raise KeyboardInterrupt


def main(argv):
    o = options(argv)
    for c in ("qemu-system-x86_64", "gcc", "cpio"):
        if not shutil.which(c):
            raise cli.Fail("missing %s (scripts/deps.sh kernel)" % c)
    if not os.access("/bin/busybox", os.X_OK):
        raise cli.Fail("missing /bin/busybox (busybox-static)")
    # The KUnit parser: from the source tree the kernel was built from, else any cached tree.
    cache, kunit_py = cli.cache_dir(), None
    if o.kunit:
        kunit_py = ktap.find_parser(o.kernel, cache)
        if not kunit_py:
            raise cli.Fail("no tools/testing/kunit/kunit.py (run tests/kernel/kbuild first)")
    signal.signal(signal.SIGTERM, interrupted)
    try:
        work = tempfile.mkdtemp(prefix="luf-boot.", dir=os.environ.get("TMPDIR") or "/tmp")
    except OSError as e:
        raise cli.Fail(str(e)) from None
    txt, failed = os.path.join(work, "console.txt"), True
    try:
        if o.check_console:  # only the console checks (and KUnit) on an existing log
            strip_cr(o.check_console, txt)
            open(os.path.join(work, "results.txt"), "w").close()
            qrc, elapsed, timeout, workload = 0, 0, 0, "check-console"
        else:
            qrc, elapsed = run_guest(o, cache, work)
            timeout, workload = o.timeout, o.workload
        # The verdict: the console scan, the results channel, KUnit.
        vargs = ["--console", txt, "--results", os.path.join(work, "results.txt"),
                 "--series", cli.SERIES, "--kernel", o.kernel, "--qemu-status", str(qrc),
                 "--elapsed", str(elapsed), "--timeout", str(timeout), "--workload", workload]
        if kunit_py:
            vargs += ["--kunit-py", kunit_py, "--kunit-json", os.path.join(work, "kunit.json")]
        if o.json:
            vargs += ["--json", o.json]
        rc = verdict.main(vargs)
        sys.stdout.flush()
        if rc:
            say("FAIL (console: %s); last console lines:" % (o.console or txt))
            sys.stderr.write("".join("  %s\n" % l for l in last_lines(txt, 25)))
            return 1
        failed = False
        say("PASS in %d s" % elapsed)
        return 0
    except OSError as e:  # e.g. a --console, --json or --trace FILE that cannot be written
        raise cli.Fail(str(e)) from e
    finally:
        if o.keep:
            say("kept " + work)
        elif failed:
            keep_results(work)
            say("kept %s (the failed boot's console and results)" % work)
        else:
            shutil.rmtree(work, ignore_errors=True)


# What a failed boot keeps of its scratch directory: the console, the results
# channel, kunit.py's JSON and QEMU's output (not the disks, nor the initramfs).
KEPT = ("console.raw", "console.txt", "results.raw", "results.txt", "kunit.json", "qemu.out")


def keep_results(work):
    """Remove from the scratch directory @work all but KEPT."""
    for name in os.listdir(work):
        if name not in KEPT:
            path = os.path.join(work, name)
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.remove(path)


if __name__ == "__main__":
    cli.entry(main, "boot", __doc__)
