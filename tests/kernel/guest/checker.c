// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/kernel/guest/checker.c - the stale-TLB oracle.
 *
 * The disk carries a signature in every 64-bit word of every page (common.h:
 * magic, page index, version, word index); `checker --gen FILE --disk-mb N`
 * writes that image on the host (deterministic: version 0 everywhere).
 *
 * In the guest (`checker --seconds S`, default 90; the run goes on past S until the
 * hot set has moved --min-moves times, default 4, but not past --max-seconds,
 * default 3 S + 60: on a slow or loaded host, reclaim, not time, is what counts):
 *  - readers (--threads, default nr_cpus - 1), pinned to CPUs 1..nr_cpus-1, re-read
 *    a small hot set (--hot-pages, default 32, each reader its own unless
 *    --hot-shared 1) of a read-only MAP_SHARED mapping of the disk and verify every
 *    word they read. (A page only one CPU reads is reclaimed as soon as that CPU's
 *    TLB kept it from being walked again for two scans; measured, that catches
 *    more than one hot set shared by all readers.) They never sleep: a CPU that goes
 *    idle and comes back compares tlb_gen and flushes, which would hide a stale
 *    entry. For the same reason every other movable task is moved to CPU 0
 *    (--isolate 1, the default), so that no kswapd or unbound kworker preempts them,
 *    and proactive compaction is switched off (--compaction-proactiveness 0, the
 *    default): its migrations of this process's pages flush the readers' TLBs;
 *  - the hot set moves once reclaim has gone through the inactive file list
 *    --move-traversals times (default 3; pgsteal_* and nr_inactive_file of
 *    /proc/vmstat), or every --move-ms: a reclaimed page refaults onto the active
 *    list and would stop being reclaimed. The main thread faults the next hot set
 *    in first, so that the readers do not fault (and sleep) when they switch;
 *  - a streamer (CPU 0) pread()s through the second half of the disk (the hot sets
 *    live in the first half), verifying it too, so that reclaim never stops;
 *  - a filler process (CPU 0) keeps allocating and filling anonymous memory with
 *    FILL_MAGIC words (--fill-mb, default MemAvailable - 64 MiB, which leaves a
 *    short inactive list that reclaim cycles through in seconds), so that frames
 *    freed by reclaim are reused at once;
 *  - a writer (CPU 0) pwrite()s a new version of a hot page every --write-ms and
 *    then publishes it (shared memory, release); a reader loads the published
 *    version before reading a page and must never see an older one.
 * A page read with any wrong word is a mismatch; consecutive mismatching reads of
 * one page by one reader form an episode. The first --print (default 20) episodes
 * are printed (by the main thread: a reader never blocks) with page, CPU, expected
 * and seen words and what pread() returns for the page at print time.
 * Prints key=value lines (mismatches=N, episodes, first_mismatch_s, reads_per_s,
 * ...); exit 1 on a mismatch.
 */
#include "common.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>

#define MAX_READERS 64
#define MAX_RECORDS 64
#define VERSION_MASK (0x7fffULL << 9)

enum kind { K_FILL, K_ZERO, K_OTHER_PAGE, K_OLD_VERSION, K_OTHER, NR_KINDS };
static const char *const kind_name[NR_KINDS] = {"fill", "zero", "other_page", "old_version",
						"other"};

struct reader_stats {
	atomic_ulong reads;
	atomic_ulong mismatches;
	atomic_ulong episodes;
	atomic_long nvcsw;  /* voluntary context switches (sleeps, page-fault I/O) */
	atomic_long nivcsw; /* involuntary: preempted by another task */
	char pad[64 - 5 * sizeof(atomic_ulong)];
};

/* A mismatch seen by a reader, printed later by the main thread (a reader never blocks). */
struct record {
	atomic_int ready;
	int cpu;
	int bad;
	unsigned int v0;
	unsigned long page;
	uint64_t word;
	uint64_t seen[4];
	char who[24];
};

