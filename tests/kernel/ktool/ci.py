# SPDX-License-Identifier: GPL-2.0-only OR MIT
"""tests/kernel/ci STEP - the checks of the in-tree kernel series (lib/kernel/patches)
that `ctest -L kernel` runs, one STEP per test (tests/kernel/CMakeLists.txt):
  series   checkpatch.pl --strict from linux-source-6.1 reports 0 errors and 0
           warnings on every patch (the harness's too), read as a patch and
           as a file (--file); the vendored core is the repository's
           (vendored.py); tests/kernel/harness/series lists the same patches
  build    the patched kernel (kbuild: the series is applied with patch -p1 to
           the pristine source; cached, a warm cache rebuilds nothing and says
           so). No step builds the pristine kernel: it judges nothing here, and
           a cold cache pays 8-12 minutes for each kernel. tests/kernel/compare
           (and bench/run) build and boot it; runs/*-pristine.txt hold its
           recorded coherence and offline runs
  kunit    boots the patched kernel under QEMU -smp 4: every KUnit case passes
           (the kernel's kunit.py parses the console), no kernel report; prints
           luf's IPIs beside the rise of the "TLB shootdowns" row
  debug    the debug kernel (debug.config: KASAN, lockdep, atomic-sleep, DEBUG_VM,
           ...; luf-debug.config; the harness, which changes no behaviour
           without luf.mutant=): the KUnit suite on 4 CPUs, the reclaim,
           reclaim-anon, migrate (numa=fake=2) and checker workloads (each
           with a floor of deferred flushes; the
           checker's also with one of writes that settled a deferral: seen
           failing with 16 deferred in 256 MiB and with its writer off, 0
           write aborts; a boot below them boots again, up to three), with
           no report of any kind on the console (and
           shows the scan can fail: booted with luf.mutant=BAD_ACCESS, a
           harness KUnit case that reads freed memory and calls might_sleep()
           under a spinlock must make the scan fail)
  kcsan    the KCSAN kernel (KCSAN and KASAN exclude each other; the harness):
           the KUnit suite and the reclaim-ext4, reclaim-tmpfs and migrate
           workloads. Data races in code luf
           neither is nor changes (6.1's printk, readahead, vmstat have some)
           are listed, not failed on; any other report fails (boot). Shows it
           can fail: booted with luf.mutant=BAD_RACE, a harness KUnit case
           racing with a kthread on one word must make the scan fail
  coherence  the coherence workload (guest/coherence.c) on the patched kernel:
           stale translations made on purpose, new contents written by pwrite(),
           a second process's mapping, O_DIRECT and a file system's mount (its
           claim, then its superblock write) (each writer must meet at least
           one open window), an O_DIRECT write held in flight by QEMU while the
           page is refaulted and reclaimed (nothing is deferred meanwhile: no
           window), an asynchronous one (io_submit()) before the page read
           meanwhile is reclaimed (its disk defers nothing from then on: no
           window), a file's page written through a file system that is then
           unmounted (a write bio that is not the disk's own writeback makes
           it defer nothing: no window), an NVMe Write Zeroes passed through
           (a command that changes blocks without data: as passthru), an NVMe
           Write passed through to a namespace, plain and under native
           multipath (it closes the first round's window, if one opened; its
           disk defers nothing from then on), a pwrite() through the NVMe
           target's loopback to the disk its block backend exports (the
           target's bios: as passthru) and the reverse, a pwrite() to that disk
           under the namespace the host sees (a namespace behind a fabric
           defers nothing: no window), a pwrite() to a loop device's backing
           file (a loop device defers nothing: no window), a pwrite() to the
           member of a device-mapper device (a stacked device defers nothing:
           no window), a pwrite() to a disk image's second attachment after
           the first's queue/luf_defer was set to 0 (a marked disk defers
           nothing: no window), and pwrite() through a partition before the whole
           disk's copy is reclaimed (a partitioned disk defers nothing: no
           window); no reader may read the old contents once the new ones were
           seen, and every round must have seen the new ones. A writer that
           met nothing boots again, with the others that did not, up to three
           boots; any boot's stale read fails the step. (On the
           pristine kernel the same rounds open no window: runs/coherence-pristine.txt)
  park     parked memory is memory: a pc-dimm block holding folios luf parked
           (the offline workload, guest/offline.c) goes offline within 10 s;
           the parked amount shows in /proc/meminfo (LufParked) and is back to
           0 a second after reclaim stops (the idle workload), which must fail
           with luf.idle_ms=0; one MADV_PAGEOUT of 1 GiB (the pageout workload)
           leaves no more parked than vm.luf_park_pages set to 64 pages (below
           the 512 folios of one pass; PARK_UNBOUNDED fails it); an allocation
           that needs half of 128 MiB its own reclaim parked gets it, not the OOM
           killer (the oom workload; ALLOC_NO_DRAIN fails it). (The pristine
           kernel's offline: runs/offline-pristine.txt, tests/kernel/README.md)
  mutants  the harness kernel booted with luf.mutant=NAME, once per core mutant
           (tests/MUTANTS.md; the harness patch turns the core's compile-time
           switches into luf_mutant() tests): each must fail a KUnit case
  mm-mutants  the harness kernel booted with luf.mutant=NAME: one rule of the reclaim
           path switched off per boot (one build serves them all):
           RECLAIM_NO_FLUSH frees pend folios unflushed: the checker must see
           stale reads; WRITE_BEGIN_NO_SETTLE leaves ->write_begin()'s writes
           unsettled: the checker over ext4 must see stale reads (and the
           pwrite writers, below); NO_FILE_ABORT leaves writes unsettled: the coherence
           workload must see old contents after new ones, with each of its
           pwrite, map and dio writers;
           NO_CLAIM_SETTLE leaves a holder's claim unsettled: the mount writer
           must see the old superblock after the new one; PARTITION_DEFERS lets
           a disk with partitions defer: the part writer must see old contents;
           DIRECT_DEFERS lets a disk defer while a direct write is in flight:
           the flight writer must see old contents; AIO_DEFERS lets a disk
           written asynchronously defer: the aio writer must see old contents;
           PASSTHROUGH_DEFERS, NVME_HEAD_DEFERS, LOOP_DEFERS and STACKED_DEFERS
           let a disk written by passthrough, a multipath head, a loop device
           and a dm device defer: the passthru, mpath, loop and dm writers must
           see old contents; BIO_DEFERS lets a disk written by bios that are
           not its own writeback defer: the release and target writers must
           see old contents; LBCC_DEFERS and FABRICS_DEFERS let a disk written
           by NVMe Write Zeroes and a namespace behind a fabric defer: the
           zeroes and export writers must see old contents; SYSFS_IGNORED
           lets a disk marked through queue/luf_defer defer: the shared
           writer must see old contents (for each of these, the writers that
           saw none boot again, without the others, up to three boots);
           OFFLINE_NO_DRAIN: the offline workload must hit its limit;
           ALLOC_NO_DRAIN: the oom workload's allocation must be OOM-killed;
           PARK_UNBOUNDED: the pageout workload must exceed a 64-page bound;
           DEFER_FLUSH_PENDING, NESTED_DEFER, NO_DEFER_BUMP (a lazy CPU left
           out of a flush never catches up) and LAZY_IPI (lazy CPUs
           interrupted) must each fail their KUnit case; DEFER_DIRTY defers
           dirty translations: the LUF_DEBUG check in try_to_unmap_one() must
           fire (mixed workload); MIGRATE_FLUSH_LATE copies a migrated folio
           before its flush: the migrate workload's writers must lose writes;
           MIGRATE_SRC_UNFLUSHED frees a migrated source before its deferred
           flush: the migrate workload's readers must read another page's
           words; MIGRATE_MIXED_NO_FLUSH maps a copy writable again before the
           flush luf deferred for its read-only translations: the migrate
           workload's readers must read versions older than one published;
           MIGRATE_KEEP_UNHELD neither holds nor flushes for a moved source
           another reference keeps (MIGRATE_SRC_REF's, a provocation: with it
           alone the migrate boot must pass and luf hold sources): the
           readers must read another page's words
  migrate  the migrate workload (guest/migrate.c) on the patched kernel, two NUMA
           nodes: a read-only and a written region, and pages a second process
           writes through a shared mapping (--coherence), moved between them
           with move_pages() while readers and writers use them; every page must
           move, luf must defer flushes, no reader see a wrong word or an old
           version, no writer lose a write. mm-mutants shows each check can
           fail (MIGRATE_FLUSH_LATE, MIGRATE_SRC_UNFLUSHED, MIGRATE_MIXED_NO_FLUSH,
           MIGRATE_KEEP_UNHELD).
           Then the tier workload (guest/tier.c, 20 s of lookups): an emulated
           NVDIMM onlined as a lower memory tier, pages demoted to it and
           promoted from it while lookups read them; no wrong word, and luf
           must have deferred flushes (the three kernels' comparison of both
           workloads is tests/kernel/compare's, bench/kernel/COMMAND-migration).
           Skipped (77) without Debian's ndctl
  peers    two peer test suites from Debian on the patched kernel (the peers
           workload, guest/peers.c), while reclaim runs over a file on ext4:
           fio (verify=crc32c; mmap and psync engines, files together larger
           than RAM) and stress-ng --verify (its vm, mmap, madvise, mremap and
           fork stressors) must each exit 0, and reclaim must have taken pages
           and luf deferred flushes while each ran (else it proves nothing).
           Skipped (77) without fio or stress-ng
  compare  tests/kernel/compare --runs 1 --short --workloads reclaim,checker,
           reclaim-tmpfs,reclaim-anon --baseline-off: the patched kernel, each
           workload once, and its runs with luf.reclaim=0 as the baseline; fails
           on a checker mismatch, a swapped-in page with other contents than were
           written (reclaim --fill, --anon) or a kernel report (tests/kernel/compare's default adds the mixed workload; in
           ctest it boots only in mm-mutants, under DEFER_DIRTY)
Prints "kernel.STEP: ..." lines on stdout. The rules are functions of boot's
key=value output (ktool.test_ci tests them).
Environment: as kbuild and boot (LUF_KERNEL_CACHE, LUF_KERNEL_JOBS, ...).
Exit: 0 pass, 1 fail, 2 usage, 77 skipped (no linux-source-6.1 or QEMU, or for
peers no fio or stress-ng: run scripts/deps.sh kernel).
"""
import glob
import os
import re
import shutil
import subprocess
import tempfile

