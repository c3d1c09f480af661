// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/kernel/guest/migrate.c - the "migrate" workload: a migrator moves a
 * read-only mapping between two NUMA nodes while readers read it.
 *
 * The region is a memfd (tmpfs) filled with page signatures (as the checker's,
 * guest/common.h) by pwrite(), then mapped read-only and shared: its PTEs are
 * read-only and clean, the translations whose flush luf defers. Reader threads,
 * pinned to CPUs 1..N, read random words of it and check each against its
 * signature. The migrator (the main thread, CPU 0) moves the whole region to
 * the other node with move_pages(2), --chunk pages a call, --rounds times.
 * Every page moved unmaps a PTE of an address space live on the readers' CPUs:
 * 6.1 flushes each such PTE at once (a shootdown per page), a kernel that
 * batches migration's flush (lib/kernel/batched) once per batch of up to 512
 * pages, luf when the frames of the sources are reused or their copies
 * written. The next round moves the pages back into frames the last one freed:
 * a source frame handed to the page allocator before its flush is soon a copy
 * of another page, which a reader's stale translation reads (bad_reads).
 *
 * With --coherence N, a child process on the last CPU keeps a version in the
 * first word of each of N pages of a second memfd, which it maps shared and
 * writable: it increments a page's version, then publishes the new value in
 * shared memory. The readers also read those pages, through this process's
 * read-only mapping: a version older than the one published before the read
 * is a stale read (the old copy read after the new contents were seen). The
 * migrator moves them too (MPOL_MF_MOVE_ALL: two processes map them), in calls
 * of their own, after the read-only region. A folio with a read-only
 * translation here and a writable one in the child gets its writable one back
 * on the copy, and the child's next write needs no fault: the readers' stale
 * translations must be flushed before the copy is mapped.
 *
 * With --writers N, N more threads (on the readers' CPUs) each own every Nth
 * page of a second, writable region the migrator moves too: a writer reads
 * the counter it keeps in its page, checks it is the value it wrote last, and
 * writes the next. A write that reached the source after its copy (a flush
 * after the copy, not before) is lost: the next read, through the new
 * mapping, shows the value before it (lost_writes; the writers check their
 * pages once more after the last move).
 *
 * Usage: migrate [--mb N] [--readers N] [--writers N] [--rounds N] [--chunk N]
 *                [--coherence N] [--warm N]
 *   --mb N       size of the region in MiB (default 16)
 *   --readers N  reader threads (default: the CPUs but one)
 *   --writers N  writer threads (default 0), over a writable region of --mb
 *   --rounds N   moves of the whole region (default 2; under TCG a kernel that
 *                flushes per page moves fewer than a hundred pages a second)
 *   --chunk N    pages per move_pages() call (default 512, migrate_pages()'s
 *                batch; at most 4096)
 *   --coherence N  pages a child process writes (default 0: no child; at most
 *                --chunk), read by the readers too (3 CPUs or more: the child
 *                has the last to itself)
 *   --warm N     words each reader reads before the first move (default 0: the
 *                moves start with the readers): a reader holds a translation,
 *                which a source freed before its flush leaves stale, only for
 *                the pages it read before they moved; lookups and
 *                migrate_shootdowns count from the first move
 * Prints key=value lines: rounds, pages_migrated (pages move_pages() reported on
 * their target node), migrate_s (time spent in move_pages()), pages_per_s,
 * lookups (words the readers read and checked while the pages moved),
 * lookups_per_s (those per second of move_pages(), all readers), bad_reads
 * (words that were not their signature, over the readers' whole run),
 * migrate_shootdowns (the guest's "TLB" interrupts while the pages moved),
 * move_retries (move_pages() calls repeated for pages a first call left, up
 * to 10 a chunk), shootdowns_per_page (per page moved), writes (the writers'
 * counter updates), lost_writes, and with --coherence: shared_writes (the
 * child's) and stale_reads.
 * Exit: 0 done, 1 a bad read, a lost write, a stale read, no second node or a
 * page not moved, 2 usage or set-up failure (no "TLB" row in /proc/interrupts).
 */
#include "common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* include/uapi/linux/mempolicy.h's (glibc has no numaif.h; libnuma does). */
#define MPOL_MF_MOVE (1 << 1)
#define MPOL_MF_MOVE_ALL (1 << 2)
#define MAX_CHUNK 4096
#define MAX_TRIES 10

static const char usage[] = "usage: migrate [--mb N] [--readers N] [--writers N] [--rounds N] "
			    "[--chunk N] [--coherence N] [--warm N]\n";

static uint64_t *region, *wregion, *cregion;
static unsigned long nr_pages, nr_cpages;
static int nr_writers;
static atomic_int stop;
static atomic_long bad_reads, writes, lost_writes, stale_reads;
static pthread_barrier_t started;

/*
 * Shared with the --coherence child: each page's newest published version
 * (one per line: the child's stores do not share a line with the readers'
 * loads of other pages), its writes, and the stop flag.
 */
struct shared {
	atomic_int stop;
	atomic_long writes;
	struct {
		_Alignas(64) atomic_ulong version;
	} page[];
};

static struct shared *shared;

/* A reader: @arg is its struct guest_worker, whose @done counts the words read. */
static void *reader_main(void *arg)
{
	struct guest_worker *r = arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL * (uint64_t)(r->cpu + 1) ^ (uint64_t)r->index << 32;
	long n = 0, bad = 0, stale = 0;

	if (pin_to_cpu(r->cpu))
		fprintf(stderr, "migrate: cannot pin a reader to CPU %d\n", r->cpu);
	pthread_barrier_wait(&started);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		bad += sig_read_random(region, nr_pages, &x, bad, "migrate");
		if (nr_cpages) {
			uint64_t seen, after, page, v;

			/*
			 * The version read lies between the one published before
			 * and one more than the one published after (the child
			 * writes a version, then publishes it): older is a stale
			 * read, newer is not a version at all (a reused frame).
			 */
			page = (x >> 16) % nr_cpages;
			seen =
			    atomic_load_explicit(&shared->page[page].version, memory_order_acquire);
			v = ((volatile uint64_t *)cregion)[page * WORDS_PER_PAGE];
			atomic_thread_fence(memory_order_acquire);
			after =
			    atomic_load_explicit(&shared->page[page].version, memory_order_relaxed);
			if ((v < seen || v > after + 1) && stale++ < 4)
				fprintf(stderr,
					"migrate: stale read: page %lu version %lu, published %lu "
					"before and %lu after\n",
					(unsigned long)page, (unsigned long)v, (unsigned long)seen,
					(unsigned long)after);
		}
		atomic_store_explicit(&r->done, ++n, memory_order_relaxed);
	}
	atomic_fetch_add(&bad_reads, bad);
	atomic_fetch_add(&stale_reads, stale);
	return NULL;
}

/*
 * The --coherence child, on CPU @cpu: a version of its own in each page of the
 * memfd @fd, written through its own writable mapping, then published.
 */
static void child_main(int fd, int cpu)
{
	uint64_t *w = mmap(NULL, nr_cpages * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	unsigned long p;
	long n = 0;

	if (w == MAP_FAILED || munmap(cregion, nr_cpages * PAGE_SIZE))
		die("child mmap");
	if (pin_to_cpu(cpu))
		fprintf(stderr, "migrate: cannot pin the child to CPU %d\n", cpu);
	while (!atomic_load_explicit(&shared->stop, memory_order_relaxed)) {
		for (p = 0; p < nr_cpages; p++) {
			uint64_t v = ((volatile uint64_t *)w)[p * WORDS_PER_PAGE] + 1;

			((volatile uint64_t *)w)[p * WORDS_PER_PAGE] = v;
			atomic_store_explicit(&shared->page[p].version, v, memory_order_release);
			n++;
		}
	}
	atomic_store(&shared->writes, n);
	_exit(0);
}

/* A memfd of @n pages, page p filled by @fill(@buf, p); mapped read-only and shared. */
static uint64_t *memfd_region(const char *name, unsigned long n, int *fdp,
			      void (*fill)(uint64_t *buf, unsigned long p))
{
	static uint64_t buf[WORDS_PER_PAGE];
	int fd = memfd_create(name, 0);
	unsigned long p;
	void *m;

	if (fd < 0)
		die("memfd_create");
	for (p = 0; p < n; p++) {
		fill(buf, p);
		if (pwrite(fd, buf, PAGE_SIZE, (off_t)(p * PAGE_SIZE)) != (ssize_t)PAGE_SIZE)
			die("pwrite");
	}
	/* Populated: move_pages() finds no page where no reader has read yet. */
	m = mmap(NULL, n * PAGE_SIZE, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (m == MAP_FAILED)
		die("mmap");
	if (fdp)
		*fdp = fd;
	else
		close(fd);
	return m;
}

static void fill_sig(uint64_t *buf, unsigned long p)
{
	sig_fill(buf, p, 0);
}

/* Version 1 in word 0, zeros elsewhere. */
static void fill_version(uint64_t *buf, unsigned long p)
{
	(void)p;
	memset(buf, 0, PAGE_SIZE);
	buf[0] = 1;
}

/*
 * 1 if the word of wregion's page @p is not @last, what its writer wrote there
 * last (a lost write: the first four, @lost being those so far, are printed),
 * else 0.
 */
static long check_written(uint64_t p, uint64_t last, long lost)
{
	uint64_t v = ((volatile uint64_t *)wregion)[p * WORDS_PER_PAGE];

	if (v == last)
		return 0;
	if (lost < 4)
		fprintf(stderr, "migrate: lost write: page %lu holds %lu, not %lu\n",
			(unsigned long)p, (unsigned long)v, (unsigned long)last);
	return 1;
}

/* Writer @w->index: the pages index, index + nr_writers, ... of wregion. */
static void *writer_main(void *arg)
{
	struct guest_worker *w = arg;
	unsigned long p, step = (unsigned long)nr_writers;
	long n = 0, lost = 0;
	uint64_t *last;

	if (pin_to_cpu(w->cpu))
		fprintf(stderr, "migrate: cannot pin a writer to CPU %d\n", w->cpu);
	last = calloc(nr_pages, sizeof(*last));
	if (!last)
		die("calloc");
	pthread_barrier_wait(&started);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		for (p = (unsigned long)w->index; p < nr_pages; p += step) {
			lost += check_written(p, last[p], lost);
			((volatile uint64_t *)wregion)[p * WORDS_PER_PAGE] = ++last[p];
			n++;
		}
	}
	/* The last batch moved after this writer's last check of those pages. */
	for (p = (unsigned long)w->index; p < nr_pages; p += step)
		lost += check_written(p, last[p], lost);
	free(last);
	atomic_fetch_add(&writes, n);
	atomic_fetch_add(&lost_writes, lost);
	return NULL;
}

/*
 * Move @n pages of @base from @first to @node (@flags: MPOL_MF_MOVE, or _ALL);
 * how many are there now, or -1.
 */
static long move_chunk(uint64_t *base, unsigned long first, unsigned long n, int node, int flags)
{
	static void *pages[MAX_CHUNK];
	static int nodes[MAX_CHUNK], status[MAX_CHUNK];
	unsigned long i;
	long there = 0;

	for (i = 0; i < n; i++) {
		pages[i] = (char *)base + (first + i) * PAGE_SIZE;
		nodes[i] = node;
		status[i] = -1;
	}
	if (syscall(SYS_move_pages, 0, n, pages, nodes, status, flags) < 0)
		return -1;
	for (i = 0; i < n; i++)
		there += status[i] == node;
	return there;
}

int main(int argc, char **argv)
{
	int nr_readers = nr_cpus() - 1, rounds = 2, chunk = 512, mb = 16, coherence = 0, warm = 0;
	int i, round;
	int r, cfd = -1, ncpu, tries;
	long retries = 0;
	pid_t child = -1;
	const struct opt opts[] = {
	    {"--mb", OPT_INT, &mb, 1},
	    {"--readers", OPT_INT, &nr_readers, 1},
	    {"--writers", OPT_INT, &nr_writers, 0},
	    {"--rounds", OPT_INT, &rounds, 1},
	    {"--chunk", OPT_INT, &chunk, 1},
	    {"--coherence", OPT_INT, &coherence, 0},
	    {"--warm", OPT_INT, &warm, 0},
	};
	struct guest_worker *workers;
	long moved = 0, shootdowns, lookups = 0, want;
	double t0, spent = 0;
	unsigned long p;

	prog = "migrate";
	parse_opts(argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
	/* The CPUs of the readers and writers: 1 .. ncpu - 1 (the child's is ncpu). */
	ncpu = nr_cpus() - (coherence ? 1 : 0);
	if (chunk > MAX_CHUNK || nr_readers < 1 || coherence > chunk || ncpu < 2) {
		fprintf(stderr,
			"migrate: --chunk at most %d, one reader or more, --coherence at "
			"most --chunk and 3 CPUs or more with it\n%s",
			MAX_CHUNK, usage);
		return 2;
	}
	if (pin_to_cpu(0))
		die("pin the migrator to CPU 0");
	nr_pages = (unsigned long)mb << 20 >> 12;
	/* The child first: it must not map the other regions (move_pages() skips shared pages). */
	if (coherence) {
		nr_cpages = (unsigned long)coherence;
		cregion = memfd_region("migrate-coherence", nr_cpages, &cfd, fill_version);
		shared = mmap(NULL, sizeof(*shared) + nr_cpages * sizeof(shared->page[0]),
			      PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (shared == MAP_FAILED)
			die("mmap");
		for (p = 0; p < nr_cpages; p++)
			atomic_store(&shared->page[p].version, 1);
		child = fork();
		if (child < 0)
			die("fork");
		if (!child)
			child_main(cfd, ncpu);
	}
	region = memfd_region("migrate", nr_pages, NULL, fill_sig);
	if (nr_writers) {
		wregion = mmap(NULL, nr_pages * PAGE_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (wregion == MAP_FAILED)
			die("mmap");
		memset(wregion, 0, nr_pages * PAGE_SIZE);
	}

	workers = aligned_alloc(64, (size_t)(nr_readers + nr_writers) * sizeof(*workers));
	if (!workers)
		die("aligned_alloc");
	memset(workers, 0, (size_t)(nr_readers + nr_writers) * sizeof(*workers));
	errno = pthread_barrier_init(&started, NULL, (unsigned int)(nr_readers + nr_writers + 1));
	if (errno)
		die("pthread_barrier_init");
	for (i = 0; i < nr_readers + nr_writers; i++) {
		workers[i].cpu = 1 + i % (ncpu - 1);
		workers[i].index = i - nr_readers;
		errno = pthread_create(&workers[i].thread, NULL,
				       i < nr_readers ? reader_main : writer_main, &workers[i]);
		if (errno)
			die("pthread_create");
	}

	pthread_barrier_wait(&started);
	for (i = 0; i < nr_readers; i++)
		while (atomic_load_explicit(&workers[i].done, memory_order_relaxed) < warm)
			sched_yield();
	for (i = 0; i < nr_readers; i++)
		lookups -= atomic_load_explicit(&workers[i].done, memory_order_relaxed);
	shootdowns = tlb_shootdowns();
	if (shootdowns < 0) {
		fprintf(stderr, "migrate: no TLB row in /proc/interrupts\n");
		return 2;
	}
	for (round = 0; round < rounds; round++) {
		int node = (round + 1) % 2;

		/* The read-only region, the --coherence pages, the writers' region. */
		for (r = 0; r < 3; r++) {
			uint64_t *base = r == 0 ? region : r == 1 ? cregion : wregion;
			unsigned long size = r == 1 ? nr_cpages : nr_pages;

			for (p = 0; base && p < size; p += (unsigned long)chunk) {
				unsigned long n = size - p < (unsigned long)chunk
						      ? size - p
						      : (unsigned long)chunk;
				long there;

				t0 = now_s();
				/*
				 * A page its writer faults on while it moves
				 * can fail to move (the waiter's reference):
				 * the call is repeated for the pages left.
				 */
				for (tries = 0; tries < MAX_TRIES; tries++) {
					there =
					    move_chunk(base, p, n, node,
						       r == 1 ? MPOL_MF_MOVE_ALL : MPOL_MF_MOVE);
					if (there < 0 || there == (long)n)
						break;
					retries++;
				}
				spent += now_s() - t0;
				if (there < 0) {
					fprintf(stderr, "migrate: move_pages to node %d: %s\n",
						node, strerror(errno));
					atomic_store(&stop, 1);
					if (child > 0)
						kill(child, SIGKILL);
					return 1;
				}
				moved += there;
			}
		}
	}
	shootdowns = tlb_shootdowns() - shootdowns;
	for (i = 0; i < nr_readers; i++)
		lookups += atomic_load_explicit(&workers[i].done, memory_order_relaxed);
	atomic_store(&stop, 1);
	for (i = 0; i < nr_readers + nr_writers; i++)
		pthread_join(workers[i].thread, NULL);
	if (child > 0) {
		int status;

		atomic_store(&shared->stop, 1);
		if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "migrate: the --coherence child failed\n");
			return 2;
		}
	}

	printf("rounds=%d\npages_migrated=%ld\nmigrate_s=%.3f\npages_per_s=%.0f\n", rounds, moved,
	       spent, spent > 0 ? moved / spent : 0);
	printf("lookups=%ld\nlookups_per_s=%.0f\nbad_reads=%ld\nmigrate_shootdowns=%ld\n", lookups,
	       spent > 0 ? lookups / spent : 0, atomic_load(&bad_reads), shootdowns);
	printf("move_retries=%ld\nshootdowns_per_page=%.4f\nwrites=%ld\nlost_writes=%ld\n", retries,
	       moved ? (double)shootdowns / moved : 0, atomic_load(&writes),
	       atomic_load(&lost_writes));
	if (child > 0)
		printf("shared_writes=%ld\nstale_reads=%ld\n", atomic_load(&shared->writes),
		       atomic_load(&stale_reads));
	if (atomic_load(&bad_reads) || atomic_load(&lost_writes) || atomic_load(&stale_reads))
		return 1;
	want = (long)((nr_pages * (nr_writers ? 2 : 1) + nr_cpages) * (unsigned long)rounds);
	if (moved < want) {
		fprintf(stderr, "migrate: %ld of %ld page moves reached their node\n", moved, want);
		return 1;
	}
	return 0;
}
