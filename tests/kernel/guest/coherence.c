// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/kernel/guest/coherence.c - the "coherence" workload: once a reader has
 * seen a page's new contents, no reader may see its old ones.
 *
 * Each round makes a stale read-only translation on purpose, then changes the
 * page and counts the reads of the old version that came after the new version
 * had been seen:
 *
 *   1. page P of the disk holds version v (written, then written back: clean);
 *   2. a reader thread pinned to the last CPU maps P (PROT_READ, MAP_SHARED) and
 *      reads it in a loop with no system call: its TLB caches the translation;
 *   3. "1" > /proc/self/clear_refs clears the PTE's accessed bit without a TLB
 *      flush, and madvise(MADV_PAGEOUT) reclaims P. A kernel that defers the
 *      flush (luf) leaves the reader's translation to the old frame in place:
 *      mincore() says "not resident" while the reader's fault count stays
 *      put. Such a round is a *window*; a pristine kernel flushes and the
 *      reader refaults (no window);
 *   4. a writer makes version v + 1 (--writers: pwrite() of --span pages whose
 *      first is P; a second process's writable MAP_SHARED mapping, written by
 *      two threads (see child_main()); an O_DIRECT pwrite() of P; a file
 *      system mounted on a second disk, see below), while a witness thread
 *      reads P with pread() and publishes the newest version it has *seen*
 *      (not the version a writer has finished);
 *   5. the reader loads the published version, then reads P: an older version
 *      is a *stale read*; a word that is not P's signature is a *wrong read*.
 *
 * The mount writer's page is page 0 of --fs-dev (/dev/vdb), an ext2 file
 * system with 1 KiB blocks made at start-up (busybox mke2fs): its superblock,
 * whose mount count is the version. Mounting it read-write is the write (the
 * file system's holder claims the device, then raises the count through its
 * buffer head); each round unmounts it again. One mount and unmount at
 * start-up sets the device's block size to 1 KiB for good while the program
 * holds it open: later mounts then do not truncate its page cache, which
 * would settle on its own.
 *
 * The release writer's page is a file's, on the same disk once the mount
 * writer is done: ext2 with 4 KiB blocks (made again), a file of --rounds
 * pages, each found on the disk with FIEMAP. The reader maps the disk's
 * page; each round mounts the file system, writes the file's page through
 * it (its own page cache, not the disk's), syncs and unmounts it, all
 * before step 3: the holder is gone by the reclaim, and the disk's copy of
 * P is still version 1, clean. The witness reads version 2 from the disk.
 * (With luf, a write bio that is not the disk's own writeback makes the
 * disk defer nothing: the release writer opens no window.)
 *
 * The flight writer's page is on a third disk (--flight-dev, /dev/vdc), whose
 * writes QEMU throttles to 1 MiB/s, allowing bursts of 0.1 s: an O_DIRECT
 * pwrite() of the 384 KiB before P goes through at once and fills the bucket,
 * so that the next, of P alone, is in flight for about 0.3 s. Step 2
 * runs before it (the page cache of the disk otherwise empty, the mapping
 * MADV_RANDOM: no readahead), steps 3 and 4 while it is in flight: the write
 * first invalidates P, the reader refaults version 1 from the disk, and
 * reclaim takes that folio. Once the write returns the witness reads P from
 * the disk: version 2. The kernel invalidates the range again after the write
 * only if the page cache is not empty, so a flush deferred meanwhile leaves
 * the reader on the old frame. (With luf, nothing of a disk is deferred while
 * a direct write to it is in flight: the flight writer opens no window.)
 *
 * The aio writer does the same with an asynchronous write of P (io_submit()),
 * but reclaims P only once the write has completed: the kernel never
 * invalidates the range after an asynchronous direct write, so the folio read
 * while it was in flight keeps version 1 for good, and once reclaim drops it
 * the witness reads version 2 from the disk. (With luf, a disk written
 * asynchronously defers nothing any more: no window. It comes after the
 * flight writer, whose disk it shares.)
 *
 * The zeroes writer's page is on an NVMe namespace of its own (--zeroes-dev;
 * NQN ending in ":luf-zeroes"): an NVMe Write Zeroes of P passed through,
 * which sends no data; version 2 is a page of zeros. (With luf, a command whose effects change logical blocks makes
 * its namespace defer nothing and flushes what it owes first: a window the
 * first round opens the command closes.)
 *
 * The passthru writer's page is on an NVMe namespace (--nvme-dev; found by its
 * subsystem's NQN, ending in ":luf", QEMU's name for a controller of serial
 * luf): its new version is an NVMe Write passed through (NVME_IOCTL_IO_CMD),
 * which never touches the page cache. P was reclaimed in step 3, so the
 * witness reads version 2 from the disk. A kernel that deferred the flush
 * leaves the reader on the old frame. (With luf, a passthrough request that
 * sends data flushes what its disk owes before it is issued, and the disk
 * defers nothing from then on: the first round opens a window that the
 * write closes, later rounds open none.) The mpath writer does the same on a
 * namespace of an NVMe subsystem (--mpath-dev; NQN ending in ":luf-mpath"):
 * under native multipath its page cache is the head's disk, while the
 * request goes to a path's queue, whose disk is another one.
 *
 * The loop writer's page is on a loop device (--loop-dev, /dev/loop0) backed
 * by a file in this program's file system (the initramfs): its new version is
 * a pwrite() to the backing file, around the loop device's page cache; the
 * witness reads version 2 through the loop device once P was reclaimed.
 * (With luf, a loop device defers nothing: the loop writer opens no window.)
 *
 * The dm writer's page is on a linear device-mapper device (set up with the
 * DM ioctls, no dmsetup, after the passthru writer's rounds: it holds its
 * member from then on) over the second half of the NVMe disk: its new
 * version is a pwrite() and fdatasync() to the member disk, which the
 * device holds but which can still be opened and written without claiming
 * it, around the dm device's page cache; the witness reads version 2 through
 * the dm device once P was reclaimed. (With luf, a device stacked on another
 * defers nothing: the dm writer opens no window.)
 *
 * The target writer's page is on a fourth disk (--target-dev, /dev/vdd),
 * exported by the NVMe target's block backend (set up in configfs) through
 * its loopback transport: its new version is a pwrite() and fdatasync() to
 * the namespace that appears on the host side (NQN luf-target), which the
 * target writes to the disk with bios of its own, around the disk's page
 * cache, without claiming it. (With luf, a write bio that is not the disk's own
 * writeback makes the disk defer nothing and flushes what it owes first: as
 * with the passthru writer, a window the first round opens the write closes.)
 *
 * The export writer is the target writer reversed: its reader maps the
 * namespace the host side sees, and its new version is a pwrite() and
 * fdatasync() to the target's disk, past the target writer's pages. (With
 * luf, a namespace behind a fabric defers nothing: the export writer opens
 * no window.)
 *
 * The shared writer's page is on a disk image QEMU attaches twice
 * (--shared-dev /dev/vde and --shared-alias /dev/vdf, image locking off): two
 * disks to this kernel, one to the host, as a LUN two hosts share or an
 * image two VMs attach. Its reader maps the first; its new version is a
 * pwrite() and fdatasync() to the second, around the first's page cache,
 * which this kernel cannot see (set-up checks that a page written through
 * the second with O_DIRECT is read through the first). Set-up writes 0 to
 * the first disk's
 * /sys/block/<disk>/queue/luf_defer (where the file exists), as the
 * administrator of such a disk must, then prints what the file reads and
 * the errno of writing 1 (shared_luf_defer, shared_unmark_errno). (With luf, a disk so marked defers
 * nothing: the shared writer opens no window.)
 *
 * The part writer comes last: partition 1 of the disk (/dev/vda1, from
 * 1 MiB to the end, added with BLKPG) has a page cache of its own. Each
 * round writes version 2 through it *before* step 3 (pwrite(), fsync()),
 * leaving the whole disk's cached copy of P at version 1, clean; step 3
 * then reclaims that copy, and the witness reads P through the whole disk
 * from the disk: version 2. A kernel that deferred that flush leaves the
 * reader on the old frame. (With luf, a disk that has partitions defers
 * nothing: the part writer opens no window.)
 *
 * The punch and truncate writers write a file (--dev on a file system,
 * e.g. /mnt/data of an ext4 mount): punch makes P a hole
 * (fallocate(FALLOC_FL_PUNCH_HOLE)), whose version 2 reads as zeros;
 * truncate cuts the file in the middle of P and extends it back to its
 * size (ftruncate() twice), so that P's second half reads as zeros:
 * its reader and witness look at P's last word (version 2: zero), and
 * the witness counts a read past the end in between as no version. The
 * kernel zeroes that half in place, in the frame the reader maps, with
 * stores that may be narrower than a word (seen under TCG, on every kernel):
 * a read in between finds the old word with its low bytes zeroed, a *torn
 * read*, counted as the old version (_torn_reads), not as a wrong read, if
 * the write was in progress during the read. (For every writer whose
 * version 2 is zeros, a zero word before its write began is wrong: a frame
 * reused and cleared under a stale translation reads so.) The
 * pwrite, map and dio writers work on a file too; the others need disks.
 *
 * The hole writer's page is a hole of a file (made again each round with
 * fallocate(FALLOC_FL_PUNCH_HOLE); version 1 reads as zeros): the reader's
 * read fault fills it, and on a tmpfs that folio stays clean, so step 3
 * frees it at once. Its new version comes from the second process, whose
 * thread A reads P through its writable MAP_SHARED mapping before writing
 * it: the read fault puts a new frame there. A kernel that maps a page of a
 * tmpfs writable on a read fault (shmem needs no write notification) lets
 * the stores that follow go without the write fault that settles the file,
 * and leaves the reader on the old frame.
 *
 * The anon writer's page is private anonymous memory of this process (the
 * guest swaps on a disk): written (version 1) and paged out once, then read
 * back by the reader's fault, read-only and clean from the swap cache; step
 * 3 frees it at once (clean in the swap cache), and the new version is a
 * write fault of this thread, which reads the page from swap into a new
 * frame and writes version 2 there; the witness reads it through the same
 * mapping. A kernel that deferred the flush and let the write fault make
 * the PTE writable without settling this mm leaves the reader on the old
 * frame. (Not among the default writers: it needs swap.)
 *
 * The second process is forked before any window opens: a fork() in the
 * process that holds the stale translation flushes its mm (dup_mmap()) and
 * would close the window. Keep other tasks off the reader's CPU
 * (isolcpus=N): a kernel thread there ends the window too.
 *
 * Usage: coherence [--dev /dev/vda] [--rounds N]
 *                  [--writers pwrite,map,dio,mount,release,flight,aio,zeroes,passthru,
 *                  mpath,loop,dm,target,export,shared,part,punch,truncate,hole,anon]
 *                  [--span PAGES]
 *                  [--fs-dev /dev/vdb]
 *                  [--flight-dev /dev/vdc] [--nvme-dev DEV] [--mpath-dev DEV]
 *                  [--zeroes-dev DEV] [--loop-dev /dev/loop0] [--target-dev /dev/vdd]
 *                  [--shared-dev /dev/vde] [--shared-alias /dev/vdf]
 * Prints key=value lines per writer (<writer>_rounds, _windows, _stale_reads,
 * _wrong_reads, _reads, _witness_reads, _new_seen: the rounds whose witness
 * read the new version, or for a writer around the page cache, whose disk
 * has it (read with O_DIRECT), which must be all of them; flight and aio also
 * _tested, truncate _torn_reads; after a wrong read, _first_wrong: its word
 * and the version the witness had seen by then) and
 * totals (rounds, windows, stale_reads, wrong_reads). Exit: 0 no stale or
 * wrong read, 1 some, 2 set-up failure (also: no writer asked for).
 */