from . import boot, cli, kernels, scan

BOOT = os.path.join(cli.KDIR, "boot")
PATCHES = os.path.dirname(cli.SERIES)
# Mutants a KUnit case cannot see, and why (tests/MUTANTS.md).
NOT_IN_KUNIT = {
    "DONE_RELAXED": "an acquire load and a plain load are the same instruction on x86 (TSO); "
                    "ThreadSanitizer catches it in the tsan stage",
}
# Under TCG the sanitizer kernels run many times slower than on hardware, and slower
# still on a busy host: a stretch of upstream code without a resched point can
# outlast the default watchdogs (soft lockup 20 s, RCU stall 21 s, hung task 120 s;
# seen in ACPI's AML interpreter at boot, when these kernels had ACPI). Longer
# limits, still far below the QEMU timeout, so that a real hang is still reported.
# The boots a result that depends on chance gets (a window that opened, a floor
# of deferred flushes, a mutant's stale read): the run numbers, 1 to 3. On the
# correct kernel a failed boot (a stale read, a mismatch) is never retried.
BOOTS = (1, 2, 3)
SLOW = ["--append", "watchdog_thresh=60 rcupdate.rcu_cpu_stall_timeout=300 "
        "sysctl.kernel.hung_task_timeout_secs=600"]
WORKLOAD = r"^(status|fail_reason|kernel_problems|workload\.)"  # what a failed boot shows
NOT_OK = r"^ *not ok [0-9]+ "  # a failed KUnit case (or suite) on the console
# The migrate step's workload (guest/migrate.c): 2 MiB read-only, 2 MiB written by
# two writers and 64 pages written by a second process, moved between the nodes
# four times, 512 pages a call (4,352 page moves, a few seconds under TCG).
MIGRATE_ARGS = ["--wargs", "--mb 2 --rounds 4 --writers 2 --coherence 64"]
# The migrate boots of the mutants that free sources unflushed: such a frame is a
# stale reader's only once a later round reuses it before anything flushes the
# readers' CPUs (the writers' and the second process's pages flush them: not moved
# here), and only for a page the reader read before it moved (--warm: 20,000 words
# each first, all 512 pages most likely). MIGRATE_MIXED_NO_FLUSH's (a copy mapped
# writable before the deferred flush) needs the second process.
MIGRATE_SRC_ARGS = ["--wargs", "--mb 2 --rounds 4 --warm 20000"]
# The tier workload's short form (the recorded comparison looks up for 60 s).
TIER_ARGS = ["--wargs", "--seconds 20"]
MIGRATE_MIXED_ARGS = ["--wargs", "--mb 2 --rounds 4 --coherence 64"]


# The rules: functions of boot's output (its key=value lines, maybe with its stderr
# mixed in) and consoles, as text. A value boot did not print counts as 0.

def parse_kv(text):
    """boot's results in @text: {KEY: VALUE} of every line KEY=VALUE (KEY of word
    characters and dots; a later line wins)."""
    return dict(re.findall(r"^([\w.]+)=(.*)$", text, re.M))


def num(value):
    """@value (a str or None) as an int; 0 if empty, missing or not an integer."""
    try:
        return int(value or 0)
    except ValueError:
        return 0


lines = cli.lines


def grep(text, pattern):
    """The lines of @text that @pattern (a regular expression) matches anywhere."""
    return [l for l in lines(text) if re.search(pattern, l)]


def show(text, pattern):
    """The lines of @text that @pattern matches, each followed by a space (one line)."""
    return "".join(l + " " for l in grep(text, pattern))


def sanitizer_fails(out):
    """The FAIL messages of the debug or kcsan step's reclaim boot (with --kunit)
    whose output is @out; [] if it meets every floor."""
    kv, fails = parse_kv(out), []
    # Every CPU up (a firmware that lists one CPU makes 15 KUnit cases skip and the
    # run pass), and no KUnit case skipped but the harness's two.
    if kv.get("guest_nproc") != "4" or kv.get("kunit_cases_skipped") != "2":
        fails.append("FAIL: not 4 CPUs, or KUnit cases skipped other than luf_test_bad_access "
                     "and luf_test_bad_race: " + show(out, r"^(guest_nproc|kunit_cases_skipped)="))
    n = kv.get("nr_luf_deferred")
    if num(n) < 50000:
        fails.append("FAIL: the reclaim workload deferred %s flushes, fewer than 50,000"
                     % (n or "no"))
    return fails


def swap_fails(out, workload):
    """The FAIL messages of a sanitizer step's boot of @workload (reclaim-anon or
    reclaim-tmpfs) whose output is @out: it must defer 10,000 flushes, and
    reclaim-tmpfs hold a folio written to swap (nr_luf_held: a dirty tmpfs folio
    luf defers is held while its write to swap runs, unless its pass keeps more
    than 32; a clean one is freed at once; an anonymous one is held only if its
    write to swap was still running when its pass ended, 8 in 125,100 in the
    debug kernel's 128 MiB), or it proves little of those paths."""
    kv = parse_kv(out)
    n, held = kv.get("nr_luf_deferred"), kv.get("nr_luf_held")
    if num(n) < 10000 or (workload == "reclaim-tmpfs" and num(held) < 1):
        return ["FAIL: %s deferred %s flushes (fewer than 10,000) or held %s folios"
                % (workload, n or "no", held or "no")]
    return []


# The peers workload's suites: (the prefix of its result keys, the suite's name).
PEER_SUITES = (("fio", "fio"), ("stress", "stress-ng"))