struct shared {
	atomic_int stop;
	atomic_ulong hot_base;
	atomic_ulong moves;
	atomic_ulong printed;
	atomic_ulong kinds[NR_KINDS];
	atomic_ulong stream_pages;
	atomic_ulong stream_mismatches;
	atomic_ulong writes;
	atomic_ulong fill_mb;
	atomic_ulong pread_checked;
	atomic_ulong pread_bad;
	_Atomic double first_mismatch; /* seconds after the start, 0: none */
	struct reader_stats rs[MAX_READERS];
	struct record rec[MAX_RECORDS];
	_Atomic uint16_t version[]; /* last published version of each page */
};

static struct shared *sh;
static double t_start;
static const uint64_t *map;
static const char *dev = "/dev/vda";
static unsigned long npages;
static unsigned long hot_pages = 32; /* per reader */
static unsigned long hot_span;	     /* all readers' hot pages: hot_pages * nreaders */
static int hot_shared;		     /* 1: every reader reads the same hot pages */
static long move_ms;		     /* > 0: move the hot set on a timer instead */
static long move_traversals = 3;     /* move after reclaim went through the inactive list 3 times */
static long write_ms = 20;
static long fill_mb = -1; /* default: MemAvailable - 64 MiB */
static long seconds = 90;
static long min_moves = 4;    /* run past --seconds until the hot set moved this often */
static long max_seconds = -1; /* but never past this; default 3 * seconds + 60 */
static long max_print = 20;
static int nreaders = -1;
static int isolate = 1;
static long proactiveness;

struct reader {
	pthread_t tid;
	int id;
	int cpu;
};

static enum kind classify(uint64_t x, unsigned long page)
{
	if (!x)
		return K_ZERO;
	if (SIG_MAGIC_OF(x) == FILL_MAGIC)
		return K_FILL;
	if (SIG_MAGIC_OF(x) == SIG_MAGIC && SIG_PAGE_OF(x) != (page & 0xffffff))
		return K_OTHER_PAGE;
	if (SIG_MAGIC_OF(x) == SIG_MAGIC)
		return K_OLD_VERSION;
	return K_OTHER;
}

/* Index of the first wrong word of a page, or -1: magic, page, word index, version >= v0. */
static int check_page(const volatile uint64_t *p, unsigned long page, unsigned int v0)
{
	uint64_t hdr = SIG_MAGIC << 48 | (uint64_t)(page & 0xffffff) << 24;
	unsigned int w;

	for (w = 0; w < WORDS_PER_PAGE; w++) {
		uint64_t x = p[w];

		if ((x & ~VERSION_MASK) != (hdr | w) || SIG_VERSION_OF(x) < v0)
			return (int)w;
	}
	return -1;
}

/* A pread() of the page as the kernel sees it: 1 if right, 0 if wrong, -1 on error. */
static int pread_ok(int fd, unsigned long page, unsigned int v0)
{
	static _Thread_local uint64_t buf[WORDS_PER_PAGE];

	if (pread(fd, buf, PAGE_SIZE, (off_t)(page * PAGE_SIZE)) != (ssize_t)PAGE_SIZE)
		return -1;
	return check_page(buf, page, v0) < 0;
}

/* Reader side: keep the first max_print mismatches for the main thread; never blocks. */
static void record(const char *who, int cpu, unsigned long page, unsigned int v0,
		   const volatile uint64_t *p, int bad)
{
	unsigned long i = atomic_fetch_add(&sh->printed, 1);
	struct record *r;
	int k;

	if (!i)
		atomic_store(&sh->first_mismatch, now_s() - t_start);
	if (i >= (unsigned long)max_print)
		return;
	r = &sh->rec[i];
	r->cpu = cpu;
	r->page = page;
	r->v0 = v0;
	r->bad = bad;
	r->word = p[bad];
	for (k = 0; k < 4; k++)
		r->seen[k] = p[k];
	snprintf(r->who, sizeof(r->who), "%s", who);
	atomic_store_explicit(&r->ready, 1, memory_order_release);
}