#include "common.h"

#include <ctype.h>
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <linux/aio_abi.h>
#include <linux/dm-ioctl.h>
#include <linux/fiemap.h>
#include <linux/blkpg.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <linux/nvme_ioctl.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

enum writer {
	W_PWRITE,
	W_MAP,
	W_DIO,
	W_MOUNT,
	W_RELEASE,
	W_FLIGHT,
	W_AIO,
	W_ZEROES,
	W_PASSTHRU,
	W_MPATH,
	W_LOOP,
	W_DM,
	W_TARGET,
	W_EXPORT,
	W_SHARED,
	W_PART,
	W_PUNCH,
	W_TRUNCATE,
	W_HOLE,
	W_ANON,
	W_NR
};
static const char *const writer_name[W_NR] = {"pwrite", "map",	 "dio",	     "mount",	 "release",
					      "flight", "aio",	 "zeroes",   "passthru", "mpath",
					      "loop",	"dm",	 "target",   "export",	 "shared",
					      "part",	"punch", "truncate", "hole",	 "anon"};

/* Writers that write around the page cache before the witness starts. */
static int around(int k)
{
	return k >= W_ZEROES && k <= W_SHARED;
}

/* Writers of --dev's pages: pwrite, map, dio, part, punch, truncate, hole. */
static int on_dev(int k)
{
	return k <= W_DIO || (k >= W_PART && k <= W_HOLE);
}

/* The slot of --dev a writer's pages lie in: pwrite, map, dio, then the others. */
static int vda_slot(int k)
{
	return k >= W_PART ? W_DIO + 1 + k - W_PART : k;
}

/* Writers whose version 2 is a page of zeros (the truncate writer: its tail). */
static int zeroes_writer(int k)
{
	return k == W_ZEROES || k == W_PUNCH || k == W_TRUNCATE;
}

/*
 * The word of P the reader and the witness look at: the truncate writer
 * zeroes the second half of P only, so its last word.
 */
static unsigned int watched_word(int k)
{
	return k == W_TRUNCATE ? WORDS_PER_PAGE - 1 : 0;
}

/* Writers whose new version is on the disk before step 3 (the reclaim). */
static int before_reclaim(int k)
{
	return k == W_RELEASE || k == W_PART;
}

/* The ext2 superblock at byte 1024: its mount count and magic (little-endian). */
#define SB_MNT_COUNT (1024 + 52)
#define SB_MAGIC (1024 + 56)
#define EXT2_MAGIC 0xEF53
#define FS_DIR "/mnt"
/* Partition 1 (the part writer): from 1 MiB (sector 2048) to the end. */
#define PART_START (1UL << 20)
/* The flight writer's O_DIRECT writes: the 384 KiB before P, then P. */
#define FLIGHT_FILL 96UL

static const char *dev = "/dev/vda", *fs_dev = "/dev/vdb", *flight_dev = "/dev/vdc",
		  *loop_dev = "/dev/loop0", *target_dev = "/dev/vdd", *shared_dev = "/dev/vde",
		  *shared_alias = "/dev/vdf";
/* The shared writer: the disk its reader maps, and the same image again. */
static int shared_fd = -1, shared_alias_fd = -1;
static int fd = -1, dio_fd = -1, fs_fd = -1, part_fd = -1, flight_fd = -1, flight_dio_fd = -1;
/*
 * An NVMe namespace's block device, found by the end of its subsystem's NQN
 * unless given: the passthru and dm writers', the zeroes writer's, the mpath
 * writer's (a multipath head) and the target writer's host side.
 */
struct nvme_disk {
	const char *nqn, *path;
	char found[300];
	int fd;
	unsigned int nsid, lba_shift;
};
static struct nvme_disk nvme_plain = {.nqn = ":luf", .fd = -1},
			nvme_zeroes = {.nqn = ":luf-zeroes", .fd = -1},
			nvme_mpath = {.nqn = ":luf-mpath", .fd = -1},
			nvme_target = {.nqn = "luf-target", .fd = -1};
static int target_fd = -1; /* the target and export writers' disk (the backend) */
/* The release writer: --fs-dev, its file's pages there (FIEMAP), by round. */
#define REL_FILE FS_DIR "/release"
static int rel_fd = -1;
static uint64_t *rel_page;
static long rel_round; /* the round: the file's page */
/* The loop writer: the loop device and its backing file. */
#define LOOP_FILE "/coherence-loop.img"
static int loop_fd = -1, loop_file_fd = -1;
/* The dm writer: the device, from DM_START of the NVMe disk to its end. */
#define DM_START (8UL << 20)
#define DM_NAME "coherence"
static int dm_fd = -1;
static long rounds = 3, span = 4096;
static uint64_t file_size; /* --dev's size (the truncate writer extends it back) */
static int reader_cpu, witness_cpu;

/* The anon writer's page: private anonymous memory of this process. */
static uint64_t *anon_page;
static _Atomic unsigned int seen; /* newest version the witness has read */
/* Odd while do_write() writes version 2; 2 more after each write (0 at a round's start). */
static _Atomic unsigned int writing;
static atomic_int stop_reader, stop_witness, reader_ready, witness_go, reader_paused;

struct reader {
	const volatile uint64_t *page;
	int sb;		   /* the page is a superblock's (the mount writer) */
	int zeroes;	   /* zeros are version 2 (zeroes_writer()) */
	int hole;	   /* zeros are version 1 (the hole writer) */
	unsigned int word; /* the word of P looked at (watched_word()) */
	int zeroing;	   /* P zeroed in place (the truncate writer): torn reads */
	uint64_t pgidx;
	pid_t tid;
	unsigned long stale, wrong, torn;
	uint64_t prev;		 /* the last read that was P's signature */
	uint64_t first_wrong;	 /* the first wrong read's word (mount writer: 0) */
	unsigned int wrong_seen; /* the version the witness had seen then */
	atomic_ulong reads;
	atomic_uint last; /* the version of the newest read */
};

/*
 * Whether @w is @prev, a signature, with its 1 to 7 low bytes zeroed: a read
 * of the word while the kernel zeroed it in place from its low end.
 */