def peers_fails(out):
    """The FAIL messages of the peers step's boot whose output is @out; [] if it
    passed and each suite exited 0 while reclaim took pages and luf deferred
    flushes (a run where either did nothing proves nothing)."""
    kv, fails = parse_kv(out), []
    if kv.get("status") != "pass":
        fails.append("FAIL: the peers boot failed: %s" % (kv.get("fail_reason") or "no status"))
    for key, name in PEER_SUITES:
        rc = kv.get("workload.%s_rc" % key)
        if rc != "0":
            fails.append("FAIL: %s exited %s" % (name, rc if rc else "without a result"))
        for what, done in (("reclaimed", "no page was reclaimed"),
                           ("deferred", "luf deferred no flush")):
            if num(kv.get("workload.%s_%s" % (key, what))) < 1:
                fails.append("FAIL: %s while %s ran: it proves nothing" % (done, name))
    return fails


def checker_fails(out):
    """Why the debug step's checker boot whose output is @out proves too little, or
    None: it must defer 5,000 flushes, and its writes must settle one (a write
    abort)."""
    kv = parse_kv(out)
    n = kv.get("nr_luf_deferred")
    ab = num(kv.get("nr_luf_abort_write_fault")) + num(kv.get("nr_luf_abort_write_other"))
    if num(n) < 5000 or ab < 1:
        return ("the checker deferred %s flushes (fewer than 5,000) or its writes settled "
                "none (%d write aborts)" % (n or "no", ab))
    return None


def scan_missing(console, patterns):
    """The first of @patterns no line of @console matches, or None: a sanitizer
    kernel's console must show the report its deliberate misbehaviour makes."""
    return next((p for p in patterns if not grep(console, p)), None)


# What each writer of the coherence workload must meet on luf's kernel, or its run
# proves nothing: pwrite, map, dio and mount settle a deferral they may meet, so
# one of their rounds must open a window (a kernel thread on the reader's CPU may
# close a window now and then); flight and aio need a round where reclaim took the
# page read back with the old contents while the write was in flight.
_NO_WINDOW = ("windows", "the %s writer met no stale translation")
_NOT_TESTED = ("tested", "no round of the %s writer reclaimed the page during its write")
MUST_MEET = {"pwrite": _NO_WINDOW, "map": _NO_WINDOW, "dio": _NO_WINDOW, "mount": _NO_WINDOW,
             "flight": _NOT_TESTED, "aio": _NOT_TESTED}
# Over a file on ext4 (coherence-ext4), every writer must meet a deferral: that
# luf defers ext4's flushes at all is what the workload shows first. (Of these,
# only pwrite and truncate have a harness mutant that shows their settle can
# fail, WRITE_BEGIN_NO_SETTLE and NO_FILE_ABORT: the map writer's write fault
# settles the file's stamp and its own mm's domain, the punch writer's hole
# unmaps the reader's page in the reader's own mm, which settles its domain, and
# the dio writer's invalidation and its direct-write bracket each flush: each has
# two settles, and no mutant switches off both.)
MUST_MEET.update({"ext4:" + w: _NO_WINDOW for w in ("pwrite", "map", "dio", "punch", "truncate")})
# Anonymous memory (coherence-anon, the disk as swap): a write fault on a page
# swapped in again into a new frame; ANON_NO_SETTLE shows its settle can fail.
MUST_MEET["anon:anon"] = _NO_WINDOW
# A tmpfs (coherence-tmpfs, the disk as swap): the hole writer's page is a clean
# folio reclaim frees at once, filled again by a read fault of a writable shared
# mapping, then written; MAP_NO_NOTIFY shows its settle can fail. (Its pwrite,
# map, punch and truncate writers' folios are dirty: written to swap and held,
# the reader's frame stays the page's, and mincore() counts a folio in the swap
# cache as resident: they open no window, and need not.)
MUST_MEET["tmpfs:hole"] = _NO_WINDOW
# (The zeroes, passthru, mpath and target writers' first round may open one,
# which the write must close; later rounds open none: the disk was written around
# its page cache. One chance per run is too few to require it. The release,
# flight, aio, loop, dm, export, shared and part writers open none on luf: nothing
# is deferred on a disk written by bios that are not its own writeback (the
# release writer's file system writes its file at set-up, before round 1), while a
# direct write is in flight, nor on a disk written asynchronously, a loop device, a
# stacked device, a namespace behind a fabric, a disk marked through
# queue/luf_defer (shared) or a partitioned disk; BIO_DEFERS, DIRECT_DEFERS,
# AIO_DEFERS, LBCC_DEFERS, PASSTHROUGH_DEFERS, NVME_HEAD_DEFERS, LOOP_DEFERS,
# STACKED_DEFERS, FABRICS_DEFERS, SYSFS_IGNORED and PARTITION_DEFERS show their
# checks can fail.)


def unmet(out, writers=None):
    """The writers of @writers (keys of MUST_MEET, of one workload; default: the
    coherence workload's) that the boot whose output is @out ran, or should have,
    and that met nothing there."""
    kv = parse_kv(out)
    if writers is None:
        writers = [w for w in MUST_MEET if coherence_of(w)[0] == "coherence"]
    return [w for w in writers
            if num(kv.get("workload.%s_%s" % (coherence_of(w)[1], MUST_MEET[w][0]))) < 1]


def unmet_fails(writers):
    """The FAIL messages of @writers, which met nothing in any of their boots."""
    return ["FAIL: %s: it proves nothing" % (MUST_MEET[w][1] % w) for w in writers]


def coherence_fails(out, shared=True):
    """The FAIL messages of the coherence workload's boot whose output is @out, but
    for what its writers met (unmet()); [] if every writer's rounds saw the new
    version and, if @shared, the shared writer's disk was marked."""
    kv, fails = parse_kv(out), []
    # Every round of every writer must have seen the new version (its witness,
    # or an O_DIRECT read of a disk written around its page cache): a write that
    # missed the page would make 0 stale reads vacuous.
    for w in re.findall(r"^workload\.([a-z]+)_rounds=", out, re.M):
        n = kv.get("workload.%s_new_seen" % w) or "0"
        if n != kv["workload.%s_rounds" % w]:
            fails.append("FAIL: the %s writer's witness read the new version in %s of %s rounds"
                         % (w, n, kv["workload.%s_rounds" % w]))
    # The shared writer's disk, marked through its queue/luf_defer, reads 0 and
    # cannot be unmarked (EINVAL).
    if shared and (kv.get("workload.shared_luf_defer") != "0" or
                   kv.get("workload.shared_unmark_errno") != "22"):
        fails.append("FAIL: queue/luf_defer of the shared writer's disk: " +
                     show(out, r"^workload\.shared_(luf_defer|unmark_errno|marked)="))
    return fails


def nothing_parked(out):
    """Whether the park step's offline boot (output @out) had nothing parked in the
    block it offlined: then the offline proves nothing."""
    return num(parse_kv(out).get("workload.parked_kb")) <= 0


def core_mutants():
    """The core's mutants: every LUF_MUTANT_NAME in include/luf and lib/*.c, the
    NAMEs sorted, once each."""
    files = glob.glob(os.path.join(cli.REPO, "include", "luf", "**"), recursive=True)
    names = set()
    for f in files + glob.glob(os.path.join(cli.REPO, "lib", "*.c")):
        if os.path.isfile(f):
            with open(f, errors="replace") as fh:
                names |= set(re.findall(r"LUF_MUTANT_([A-Z_]+)", fh.read()))
    return sorted(names)


def kunit_caught(rc, out, console):
    """A core mutant's KUnit boot (exit status @rc, output @out, console @console):
    (True, what caught it), (False, why not) if every case passed, or (None, ...) if
    the boot failed for another reason."""
    if rc == 0:
        return False, "NOT caught: every KUnit case passed"
    if grep(out, r"^fail_reason=.*KUnit") and grep(console, NOT_OK):
        cases = {re.sub(NOT_OK, "", l) for l in grep(console, r"^ +not ok [0-9]+ ")}
        return True, "caught by: " + "".join(c + " " for c in sorted(cases))
    return None, "the boot failed for another reason:"


