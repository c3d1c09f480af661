// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/kernel/guest/offline.c - the "offline" workload: a memory block that
 * holds folios luf keeps back for a TLB flush must still go offline.
 *
 * The guest boots with memhp_default_state=offline and a QEMU pc-dimm whose
 * memory blocks stay offline (tests/kernel/boot adds both). The recipe puts
 * page-cache folios of the disk into such a block and has reclaim park them:
 *
 *   1. the page cache's own structures are made in boot memory first (the
 *      device is read once, then dropped with POSIX_FADV_DONTNEED), the mapping
 *      (2 MiB aligned) and its page table exist, the reader thread runs;
 *   2. boot memory is filled with an anonymous ballast, so that what is
 *      allocated next comes from the block;
 *   3. the block is onlined as kernel memory (online_kernel: block-device page
 *      cache is not movable and never lands in ZONE_MOVABLE);
 *   4. the reader, pinned to the last CPU, faults the mapping's pages (their
 *      folios now in the block) and keeps reading them, making no system call;
 *      accessed bits cleared without a flush (clear_refs), one MADV_PAGEOUT
 *      reclaims them: luf defers their flush and parks them;
 *   5. the block is offlined, with a time limit (SIGALRM makes offline_pages()
 *      give up with -EINTR).
 *
 * No fork() and no pipe after the online: their page tables would land in the
 * block, which then cannot go offline on any kernel.
 *
 * With --idle, no block: steps 1 and 4 only, then the program sleeps one
 * second, touching nothing: parked folios must not outlive a system gone
 * idle (luf.idle_ms).
 *
 * With --pageout MIB, no block: the reader, pinned to the last CPU, faults
 * MIB of the device once through one mapping and then spins, touching
 * nothing (its CPU raises no done counter); one MADV_PAGEOUT of the whole
 * mapping follows while a thread samples LufParked: the park must stay
 * within vm.luf_park_pages all along, and luf must have deferred more than
 * that many flushes (else the bound was never tested). MADV_PAGEOUT calls
 * flush_tlb_batched_pending() for each page table it walks, which settles
 * the mm, so one call parks at most a chunk's 512 folios at a time: --park N
 * sets vm.luf_park_pages to N first (N below 512 puts the bound to work).
 *
 * With --oom MIB, no block: an allocation that needs parked memory must get
 * it, not the OOM killer. The --pageout reader faults MIB of the device and
 * spins; vm.luf_park_pages is raised above MIB and the accessed bits are
 * cleared (clear_refs), so that reclaim takes the mapping's folios first
 * and luf parks them all. A child (this program with --hog KB, spawned
 * without copying the address space: a fork would flush the reader's
 * CPU; it raises its own oom_score_adj, so that an OOM kill ends it, not
 * this process) then writes MemFree plus half the mapping of anonymous
 * memory: there is no swap, so reclaim parks the folios it needs, and
 * only a drain of the park (direct reclaim's, or the allocator's before
 * the OOM killer) gives them to it. That holds while the reader's CPU runs
 * nothing else: a task run there meanwhile (a kworker: vmstat's,
 * lru_add_drain_all()'s) makes the CPU flush on its way back to the
 * reader, what was parked until then is done, and it goes back without a
 * drain. So vm.stat_interval is raised first, the child starts once the
 * reader has not been switched out for 2 s (or after 10 s), and the
 * reader's context switches are counted over the child's run: an attempt
 * in which the reader was switched out and nothing was drained tested
 * nothing, and the mapping is read again for another attempt (at most
 * OOM_ATTEMPTS attempts in all). A flush IPI to the reader's CPU for this
 * mm would do the same without a switch; none is known to come during
 * the child's run, and such an attempt fails.
 *
 * Usage: offline [--dev /dev/vda] [--limit SECONDS] [--pages N] [--idle]
 *                [--pageout MIB [--park N]] [--oom MIB] [--hog KB]
 * Prints: block, ballast_kb, parked_kb (/proc/meminfo LufParked after the
 * MADV_PAGEOUT; -1 without the line), offline_rc (0 or an errno), offline_s;
 * with --idle, parked_kb and idle_parked_kb (a second later); with --pageout,
 * pageout_mib, park_pages, deferred (nr_luf_deferred over the MADV_PAGEOUT),
 * parked_max_kb (the largest sample), parked_kb (after) and samples. Exit: 0
 * offlined within the limit (--idle: something was parked and nothing is a
 * second later; --pageout: parked_max_kb within the bound and deferred above
 * it), 1 not, 2 set-up failure. With --oom: oom_mib, free_kb (before the
 * child), hog_kb, hog (exitN, or signalN: signal9 is the OOM killer),
 * parked_max_kb (the largest LufParked sample from just before the child
 * started until it ended), drains (nr_luf_drain over it) and
 * reader_switches (the reader's context switches over it), all of the
 * last attempt, and attempts (how many were made); exit 0 if the child got
 * its memory and a drain was needed for it (else nothing was tested), 1
 * if not.
 */
#include "common.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define MAP_BYTES (2UL << 20)

static const char *dev = "/dev/vda";
static long limit_s = 10, npages = 256;
static int idle;
static long pageout_mib, park = -1, oom_mib, hog_kb;
static atomic_int phase; /* 0 wait, 1 fault and read, 2 stop touching pages */
static atomic_ulong reads;
static const volatile unsigned char *map;

static void *reader_main(void *arg)
{
	unsigned long i, sum = 0;

	(void)arg;
	if (pin_to_cpu(nr_cpus() - 1))
		die("pin reader");
	while (atomic_load(&phase) == 0)
		;
	while (atomic_load(&phase) == 1) {
		for (i = 1; i <= (unsigned long)npages; i++)
			sum += map[i * PAGE_SIZE];
		atomic_fetch_add(&reads, (unsigned long)npages);
	}
	return (void *)sum;
}

/*
 * After the online nothing here may make the kernel allocate a new slab page
 * (it would come from the block and pin it on every kernel): every file is
 * opened and read once before, /proc/vmstat is not read (its seq_file
 * allocates on every read), and the results are printed at the end.
 */
static int meminfo_fd = -1;
static char out[1024];
static size_t outlen;

#define say(...)                                                                           \
	(outlen += outlen < sizeof(out)                                                    \
		       ? (size_t)snprintf(out + outlen, sizeof(out) - outlen, __VA_ARGS__) \
		       : 0)

/* A /proc/meminfo line's value in kB, or -1 without that line. */
static long meminfo_kb(const char *key)
{
	static char buf[8192];
	size_t len = strlen(key);
	ssize_t n;
	char *p;

	if (meminfo_fd < 0 && (meminfo_fd = open("/proc/meminfo", O_RDONLY)) < 0)
		die("/proc/meminfo");
	n = pread(meminfo_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		die("/proc/meminfo");
	buf[n] = 0;
	for (p = buf; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, len) && p[len] == ':')
			return strtol(p + len + 1, NULL, 10);
	return -1;
}

/* Write @s to the open sysfs or proc file @f; returns 0 or -errno. */
static int put_fd(int f, const char *s)
{
	if (pwrite(f, s, strlen(s), 0) != (ssize_t)strlen(s))
		return -errno;
	return 0;
}

/* The first memory block whose state is "offline"; its number, or -1. */
static long offline_block(void)
{
	DIR *d = opendir("/sys/devices/system/memory");
	struct dirent *e;
	long best = -1;

	if (!d)
		die("/sys/devices/system/memory");
	while ((e = readdir(d))) {
		char path[300], state[32] = "";
		long n;
		int f;

		if (sscanf(e->d_name, "memory%ld", &n) != 1)
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/memory/%s/state", e->d_name);
		f = open(path, O_RDONLY);
		if (f < 0)
			continue;
		if (read(f, state, sizeof(state) - 1) > 0 && !strncmp(state, "offline", 7) &&
		    (best < 0 || n < best))
			best = n;
		close(f);
	}
	closedir(d);
	return best;
}

/* A number from the first line of @path, or -1. */
static long read_long(const char *path)
{
	char buf[64] = "";
	int f = open(path, O_RDONLY);
	ssize_t n = f < 0 ? -1 : read(f, buf, sizeof(buf) - 1);

	if (f >= 0)
		close(f);
	return n > 0 ? strtol(buf, NULL, 10) : -1;
}

static atomic_int sweeps, swept, stop;
static pthread_t sweeper;
static atomic_long parked_max, samples, sweeper_tid;

/*
 * --pageout's and --oom's reader: each time sweeps moves, a sweep that
 * reads every page of the mapping (faulting those not mapped); else a
 * spin that touches no page of the mapping and makes no system call.
 */
static void *sweeper_main(void *arg)
{
	unsigned long i, sum = 0;

	(void)arg;
	if (pin_to_cpu(nr_cpus() - 1))
		die("pin sweeper");
	atomic_store(&sweeper_tid, syscall(SYS_gettid));
	while (!atomic_load(&stop)) {
		int want = atomic_load(&sweeps);

		if (want == atomic_load(&swept))
			continue;
		for (i = 0; i <= (unsigned long)npages; i++)
			sum += map[i * PAGE_SIZE];
		atomic_store(&swept, want);
	}
	return (void *)sum;
}

/* Have the sweeper fault the whole mapping again; returns once it has. */
static void sweep(void)
{
	int want = atomic_fetch_add(&sweeps, 1) + 1;

	while (atomic_load(&swept) != want)
		usleep(10000);
}

/* The sweeper's context switches (voluntary and not) so far, or -1. */
static long sweeper_switches(void)
{
	char path[64], line[128];
	long n, sum = 0;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/status", atomic_load(&sweeper_tid));
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %ld", &n) == 1) {
			sum += n;
			found++;
		}
	fclose(f);
	return found == 2 ? sum : -1;
}

static void *sampler_main(void *arg)
{
	(void)arg;
	if (pin_to_cpu(1))
		die("pin sampler");
	while (!atomic_load(&stop)) {
		long kb = meminfo_kb("LufParked");

		if (kb > atomic_load(&parked_max))
			atomic_store(&parked_max, kb);
		atomic_fetch_add(&samples, 1);
	}
	return NULL;
}

/* Pages of the first @bytes of map that are in memory (mincore()). */
static size_t resident_pages(size_t bytes)
{
	unsigned char *vec = malloc(bytes / PAGE_SIZE);
	size_t i, n = 0;

	if (!vec || mincore((void *)map, bytes, vec))
		die("mincore");
	for (i = 0; i < bytes / PAGE_SIZE; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

/*
 * 0 if nine tenths of the first @bytes of map are resident, else 2 (said
 * why): reclaim would not take what the caller claims.
 */
static int mapping_resident(size_t bytes)
{
	size_t resident = resident_pages(bytes);

	if (resident >= bytes / PAGE_SIZE / 10 * 9)
		return 0;
	fprintf(stderr, "%s: only %zu of %zu pages resident: give the guest more memory\n", prog,
		resident, bytes / PAGE_SIZE);
	return 2;
}

/*
 * --pageout and --oom: pinned to CPU 0, @mib MiB of the device mapped and
 * faulted by the sweeper on the last CPU, which then spins; 0, or 2 (said
 * why) if the device is too small or the mapping not resident.
 */
static int map_swept(long mib, const char *opt)
{
	size_t bytes = (size_t)mib << 20;
	int fd;

	if (nr_cpus() < 3) {
		fprintf(stderr, "%s: %s needs 3 CPUs\n", prog, opt);
		return 2;
	}
	if (pin_to_cpu(0))
		die("pin");
	fd = open(dev, O_RDONLY);
	if (fd < 0)
		die(dev);
	if (fd_size(fd) < bytes) {
		fprintf(stderr, "%s: %s is smaller than %s %ld MiB\n", prog, dev, opt, mib);
		return 2;
	}
	map = mmap(NULL, bytes, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	npages = (long)(bytes / PAGE_SIZE) - 1;
	if (pthread_create(&sweeper, NULL, sweeper_main, NULL))
		die("sweeper");
	sweep();
	return mapping_resident(bytes);
}

/* --pageout MIB: one MADV_PAGEOUT of MIB of page cache against the park's bound. */
static int pageout(void)
{
	size_t bytes = (size_t)pageout_mib << 20;
	long bound, before, deferred, max_kb, after_kb;
	pthread_t st;
	int ret = map_swept(pageout_mib, "--pageout");

	if (ret)
		return ret;
	if (park >= 0) {
		char num[32];
		int f = open("/proc/sys/vm/luf_park_pages", O_WRONLY);

		snprintf(num, sizeof(num), "%ld", park);
		if (f < 0 || put_fd(f, num))
			die("vm.luf_park_pages");
		close(f);
	}
	bound = read_long("/proc/sys/vm/luf_park_pages");
	before = vmstat_sum("nr_luf_deferred");
	if (bound < 0 || before < 0 || meminfo_kb("LufParked") < 0) {
		fprintf(stderr, "%s: no vm.luf_park_pages, nr_luf_deferred or LufParked\n", prog);
		return 2;
	}
	if (pthread_create(&st, NULL, sampler_main, NULL))
		die("sampler");
	while (!atomic_load(&samples))
		sched_yield();
	if (madvise((void *)map, bytes, MADV_PAGEOUT))
		die("madvise(MADV_PAGEOUT)");
	atomic_store(&stop, 1);
	pthread_join(st, NULL);
	pthread_join(sweeper, NULL);
	deferred = vmstat_sum("nr_luf_deferred") - before;
	max_kb = atomic_load(&parked_max);
	after_kb = meminfo_kb("LufParked");
	printf("pageout_mib=%ld\npark_pages=%ld\ndeferred=%ld\nparked_max_kb=%ld\n"
	       "parked_kb=%ld\nsamples=%ld\n",
	       pageout_mib, bound, deferred, max_kb, after_kb, atomic_load(&samples));
	if (deferred <= bound) {
		fprintf(stderr,
			"%s: %ld flushes deferred, not more than the bound %ld: "
			"nothing tested\n",
			prog, deferred, bound);
		return 1;
	}
	if (max_kb > bound * (long)(PAGE_SIZE / 1024)) {
		fprintf(stderr, "%s: %ld kB parked, above vm.luf_park_pages (%ld kB)\n", prog,
			max_kb, bound * (long)(PAGE_SIZE / 1024));
		return 1;
	}
	return 0;
}

/* Write @s to the proc or sysfs file @path; dies on failure. */
static void put_path(const char *path, const char *s)
{
	int f = open(path, O_WRONLY);

	if (f < 0 || put_fd(f, s))
		die(path);
	close(f);
}

/* --hog KB: KB of anonymous memory, every page written; the OOM killer's first choice. */
static int hog(void)
{
	size_t bytes = (size_t)hog_kb << 10, i;
	unsigned char *p;

	put_path("/proc/self/oom_score_adj", "1000");
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("hog: mmap");
	for (i = 0; i < bytes; i += PAGE_SIZE)
		p[i] = 1;
	return 0;
}

#define OOM_ATTEMPTS 3

/*
 * Wait (at most 10 s) until the sweeper has not been switched out for 2 s:
 * the per-CPU work its sweep left (vmstat's) has run. Work queued on its
 * CPU later (an lru_add_drain_all() for the LRU batch the sweep left
 * there) still spoils an attempt, which is then repeated. Returns whether
 * it was quiet.
 */
static bool sweeper_quiet(void)
{
	long last = sweeper_switches();
	int quiet = 0, waited;

	for (waited = 0; waited < 100 && quiet < 20; waited++) {
		long now;

		usleep(100000);
		now = sweeper_switches();
		quiet = now == last ? quiet + 1 : 0;
		last = now;
	}
	return quiet >= 20;
}

/* One --oom attempt's outcome. */
struct oom_attempt {
	long free_kb, need_kb, max_kb, drains, switches;
	int status;
};

/*
 * One attempt: the (resident) mapping unreferenced, then the child that
 * needs half of it; 0, or 2 (said why) on a set-up failure.
 */
static int oom_try(struct oom_attempt *t)
{
	extern char **environ;
	size_t bytes = (size_t)oom_mib << 20;
	char num[32], *args[] = {"offline", "--hog", num, NULL};
	long drains, switches;
	pid_t pid;
	int err;

	put_path("/proc/self/clear_refs", "1");
	t->drains = vmstat_sum("nr_luf_drain");
	t->switches = sweeper_switches();
	if (t->drains < 0 || t->switches < 0) {
		fprintf(stderr, "%s: no nr_luf_drain, or no reader's status\n", prog);
		return 2;
	}
	atomic_store(&parked_max, 0);
	t->free_kb = meminfo_kb("MemFree");
	t->need_kb = t->free_kb + (long)(bytes >> 11);
	snprintf(num, sizeof(num), "%ld", t->need_kb);
	/*
	 * posix_spawn() shares the address space until the exec: no fork, whose
	 * copy of the page tables would flush the reader's CPU. (glibc unmaps
	 * the child's stack once it has exec'd, a flush of the reader's CPU
	 * too, but before the child allocates anything.)
	 */
	err = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, args, environ);
	if (err) {
		errno = err;
		die("posix_spawn");
	}
	if (waitpid(pid, &t->status, 0) != pid)
		die("waitpid");
	t->max_kb = atomic_load(&parked_max);
	drains = vmstat_sum("nr_luf_drain");
	switches = sweeper_switches();
	if (drains < 0 || switches < 0) {
		fprintf(stderr, "%s: nr_luf_drain or the reader's status unreadable\n", prog);
		return 2;
	}
	t->drains = drains - t->drains;
	t->switches = switches - t->switches;
	return 0;
}

/*
 * --oom MIB: MIB of page cache mapped, its translations held by the reader,
 * then an allocation that needs half of it.
 */
static int oom(void)
{
	size_t bytes = (size_t)oom_mib << 20;
	struct oom_attempt t;
	char num[32];
	pthread_t st;
	int attempt = 1, ret, ok;
	bool quiet;

	/* vmstat's per-CPU work would switch the reader out (see the top). */
	put_path("/proc/sys/vm/stat_interval", "3600");
	ret = map_swept(oom_mib, "--oom");
	if (ret)
		return ret;
	if (meminfo_kb("LufParked") < 0) {
		fprintf(stderr, "%s: no LufParked (not a luf kernel)\n", prog);
		return 2;
	}
	/* Room for all of it in the park. */
	snprintf(num, sizeof(num), "%zu", 2 * bytes / PAGE_SIZE);
	put_path("/proc/sys/vm/luf_park_pages", num);
	if (pthread_create(&st, NULL, sampler_main, NULL))
		die("sampler");
	while (!atomic_load(&samples))
		sched_yield();
	for (;;) {
		quiet = sweeper_quiet();
		ret = oom_try(&t);
		if (ret)
			return ret;
		ok = WIFEXITED(t.status) && !WEXITSTATUS(t.status);
		if (!ok || t.drains > 0 || t.switches <= 0 || attempt == OOM_ATTEMPTS)
			break;
		fprintf(stderr,
			"%s: attempt %d (%s): the reader was switched out %ld times and nothing "
			"was drained: the park went back done, nothing tested; again\n",
			prog, attempt, quiet ? "quiet before" : "not quiet in 10 s", t.switches);
		attempt++;
		sweep();
		ret = mapping_resident(bytes);
		if (ret)
			return ret;
	}
	atomic_store(&stop, 1);
	pthread_join(st, NULL);
	pthread_join(sweeper, NULL);
	printf("oom_mib=%ld\nfree_kb=%ld\nhog_kb=%ld\nhog=%s%d\nparked_max_kb=%ld\n"
	       "drains=%ld\nreader_switches=%ld\nattempts=%d\n",
	       oom_mib, t.free_kb, t.need_kb, WIFEXITED(t.status) ? "exit" : "signal",
	       WIFEXITED(t.status) ? WEXITSTATUS(t.status) : WTERMSIG(t.status), t.max_kb, t.drains,
	       t.switches, attempt);
	if (!ok) {
		fprintf(stderr,
			"%s: %ld kB of anonymous memory with %ld kB free and up to %ld kB "
			"parked: the allocation failed (%s %d)\n",
			prog, t.need_kb, t.free_kb, t.max_kb,
			WIFEXITED(t.status) ? "exit" : "signal",
			WIFEXITED(t.status) ? WEXITSTATUS(t.status) : WTERMSIG(t.status));
		return 1;
	}
	if (t.drains <= 0 || t.max_kb <= 0) {
		fprintf(stderr,
			"%s: %ld kB parked at most, %ld drains, the reader switched out %ld "
			"times in the last of %d attempts: the allocation never needed a "
			"drain of the park, nothing tested\n",
			prog, t.max_kb, t.drains, t.switches, attempt);
		return 1;
	}
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	static const char usage[] =
	    "usage: offline [--dev DEV] [--limit SECONDS] [--pages N] [--idle]\n"
	    "               [--pageout MIB [--park N]] [--oom MIB] [--hog KB]\n";
	const struct opt opts[] = {
	    {.name = "--dev", .kind = OPT_STR, .to = &dev},
	    {.name = "--limit", .kind = OPT_LONG, .to = &limit_s, .min = 1},
	    {.name = "--pages", .kind = OPT_LONG, .to = &npages, .min = 1},
	    {.name = "--idle", .kind = OPT_FLAG, .to = &idle},
	    {.name = "--pageout", .kind = OPT_LONG, .to = &pageout_mib, .min = 1},
	    {.name = "--park", .kind = OPT_LONG, .to = &park},
	    {.name = "--oom", .kind = OPT_LONG, .to = &oom_mib, .min = 1},
	    {.name = "--hog", .kind = OPT_LONG, .to = &hog_kb, .min = 1},
	};
	struct sigaction sa = {.sa_handler = on_alarm};
	char state[128], buf[PAGE_SIZE];
	long block, ballast_kb, parked;
	unsigned char *ballast, *raw;
	pthread_t rt;
	double t0, secs;
	static unsigned char vec[MAP_BYTES / PAGE_SIZE];
	int fd, clear_fd, state_fd, i, rc;
	long resident;

	prog = "offline";
	parse_opts(argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
	if (hog_kb)
		return hog();
	if (oom_mib)
		return oom();
	if (pageout_mib)
		return pageout();
	if (npages > (long)(MAP_BYTES / PAGE_SIZE) - 1 || nr_cpus() < 2) {
		fprintf(stderr, "%s: --pages at most %lu, and 2 CPUs\n", prog,
			MAP_BYTES / PAGE_SIZE - 1);
		return 2;
	}
	block = idle ? 0 : offline_block();
	if (block < 0) {
		fprintf(stderr,
			"%s: no offline memory block (a pc-dimm and "
			"memhp_default_state=offline)\n",
			prog);
		return 2;
	}
	snprintf(state, sizeof(state), "/sys/devices/system/memory/memory%ld/state", block);
	if (!idle)
		say("block=%ld\n", block);

	/*
	 * 1. Page-cache structures, the mapping and its page table, the reader.
	 * The pages are read and later faulted on one CPU, whose slab caches
	 * then still hold the page cache's freed xarray nodes: a new slab page
	 * would come from the block and pin it on every kernel.
	 */
	if (pin_to_cpu(0))
		die("pin");
	fd = open(dev, O_RDONLY);
	if (fd < 0)
		die(dev);
	for (i = 0; i < (int)(MAP_BYTES / PAGE_SIZE); i++)
		if (pread(fd, buf, sizeof(buf), (off_t)i * PAGE_SIZE) != (ssize_t)sizeof(buf))
			die("pread");
	if (posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED))
		die("fadvise");
	raw = mmap(NULL, 2 * MAP_BYTES, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		die("reserve");
	raw = (unsigned char *)(((uintptr_t)raw + MAP_BYTES - 1) & ~(MAP_BYTES - 1));
	map = mmap(raw, MAP_BYTES, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	(void)map[0]; /* page 0 stays in boot memory: the page table exists now */
	if (pthread_create(&rt, NULL, reader_main, NULL))
		die("reader");
	if (sigaction(SIGALRM, &sa, NULL))
		die("sigaction");

	clear_fd = open("/proc/self/clear_refs", O_WRONLY);
	state_fd = idle ? -1 : open(state, O_WRONLY);
	if (clear_fd < 0 || (!idle && state_fd < 0))
		die("clear_refs or the block's state");

	/* 2. Ballast: boot memory full, but for a margin the kernel needs. */
	ballast_kb = idle ? 0 : meminfo_kb("MemFree") - 12 * 1024;
	if (ballast_kb > 0) {
		ballast = mmap(NULL, (size_t)ballast_kb * 1024, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (ballast == MAP_FAILED)
			die("ballast");
	}
	say("ballast_kb=%ld\n", ballast_kb);

	/* 3. The block, as kernel memory. */
	rc = idle ? 0 : put_fd(state_fd, "online_kernel");
	if (rc) {
		fprintf(stderr, "%s: online_kernel memory%ld: %s\n", prog, block, strerror(-rc));
		return 2;
	}

	/* 4. Fault the pages from the block (here), keep them hot (the reader), park them. */
	for (i = 1; i <= npages; i++)
		(void)map[(unsigned long)i * PAGE_SIZE];
	atomic_store(&phase, 1);
	while (atomic_load(&reads) < 4UL * (unsigned long)npages)
		sched_yield();
	if (put_fd(clear_fd, "1"))
		die("clear_refs");
	if (madvise((void *)(map + PAGE_SIZE), (size_t)npages * PAGE_SIZE, MADV_PAGEOUT))
		die("madvise(MADV_PAGEOUT)");
	atomic_store(&phase, 2); /* no refault from now on: the entries stay stale */
	if (mincore((void *)map, MAP_BYTES, vec))
		die("mincore");
	for (i = 1, resident = 0; i <= npages; i++)
		resident += vec[i] & 1;
	say("resident_kb=%ld\n", resident * (long)(PAGE_SIZE / 1024));
	parked = meminfo_kb("LufParked");
	say("parked_kb=%ld\n", parked);
	if (idle) {
		long later;

		sleep(1);
		later = meminfo_kb("LufParked");
		say("idle_parked_kb=%ld\n", later);
		fputs(out, stdout);
		return parked > 0 && later == 0 ? 0 : 1;
	}

	/* 5. Offline, within the limit. */
	t0 = now_s();
	alarm((unsigned int)limit_s);
	rc = put_fd(state_fd, "offline");
	alarm(0);
	secs = now_s() - t0;
	say("offline_rc=%d\noffline_s=%.2f\n", -rc, secs);
	fputs(out, stdout);
	if (rc) {
		fprintf(stderr, "%s: offline memory%ld: %s after %.1f s\n", prog, block,
			strerror(-rc), secs);
		return 1;
	}
	return 0;
}
