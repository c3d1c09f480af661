// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/kernel/guest/migrate.c - the "migrate" workload: a migrator moves a
 * read-only mapping between two NUMA nodes while readers read it.
 *
 * The region is private anonymous memory, filled with page signatures (as the
 * checker's, guest/common.h) by the main thread on CPU 0 and then made
 * read-only. Reader threads, pinned to CPUs 1..N, read random words of it and
 * check each against its signature. The migrator (the main thread, CPU 0) moves
 * the whole region to the other node with move_pages(2), --chunk pages a call,
 * --rounds times. Every page moved unmaps a PTE of an address space live on the
 * readers' CPUs: 6.1 flushes each such PTE at once (a shootdown per page), a
 * kernel that batches migration's flush (lib/kernel/batched) once per batch
 * of up to 512 pages. (The region's PTEs
 * are dirty from the fill; luf, which defers nothing of migration yet, could
 * defer only clean ones.) The readers' check has not been seen failing: the
 * source of a migrated page keeps its contents until its frame is reused,
 * and nothing here reuses it.
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
 *   --mb N       size of the region in MiB (default 16)
 *   --readers N  reader threads (default: the CPUs but one)
 *   --writers N  writer threads (default 0), over a writable region of --mb
 *   --rounds N   moves of the whole region (default 2; under TCG a kernel that
 *                flushes per page moves fewer than a hundred pages a second)
 *   --chunk N    pages per move_pages() call (default 512, migrate_pages()'s
 *                batch; at most 4096)
 * Prints key=value lines: rounds, pages_migrated (pages move_pages() reported on
 * their target node), migrate_s (time spent in move_pages()), pages_per_s,
 * lookups (words the readers read and checked while the pages moved),
 * lookups_per_s (those per second of move_pages(), all readers), bad_reads
 * (words that were not their signature, over the readers' whole run),
 * migrate_shootdowns (the guest's "TLB" interrupts while the pages moved),
 * shootdowns_per_page (per page moved), writes (the writers' counter updates)
 * and lost_writes.
 * Exit: 0 done, 1 a bad read, a lost write, no second node or a page not
 * moved, 2 usage or set-up failure (no "TLB" row in /proc/interrupts).
 */
#include "common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>

/* include/uapi/linux/mempolicy.h's (glibc has no numaif.h; libnuma does). */
#define MPOL_MF_MOVE (1 << 1)
#define MAX_CHUNK 4096

static const char usage[] =
    "usage: migrate [--mb N] [--readers N] [--writers N] [--rounds N] [--chunk N]\n";

static uint64_t *region, *wregion;
static unsigned long nr_pages;
static int nr_writers;
static atomic_int stop;
static atomic_long bad_reads, writes, lost_writes;
static pthread_barrier_t started;

/* A reader or a writer; a reader's @done (words read so far) on a line of its own. */
struct worker {
	_Alignas(64) atomic_long done;
	pthread_t thread;
	int cpu;
	int index;
};

static void *reader_main(void *arg)
{
	struct worker *r = arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL * (uint64_t)(r->cpu + 1);
	long n = 0, bad = 0;

	if (pin_to_cpu(r->cpu))
		fprintf(stderr, "migrate: cannot pin a reader to CPU %d\n", r->cpu);
	pthread_barrier_wait(&started);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		uint64_t page, w, v;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		page = x % nr_pages;
		w = (x >> 32) % WORDS_PER_PAGE;
		v = ((volatile uint64_t *)region)[page * WORDS_PER_PAGE + w];
		if (v != sig_word(page, 0, (unsigned int)w) && bad++ < 4)
			fprintf(stderr, "migrate: page %lu word %lu: %#lx\n", (unsigned long)page,
				(unsigned long)w, (unsigned long)v);
		atomic_store_explicit(&r->done, ++n, memory_order_relaxed);
	}
	atomic_fetch_add(&bad_reads, bad);
	return NULL;
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
	struct worker *w = arg;
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

/* Move @n pages of @base from @first to @node; how many are there now, or -1. */
static long move_chunk(uint64_t *base, unsigned long first, unsigned long n, int node)
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
	if (syscall(SYS_move_pages, 0, n, pages, nodes, status, MPOL_MF_MOVE) < 0)
		return -1;
	for (i = 0; i < n; i++)
		there += status[i] == node;
	return there;
}

int main(int argc, char **argv)
{
	int nr_readers = nr_cpus() - 1, rounds = 2, chunk = 512, mb = 16, i, round, r;
	const struct opt opts[] = {
	    {"--mb", OPT_INT, &mb, 1},
	    {"--readers", OPT_INT, &nr_readers, 1},
	    {"--writers", OPT_INT, &nr_writers, 0},
	    {"--rounds", OPT_INT, &rounds, 1},
	    {"--chunk", OPT_INT, &chunk, 1},
	};
	struct worker *workers;
	long moved = 0, shootdowns, lookups = 0, want;
	double t0, spent = 0;
	unsigned long p;

	prog = "migrate";
	parse_opts(argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
	if (chunk > MAX_CHUNK || nr_readers < 1) {
		fprintf(stderr, "migrate: --chunk at most %d, and one reader or more\n%s",
			MAX_CHUNK, usage);
		return 2;
	}
	if (pin_to_cpu(0))
		die("pin the migrator to CPU 0");
	nr_pages = (unsigned long)mb << 20 >> 12;
	region = mmap(NULL, nr_pages * PAGE_SIZE, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		die("mmap");
	for (p = 0; p < nr_pages; p++)
		sig_fill(region + p * WORDS_PER_PAGE, p, 0);
	if (mprotect(region, nr_pages * PAGE_SIZE, PROT_READ))
		die("mprotect");
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
		workers[i].cpu = 1 + i % (nr_cpus() > 1 ? nr_cpus() - 1 : 1);
		workers[i].index = i - nr_readers;
		errno = pthread_create(&workers[i].thread, NULL,
				       i < nr_readers ? reader_main : writer_main, &workers[i]);
		if (errno)
			die("pthread_create");
	}

	pthread_barrier_wait(&started);
	for (i = 0; i < nr_readers; i++)
		lookups -= atomic_load_explicit(&workers[i].done, memory_order_relaxed);
	shootdowns = tlb_shootdowns();
	if (shootdowns < 0) {
		fprintf(stderr, "migrate: no TLB row in /proc/interrupts\n");
		return 2;
	}
	for (round = 0; round < rounds; round++) {
		int node = (round + 1) % 2;

		for (r = 0; r < (nr_writers ? 2 : 1); r++) {
			for (p = 0; p < nr_pages; p += (unsigned long)chunk) {
				unsigned long n = nr_pages - p < (unsigned long)chunk
						      ? nr_pages - p
						      : (unsigned long)chunk;
				long there;

				t0 = now_s();
				there = move_chunk(r ? wregion : region, p, n, node);
				spent += now_s() - t0;
				if (there < 0) {
					fprintf(stderr, "migrate: move_pages to node %d: %s\n",
						node, strerror(errno));
					atomic_store(&stop, 1);
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

	printf("rounds=%d\npages_migrated=%ld\nmigrate_s=%.3f\npages_per_s=%.0f\n", rounds, moved,
	       spent, spent > 0 ? moved / spent : 0);
	printf("lookups=%ld\nlookups_per_s=%.0f\nbad_reads=%ld\nmigrate_shootdowns=%ld\n", lookups,
	       spent > 0 ? lookups / spent : 0, atomic_load(&bad_reads), shootdowns);
	printf("shootdowns_per_page=%.4f\nwrites=%ld\nlost_writes=%ld\n",
	       moved ? (double)shootdowns / moved : 0, atomic_load(&writes),
	       atomic_load(&lost_writes));
	if (atomic_load(&bad_reads) || atomic_load(&lost_writes))
		return 1;
	want = (long)(nr_pages * (unsigned long)rounds * (nr_writers ? 2 : 1));
	if (moved < want) {
		fprintf(stderr, "migrate: %ld of %ld page moves reached their node\n", moved, want);
		return 1;
	}
	return 0;
}