/* Main thread: print the records that are ready, with what pread() returns now. */
static void print_records(int fd, unsigned long *done)
{
	static const char *const verdict[] = {"error", "WRONG", "ok"};

	while (*done < (unsigned long)max_print &&
	       atomic_load_explicit(&sh->rec[*done].ready, memory_order_acquire)) {
		struct record *r = &sh->rec[(*done)++];
		int pr = pread_ok(fd, r->page, r->v0);

		atomic_fetch_add(&sh->pread_checked, 1);
		if (pr != 1)
			atomic_fetch_add(&sh->pread_bad, 1);
		printf("mismatch: %s cpu=%d page=%lu expected=%016llx.. (version>=%u) "
		       "word[%d]=%016llx kind=%s seen=%016llx %016llx %016llx %016llx "
		       "pread_now=%s\n",
		       r->who, r->cpu, r->page, (unsigned long long)sig_word(r->page, r->v0, 0),
		       r->v0, r->bad, (unsigned long long)r->word,
		       kind_name[classify(r->word, r->page)], (unsigned long long)r->seen[0],
		       (unsigned long long)r->seen[1], (unsigned long long)r->seen[2],
		       (unsigned long long)r->seen[3], verdict[pr + 1]);
		fflush(stdout);
	}
}

static void *reader_main(void *arg)
{
	struct reader *r = arg;
	struct reader_stats *st = &sh->rs[r->id];
	unsigned char *bad_state = calloc(hot_pages, 1);
	unsigned long base = ~0UL, s, page, reads = 0;
	struct rusage ru;
	char who[32];
	int bad;

	snprintf(who, sizeof(who), "reader%d", r->id);
	if (!bad_state)
		die("reader setup");
	if (pin_to_cpu(r->cpu))
		fprintf(stderr, "%s: reader %d: cannot pin to CPU %d\n", prog, r->id, r->cpu);
	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
		unsigned long b = atomic_load_explicit(&sh->hot_base, memory_order_relaxed) +
				  (hot_shared ? 0 : (unsigned long)r->id * hot_pages);

		if (b != base) {
			base = b;
			memset(bad_state, 0, hot_pages);
		}
		for (s = 0; s < hot_pages; s++) {
			unsigned int v0;
			const volatile uint64_t *p;

			page = base + s;
			v0 = atomic_load_explicit(&sh->version[page], memory_order_acquire);
			p = map + page * WORDS_PER_PAGE;
			bad = check_page(p, page, v0);
			reads++;
			if (bad < 0) {
				bad_state[s] = 0;
				continue;
			}
			atomic_fetch_add_explicit(&st->mismatches, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&sh->kinds[classify(p[bad], page)], 1,
						  memory_order_relaxed);
			if (bad_state[s])
				continue;
			bad_state[s] = 1;
			atomic_fetch_add_explicit(&st->episodes, 1, memory_order_relaxed);
			record(who, r->cpu, page, v0, p, bad);
		}
		atomic_store_explicit(&st->reads, reads, memory_order_relaxed);
	}
	if (!getrusage(RUSAGE_THREAD, &ru)) {
		atomic_store(&st->nvcsw, ru.ru_nvcsw);
		atomic_store(&st->nivcsw, ru.ru_nivcsw);
	}
	free(bad_state);
	return NULL;
}

/*
 * CPU 0: pread() through the second half of the disk, verifying what comes back.
 * The hot sets live in the first half: a page the streamer read recently would be
 * activated when the readers map it (referenced twice) or refault onto the active
 * list, and not be reclaimed while it is hot.
 */
static void *streamer_main(void *arg)
{
	enum { CHUNK = 16 };
	uint64_t *buf = aligned_alloc(PAGE_SIZE, CHUNK * PAGE_SIZE);
	unsigned long page = npages / 2, i, n;
	int fd = open(dev, O_RDONLY);

	(void)arg;
	if (fd < 0 || !buf)
		die("streamer setup");
	pin_to_cpu(0);
	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
		unsigned int v0[CHUNK];
		ssize_t got;

		n = npages - page < CHUNK ? npages - page : CHUNK;
		for (i = 0; i < n; i++)
			v0[i] = atomic_load_explicit(&sh->version[page + i], memory_order_acquire);
		got = pread(fd, buf, n * PAGE_SIZE, (off_t)(page * PAGE_SIZE));
		if (got != (ssize_t)(n * PAGE_SIZE))
			die("streamer pread");
		for (i = 0; i < n; i++) {
			int bad = check_page(buf + i * WORDS_PER_PAGE, page + i, v0[i]);

			if (bad < 0)
				continue;
			atomic_fetch_add(&sh->stream_mismatches, 1);
			record("streamer(pread)", 0, page + i, v0[i], buf + i * WORDS_PER_PAGE,
			       bad);
		}
		atomic_fetch_add_explicit(&sh->stream_pages, n, memory_order_relaxed);
		page += n;
		if (page >= npages)
			page = npages / 2;
	}
	close(fd);
	free(buf);
	return NULL;
}