static int torn_zeroing(uint64_t w, uint64_t prev)
{
	int k;

	for (k = 1; prev && k < 8; k++)
		if (w == (prev & ~0ULL << (8 * k)))
			return 1;
	return 0;
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;

	if (pin_to_cpu(reader_cpu))
		die("pin reader");
	r->tid = gettid();
	while (!atomic_load_explicit(&stop_reader, memory_order_relaxed)) {
		/* The version already seen, before the read that must not be older. */
		unsigned int s = atomic_load_explicit(&seen, memory_order_acquire);
		uint64_t w = 0;
		unsigned int v;
		int ok;

		if (atomic_load_explicit(&reader_paused, memory_order_relaxed))
			continue;
		if (r->sb) {
			const volatile unsigned char *b = (const volatile unsigned char *)r->page;

			ok = (b[SB_MAGIC] | b[SB_MAGIC + 1] << 8) == EXT2_MAGIC;
			v = b[SB_MNT_COUNT] | b[SB_MNT_COUNT + 1] << 8;
		} else {
			/*
			 * The write's count around the read (x86 keeps stores in
			 * order: a store of the write that the read sees comes
			 * after the count the write made odd).
			 */
			unsigned int z1 = atomic_load(&writing), z2;

			w = r->page[r->word];
			z2 = atomic_load(&writing);
			ok = SIG_MAGIC_OF(w) == SIG_MAGIC && SIG_PAGE_OF(w) == r->pgidx &&
			     SIG_WORD_OF(w) == r->word;
			v = SIG_VERSION_OF(w);
			if (ok) {
				r->prev = w;
			} else if ((r->hole || (r->zeroes && z2)) && !w) {
				/* Zeros: the hole's version 1, or version 2 once written. */
				ok = 1;
				v = r->hole ? 1 : 2;
			} else if (r->zeroing && (z1 != z2 || z1 % 2) && torn_zeroing(w, r->prev)) {
				/* Read while the write zeroed the word in place. */
				ok = 1;
				v = SIG_VERSION_OF(r->prev);
				r->torn++;
			}
		}
		if (!ok) {
			if (!r->wrong++) {
				r->first_wrong = w;
				r->wrong_seen = s;
			}
		} else if (v < s) {
			r->stale++;
		}
		atomic_store_explicit(&r->last, v, memory_order_relaxed);
		if (atomic_fetch_add_explicit(&r->reads, 1, memory_order_relaxed) == 1000)
			atomic_store(&reader_ready, 1);
	}
	return NULL;
}

struct witness {
	uint64_t pgidx;
	int sb, zeroes, hole;
	unsigned int word;
	int fd;			       /* the disk's page cache (not the mount writer's) */
	const volatile uint64_t *page; /* else this page, read through its mapping (anon) */
	unsigned long reads;
};

/* The superblock's mount count read through the page cache, or -1 if no ext2 magic. */
static long sb_mnt_count(void)
{
	unsigned char b[8];

	if (pread(fs_fd, b, sizeof(b), SB_MNT_COUNT) != (ssize_t)sizeof(b))
		die("pread superblock");
	if ((b[SB_MAGIC - SB_MNT_COUNT] | b[SB_MAGIC - SB_MNT_COUNT + 1] << 8) != EXT2_MAGIC)
		return -1;
	return b[0] | b[1] << 8;
}

static void *witness_main(void *arg)
{
	struct witness *wt = arg;
	uint64_t w;

	if (pin_to_cpu(witness_cpu))
		die("pin witness");
	while (!atomic_load(&witness_go) && !atomic_load(&stop_witness))
		sched_yield();
	while (!atomic_load_explicit(&stop_witness, memory_order_relaxed)) {
		long v;

		if (wt->sb) {
			v = sb_mnt_count();
		} else {
			ssize_t n = sizeof(w);

			if (wt->page)
				w = wt->page[wt->word];
			else
				n = pread(wt->fd, &w, sizeof(w),
					  (off_t)(wt->pgidx * PAGE_SIZE + wt->word * sizeof(w)));

			/* The truncate writer's word is past the end for a moment. */
			if (n == 0 && wt->word)
				v = -1;
			else if (n != sizeof(w))
				die("witness pread");
			else
				v = SIG_MAGIC_OF(w) == SIG_MAGIC && SIG_PAGE_OF(w) == wt->pgidx &&
					    SIG_WORD_OF(w) == wt->word
					? (long)SIG_VERSION_OF(w)
				    : wt->zeroes && !w ? 2
				    : wt->hole && !w   ? 1
						       : -1;
		}
		wt->reads++;
		if (v > (long)atomic_load(&seen))
			atomic_store_explicit(&seen, (unsigned int)v, memory_order_release);
	}
	return NULL;
}

/*
 * Page faults of one thread of this process, minor and major (a refault that
 * reads the disk): /proc/self/task/TID/stat, fields 10 and 12.
 */
static unsigned long thread_faults(pid_t tid)
{
	char path[64], buf[1024], *p;
	unsigned long v = 0, cmin, maj;
	ssize_t n;
	int f, i;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = open(path, O_RDONLY);
	if (f < 0)
		die(path);
	n = read(f, buf, sizeof(buf) - 1);
	close(f);
	if (n <= 0)
		die(path);
	buf[n] = 0;
	p = strrchr(buf, ')');
	for (i = 0; p && i < 8; i++) /* state is field 3; minflt is field 10 */
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p + 1, "%lu %lu %lu", &v, &cmin, &maj) != 3)
		die("parse task stat");
	return v + maj;
}

static void write_file(const char *path, const char *s)
{
	int f = open(path, O_WRONLY);

	if (f < 0 || write(f, s, strlen(s)) != (ssize_t)strlen(s))
		die(path);
	close(f);
}

/*
 * The second process: when told, maps page P writable and writes the new
 * version with two threads. Thread A (CPU 0) takes the write fault. Thread B
 * (the CPU before the reader's) watches P's PTE in /proc/self/pagemap and
 * writes P as soon as it is present, with no fault of its own: on a kernel
 * that settled only after the fault returned, B's store could be seen before
 * the settle (a narrow window: the runs in tests/kernel/README.md say how
 * often it was hit).
 */

struct child_req {
	uint64_t pgidx;
	unsigned int version;
	int read_first; /* thread A reads P before it writes (the hole writer) */
};

struct racer {
	uint64_t *p;
	uint64_t pgidx;
	unsigned int version;
	int pagemap;
	atomic_int done;
};

static void *racer_main(void *arg)
{
	struct racer *b = arg;
	off_t off = (off_t)((uintptr_t)b->p / PAGE_SIZE * sizeof(uint64_t));
	unsigned int w;
	uint64_t e = 0;

	if (pin_to_cpu(reader_cpu - 1))
		die("pin racer");
	while (!atomic_load(&b->done)) {
		if (pread(b->pagemap, &e, sizeof(e), off) != sizeof(e))
			die("pagemap");
		if (e >> 63)
			break;
	}
	for (w = 0; w < WORDS_PER_PAGE; w++)
		b->p[w] = sig_word(b->pgidx, b->version, w);
	return NULL;
}

static int to_child[2], from_child[2];

static void child_main(void)
{
	struct child_req req;
	char ok = 1;

	close(to_child[1]);
	close(from_child[0]);
	while (read(to_child[0], &req, sizeof(req)) == sizeof(req)) {
		size_t len = PAGE_SIZE;
		uint64_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
				   (off_t)(req.pgidx * PAGE_SIZE));
		struct racer b = {.p = p, .pgidx = req.pgidx, .version = req.version};
		pthread_t bt;
		unsigned int w;

		if (p == MAP_FAILED)
			die("child mmap");
		b.pagemap = open("/proc/self/pagemap", O_RDONLY);
		if (b.pagemap < 0 || pthread_create(&bt, NULL, racer_main, &b))
			die("racer");
		/*
		 * The hole writer: a read fault maps P first; a kernel that maps it
		 * writable then takes no write fault, which is where it settles.
		 */
		if (req.read_first) {
			/* Zeros, or the racer's store already (no fault stops it). */
			uint64_t w0 = *(volatile uint64_t *)p;

			if (w0 && w0 != sig_word(req.pgidx, req.version, 0))
				die("the hole writer's page is not a hole");
		}
		for (w = 0; w < WORDS_PER_PAGE; w++)
			p[w] = sig_word(req.pgidx, req.version, w);
		atomic_store(&b.done, 1);
		pthread_join(bt, NULL);
		close(b.pagemap);
		munmap(p, len);
		if (write(from_child[1], &ok, 1) != 1)
			die("child reply");
	}
	_exit(0);
}

static void pwrite_all(int f, const void *buf, size_t len, off_t off)
{
	if (pwrite(f, buf, len, off) != (ssize_t)len)
		die("pwrite");
}

/* Version @v of page @pgidx written at @off of @f and made durable (fdatasync). */
static void write_page_sync(int f, uint64_t *buf, uint64_t pgidx, unsigned int v, off_t off,
			    const char *what)
{
	sig_fill(buf, pgidx, v);
	pwrite_all(f, buf, PAGE_SIZE, off);
	if (fdatasync(f))
		die(what);
}