# The harness kernel's mutants (luf.mutant=NAME) and the coherence writers whose
# readers must see old contents after new ones with that rule off (ext4:W: writer W
# of coherence-ext4, over a file on ext4; W: of coherence, over the disk).
MM_STALE = (
    # Writes that settle nothing. (The punch writer is not caught: its hole punch
    # unmaps the reader's page from the reader's own mm, whose domain settle
    # flushes; its reader shares the writer's mm.)
    ("NO_FILE_ABORT", "pwrite map dio ext4:truncate"),
    # ->write_begin()'s folio lookup (FGP_WRITE) that settles nothing: write() to a
    # disk and to an ext4 file.
    ("WRITE_BEGIN_NO_SETTLE", "pwrite ext4:pwrite"),
    ("NO_CLAIM_SETTLE", "mount"),  # a holder's claim that settles nothing
    ("PARTITION_DEFERS", "part"),  # a partitioned disk: translations through the whole disk
    # A direct write in flight: the folio read again from the disk before the write
    # reached it and reclaimed meanwhile must leave its reader on the old contents.
    ("DIRECT_DEFERS", "flight"),
    ("AIO_DEFERS", "aio"),  # after an asynchronous direct write (nothing invalidates)
    ("PASSTHROUGH_DEFERS", "passthru"),  # an NVMe Write through its character device
    ("LOOP_DEFERS", "loop"),  # a loop device, its backing file written
    ("STACKED_DEFERS", "dm"),  # a device-mapper device, its member written
    ("NVME_HEAD_DEFERS", "mpath"),  # passthrough marks the path's hidden disk only
    # Write bios that are not the disk's own writeback: a disk a file system wrote and
    # released, the disk the NVMe target's block backend writes.
    ("BIO_DEFERS", "release target"),
    ("LBCC_DEFERS", "zeroes"),  # an NVMe Write Zeroes passed through
    ("FABRICS_DEFERS", "export"),  # the host's namespace, the target's disk written
    ("SYSFS_IGNORED", "shared"),  # queue/luf_defer set to 0, an image attached twice
    # A write fault on anonymous memory that settles nothing: the page swapped in
    # again into a new frame and written, the reader still on the old one.
    ("ANON_NO_SETTLE", "anon:anon"),
    # A shared writable mapping of a tmpfs file without write notification: a read
    # fault maps a new frame writable and the stores that follow settle nothing.
    ("MAP_NO_NOTIFY", "tmpfs:hole"),
)
# Mutants a workload of their own catches (mm_caught()).
MM_WORKLOAD = (
    # An allocator that never drains the park: the allocation that needs the parked
    # memory ends in the OOM killer (SIGKILL).
    ("ALLOC_NO_DRAIN", "oom", ()),
    # Offlining that never reaches luf_drain(): the block holding parked folios must
    # not go offline (the workload gives up at its 10 s limit, EINTR).
    ("OFFLINE_NO_DRAIN", "offline", ()),
    # Reclaim that parks past vm.luf_park_pages: one pass of MADV_PAGEOUT (512
    # folios) must leave more than a 64-page bound parked.
    ("PARK_UNBOUNDED", "pageout", ("--wargs", "--park 64")))
# Mutants KUnit catches: the case that must fail.
MM_KUNIT = (("DEFER_FLUSH_PENDING", "luf_test_flush_pending_not_deferred"),
            ("NESTED_DEFER", "luf_test_nested_pass"), ("NO_DEFER_BUMP", "luf_test_lazy_cpu"),
            ("LAZY_IPI", "luf_test_lazy_cpu"), ("ANY_FILE_DEFERS", "luf_test_file_opt_in"),
            ("KEPT_NO_HOLD", "luf_test_kept_folio_held"))


def coherence_of(writer):
    """(the coherence workload, the writer's name in it) of an MM_STALE writer."""
    fs, _, name = writer.rpartition(":")
    return ("coherence-" + fs if fs else "coherence"), name


def stale_caught(mutant, writers, out):
    """[(caught, message)] for each of @writers (MM_STALE's names) of the coherence
    workload booted with @mutant (output @out): each writer's reader must have seen old
    contents after new ones (stale reads), or the check of that rule cannot fail."""
    kv, res = parse_kv(out), []
    for w in writers:
        wl, name = coherence_of(w)
        n = kv.get("workload.%s_stale_reads" % name)
        if num(n) > 0:
            res.append((True, "%s: caught by the %s workload's %s writer: %s stale reads"
                        % (mutant, wl, name, n)))
        elif n is None:
            res.append((False, "%s: NOT caught: the %s workload printed nothing for its %s "
                        "writer (fail_reason=%s)" % (mutant, wl, name,
                                                     kv.get("fail_reason") or "none")))
        else:
            res.append((False, "%s: NOT caught by the %s workload's %s writer "
                        "(%s_stale_reads=%s)" % (mutant, wl, name, name, n)))
    return res


def mm_caught(mutant, out, run=1):
    """(caught, message) of the harness kernel's boot with luf.mutant=@mutant, whose
    output is @out: RECLAIM_NO_FLUSH (the checker's boot number @run: folios freed
    before their flush make it see stale reads), ALLOC_NO_DRAIN (the oom workload's
    allocation that needs the parked memory ends in the OOM killer, SIGKILL),
    OFFLINE_NO_DRAIN (the offline workload gives up at its 10 s limit, EINTR:
    offline_rc=4), PARK_UNBOUNDED (one MADV_PAGEOUT pass, 512 folios, leaves more
    than a 64-page bound parked) or MIGRATE_FLUSH_LATE (a migrated folio copied
    before its flush: the migrate workload's writers lose writes, boot number
    @run), MIGRATE_SRC_UNFLUSHED (a migrated source freed before its flush: the
    migrate workload's readers read words of other pages) or
    MIGRATE_MIXED_NO_FLUSH (a copy mapped writable before the deferred flush:
    its readers read versions older than one published) or MIGRATE_KEEP_UNHELD
    (a moved source another reference keeps, neither held nor flushed for: freed
    by that reference, its frame reused under the readers' stale entries)."""
    kv = parse_kv(out)
    key, caught, what = {
        "RECLAIM_NO_FLUSH": ("mismatches", lambda v: num(v) > 0, lambda v: "the checker "
                             "(run %d): %s stale reads, e.g.:" % (run, v)),
        "WRITE_BEGIN_NO_SETTLE": ("mismatches", lambda v: num(v) > 0, lambda v: "the checker "
                                  "over ext4 (run %d): %s stale reads, e.g.:" % (run, v)),
        "ALLOC_NO_DRAIN": ("hog", lambda v: v == "signal9", lambda v: "the oom workload: the "
                           "allocation was OOM-killed with %s kB parked"
                           % kv.get("workload.parked_max_kb", "")),
        "OFFLINE_NO_DRAIN": ("offline_rc", lambda v: (v or "0") == "4", lambda v: "the offline "
                             "workload: " + show(out, r"^workload\.(parked_kb|offline_s)=")),
        "PARK_UNBOUNDED": ("parked_max_kb", lambda v: num(v) > 64 * 4, lambda v: "the pageout "
                           "workload: %s kB parked, bound 256 kB" % v),
        "MIGRATE_FLUSH_LATE": ("lost_writes", lambda v: num(v) > 0, lambda v: "the migrate "
                               "workload's writers (run %d): %s lost writes" % (run, v)),
        "MIGRATE_SRC_UNFLUSHED": ("bad_reads", lambda v: num(v) > 0, lambda v: "the migrate "
                                  "workload's readers (run %d): %s bad reads" % (run, v)),
        "MIGRATE_MIXED_NO_FLUSH": ("stale_reads", lambda v: num(v) > 0, lambda v: "the "
                                   "migrate workload's readers (run %d): %s stale reads"
                                   % (run, v)),
        "MIGRATE_KEEP_UNHELD": ("bad_reads", lambda v: num(v) > 0, lambda v: "the migrate "
                                "workload's readers (run %d): %s bad reads" % (run, v)),
    }[mutant]
    v = kv.get("workload." + key)
    if caught(v):
        return True, "%s: caught by %s" % (mutant, what(v))
    return False, "%s: NOT caught (%s=%s)" % (mutant, key, v or "none")