/* CPU 0: write a new version of a hot page, then publish it. */
static void *writer_main(void *arg)
{
	uint64_t *buf = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	unsigned long rnd = 88172645463325252UL, page;
	struct timespec ts = {write_ms / 1000, write_ms % 1000 * 1000000};
	int fd = open(dev, O_RDWR);

	(void)arg;
	if (fd < 0 || !buf)
		die("writer setup");
	pin_to_cpu(0);
	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
		unsigned int v;

		nanosleep(&ts, NULL);
		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		page = atomic_load(&sh->hot_base) + rnd % hot_span;
		v = atomic_load_explicit(&sh->version[page], memory_order_relaxed) + 1;
		if (v > SIG_MAX_VERSION)
			continue;
		sig_fill(buf, page, v);
		if (pwrite(fd, buf, PAGE_SIZE, (off_t)(page * PAGE_SIZE)) != (ssize_t)PAGE_SIZE)
			die("writer pwrite");
		atomic_store_explicit(&sh->version[page], (uint16_t)v, memory_order_release);
		atomic_fetch_add_explicit(&sh->writes, 1, memory_order_relaxed);
	}
	close(fd);
	free(buf);
	return NULL;
}

/* Another process, CPU 0: allocate and fill anonymous memory, forever. */
static void filler_main(void)
{
	enum { CHUNK_MB = 1 };
	size_t chunk = CHUNK_MB << 20;
	long nchunks = fill_mb / CHUNK_MB, head = 0;
	uint64_t **ring = calloc(nchunks, sizeof(*ring)), pattern = FILL_MAGIC << 48;
	size_t w;

	if (!ring)
		die("filler setup");
	pin_to_cpu(0);
	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
		uint64_t *c =
		    mmap(NULL, chunk, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (c == MAP_FAILED)
			die("filler mmap");
		for (w = 0; w < chunk / sizeof(*c); w++)
			c[w] = pattern++;
		if (ring[head])
			munmap(ring[head], chunk);
		ring[head] = c;
		head = (head + 1) % nchunks;
		atomic_fetch_add_explicit(&sh->fill_mb, CHUNK_MB, memory_order_relaxed);
	}
	exit(0);
}

/*
 * Keep every other task that may move off the readers' CPUs: a reader preempted by
 * another task (kswapd, an unbound kworker) comes back from lazy TLB mode, compares
 * tlb_gen and flushes, ending any stale translation it held. Per-CPU kthreads stay.
 * Returns the number of tasks moved to CPU 0.
 */
static int isolate_readers(void)
{
	struct dirent *de;
	cpu_set_t set;
	int n = 0, fd;
	DIR *d;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	d = opendir("/proc");
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid > 0 && pid != getpid() && !sched_setaffinity(pid, sizeof(set), &set))
			n++;
	}
	closedir(d);
	/* Unbound workqueues run on CPU 0 only. */
	fd = open("/sys/devices/virtual/workqueue/cpumask", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "1\n", 2) != 2)
			fprintf(stderr, "%s: cannot restrict unbound workqueues to CPU 0\n", prog);
		close(fd);
	}
	return n;
}

/*
 * Fault a hot set in from the main thread (CPU 0) before the readers switch to it:
 * a reader that faults sleeps on the disk read and flushes its TLB when it comes
 * back, and the pages it then walks again are referenced twice and activated.
 */
static unsigned long prefault(unsigned long base)
{
	unsigned long s, sum = 0;

	for (s = 0; s < hot_span; s++)
		sum += ((const volatile uint64_t *)map)[(base + s) * WORDS_PER_PAGE];
	return sum;
}