/* Make version @v of page @pgidx with writer @k. */
static void do_write(enum writer k, uint64_t pgidx, unsigned int v, uint64_t *buf)
{
	struct child_req req = {pgidx, v, k == W_HOLE};
	char ok;
	long i;

	atomic_fetch_add(&writing, 1);
	switch (k) {
	case W_PWRITE:
		for (i = 0; i < span; i++)
			sig_fill(buf + i * WORDS_PER_PAGE, pgidx + i, v);
		pwrite_all(fd, buf, span * PAGE_SIZE, (off_t)(pgidx * PAGE_SIZE));
		break;
	case W_MAP:
	case W_HOLE:
		if (write(to_child[1], &req, sizeof(req)) != sizeof(req) ||
		    read(from_child[0], &ok, 1) != 1)
			die("second process");
		break;
	case W_MOUNT:
		/* The holder's claim, then the mount count raised in its buffer head. */
		if (mount(fs_dev, FS_DIR, "ext2", 0, NULL))
			die("mount");
		break;
	case W_RELEASE: {
		/* The file's page through the file system, which is then released. */
		int f;

		if (mount(fs_dev, FS_DIR, "ext2", 0, NULL))
			die("mount (release)");
		f = open(REL_FILE, O_RDWR);
		if (f < 0)
			die(REL_FILE);
		sig_fill(buf, pgidx, v);
		pwrite_all(f, buf, PAGE_SIZE, (off_t)(rel_round * PAGE_SIZE));
		if (fsync(f) || close(f) || umount(FS_DIR))
			die("fsync or umount (release)");
		break;
	}
	case W_ZEROES: {
		/* An NVMe Write Zeroes of P passed through: no data, no page cache. */
		struct nvme_passthru_cmd cmd = {.opcode = 0x08, .nsid = nvme_zeroes.nsid};
		uint64_t slba = pgidx * PAGE_SIZE >> nvme_zeroes.lba_shift;

		cmd.cdw10 = (uint32_t)slba;
		cmd.cdw11 = (uint32_t)(slba >> 32);
		cmd.cdw12 = (PAGE_SIZE >> nvme_zeroes.lba_shift) - 1; /* blocks, 0-based */
		if (ioctl(nvme_zeroes.fd, NVME_IOCTL_IO_CMD, &cmd))
			die("NVMe Write Zeroes (NVME_IOCTL_IO_CMD)");
		break;
	}
	case W_PASSTHRU:
	case W_MPATH: {
		/* An NVMe Write of P passed through: no page cache. */
		struct nvme_disk *d = k == W_MPATH ? &nvme_mpath : &nvme_plain;
		struct nvme_passthru_cmd cmd = {
		    .opcode = 0x01,
		    .nsid = d->nsid,
		    .addr = (uint64_t)(uintptr_t)buf,
		    .data_len = PAGE_SIZE,
		};
		uint64_t slba = pgidx * PAGE_SIZE >> d->lba_shift;

		cmd.cdw10 = (uint32_t)slba;
		cmd.cdw11 = (uint32_t)(slba >> 32);
		cmd.cdw12 = (PAGE_SIZE >> d->lba_shift) - 1; /* blocks, 0-based */
		sig_fill(buf, pgidx, v);
		if (ioctl(d->fd, NVME_IOCTL_IO_CMD, &cmd))
			die("NVMe Write (NVME_IOCTL_IO_CMD)");
		break;
	}
	case W_LOOP: /* around the loop device: its backing file */
		sig_fill(buf, pgidx, v);
		pwrite_all(loop_file_fd, buf, PAGE_SIZE, (off_t)(pgidx * PAGE_SIZE));
		break;
	case W_DM: /* around the dm device: its member */
		write_page_sync(nvme_plain.fd, buf, pgidx, v, (off_t)(DM_START + pgidx * PAGE_SIZE),
				"fdatasync member");
		break;
	case W_TARGET: /* through the NVMe target, around the disk's page cache */
		write_page_sync(nvme_target.fd, buf, pgidx, v, (off_t)(pgidx * PAGE_SIZE),
				"fdatasync target namespace");
		break;
	case W_EXPORT: /* the target's disk, around the exported namespace's page cache */
		write_page_sync(target_fd, buf, pgidx, v, (off_t)(pgidx * PAGE_SIZE),
				"fdatasync target disk");
		break;
	case W_SHARED: /* the image's other disk, around this one's page cache */
		write_page_sync(shared_alias_fd, buf, pgidx, v, (off_t)(pgidx * PAGE_SIZE),
				"fdatasync shared alias");
		break;
	case W_PUNCH: /* a hole: P reads zeros */
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)(pgidx * PAGE_SIZE), PAGE_SIZE))
			die("fallocate(FALLOC_FL_PUNCH_HOLE)");
		break;
	case W_TRUNCATE: /* the file cut in the middle of P, then extended again */
		if (ftruncate(fd, (off_t)(pgidx * PAGE_SIZE + PAGE_SIZE / 2)) ||
		    ftruncate(fd, (off_t)file_size))
			die("ftruncate");
		break;
	case W_ANON: /* a write fault on the page, back from swap into a new frame */
		sig_fill(buf, pgidx, v);
		memcpy(anon_page, buf, PAGE_SIZE);
		break;
	case W_PART: /* before step 3 */
		sig_fill(buf, pgidx, v);
		pwrite_all(part_fd, buf, PAGE_SIZE, (off_t)(pgidx * PAGE_SIZE - PART_START));
		if (fsync(part_fd))
			die("fsync partition");
		break;
	default:
		sig_fill(buf, pgidx, v);
		pwrite_all(dio_fd, buf, PAGE_SIZE, (off_t)(pgidx * PAGE_SIZE));
		break;
	}
	atomic_fetch_add(&writing, 1);
}

/*
 * The flight and aio writers' thread, one for the whole run (a thread's exit
 * unmaps its stack, which flushes this mm's TLB and would close a window):
 * for each request read from flight_req, the O_DIRECT writes of version 2 of
 * the 384 KiB before P, then of P (with io_submit() for the aio writer, waiting
 * for its completion); then one byte to flight_done.
 */
struct flight_req {
	uint64_t pgidx;
	int aio;
};

static int flight_req[2], flight_done[2];
static uint64_t *flight_buf;

/* An asynchronous O_DIRECT write of P, and its completion (raw syscalls: no libaio). */
static void aio_write_page(uint64_t pgidx, const void *page)
{
	static aio_context_t ctx;
	struct iocb cb = {0}, *cbs[1] = {&cb};
	struct io_event ev;

	if (!ctx && syscall(SYS_io_setup, 1, &ctx))
		die("io_setup");
	cb.aio_lio_opcode = IOCB_CMD_PWRITE;
	cb.aio_fildes = (uint32_t)flight_dio_fd;
	cb.aio_buf = (uint64_t)(uintptr_t)page;
	cb.aio_nbytes = PAGE_SIZE;
	cb.aio_offset = (int64_t)(pgidx * PAGE_SIZE);
	if (syscall(SYS_io_submit, ctx, 1, cbs) != 1)
		die("io_submit");
	if (syscall(SYS_io_getevents, ctx, 1, 1, &ev, NULL) != 1 || ev.res != (int64_t)PAGE_SIZE)
		die("io_getevents");
}

static void *flight_main(void *arg)
{
	struct flight_req req;
	uint64_t i;
	char ok = 1;

	(void)arg;
	while (read(flight_req[0], &req, sizeof(req)) == sizeof(req)) {
		uint64_t *page = flight_buf + FLIGHT_FILL * WORDS_PER_PAGE;
		uint64_t first = req.pgidx - FLIGHT_FILL;

		for (i = 0; i <= FLIGHT_FILL; i++)
			sig_fill(flight_buf + i * WORDS_PER_PAGE, first + i, 2);
		pwrite_all(flight_dio_fd, flight_buf, FLIGHT_FILL * PAGE_SIZE,
			   (off_t)(first * PAGE_SIZE));
		if (req.aio)
			aio_write_page(req.pgidx, page);
		else
			pwrite_all(flight_dio_fd, page, PAGE_SIZE, (off_t)(req.pgidx * PAGE_SIZE));
		if (write(flight_done[1], &ok, 1) != 1)
			die("flight done");
	}
	return NULL;
}

/* Whether P on @dfd's disk, read with O_DIRECT, is version 2 (zeros for @zeroes). */
static int disk_has_new(int dfd, uint64_t pgidx, int zeroes)
{
	static uint64_t page[WORDS_PER_PAGE] __attribute__((aligned(4096)));
	char path[64];
	int f, ok;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", dfd);
	f = open(path, O_RDONLY | O_DIRECT);
	if (f < 0 || pread(f, page, PAGE_SIZE, (off_t)(pgidx * PAGE_SIZE)) != (ssize_t)PAGE_SIZE)
		die("O_DIRECT read of P");
	close(f);
	ok = zeroes ? !page[0]
		    : SIG_MAGIC_OF(page[0]) == SIG_MAGIC && SIG_PAGE_OF(page[0]) == pgidx &&
			  SIG_VERSION_OF(page[0]) == 2;
	return ok;
}

struct tally {
	long rounds, windows, tested, new_seen;
	unsigned long stale, wrong, torn, reads, witness_reads;
	uint64_t first_wrong;
	unsigned int wrong_seen;
};