def migrate_fails(out):
    """The FAIL messages of the migrate step's boot whose output is @out: it must
    pass (every page moved, no bad read, no stale read, no lost write, no kernel
    report), its readers, writers and second process must have run while the pages
    moved, and luf must have deferred flushes (the boot has no disk: nothing but
    migration unmaps)."""
    kv, fails = parse_kv(out), []
    if kv.get("status") != "pass":
        fails.append("FAIL: the migrate boot failed: %s" % (
            kv.get("fail_reason") or "status %s" % (kv.get("status") or "missing")))
    if min(num(kv.get("workload." + k)) for k in ("writes", "lookups", "shared_writes")) < 1:
        fails.append("FAIL: the migrate workload's writers or readers did nothing: it proves "
                     "nothing")
    if num(kv.get("nr_luf_deferred")) < 1:
        fails.append("FAIL: luf deferred no flush of the migrate workload's read-only pages")
    return fails


def src_ref_fails(out):
    """The FAIL messages of the harness kernel's migrate boot with the provocation
    luf.mutant=MIGRATE_SRC_REF whose output is @out: it must pass (no bad read), and
    luf must have held sources (nr_luf_held), or the boot proves nothing of the
    hold MIGRATE_KEEP_UNHELD removes."""
    kv, fails = parse_kv(out), []
    if kv.get("status") != "pass":
        fails.append("FAIL: MIGRATE_SRC_REF: the migrate boot failed: %s" % (
            kv.get("fail_reason") or "status %s" % (kv.get("status") or "missing")))
    if num(kv.get("nr_luf_held")) < 1:
        fails.append("FAIL: MIGRATE_SRC_REF: luf held no source (nr_luf_held=%s): the boot "
                     "proves nothing of the hold" % (kv.get("nr_luf_held") or "none"))
    return fails


def tier_fails(out):
    """The FAIL messages of the tier boot whose output is @out: it must pass (no
    wrong word, some of the table on the lower tier, no kernel report), its lookups
    must have run while pages were demoted and promoted, and luf must have deferred
    flushes meanwhile (the table's PTEs are read-only and clean)."""
    kv, fails = parse_kv(out), []
    if kv.get("status") != "pass":
        fails.append("FAIL: the tier boot failed: %s" % (
            kv.get("fail_reason") or "status %s" % (kv.get("status") or "missing")))
    if min(num(kv.get("workload." + k)) for k in ("lookups", "pgdemote_kswapd",
                                                   "pgpromote_success")) < 1:
        fails.append("FAIL: the tier workload's lookups ran without demotion and promotion: "
                     "it proves nothing")
    if num(kv.get("workload.nr_luf_deferred")) < 1:
        fails.append("FAIL: luf deferred no flush of the tier workload's migrations while it "
                     "looked up")
    return fails


def case_failed(console, case):
    """Whether the KUnit case @case failed on @console."""
    return bool(grep(console, NOT_OK + re.escape(case) + "$"))


# What the LUF_DEBUG check in try_to_unmap_one() prints when it fires (a
# WARN_ON_ONCE(): the report's title line names the file).
DIRTY = r"WARNING: .* at mm/rmap\.c:[0-9]+"


def checkpatch_total(out):
    """checkpatch.pl's output @out: (its "total: ..." lines, whether they say 0 errors
    and 0 warnings); ("", False) if it checked nothing."""
    total = grep(out, r"^total: [0-9]+ errors, [0-9]+ warnings, ([0-9]+ checks, )?[0-9]+ lines")
    return "\n".join(total), any(t.startswith("total: 0 errors, 0 warnings") for t in total)


def after_context(text, pattern, n=3):
    """grep -A@n -E @pattern: the matching lines of @text, each with the @n lines
    after it, "--" between groups that do not touch."""
    ls, out, last = lines(text), [], None
    for i, l in enumerate(ls):
        if re.search(pattern, l):
            start = i if last is None or i > last else last + 1
            if last is not None and i > last + 1:
                out.append("--")
            out += ls[start:i + n + 1]
            last = min(i + n, len(ls) - 1)
    return out


def series_lines(path):
    """The lines of the series file @path but its "#" comments."""
    with open(path) as f:
        return [l.rstrip("\n") for l in f if not l.startswith("#")]


def harness_lists_series(series, harness):
    """Whether the series file @harness (tests/kernel/harness/series) lists the patches
    of @series (lib/kernel/patches/series: the batched migration flush's, then luf's),
    in order, as ../ paths, blank lines too: the same files."""
    def files(path, names):
        return [os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(path)), n))
                if n else n for n in names]
    return files(series, series_lines(series)) == \
        files(harness, [l for l in series_lines(harness) if l.startswith("../")])


def echo(rows, indent=""):
    """Print each of @rows (lines) after @indent."""
    for l in rows:
        print(indent + l, flush=True)