/* Size of the inactive file list, in pages (at least 1). */
static long inactive_file_pages(void)
{
	long v = vmstat_sum("nr_inactive_file");

	return v > 0 ? v : 1;
}

/* MemAvailable in MiB, or -1. */
static long mem_available_mb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb / 1024;
}

/* Write a number to a sysctl file; returns 0 or -1. */
static int write_sysctl(const char *path, long v)
{
	char buf[32];
	int fd = open(path, O_WRONLY), n = snprintf(buf, sizeof(buf), "%ld\n", v);

	if (fd < 0)
		return -1;
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static int gen_image(const char *path, long disk_mb)
{
	unsigned long pages = (unsigned long)disk_mb << 20 >> 12, p;
	enum { BATCH = 256 };
	uint64_t *buf = malloc(BATCH * PAGE_SIZE);
	FILE *f = fopen(path, "wb");

	if (!f || !buf)
		die(path);
	if (pages > SIG_MAX_PAGES) {
		fprintf(stderr, "%s: at most %lu MiB\n", prog, SIG_MAX_PAGES >> 8);
		return 2;
	}
	for (p = 0; p < pages; p++) {
		sig_fill(buf + (p % BATCH) * WORDS_PER_PAGE, p, 0);
		if (p % BATCH == BATCH - 1 || p == pages - 1) {
			size_t n = p % BATCH + 1;

			if (fwrite(buf, PAGE_SIZE, n, f) != n)
				die(path);
		}
	}
	if (fclose(f))
		die(path);
	free(buf);
	printf("generated %s: %lu pages\n", path, pages);
	return 0;
}

static const char usage[] =
    "usage: checker [--dev PATH] [--seconds S] [--min-moves N] [--max-seconds S]\n"
    "               [--threads N] [--hot-pages N] [--hot-shared 0|1]\n"
    "               [--move-traversals N | --move-ms MS]\n"
    "               [--write-ms MS (0: no writer)] [--fill-mb MB] [--isolate 0|1]\n"
    "               [--compaction-proactiveness N (-1: leave)] [--print N]\n"
    "       checker --gen FILE --disk-mb N   (the signature image, on the host)\n";

int main(int argc, char **argv)
{
	struct reader readers[MAX_READERS];
	pthread_t streamer, writer;
	const char *gen = NULL;
	unsigned long reads = 0, mismatches = 0, episodes = 0, printed = 0;
	long nvcsw = 0, nivcsw = 0;
	int isolated = 0;
	unsigned long rnd = 0x9e3779b97f4a7c15UL, nslots;
	long disk_mb = 0;
	double t0, next_move, end, t_move;
	long stolen_at_move, inactive_at_move;
	size_t shsize;
	pid_t filler;
	int fd, i, k, status, ncpu = nr_cpus();

	const struct opt opts[] = {
	    {.name = "--dev", .kind = OPT_STR, .to = &dev},
	    {.name = "--seconds", .kind = OPT_LONG, .to = &seconds, .min = 1},
	    {.name = "--min-moves", .kind = OPT_LONG, .to = &min_moves},
	    {.name = "--max-seconds", .kind = OPT_LONG, .to = &max_seconds, .min = 1},
	    {.name = "--threads", .kind = OPT_INT, .to = &nreaders, .min = 1},
	    {.name = "--hot-shared", .kind = OPT_INT, .to = &hot_shared},
	    {.name = "--hot-pages", .kind = OPT_ULONG, .to = &hot_pages, .min = 1},
	    {.name = "--move-ms", .kind = OPT_LONG, .to = &move_ms},
	    {.name = "--move-traversals", .kind = OPT_LONG, .to = &move_traversals, .min = 1},
	    {.name = "--write-ms", .kind = OPT_LONG, .to = &write_ms},
	    {.name = "--fill-mb", .kind = OPT_LONG, .to = &fill_mb, .min = 1},
	    {.name = "--compaction-proactiveness",
	     .kind = OPT_LONG,
	     .to = &proactiveness,
	     .min = -1},
	    {.name = "--isolate", .kind = OPT_INT, .to = &isolate},
	    {.name = "--print", .kind = OPT_LONG, .to = &max_print},
	    {.name = "--gen", .kind = OPT_STR, .to = &gen},
	    {.name = "--disk-mb", .kind = OPT_LONG, .to = &disk_mb, .min = 1},
	};

	prog = "checker";
	parse_opts(argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
	if (max_print > MAX_RECORDS)
		max_print = MAX_RECORDS;
	if (max_seconds < 0)
		max_seconds = 3 * seconds + 60;
	if (gen)
		return disk_mb ? gen_image(gen, disk_mb) : (fputs(usage, stderr), 2);
	if (nreaders < 0)
		nreaders = ncpu > 1 ? ncpu - 1 : 1;
	if (fill_mb < 0) {
		/* Leave about 64 MiB for the page cache: a short inactive list, reclaimed fast. */
		fill_mb = mem_available_mb() - 64;
		if (fill_mb < 16)
			fill_mb = 16;
	}
	if (nreaders > MAX_READERS)
		nreaders = MAX_READERS;

	fd = open(dev, O_RDONLY);
	if (fd < 0)
		die(dev);
	npages = fd_size(fd) / PAGE_SIZE;
	hot_span = hot_shared ? hot_pages : hot_pages * (unsigned long)nreaders;
	if (npages < 4 * hot_span || npages > SIG_MAX_PAGES) {
		fprintf(stderr, "%s: %s: %lu pages, want %lu..%lu\n", prog, dev, npages,
			4 * hot_span, SIG_MAX_PAGES);
		return 2;
	}
	/* The disk must carry signatures: check the first and the last page. */
	if (pread_ok(fd, 0, 0) != 1 || pread_ok(fd, npages - 1, 0) != 1) {
		fprintf(stderr, "%s: %s carries no signature image (checker --gen)\n", prog, dev);
		return 2;
	}
	map = mmap(NULL, npages * PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	shsize = sizeof(*sh) + npages * sizeof(sh->version[0]);
	sh = mmap(NULL, shsize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		die("mmap shared");
	nslots = npages / 2 / hot_span; /* hot sets: aligned, in the first half */
	atomic_store(&sh->hot_base, nslots / 2 * hot_span);
	prefault(nslots / 2 * hot_span);

	if (isolate && ncpu > 1)
		isolated = isolate_readers();
	/*
	 * Proactive compaction (kcompactd, every 500 ms) migrates pages this process
	 * maps, and each migration flushes the readers' TLBs: measured, it hid a kernel
	 * that frees reclaimed pages without the flush in 4 of 6 20-second runs.
	 */
	if (proactiveness >= 0 &&
	    write_sysctl("/proc/sys/vm/compaction_proactiveness", proactiveness))
		fprintf(stderr, "%s: cannot set vm.compaction_proactiveness\n", prog);
	fflush(stdout);
	t_start = now_s();
	filler = fork();
	if (filler < 0)
		die("fork");
	if (!filler)
		filler_main();
	pin_to_cpu(0);
	for (i = 0; i < nreaders; i++) {
		readers[i].id = i;
		readers[i].cpu = ncpu > 1 ? 1 + i % (ncpu - 1) : 0;
		errno = pthread_create(&readers[i].tid, NULL, reader_main, &readers[i]);
		if (errno)
			die("pthread_create");
	}
	if ((errno = pthread_create(&streamer, NULL, streamer_main, NULL)))
		die("pthread_create");
	if (write_ms && (errno = pthread_create(&writer, NULL, writer_main, NULL)))
		die("pthread_create");

	/*
	 * Move the hot set to a random aligned place once reclaim has gone through the
	 * inactive file list move_traversals times since the last move: a page the
	 * readers fault in is kept by the first scan (referenced) and reclaimed by the
	 * second. Counting reclaimed pages rather than seconds keeps this working on a
	 * slow or loaded host. (--move-ms: on a timer instead.)
	 */
	t0 = now_s();
	end = t0 + seconds;
	next_move = t0 + move_ms / 1e3;
	stolen_at_move = vm_reclaimed();
	inactive_at_move = inactive_file_pages();
	t_move = t0;
	for (;;) {
		double t = now_s();
		struct timespec ts = {0, 50 * 1000000};
		int move;

		print_records(fd, &printed);
		if ((t >= end && (long)atomic_load(&sh->moves) >= min_moves) ||
		    t >= t0 + max_seconds)
			break;
		if (move_ms > 0) {
			move = t >= next_move;
		} else {
			long stolen = vm_reclaimed(), inactive = inactive_file_pages();

			if (inactive > inactive_at_move)
				inactive_at_move = inactive;
			move = t - t_move >= 0.5 &&
			       stolen - stolen_at_move >= move_traversals * inactive_at_move;
		}
		if (move) {
			rnd ^= rnd << 13;
			rnd ^= rnd >> 7;
			rnd ^= rnd << 17;
			prefault(rnd % nslots * hot_span);
			atomic_store(&sh->hot_base, rnd % nslots * hot_span);
			atomic_fetch_add(&sh->moves, 1);
			next_move = t + move_ms / 1e3;
			stolen_at_move = vm_reclaimed();
			inactive_at_move = inactive_file_pages();
			t_move = t;
		}
		nanosleep(&ts, NULL);
	}
	atomic_store(&sh->stop, 1);
	for (i = 0; i < nreaders; i++)
		pthread_join(readers[i].tid, NULL);
	pthread_join(streamer, NULL);
	if (write_ms)
		pthread_join(writer, NULL);
	end = now_s();
	if (waitpid(filler, &status, 0) != filler || !WIFEXITED(status) || WEXITSTATUS(status))
		fprintf(stderr, "%s: the filler process failed (status %#x)\n", prog, status);
	print_records(fd, &printed);

	for (i = 0; i < nreaders; i++) {
		reads += atomic_load(&sh->rs[i].reads);
		mismatches += atomic_load(&sh->rs[i].mismatches);
		episodes += atomic_load(&sh->rs[i].episodes);
		nvcsw += atomic_load(&sh->rs[i].nvcsw);
		nivcsw += atomic_load(&sh->rs[i].nivcsw);
	}
	mismatches += atomic_load(&sh->stream_mismatches);
	printf("seconds=%ld\n", seconds);
	printf("min_moves=%ld\n", min_moves);
	printf("readers=%d\n", nreaders);
	printf("reader_cpus=");
	for (i = 0; i < nreaders; i++)
		printf("%s%d", i ? "," : "", readers[i].cpu);
	printf("\npages=%lu\n", npages);
	printf("hot_pages=%lu\n", hot_pages);
	printf("hot_shared=%d\n", hot_shared);
	if (move_ms > 0)
		printf("move_ms=%ld\n", move_ms);
	else
		printf("move_traversals=%ld\n", move_traversals);
	printf("fill_budget_mb=%ld\n", fill_mb);
	printf("moves=%lu\n", atomic_load(&sh->moves));
	printf("reads=%lu\n", reads);
	printf("reads_per_s=%.0f\n", reads / (end - t0));
	printf("isolated_tasks=%d\n", isolated);
	printf("compaction_proactiveness=%ld\n", proactiveness);
	printf("reader_voluntary_switches=%ld\n", nvcsw);
	printf("reader_involuntary_switches=%ld\n", nivcsw);
	printf("stream_pages=%lu\n", atomic_load(&sh->stream_pages));
	printf("writes=%lu\n", atomic_load(&sh->writes));
	printf("fill_mb=%lu\n", atomic_load(&sh->fill_mb));
	printf("mismatches=%lu\n", mismatches);
	printf("episodes=%lu\n", episodes);
	printf("first_mismatch_s=%.1f\n", atomic_load(&sh->first_mismatch));
	for (k = 0; k < NR_KINDS; k++)
		printf("mismatch_%s=%lu\n", kind_name[k], atomic_load(&sh->kinds[k]));
	printf("stream_mismatches=%lu\n", atomic_load(&sh->stream_mismatches));
	printf("pread_checked=%lu\n", atomic_load(&sh->pread_checked));
	printf("pread_wrong=%lu\n", atomic_load(&sh->pread_bad));
	printf("runtime_s=%.2f\n", end - t0);
	fflush(stdout);
	return mismatches ? 1 : 0;
}