static void one_round(enum writer k, uint64_t pgidx, uint64_t *buf, struct tally *t)
{
	int sb = k == W_MOUNT, ai = k == W_AIO, fl = k == W_FLIGHT || ai;
	int dfd = fl		    ? flight_fd
		  : k == W_PASSTHRU ? nvme_plain.fd
		  : k == W_ZEROES   ? nvme_zeroes.fd
		  : k == W_MPATH    ? nvme_mpath.fd
		  : k == W_LOOP	    ? loop_fd
		  : k == W_DM	    ? dm_fd
		  : k == W_TARGET   ? target_fd
		  : k == W_EXPORT   ? nvme_target.fd
		  : k == W_SHARED   ? shared_fd
		  : k == W_RELEASE  ? rel_fd
				    : fd;
	int invalidated = 0, read_old = 0, zeroes = zeroes_writer(k);
	int hole = k == W_HOLE;
	struct reader r = {.pgidx = pgidx,
			   .sb = sb,
			   .zeroes = zeroes,
			   .hole = hole,
			   .word = watched_word(k),
			   .zeroing = k == W_TRUNCATE};
	struct witness wt = {.pgidx = pgidx,
			     .sb = sb,
			     .zeroes = zeroes,
			     .hole = hole,
			     .word = watched_word(k),
			     .fd = dfd};
	pthread_t rt, wtt;
	unsigned char vec = 1;
	int i;
	unsigned long flt0;
	long v0 = 1;
	void *map = NULL;

	/*
	 * 1. Version 1 (the mount writer: the superblock's count), clean. The
	 * anon writer's page is written, then paged out once (its PTE was
	 * dirty: flushed), so that the reader's fault maps it back read-only
	 * and clean from the swap cache, and the reclaim of step 3 finds it
	 * clean there: freed at once, not kept for writeback.
	 */
	if (k == W_ANON) {
		map = mmap(NULL, PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1,
			   0);
		if (map == MAP_FAILED)
			die("mmap anonymous");
		anon_page = map;
		sig_fill(anon_page, pgidx, 1);
		if (madvise(map, PAGE_SIZE, MADV_PAGEOUT))
			die("madvise(MADV_PAGEOUT) anonymous");
		usleep(100000);
	} else if (hole) {
		/* Version 1 is a hole: the reader's read fault fills it, clean. */
		if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)(pgidx * PAGE_SIZE), PAGE_SIZE))
			die("fallocate(FALLOC_FL_PUNCH_HOLE) (hole)");
	} else if (sb) {
		v0 = sb_mnt_count();
		if (v0 < 0) {
			fprintf(stderr, "%s: no ext2 superblock on %s\n", prog, fs_dev);
			exit(2);
		}
	} else {
		sig_fill(buf, pgidx, 1);
		pwrite_all(dfd, buf, PAGE_SIZE, (off_t)(pgidx * PAGE_SIZE));
	}
	if (k != W_ANON && fdatasync(sb ? fs_fd : dfd))
		die("fdatasync");
	/* The flight writer's disk: nothing in its page cache but what the reader maps. */
	if (fl && posix_fadvise(dfd, 0, 0, POSIX_FADV_DONTNEED))
		die("posix_fadvise");
	atomic_store(&seen, 0);
	atomic_store(&writing, 0);
	atomic_store(&stop_reader, 0);
	atomic_store(&stop_witness, 0);
	atomic_store(&reader_ready, 0);

	/*
	 * 2. The reader keeps the translation hot; the witness is started now,
	 * and waits: creating a thread later (its stack's mmap and mprotect)
	 * could settle this mm and close the window before the write.
	 */
	if (k != W_ANON)
		map = mmap(NULL, PAGE_SIZE, PROT_READ, MAP_SHARED, sb ? fs_fd : dfd,
			   (off_t)(pgidx * PAGE_SIZE));
	if (map == MAP_FAILED || (fl && madvise(map, PAGE_SIZE, MADV_RANDOM)))
		die("mmap");
	/*
	 * The hole writer: this thread's read fault fills the hole, so that the
	 * new folio waits in this CPU's LRU batch, which MADV_PAGEOUT drains
	 * (the reader's fault would leave it in the reader CPU's batch).
	 */
	if (hole && *(volatile uint64_t *)map)
		die("the hole writer's page is not a hole");
	r.page = map;
	if (k == W_ANON)
		wt.page = map;
	atomic_store(&witness_go, 0);
	if (pthread_create(&rt, NULL, reader_main, &r) ||
	    pthread_create(&wtt, NULL, witness_main, &wt))
		die("reader or witness");
	while (!atomic_load(&reader_ready))
		sched_yield();

	if (fl) {
		/*
		 * The write in flight: its invalidation of P unmaps it while the
		 * reader is paused; P is read again here (version 1, from the disk:
		 * the write waits in QEMU) so that the folio goes to this CPU's LRU
		 * batch, which MADV_PAGEOUT drains (a fault on the reader's CPU would
		 * leave it in that CPU's batch, out of reclaim's reach). Then the
		 * reader maps it again.
		 */
		struct flight_req req = {.pgidx = pgidx, .aio = ai};
		double until = now_s() + 2;
		uint64_t w;

		atomic_store(&reader_paused, 1);
		if (write(flight_req[1], &req, sizeof(req)) != sizeof(req))
			die("flight request");
		do {
			usleep(1000);
			if (mincore(map, PAGE_SIZE, &vec))
				die("mincore");
		} while ((vec & 1) && now_s() < until);
		invalidated = !(vec & 1);
		if (pread(dfd, &w, sizeof(w), (off_t)(pgidx * PAGE_SIZE)) != sizeof(w))
			die("pread");
		read_old = SIG_MAGIC_OF(w) == SIG_MAGIC && SIG_VERSION_OF(w) == 1;
		flt0 = thread_faults(r.tid);
		atomic_store(&reader_paused, 0);
		while (thread_faults(r.tid) == flt0 && now_s() < until)
			usleep(1000);
	}
	/* The aio writer's write completes before the reclaim. */
	if (ai) {
		char ok;

		if (read(flight_done[0], &ok, 1) != 1)
			die("flight done");
	}

	if (before_reclaim(k))
		do_write(k, pgidx, 2, buf);

	/*
	 * 3. A stale translation: accessed bit cleared unflushed, then reclaim.
	 * The anon writer tries up to 5 times: a reader's refault between the
	 * two (the accessed bit set again) makes MADV_PAGEOUT flush the page's
	 * translation as it ages it, and the reader maps the page again.
	 */
	for (i = 0; i < (k == W_ANON ? 5 : 1); i++) {
		flt0 = thread_faults(r.tid);
		write_file("/proc/self/clear_refs", "1");
		if (madvise(map, PAGE_SIZE, MADV_PAGEOUT))
			die("madvise(MADV_PAGEOUT)");
		usleep(20000);
		/* Open right before the write: not resident, the reader never refaulted. */
		if (mincore(map, PAGE_SIZE, &vec))
			die("mincore");
		if (!(vec & 1) && thread_faults(r.tid) == flt0)
			break;
	}
	t->rounds++;
	if (!(vec & 1) && thread_faults(r.tid) == flt0 && atomic_load(&r.last) == v0)
		t->windows++;
	/*
	 * The flight and aio writers' rounds that test their rule: the write
	 * invalidated P, P was read back with version 1, and reclaim took the
	 * folio (a window, or the reader refaulted), with the flight writer's
	 * write still in flight then (no reply yet).
	 */
	if (fl && invalidated && read_old && (!(vec & 1) || thread_faults(r.tid) != flt0)) {
		struct pollfd pfd = {.fd = flight_done[0], .events = POLLIN};

		if (ai || poll(&pfd, 1, 0) == 0)
			t->tested++;
	}

	/*
	 * 4. The new version (the part writer's is on the disk; the flight
	 * writer's once its write returns), watched by the witness.
	 */
	if (fl && !ai) {
		char ok;

		if (read(flight_done[0], &ok, 1) != 1)
			die("flight done");
	}
	/*
	 * A write around the page cache (zeroes, passthru, mpath, loop, dm,
	 * target, export) goes first: a read of P before it lands would fill
	 * the page cache with version 1 again, for good (so does the pristine
	 * kernel), and the witness would never see version 2.
	 */
	if (around(k))
		do_write(k, pgidx, 2, buf);
	atomic_store(&witness_go, 1);
	if (!around(k) && !before_reclaim(k) && !fl)
		do_write(k, pgidx, 2, buf);
	usleep(50000);
	atomic_store(&stop_witness, 1);
	pthread_join(wtt, NULL);
	/*
	 * The new version reached P (else the round proved nothing): the
	 * witness read it, or, for a write around the page cache (whose stale
	 * copy a refault on a kernel that flushed brings back for good), a
	 * read of the disk that bypasses the page cache finds it.
	 */
	if (around(k) ? disk_has_new(dfd, pgidx, zeroes) : atomic_load(&seen) > (unsigned int)v0)
		t->new_seen++;
	atomic_store(&stop_reader, 1);
	pthread_join(rt, NULL);
	munmap(map, PAGE_SIZE);
	if (sb && umount(FS_DIR))
		die("umount");
	t->stale += r.stale;
	if (r.wrong && !t->wrong) {
		t->first_wrong = r.first_wrong;
		t->wrong_seen = r.wrong_seen;
	}
	t->wrong += r.wrong;
	t->torn += r.torn;
	t->reads += atomic_load(&r.reads);
	t->witness_reads += wt.reads;
}