class Ci:
    """One step: its messages, its scratch directory @work, the boots it runs."""

    def __init__(self, step, work):
        self.step, self.work, self.fail, self.mm = step, work, False, None

    def say(self, msg, fail=False):
        """Print "kernel.STEP: @msg"; @fail marks the step failed."""
        print("kernel.%s: %s" % (self.step, msg), flush=True)
        self.fail |= fail

    def console(self, name):
        return os.path.join(self.work, name + ".console")

    def read(self, name):
        """The text of the console @name (empty if boot wrote none)."""
        try:
            with open(self.console(name), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def boot(self, *args, stderr=subprocess.STDOUT):
        """Run tests/kernel/boot with @args: its CompletedProcess (stdout, with its
        stderr unless @stderr says where it goes). Its scratch directory is made in
        the step's (TMPDIR): what a failed boot keeps goes with the step's."""
        env = dict(os.environ, TMPDIR=self.work) if self.work else None
        return cli.run([BOOT] + list(args), stdout=subprocess.PIPE, stderr=stderr, env=env)

    def checker_floors(self, img):
        """The debug kernel @img's checker boot, which must pass and meet
        checker_fails()'s floors; one that passes below them boots again, up to
        three boots (a failed boot fails the step at once)."""
        for run in BOOTS:
            p = self.boot("--kernel", img, "--workload", "checker-ext4", "--mem", "160M",
                          "--seconds",
                          "20", "--disk-mb", "192", "--wargs", "--hot-pages 4096 --fill-mb 40 "
                          "--min-moves 1 --max-seconds 60", "--timeout", "1500", *SLOW,
                          stderr=None)
            echo(grep(p.stdout, r"^(status|fail_reason|kernel_problems|nr_luf_(deferred|"
                                     r"abort_write_[a-z]*)|workload\.(mismatches|reads|moves))="))
            if p.returncode:
                self.say("FAIL: the checker's boot failed (a mismatch, or a kernel report)", True)
                return
            m = checker_fails(p.stdout)
            if not m:
                return
            if run == BOOTS[-1]:
                self.say("FAIL: " + m, True)
            else:
                self.say(m + ": booting it again")

    def kunit_boot(self, img, name, *args):
        """The KUnit suite at boot of @img, its console kept as @name."""
        return self.boot("--kernel", img, "--workload", "kunit", "--console", self.console(name),
                         *args)

    def scan_catches(self, img, mutant, what, *patterns):
        """The sanitizer kernel @img (a harness kernel) boots with luf.mutant=@mutant,
        which runs a KUnit case that misbehaves on purpose; the console scan must fail
        on its console, which must hold a line matching each of @patterns."""
        p = self.kunit_boot(img, "bad", "--timeout", "900", *SLOW,
                            "--append", "luf.mutant=" + mutant)
        scan = self.boot("--check-console", self.console("bad"))
        if scan.returncode == 0:
            self.say("FAIL: the console scan missed %s:" % what, True)
            return echo(lines(p.stdout)[-20:])
        console = self.read("bad")
        self.say("the scan catches %s: %s report lines, e.g.:"
                 % (what, parse_kv(scan.stdout).get("kernel_problems", "")))
        missing = scan_missing(console, patterns)
        for pat in patterns:
            if pat == missing:
                return self.say("FAIL: no report matching '%s'" % pat, True)
            echo(grep(console, pat)[:1], "    ")
        return None

    def series(self):
        # What checkpatch reads (scripts, MAINTAINERS, the SPDX licenses, include/);
        # the other folders it looks for to know it is at the top of a tree are empty.
        k = "linux-source-6.1"
        if cli.run(["tar", "-xJf", cli.TARBALL, "-C", self.work] + [
                k + "/" + m for m in ("scripts", "MAINTAINERS", "COPYING", "CREDITS", "Kbuild",
                                      "Makefile", "README", "Documentation/process", "LICENSES",
                                      "include")]).returncode:
            raise cli.Fail("cannot unpack " + cli.TARBALL)
        tree = os.path.join(self.work, k)
        for d in ("arch", "drivers", "fs", "init", "ipc", "kernel", "lib"):
            os.makedirs(os.path.join(tree, d), exist_ok=True)
        env = dict(os.environ, PATH="/usr/bin:" + os.environ.get("PATH", ""))
        harness = os.path.join(cli.KDIR, "harness")
        # Each patch as a patch, and as a plain file (what a reader of the file sees:
        # no line may end in whitespace, blank context lines included).
        for f in [os.path.join(PATCHES, w) for l in series_lines(cli.SERIES) for w in l.split()] + \
                [os.path.join(harness, w) for l in series_lines(os.path.join(harness, "series"))
                 for w in l.split() if not w.startswith("../")]:
            for mode in ([], ["--file"]):
                # Run from the source tree (no .git: its spelling, SPDX and
                # MAINTAINERS checks run; its commit-id lookup needs none); say its
                # totals, fail on any error or warning.
                out = cli.run(["perl", "scripts/checkpatch.pl", "--strict"] + mode + [f],
                              cwd=tree, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT).stdout
                total, clean = checkpatch_total(out)
                name = os.path.basename(f)
                if not total:
                    self.say("FAIL: checkpatch did not check %s:" % name, True)
                    echo(lines(out)[:20], "    ")
                    continue
                self.say("checkpatch --strict%s %s: %s"
                         % ("".join(" " + m for m in mode), name, total[len("total: "):]))
                if not clean:
                    self.fail = True
                    echo(after_context(out, r"^(ERROR|WARNING):"), "    ")
        if cli.run([os.path.join(PATCHES, "vendored.py")]).returncode:
            self.fail = True
        if not harness_lists_series(cli.SERIES, os.path.join(harness, "series")):
            self.say("FAIL: tests/kernel/harness/series does not list lib/kernel/patches/series",
                     True)

    def sanitizer(self):
        step = self.step
        img = kernels.build(step)
        # KUnit runs at every boot of these kernels: the first workload's boot
        # parses it (--kunit). A disk read once in 160 MiB: fewer than 50,000
        # deferred flushes would prove little of luf's paths under the sanitizer.
        # On microvm, 128 MiB gave the debug kernel 114,955 and the KCSAN kernel
        # 41,781-57,897 (on pc, with ACPI and PCI, 90,000-120,000: the smaller
        # kernel leaves more page cache); 144 MiB gave the latter 110,797 (160 MiB:
        # 132,162, in half as much time again).
        # The debug kernel reads the disk, the KCSAN kernel a file on ext4 (the
        # debug kernel's checker boot below writes one).
        disk = "128" if step == "debug" else "144"
        p = self.boot("--kernel", img, "--workload", "reclaim" if step == "debug" else
                      "reclaim-ext4", "--kunit", "--mem", "160M",
                      "--disk-mb", disk, "--passes", "1", "--timeout", "1500", *SLOW,
                      stderr=None)
        self.fail |= p.returncode != 0
        echo(grep(p.stdout, r"^(status|fail_reason|guest_nproc|tlb_shootdowns|runtime_s|"
                                 r"kernel_problems|kcsan_|kunit_|nr_luf_)"))
        for m in sanitizer_fails(p.stdout):
            self.say(m, True)
        # Swap-backed memory, the disk as swap: anonymous memory read by forked
        # children under the debug kernel, a tmpfs file under KCSAN (holds, the
        # swap-in faults, the shmem settles).
        wl = "reclaim-anon" if step == "debug" else "reclaim-tmpfs"
        p = self.boot("--kernel", img, "--workload", wl, "--mem", "128M", "--disk-mb", "128",
                      "--passes", "2", "--timeout", "1500", *SLOW, stderr=None)
        self.fail |= p.returncode != 0
        echo(grep(p.stdout, r"^(status|fail_reason|tlb_shootdowns|runtime_s|kernel_problems|"
                                 r"kcsan_|nr_luf_(deferred|held)|workload\.bad_reads)="))
        for m in swap_fails(p.stdout, wl):
            self.say(m, True)
        # Pages moved between two nodes (numa=fake=2 on microvm): luf's deferrals in
        # migration, the park of the sources and the flush before a writable copy.
        p = self.boot("--kernel", img, "--workload", "migrate", *MIGRATE_ARGS, "--timeout",
                      "900", *SLOW, stderr=None)
        echo(grep(p.stdout, r"^(status|fail_reason|tlb_shootdowns|kernel_problems|kcsan_|"
                            r"nr_luf_deferred|workload\.\w+)="), "  migrate: ")
        for m in migrate_fails(p.stdout):
            self.say(m, True)
        if step == "debug":
            # The checker's writes settle what reclaim deferred (write aborts):
            # paths the reclaim workload never takes. In 256 MiB under KASAN its
            # hot sets, streamer and filler all fit and reclaim deferred 16
            # flushes (seen); in 160 MiB with the filler asked for 40 MiB,
            # 63,892 with 401 write aborts (pc), 50,025 with 351 (microvm), and
            # 11,829-17,959 with 126-181 while a kernel built (pc). Once (a cold
            # CI run, right after the debug kernel's build) the hot set never
            # moved: 1,029 and 0; such a run proves little, and boots again.
            self.checker_floors(img)
            # The scan can fail: a harness KUnit case reads freed memory and calls
            # might_sleep() under a spinlock; the boot must fail on the reports alone.
            self.scan_catches(img, "BAD_ACCESS", "a deliberate bad access", "BUG: KASAN",
                              "sleeping function called from invalid context")
            return
        # The KCSAN run can fail: a harness KUnit case races with a kthread on one
        # word; the boot must fail on the report, which names a luf function.
        self.scan_catches(img, "BAD_RACE", "a deliberate data race",
                          "BUG: KCSAN: data-race in .*luf_test_")
        # On this kernel's tree, kswapd() holds the inlined kswapd_try_to_sleep(),
        # which the series changes: a race there must count as luf's (boot). The
        # kernel has line tables, so the fixture's access is put on a line of
        # kswapd_try_to_sleep() the series changed (one on an unchanged line would
        # be upstream's, and listed).
        lines = scan.AccessLines.of_kernel(img)
        sites = lines.changed_sites("kswapd", "kswapd_try_to_sleep") if lines else []
        if not sites:
            self.say("FAIL: no line of kswapd_try_to_sleep() the series changed found in "
                     "kswapd() with addr2line", True)
            return
        with open(self.console("inl"), "w") as f:
            for fx in ("kunit-console.txt", "kcsan-kswapd.txt"):
                with open(os.path.join(cli.KDIR, "fixtures", fx)) as src:
                    f.write(src.read().replace(" kswapd+0x40/", " kswapd+0x%x/" % sites[0]))
        if self.boot("--check-console", self.console("inl"), "--kernel", img).returncode == 0:
            self.say("FAIL: a race in kswapd (kswapd_try_to_sleep inlined) was not taken as "
                     "luf's", True)

    def coherence(self):
        img, left = kernels.build("luf"), list(MUST_MEET)
        # Every writer of a workload (coherence over the disk, coherence-ext4 over a
        # file) in one boot; a writer that met nothing (its windows are closed by
        # chance: more often on a loaded machine) boots again, alone with the others
        # that did not, up to three boots. Any boot's stale read fails the step.
        for run in BOOTS:
            met = []
            for wl in sorted({coherence_of(w)[0] for w in left}):
                ws = [w for w in left if coherence_of(w)[0] == wl]
                args = () if run == 1 else (
                    "--wargs", "--writers " + ",".join(coherence_of(w)[1] for w in ws))
                if run > 1:
                    self.say("run %d for the %s writer(s), which met nothing in the last run"
                             % (run, ",".join(ws)))
                p = self.boot("--kernel", img, "--workload", wl, *args, "--timeout", "900")
                if p.returncode:
                    self.say("FAIL: a reader saw old contents after new ones, or the boot "
                             "failed (%s)" % wl, True)
                echo(grep(p.stdout, WORKLOAD), "  luf: ")
                for m in coherence_fails(p.stdout, shared=run == 1 and wl == "coherence"):
                    self.say(m, True)
                if p.returncode:  # failed: no retry can help, whatever met nothing
                    return
                met += [w for w in ws if w not in unmet(p.stdout, ws)]
            left = [w for w in left if w not in met]
            if not left:
                return
        for m in unmet_fails(left):
            self.say(m, True)

    def park(self):
        img = kernels.build("luf")
        p = self.boot("--kernel", img, "--workload", "offline", "--timeout", "600")
        self.fail |= p.returncode != 0
        self.say("luf: offline: " + show(p.stdout,
                                         r"^(status|workload\.(parked_kb|offline_rc|offline_s))="))
        if nothing_parked(p.stdout):
            self.say("FAIL: nothing parked in the block: the offline proves nothing", True)
        p = self.boot("--kernel", img, "--workload", "idle", "--timeout", "600")
        if p.returncode:
            self.say("FAIL: parked memory not released a second after reclaim stopped (or "
                     "nothing parked)", True)
        self.say("luf: idle: " + show(p.stdout, r"^(status|workload\.(parked_kb|idle_parked_kb))="))
        # The idle check can fail: with the idle drain off, the parked pages stay.
        p = self.boot("--kernel", img, "--workload", "idle", "--append", "luf.idle_ms=0",
                      "--timeout", "600")
        if p.returncode == 0:
            self.say("FAIL: with luf.idle_ms=0 the idle workload still passed: the check cannot "
                     "fail", True)
        else:
            self.say("luf.idle_ms=0: idle: %s(fails, as it must)"
                     % show(p.stdout, r"^workload\.(parked_kb|idle_parked_kb)="))
        # The bound at 64 pages, below the 512 folios one MADV_PAGEOUT pass parks.
        # (At the default bound the call settles the mm at each page table it walks
        # and keeps the park small on every kernel: that run could not fail.)
        p = self.boot("--kernel", img, "--workload", "pageout", "--wargs", "--park 64",
                      "--timeout", "600")
        if p.returncode:
            self.say("FAIL: one MADV_PAGEOUT of 1 GiB parked more than vm.luf_park_pages (64)",
                     True)
        self.say("luf: pageout, bound 64: " +
                 show(p.stdout, r"^(status|workload\.(park_pages|deferred|parked_max_kb))="))
        # An allocation that needs the parked memory gets it before the OOM killer.
        p = self.boot("--kernel", img, "--workload", "oom", "--timeout", "600")
        if p.returncode:
            self.say("FAIL: an allocation that needed parked memory did not get it (or never "
                     "needed it):", True)
            echo(grep(p.stdout, r"^(fail_reason|workload\.)|offline:|Out of memory"))
        self.say("luf: oom: " + show(p.stdout, r"^(status|workload\.(hog|parked_max_kb|drains|"
                                               r"reader_switches|attempts))="))

    def migrate(self):
        # Two NUMA nodes (boot's migrate workload): pages moved back and forth under
        # readers and writers.
        p = self.boot("--kernel", kernels.build("luf"), "--workload", "migrate", *MIGRATE_ARGS)
        echo(grep(p.stdout, r"^(status|fail_reason|kernel_problems|tlb_shootdowns|"
                            r"workload\.\w+)="), "  luf: ")
        for m in migrate_fails(p.stdout):
            self.say(m, True)
        # The mutants' settings, where a source freed unflushed or a copy mapped
        # before the deferred flush would show (nothing else flushes the readers).
        for name, args in (("sources reused", MIGRATE_SRC_ARGS),
                           ("second process", MIGRATE_MIXED_ARGS)):
            p = self.boot("--kernel", kernels.build("luf"), "--workload", "migrate", *args)
            echo(grep(p.stdout, r"^(status|fail_reason|nr_luf_deferred|workload\.(bad_reads|"
                                r"stale_reads|pages_migrated))="), "  luf: %s: " % name)
            if p.returncode or num(parse_kv(p.stdout).get("nr_luf_deferred")) < 1:
                self.say("FAIL: the migrate workload (%s) failed, or luf deferred nothing"
                         % name, True)
        p = self.boot("--kernel", kernels.build("luf"), "--workload", "tier", *TIER_ARGS)
        echo(grep(p.stdout, r"^(status|fail_reason|kernel_problems|tlb_shootdowns|"
                            r"nr_luf_deferred|workload\.\w+)="), "  luf: tier: ")
        for m in tier_fails(p.stdout):
            self.say(m, True)

    def peers(self):
        # ctest's short form: 2 x 64 MiB of fio (the recorded runs, runs/peers-*.txt,
        # write 2 x 160 MiB: 272 s of fio on this machine) and 30 s of stress-ng.
        p = self.boot("--kernel", kernels.build("luf"), "--workload", "peers", "--wargs",
                      "--fio-mb 64 --stress-seconds 30")
        echo(grep(p.stdout, r"^(status|fail_reason|kernel_problems|nr_luf_deferred|"
                            r"pages_reclaimed|workload\.\w+)="), "  luf: ")
        for m in peers_fails(p.stdout):
            self.say(m, True)

    def mutants(self):
        kernels.build("luf")  # the objects the harness kernel starts from
        img = kernels.build("mutant")  # luf.mutant=NAME switches a core rule off too
        caught = total = 0
        for m in core_mutants():
            if m in NOT_IN_KUNIT:
                self.say("%s: not a KUnit mutant: %s" % (m, NOT_IN_KUNIT[m]))
                continue
            total += 1
            p = self.kunit_boot(img, m, "--append", "luf.mutant=" + m)
            ok, msg = kunit_caught(p.returncode, p.stdout, self.read(m))
            caught += bool(ok)
            self.say("%s: %s" % (m, msg), not ok)
            if ok is None:
                echo(lines(p.stdout)[-15:], "    ")
        self.say("mutants caught by KUnit: %d/%d" % (caught, total))

    def verdicts(self, res, out, shown=WORKLOAD):
        """Say each (caught, message) of @res; a mutant not caught fails the step and
        shows the lines of @out that @shown matches."""
        for ok, msg in res:
            self.say(msg, not ok)
            if not ok:
                echo(grep(out, shown))

    def stale(self, mutant, *writers):
        """Mutant @mutant switches one rule off: the coherence workload's @writers must
        each make its reader see old contents after new ones, in one of up to three
        boots (the writers not caught yet boot again: on a loaded machine a round's
        window can close before its witness reads the new version; CI saw 1 window in
        3 rounds, and 0 stale reads, once)."""
        left, missed = list(writers), []
        for run in BOOTS:
            missed = []
            for wl in sorted({coherence_of(w)[0] for w in left}):
                ws = [w for w in left if coherence_of(w)[0] == wl]
                names = [coherence_of(w)[1] for w in ws]
                if run > 1:
                    self.say("%s: run %d for the %s writer(s), whose reader saw no stale "
                             "read" % (mutant, run, ",".join(ws)))
                p = self.boot("--kernel", self.mm, "--append", "luf.mutant=" + mutant,
                              "--workload", wl, "--wargs", "--writers " + ",".join(names),
                              "--timeout", "900")
                res = stale_caught(mutant, ws, p.stdout)
                self.verdicts([r for r in res if r[0]], p.stdout)
                shown = r"^workload\.(%s)_(rounds|windows|stale_reads)=" % "|".join(names)
                missed += [(w, r, p.stdout, shown) for w, r in zip(ws, res) if not r[0]]
            left = [w for w, *_ in missed]
            if not left:
                return
        for _, r, out, shown in missed:
            self.verdicts([r], out, shown)

    def mm_boot(self, mutant, workload, *args, stderr=subprocess.STDOUT):
        """The harness kernel's boot with luf.mutant=@mutant, as boot()."""
        return self.boot("--kernel", self.mm, "--append", "luf.mutant=" + mutant, "--workload",
                         workload, *args, stderr=stderr)

    def caught_in_boots(self, mutant, workload, *args):
        """The harness kernel's boots of @workload (@args) with luf.mutant=@mutant, up
        to three, until one catches it (mm_caught()): (caught, the last boot)."""
        for run in BOOTS:
            p = self.mm_boot(mutant, workload, *args, stderr=subprocess.PIPE)
            ok, msg = mm_caught(mutant, p.stdout, run)
            if ok:
                break
        self.verdicts([(ok, msg)], p.stdout, r"^(status|fail_reason|kernel_problems|"
                                             r"nr_luf_deferred|workload\.\w+)=")
        return ok, p

    def checker_caught(self, mutant, workload, *args):
        """The harness kernel's checker boots (@workload, 45 s, @args) with
        luf.mutant=@mutant, up to three, until one sees stale reads (mm_caught())."""
        ok, p = self.caught_in_boots(mutant, workload, "--seconds", "45", *args,
                                     "--timeout", "900")
        if ok:
            echo(grep(p.stderr, r"^  mismatch")[:2])

    def mm_mutants(self):
        # The reclaim path's own rules, broken one at a time in mm/luf.c (the harness).
        # The checker reads a hot set of 4096 pages per reader: enough mapped pages
        # go through reclaim for luf to defer hundreds of thousands of flushes.
        kernels.build("luf")
        # One harness kernel for every rule: luf.mutant=NAME switches it off at boot.
        self.mm = kernels.build("mutant")
        # Folios handed to the page allocator before their flush: stale reads.
        # How many stale reads a run sees varies (2 to a few hundred were seen).
        self.checker_caught("RECLAIM_NO_FLUSH", "checker", "--disk-mb", "256", "--wargs",
                            "--hot-pages 4096 --min-moves 1 --max-seconds 90")
        # ->write_begin()'s settle, seen by the checker over ext4 too: its write()s
        # leave readers on the old version (the first mismatch 5-19 s into 90 s runs:
        # runs/checker-ext4-write_begin_no_settle.txt).
        self.checker_caught("WRITE_BEGIN_NO_SETTLE", "checker-ext4")
        # Rules whose absence a coherence writer shows: its reader sees the old
        # contents after the new ones were read.
        for mutant, writers in MM_STALE:
            self.stale(mutant, *writers.split())
        # A migrated folio copied before its flush: a write a stale TLB entry lets
        # through after the copy is lost (how often the window is hit varies).
        self.caught_in_boots("MIGRATE_FLUSH_LATE", "migrate", *MIGRATE_ARGS, "--timeout", "900")
        # A migrated source freed before its deferred flush, and a copy mapped writable
        # before it: readers read another page's words, or an old version.
        self.caught_in_boots("MIGRATE_SRC_UNFLUSHED", "migrate", *MIGRATE_SRC_ARGS)
        self.caught_in_boots("MIGRATE_MIXED_NO_FLUSH", "migrate", *MIGRATE_MIXED_ARGS)
        # A moved source another reference keeps (a speculative lookup's, which no
        # workload makes on purpose: the harness's provocation MIGRATE_SRC_REF takes
        # one on the first 32 deferred sources of a pass): luf holds it until its
        # flush. The provocation alone must pass and hold; without the hold the
        # reference frees it unflushed.
        p = self.mm_boot("MIGRATE_SRC_REF", "migrate", *MIGRATE_SRC_ARGS)
        for m in src_ref_fails(p.stdout):
            self.say(m, True)
        self.say("MIGRATE_SRC_REF: " + show(p.stdout, r"^(status|fail_reason|kernel_problems|"
                                                      r"nr_luf_held|workload\.bad_reads)="))
        self.caught_in_boots("MIGRATE_KEEP_UNHELD", "migrate", *MIGRATE_SRC_ARGS)
        # Rules whose absence a workload of their own shows (mm_caught()).
        for mutant, workload, args in MM_WORKLOAD:
            p = self.mm_boot(mutant, workload, *args, "--timeout", "600")
            self.verdicts([mm_caught(mutant, p.stdout)], p.stdout)
        # Rules KUnit checks directly: the named case must fail in the mutant's kernel.
        for name, case in MM_KUNIT:
            p = self.kunit_boot(self.mm, name, "--append", "luf.mutant=" + name)
            if case_failed(self.read(name), case):
                self.say("%s: caught by KUnit: %s" % (name, case))
            else:
                self.say("%s: NOT caught by %s" % (name, case), True)
                echo(lines(p.stdout)[-15:])
        # Dirty translations deferred: QEMU keeps no stale writable entry long enough
        # for a workload to see, so the LUF_DEBUG check in try_to_unmap_one() must fire.
        p = self.mm_boot("DEFER_DIRTY", "mixed", "--disk-mb", "320", "--passes", "1",
                         "--timeout", "1500", "--console", self.console("dd"))
        hit = grep(self.read("dd"), DIRTY)[:1]
        if hit:
            self.say("DEFER_DIRTY: caught by its LUF_DEBUG check on the mixed workload:")
            echo(hit, "    ")
        else:
            self.verdicts([(False, "DEFER_DIRTY: NOT caught:")], p.stdout,
                          r"^(status|fail_reason|kernel_problems|nr_luf_deferred)=")


STEPS = ("series", "build", "kunit", "debug", "kcsan", "coherence", "park", "mutants",
         "mm-mutants", "migrate", "peers", "compare")


# The Debian programs a step boots with, and what its skip says without them.
STEP_TOOLS = {"peers": (boot.PEERS, "no fio or stress-ng"),
              "migrate": (boot.TIER_TOOLS, "no ndctl, which the tier boot needs")}


def main(argv):
    step = argv[0] if argv else ""
    if step not in STEPS:
        raise cli.Usage("")
    ci = Ci(step, None)
    skip = None
    if not os.access(cli.TARBALL, os.R_OK):
        skip = "no linux-source-6.1 (scripts/deps.sh kernel)"
    elif step != "series" and not shutil.which("qemu-system-x86_64"):
        skip = "no QEMU (scripts/deps.sh kernel)"
    elif step in STEP_TOOLS and not all(os.access(p, os.X_OK) for p in STEP_TOOLS[step][0]):
        skip = STEP_TOOLS[step][1] + " (scripts/deps.sh kernel)"
    if skip:
        ci.say("SKIP: " + skip)
        return 77
    if step == "build":
        ci.say("patched: " + kernels.build("luf"))
        return 0
    return in_scratch(ci, step)


def in_scratch(ci, step):
    """Run @step in a new scratch directory, removed unless the step failed (exit
    status 1) and booted: then kept, with the consoles its messages name and what
    its failed boots kept; its exit status."""
    try:
        ci.work = tempfile.mkdtemp(prefix="luf-kci.")
    except OSError as e:
        raise cli.Fail(str(e)) from None
    rc = 1
    try:
        rc = run_step(ci, step)
    finally:
        if rc != 1 or step == "series":
            shutil.rmtree(ci.work, ignore_errors=True)
        else:
            ci.say("kept %s (the step's consoles and failed boots)" % ci.work)
    return rc


def run_step(ci, step):
    """Run @step (not build) in @ci's scratch directory; its exit status."""
    if step == "kunit":
        rc = cli.run([BOOT, "--kernel", kernels.build("luf"), "--workload", "kunit",
                      "--console", ci.console("luf")]).returncode
        if rc == 0:
            # luf's own suites (the count above has the kernel's list and hlist too)
            echo(grep(ci.read("luf"), r"^ *# luf(_core)?: pass:|luf IPIs|TLB shootdowns"),
                 "  console: ")
        return rc
    if step == "compare":
        return cli.run([os.path.join(cli.KDIR, "compare"), "--runs", "1", "--short",
                        "--workloads", "reclaim,checker,reclaim-tmpfs,reclaim-anon",
                        "--baseline-off", "--json", os.path.join(ci.work, "compare.json")],
                       env=dict(os.environ, TMPDIR=ci.work)).returncode
    getattr(ci, {"debug": "sanitizer", "kcsan": "sanitizer",
                 "mm-mutants": "mm_mutants"}.get(step, step))()
    return int(ci.fail)


if __name__ == "__main__":
    cli.entry(main, "ci", __doc__, term=True)