/* Partition 1 of the disk, from PART_START to the end (BLKPG); its fd. */
static int make_partition(unsigned long npages)
{
	struct blkpg_partition part = {
	    .start = PART_START,
	    .length = (long long)(npages * PAGE_SIZE - PART_START),
	    .pno = 1,
	};
	struct blkpg_ioctl_arg arg = {
	    .op = BLKPG_ADD_PARTITION,
	    .datalen = sizeof(part),
	    .data = &part,
	};
	const char *name = strrchr(dev, '/') ? strrchr(dev, '/') + 1 : dev;
	/* vda1, but nvme0n1p1 and loop0p1: a name ending in a digit gets a 'p'. */
	const char *sep = *name && isdigit((unsigned char)name[strlen(name) - 1]) ? "p" : "";
	char path[64];
	unsigned int maj, min;
	int i, f;

	if (ioctl(fd, BLKPG, &arg))
		die("partition 1 (BLKPG_ADD_PARTITION)");
	/* devtmpfs makes the node; if not, make it from sysfs. */
	snprintf(path, sizeof(path), "/dev/%s%s1", name, sep);
	for (i = 0; i < 100 && access(path, F_OK); i++)
		usleep(10000);
	if (access(path, F_OK)) {
		char sys[96], num[32] = "";

		snprintf(sys, sizeof(sys), "/sys/class/block/%s%s1/dev", name, sep);
		f = open(sys, O_RDONLY);
		if (f < 0 || read(f, num, sizeof(num) - 1) <= 0 ||
		    sscanf(num, "%u:%u", &maj, &min) != 2 ||
		    mknod(path, S_IFBLK | 0600, makedev(maj, min)))
			die("partition 1 (no node)");
		close(f);
	}
	f = open(path, O_RDWR);
	if (f < 0)
		die(path);
	return f;
}

/* P of round @n of the flight (@k W_FLIGHT) or aio writer, on the flight disk. */
static uint64_t fl_page(int k, long n)
{
	return (uint64_t)((k == W_AIO ? rounds : 0) + n) * (FLIGHT_FILL + 2) + FLIGHT_FILL;
}

/* Find @d's block device in /sys/block by its subsystem's NQN (2 s at most). */
static void find_nvme(struct nvme_disk *d)
{
	double until = now_s() + 2;

	do {
		DIR *dir = opendir("/sys/block");
		struct dirent *e;

		if (!dir)
			die("/sys/block");
		while ((e = readdir(dir))) {
			char path[300], nqn[256] = "";
			size_t n, m = strlen(d->nqn);
			unsigned int a, b, c;
			int f;

			/* nvmeXnY, not a multipath path's hidden nvmeXcYnZ. */
			if (sscanf(e->d_name, "nvme%un%u", &a, &b) != 2 ||
			    sscanf(e->d_name, "nvme%uc%un%u", &a, &b, &c) == 3)
				continue;
			snprintf(path, sizeof(path), "/sys/block/%s/device/subsysnqn", e->d_name);
			f = open(path, O_RDONLY);
			if (f < 0)
				continue;
			n = (size_t)(read(f, nqn, sizeof(nqn) - 1) > 0 ? strcspn(nqn, "\n") : 0);
			close(f);
			nqn[n] = 0;
			if (n >= m && !strcmp(nqn + n - m, d->nqn)) {
				snprintf(d->found, sizeof(d->found), "/dev/%s", e->d_name);
				d->path = d->found;
			}
		}
		closedir(dir);
		if (!d->path)
			usleep(20000);
	} while (!d->path && now_s() < until);
	if (!d->path) {
		fprintf(stderr, "%s: no NVMe namespace whose subsystem NQN ends in '%s'\n", prog,
			d->nqn);
		exit(2);
	}
}

/* @d's block device (found if not given), its namespace ID and block size. */
static void open_nvme(struct nvme_disk *d, unsigned long bytes)
{
	int lbs = 0, id;

	if (!d->path)
		find_nvme(d);
	if (d == &nvme_mpath) {
		/* A native-multipath head: its device is the NVMe subsystem. */
		const char *name = strrchr(d->path, '/') ? strrchr(d->path, '/') + 1 : d->path;
		char sys[300], target[PATH_MAX];

		snprintf(sys, sizeof(sys), "/sys/block/%s/device", name);
		if (!realpath(sys, target) || !strstr(target, "/nvme-subsys")) {
			fprintf(stderr,
				"%s: %s is not an NVMe multipath head disk "
				"(CONFIG_NVME_MULTIPATH off, or nvme_core.multipath=0?)\n",
				prog, d->path);
			exit(2);
		}
	}
	d->fd = open(d->path, O_RDWR);
	if (d->fd < 0)
		die(d->path);
	id = ioctl(d->fd, NVME_IOCTL_ID);
	if (id <= 0 || ioctl(d->fd, BLKSSZGET, &lbs) || lbs < 512 || lbs > (int)PAGE_SIZE ||
	    (lbs & (lbs - 1)))
		die("NVMe namespace ID or block size");
	d->nsid = (unsigned int)id;
	d->lba_shift = (unsigned int)__builtin_ctz((unsigned int)lbs);
	if (fd_size(d->fd) < bytes) {
		fprintf(stderr, "%s: %s too small for %ld rounds\n", prog, d->path, rounds);
		exit(2);
	}
}

#define CFG "/sys/kernel/config/nvmet"

/*
 * The target writer's disk, exported by the NVMe target's block backend
 * (subsystem luf-target, namespace 1, a loopback port), and the namespace
 * that then appears on the host side.
 */
static void setup_target(unsigned long bytes)
{
	target_fd = open(target_dev, O_RDWR);
	if (target_fd < 0)
		die(target_dev);
	if (fd_size(target_fd) < bytes) {
		fprintf(stderr, "%s: %s too small for %ld rounds\n", prog, target_dev, rounds);
		exit(2);
	}
	if (mount("none", "/sys/kernel/config", "configfs", 0, NULL) && errno != EBUSY)
		die("mount configfs");
	if (mkdir(CFG "/subsystems/luf-target", 0755) ||
	    mkdir(CFG "/subsystems/luf-target/namespaces/1", 0755) || mkdir(CFG "/ports/1", 0755))
		die("nvmet configfs");
	write_file(CFG "/subsystems/luf-target/attr_allow_any_host", "1");
	write_file(CFG "/subsystems/luf-target/namespaces/1/device_path", target_dev);
	write_file(CFG "/subsystems/luf-target/namespaces/1/enable", "1");
	write_file(CFG "/ports/1/addr_trtype", "loop");
	if (symlink(CFG "/subsystems/luf-target", CFG "/ports/1/subsystems/luf-target"))
		die("nvmet port");
	/*
	 * One I/O queue: with a queue per CPU, the connect of the isolated
	 * reader CPU's queue failed (-EXDEV: no online CPU mapped to it).
	 */
	write_file("/dev/nvme-fabrics", "transport=loop,nqn=luf-target,nr_io_queues=1");
	open_nvme(&nvme_target, bytes);
}

/*
 * The release writer's file system on --fs-dev: ext2 with 4 KiB blocks (a
 * file's page is then one page of the disk), a file of --rounds pages, and
 * where each of its pages lies on the disk (FIEMAP); left unmounted.
 */
static void setup_release(uint64_t *buf)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent fe[64];
	} m = {0};
	char cmd[256];
	unsigned int i;
	long n;
	int f;

	snprintf(cmd, sizeof(cmd), "mke2fs -F -b 4096 %s >/dev/null 2>&1", fs_dev);
	if (system(cmd)) {
		fprintf(stderr, "%s: mke2fs on %s failed (--fs-dev: a second disk)\n", prog,
			fs_dev);
		exit(2);
	}
	if ((mkdir(FS_DIR, 0755) && errno != EEXIST) || mount(fs_dev, FS_DIR, "ext2", 0, NULL))
		die("mount (release set-up)");
	f = open(REL_FILE, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (f < 0)
		die(REL_FILE);
	memset(buf, 0, PAGE_SIZE);
	for (n = 0; n < rounds; n++)
		pwrite_all(f, buf, PAGE_SIZE, (off_t)(n * PAGE_SIZE));
	if (fsync(f))
		die("fsync (release set-up)");
	m.fm.fm_length = (uint64_t)rounds * PAGE_SIZE;
	m.fm.fm_flags = FIEMAP_FLAG_SYNC;
	m.fm.fm_extent_count = 64;
	if (ioctl(f, FS_IOC_FIEMAP, &m))
		die("FIEMAP");
	rel_page = calloc((size_t)rounds, sizeof(*rel_page));
	if (!rel_page)
		die("calloc");
	for (n = 0; n < rounds; n++) {
		uint64_t off = (uint64_t)n * PAGE_SIZE;

		for (i = 0; i < m.fm.fm_mapped_extents; i++) {
			struct fiemap_extent *e = &m.fe[i];

			if (off >= e->fe_logical && off < e->fe_logical + e->fe_length)
				rel_page[n] = (e->fe_physical + off - e->fe_logical) / PAGE_SIZE;
		}
		if (!rel_page[n]) {
			fprintf(stderr,
				"%s: page %ld of %s not found by FIEMAP (%u extents mapped, at "
				"most 64 read: fewer --rounds)\n",
				prog, n, REL_FILE, m.fm.fm_mapped_extents);
			exit(2);
		}
	}
	if (close(f) || umount(FS_DIR))
		die("umount (release set-up)");
	rel_fd = open(fs_dev, O_RDWR);
	if (rel_fd < 0)
		die(fs_dev);
}

/* The loop device, backed by a new file of @npages pages. */
static void open_loop(unsigned long npages)
{
	loop_file_fd = open(LOOP_FILE, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (loop_file_fd < 0 || ftruncate(loop_file_fd, (off_t)(npages * PAGE_SIZE)))
		die(LOOP_FILE);
	loop_fd = open(loop_dev, O_RDWR);
	if (loop_fd < 0)
		die(loop_dev);
	if (ioctl(loop_fd, LOOP_SET_FD, loop_file_fd))
		die("LOOP_SET_FD");
}

/* One DM ioctl on /dev/mapper/control: @io, followed by @len bytes of @data. */
static void dm_ioctl_call(int ctl, unsigned long req, struct dm_ioctl *io, const void *data,
			  size_t len, const char *what)
{
	static char buf[sizeof(struct dm_ioctl) + 256] __attribute__((aligned(8)));

	if (len > sizeof(buf) - sizeof(*io))
		die(what);
	io->version[0] = DM_VERSION_MAJOR;
	io->version[1] = 0;
	io->version[2] = 0;
	io->data_size = (uint32_t)(sizeof(*io) + len);
	io->data_start = sizeof(*io);
	snprintf(io->name, sizeof(io->name), "%s", DM_NAME);
	memcpy(buf, io, sizeof(*io));
	if (len)
		memcpy(buf + sizeof(*io), data, len);
	if (ioctl(ctl, req, buf))
		die(what);
	memcpy(io, buf, sizeof(*io));
}

/*
 * The dm device: linear, from DM_START of the NVMe disk (open_nvme()) to its
 * end: created, its table loaded (the device now holds the member), resumed.
 */
static void open_dm(void)
{
	struct {
		struct dm_target_spec spec;
		char params[64];
	} t = {0};
	struct dm_ioctl io = {0};
	struct stat st;
	char path[32];
	unsigned int minor;
	int ctl = open("/dev/mapper/control", O_RDWR);

	if (ctl < 0 || fstat(nvme_plain.fd, &st))
		die("/dev/mapper/control");
	dm_ioctl_call(ctl, DM_DEV_CREATE, &io, NULL, 0, "DM_DEV_CREATE");
	/* The kernel's huge dev_t encoding: minor bits 0-7 and 20-31. */
	minor = (unsigned int)((io.dev & 0xff) | ((io.dev >> 12) & 0xfff00));
	t.spec.sector_start = 0;
	t.spec.length = (fd_size(nvme_plain.fd) - DM_START) >> 9;
	snprintf(t.spec.target_type, sizeof(t.spec.target_type), "linear");
	snprintf(t.params, sizeof(t.params), "%u:%u %lu", major(st.st_rdev), minor(st.st_rdev),
		 DM_START >> 9);
	memset(&io, 0, sizeof(io));
	io.target_count = 1;
	dm_ioctl_call(ctl, DM_TABLE_LOAD, &io, &t, sizeof(t), "DM_TABLE_LOAD");
	memset(&io, 0, sizeof(io));
	dm_ioctl_call(ctl, DM_DEV_SUSPEND, &io, NULL, 0, "DM_DEV_SUSPEND (resume)");
	close(ctl);
	snprintf(path, sizeof(path), "/dev/dm-%u", minor);
	dm_fd = open(path, O_RDWR);
	if (dm_fd < 0)
		die(path);
}

/* Close and remove the dm device. */
static void close_dm(void)
{
	struct dm_ioctl io = {0};
	int ctl = open("/dev/mapper/control", O_RDWR);

	close(dm_fd);
	if (ctl < 0)
		die("/dev/mapper/control");
	dm_ioctl_call(ctl, DM_DEV_REMOVE, &io, NULL, 0, "DM_DEV_REMOVE");
	close(ctl);
}

/*
 * Do the shared writer's two disks show one image? A page written to the
 * alias past the rounds' pages is read back from the other, both with
 * O_DIRECT.
 */
static int same_image(unsigned long npages)
{
	static uint64_t page[WORDS_PER_PAGE] __attribute__((aligned(4096)));
	off_t off = (off_t)(npages * PAGE_SIZE);
	int a = open(shared_alias, O_RDWR | O_DIRECT), d = open(shared_dev, O_RDONLY | O_DIRECT);
	int ok;

	if (a < 0 || d < 0)
		die("O_DIRECT open of the shared disks");
	sig_fill(page, npages, 7);
	if (pwrite(a, page, PAGE_SIZE, off) != (ssize_t)PAGE_SIZE)
		die("O_DIRECT write of the shared alias");
	memset(page, 0, sizeof(page));
	if (pread(d, page, PAGE_SIZE, off) != (ssize_t)PAGE_SIZE)
		die("O_DIRECT read of the shared disk");
	ok = SIG_MAGIC_OF(page[0]) == SIG_MAGIC && SIG_PAGE_OF(page[0]) == npages &&
	     SIG_VERSION_OF(page[0]) == 7;
	close(a);
	close(d);
	return ok;
}

/*
 * The shared writer's disks; its reader's is marked as its administrator
 * must (luf_defer 0), where the kernel has the file. Prints shared_marked.
 */
static void open_shared(unsigned long npages)
{
	const char *name = strrchr(shared_dev, '/');
	char path[128];
	int marked = 0;

	shared_fd = open(shared_dev, O_RDWR);
	shared_alias_fd = open(shared_alias, O_RDWR);
	if (shared_fd < 0 || shared_alias_fd < 0)
		die("shared disk (--shared-dev, --shared-alias)");
	if (fd_size(shared_fd) < (npages + 1) * PAGE_SIZE ||
	    fd_size(shared_alias_fd) < (npages + 1) * PAGE_SIZE) {
		fprintf(stderr, "%s: %s too small for %ld rounds\n", prog, shared_dev, rounds);
		exit(2);
	}
	if (!same_image(npages)) {
		fprintf(stderr, "%s: %s and %s are not one disk image\n", prog, shared_dev,
			shared_alias);
		exit(2);
	}
	snprintf(path, sizeof(path), "/sys/block/%s/queue/luf_defer", name ? name + 1 : shared_dev);
	if (access(path, F_OK) == 0) {
		char v[8] = "";
		int f;

		write_file(path, "0");
		marked = 1;
		/* It now reads 0, and the mark cannot be undone (EINVAL). */
		f = open(path, O_RDWR);
		if (f < 0 || read(f, v, sizeof(v) - 1) < 0)
			die(path);
		printf("shared_luf_defer=%c\n", v[0]);
		errno = 0;
		printf("shared_unmark_errno=%d\n", pwrite(f, "1", 1, 0) < 0 ? errno : 0);
		close(f);
	}
	printf("shared_marked=%d\n", marked);
}

/* P of round @n of the passthru, loop and dm writers, each on a disk of its own. */
static uint64_t own_page(long n)
{
	return (uint64_t)n * 2 + 1;
}

int main(int argc, char **argv)
{
	static const char usage[] =
	    "usage: coherence [--dev DEV] [--rounds N] "
	    "[--writers pwrite,map,dio,mount,release,flight,aio,zeroes,passthru,mpath,loop,dm,"
	    "target,export,shared,part,punch,truncate,hole,anon] "
	    "[--span PAGES] [--fs-dev DEV] [--flight-dev DEV] [--nvme-dev DEV] [--mpath-dev DEV] "
	    "[--zeroes-dev DEV] "
	    "[--loop-dev DEV] [--target-dev DEV] [--shared-dev DEV] [--shared-alias DEV]\n";
	int want[W_NR] = {0};
	struct tally all = {0};
	unsigned long npages;
	uint64_t *buf;
	const char *writers = NULL;
	const struct opt opts[] = {
	    {.name = "--dev", .kind = OPT_STR, .to = &dev},
	    {.name = "--rounds", .kind = OPT_LONG, .to = &rounds, .min = 1},
	    {.name = "--span", .kind = OPT_LONG, .to = &span, .min = 1},
	    {.name = "--fs-dev", .kind = OPT_STR, .to = &fs_dev},
	    {.name = "--flight-dev", .kind = OPT_STR, .to = &flight_dev},
	    {.name = "--nvme-dev", .kind = OPT_STR, .to = &nvme_plain.path},
	    {.name = "--mpath-dev", .kind = OPT_STR, .to = &nvme_mpath.path},
	    {.name = "--zeroes-dev", .kind = OPT_STR, .to = &nvme_zeroes.path},
	    {.name = "--target-dev", .kind = OPT_STR, .to = &target_dev},
	    {.name = "--loop-dev", .kind = OPT_STR, .to = &loop_dev},
	    {.name = "--shared-dev", .kind = OPT_STR, .to = &shared_dev},
	    {.name = "--shared-alias", .kind = OPT_STR, .to = &shared_alias},
	    {.name = "--writers", .kind = OPT_STR, .to = &writers},
	};
	pid_t child;
	int i, k, status;

	prog = "coherence";
	/* By default every writer of a disk: punch and truncate are asked for. */
	for (k = 0; k < W_PUNCH; k++)
		want[k] = 1;
	parse_opts(argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
	if (writers) {
		char *list = strdup(writers), *tok, *save = NULL;

		memset(want, 0, sizeof(want));
		for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			for (k = 0; k < W_NR && strcmp(tok, writer_name[k]) != 0; k++)
				;
			if (k == W_NR) {
				fprintf(stderr, "%s: unknown writer '%s'\n%s", prog, tok, usage);
				return 2;
			}
			want[k] = 1;
		}
		free(list);
	}
	for (k = 0, i = 0; k < W_NR; k++)
		i += want[k];
	if (!i) {
		fprintf(stderr, "%s: --writers names no writer\n%s", prog, usage);
		return 2;
	}
	/* Keeps the page arithmetic below far from overflow. */
	if (rounds > 1L << 20 || span > 1L << 20) {
		fprintf(stderr, "%s: --rounds and --span are at most %ld\n", prog, 1L << 20);
		return 2;
	}
	if (nr_cpus() < 3) {
		fprintf(stderr, "%s: needs 3 CPUs (writer, witness, reader)\n", prog);
		return 2;
	}
	reader_cpu = nr_cpus() - 1;
	witness_cpu = 1;
	if (pin_to_cpu(0))
		die("pin writer");
	for (k = 0, i = 0; k < W_NR; k++)
		i += on_dev(k) && want[k];
	/* --dev: only for its writers (the anon writer alone may run on a swap disk). */
	if (i) {
		/* (Only the dio writer's: a tmpfs refuses O_DIRECT.) */
		fd = open(dev, O_RDWR);
		dio_fd = want[W_DIO] ? open(dev, O_RDWR | O_DIRECT) : -1;
		if (fd < 0 || (want[W_DIO] && dio_fd < 0))
			die(dev);
		file_size = fd_size(fd);
	}
	npages = file_size / PAGE_SIZE;
	if (want[W_TRUNCATE]) {
		struct stat st;

		if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
			fprintf(stderr, "%s: the truncate writer needs a regular file (--dev)\n",
				prog);
			return 2;
		}
	}
	/*
	 * The pages of the writer in slot i of --dev start at i * rounds *
	 * (span + 1): the last slot's.
	 */
	for (i = -1, k = 0; k < W_NR; k++)
		if (on_dev(k) && want[k])
			i = vda_slot(k);
	if ((unsigned long)(span + 1) * (unsigned long)(i + 1) * rounds > npages) {
		fprintf(stderr, "%s: %s too small for %ld rounds of %ld pages\n", prog, dev, rounds,
			span);
		return 2;
	}
	/* The part writer's first page lies past the partition's start. */
	if (want[W_PART] &&
	    (unsigned long)vda_slot(W_PART) * rounds * (span + 1) * PAGE_SIZE < PART_START) {
		fprintf(stderr,
			"%s: the part writer's pages start before the partition: "
			"more --rounds or --span\n",
			prog);
		return 2;
	}
	if (posix_memalign((void **)&buf, PAGE_SIZE,
			   (span > (long)FLIGHT_FILL ? span : (long)FLIGHT_FILL + 1) * PAGE_SIZE))
		die("buffer");
	if (want[W_FLIGHT] || want[W_AIO]) {
		flight_fd = open(flight_dev, O_RDWR);
		flight_dio_fd = open(flight_dev, O_RDWR | O_DIRECT);
		if (flight_fd < 0 || flight_dio_fd < 0)
			die(flight_dev);
		/* Reads of P only, no readahead: nothing else in the disk's page cache. */
		if (posix_fadvise(flight_fd, 0, 0, POSIX_FADV_RANDOM))
			die("posix_fadvise");
		flight_buf = buf;
		if (pipe(flight_req) || pipe(flight_done) ||
		    pthread_create(&(pthread_t){0}, NULL, flight_main, NULL))
			die("flight writer");
		if ((unsigned long)rounds * 2 * (FLIGHT_FILL + 2) * PAGE_SIZE >
		    fd_size(flight_fd)) {
			fprintf(stderr, "%s: %s too small for 2 x %ld rounds of %lu pages\n", prog,
				flight_dev, rounds, FLIGHT_FILL + 2);
			return 2;
		}
	}
	/* The passthru writer's pages lie before DM_START. */
	if (want[W_PASSTHRU] && own_page(rounds) * PAGE_SIZE > DM_START) {
		fprintf(stderr, "%s: at most %lu rounds for the passthru writer\n", prog,
			DM_START / PAGE_SIZE / 2 - 1);
		return 2;
	}
	if (want[W_PASSTHRU] || want[W_DM])
		open_nvme(&nvme_plain, DM_START + own_page(rounds) * PAGE_SIZE);
	if (want[W_ZEROES])
		open_nvme(&nvme_zeroes, own_page(rounds) * PAGE_SIZE);
	if (want[W_MPATH])
		open_nvme(&nvme_mpath, own_page(rounds) * PAGE_SIZE);
	if (want[W_LOOP])
		open_loop(own_page(rounds));
	if (want[W_SHARED])
		open_shared(own_page(rounds));
	if (want[W_MOUNT]) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "mke2fs -F -b 1024 %s >/dev/null 2>&1", fs_dev);
		if (system(cmd)) {
			fprintf(stderr, "%s: mke2fs on %s failed (--fs-dev: a second disk)\n", prog,
				fs_dev);
			return 2;
		}
		if (mkdir(FS_DIR, 0755) && errno != EEXIST)
			die(FS_DIR);
		/* Held open from here: the block size the first mount sets stays. */
		fs_fd = open(fs_dev, O_RDONLY);
		if (fs_fd < 0)
			die(fs_dev);
		if (mount(fs_dev, FS_DIR, "ext2", 0, NULL) || umount(FS_DIR))
			die("first mount");
	}
	if (pipe(to_child) || pipe(from_child))
		die("pipe");
	child = fork();
	if (child < 0)
		die("fork");
	if (!child)
		child_main();
	close(to_child[0]);
	close(from_child[1]);

	for (k = 0; k < W_NR; k++) {
		struct tally t = {0};
		long n;

		if (!want[k])
			continue;
		if (k == W_PART) /* the disk has a partition from here on */
			part_fd = make_partition(npages);
		if (k == W_DM) /* the NVMe disk is held from here on */
			open_dm();
		/* The target writer's pages, then the export writer's, on its disk. */
		if ((k == W_TARGET || k == W_EXPORT) && target_fd < 0)
			setup_target(own_page(2 * rounds) * PAGE_SIZE);
		if (k == W_RELEASE)
			setup_release(buf);
		for (n = 0; n < rounds; n++) {
			uint64_t pg = (uint64_t)(vda_slot(k) * rounds + n) * (span + 1);

			if (k == W_MOUNT)
				pg = 0;
			else if (k == W_RELEASE)
				pg = rel_page[n];
			else if (k == W_FLIGHT || k == W_AIO)
				pg = fl_page(k, n);
			else if (k == W_EXPORT)
				pg = own_page(rounds + n);
			else if (around(k))
				pg = own_page(n);
			rel_round = n;
			one_round((enum writer)k, pg, buf, &t);
		}
		printf("%s_rounds=%ld\n", writer_name[k], t.rounds);
		printf("%s_windows=%ld\n", writer_name[k], t.windows);
		printf("%s_stale_reads=%lu\n", writer_name[k], t.stale);
		printf("%s_wrong_reads=%lu\n", writer_name[k], t.wrong);
		if (k == W_TRUNCATE)
			printf("%s_torn_reads=%lu\n", writer_name[k], t.torn);
		if (t.wrong)
			printf("%s_first_wrong=%#018llx,seen=%u\n", writer_name[k],
			       (unsigned long long)t.first_wrong, t.wrong_seen);
		printf("%s_reads=%lu\n", writer_name[k], t.reads);
		printf("%s_witness_reads=%lu\n", writer_name[k], t.witness_reads);
		printf("%s_new_seen=%ld\n", writer_name[k], t.new_seen);
		if (k == W_FLIGHT || k == W_AIO)
			printf("%s_tested=%ld\n", writer_name[k], t.tested);
		all.rounds += t.rounds;
		all.windows += t.windows;
		all.stale += t.stale;
		all.wrong += t.wrong;
	}
	close(to_child[1]);
	waitpid(child, &status, 0);
	if (loop_fd >= 0 && ioctl(loop_fd, LOOP_CLR_FD))
		die("LOOP_CLR_FD");
	if (dm_fd >= 0)
		close_dm();
	printf("rounds=%ld\nwindows=%ld\nstale_reads=%lu\nwrong_reads=%lu\n", all.rounds,
	       all.windows, all.stale, all.wrong);
	return all.stale || all.wrong ? 1 : 0;
}
