// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/kernel/guest/tier.c - the "tier" workload: random lookups over a table
 * larger than the fast memory tier, while the kernel demotes and promotes its
 * pages (an XSBench-like load, as the LUF patches were measured on).
 *
 * The guest (tests/kernel/boot --workload tier) has two NUMA nodes: node 0 with
 * every CPU and the RAM, node 1 without CPUs, an emulated NVDIMM that the dax
 * kmem driver onlined as system RAM, in a lower memory tier. Reclaim on node 0
 * demotes its coldest pages to node 1 (demotion_enabled) and NUMA balancing in
 * its tiering mode (kernel.numa_balancing=2) promotes the pages of node 1 that
 * hint faults find hot: both migrate pages between the nodes.
 *
 * The table is a data file (--dev: an ext4 file of page signatures,
 * guest/common.h, larger than node 0), mapped shared, readable and writable,
 * and only ever read: its pages stay in the page cache, clean, with read-only
 * PTEs (ext4 asks for write faults), the translations whose flush luf may
 * defer. NUMA balancing scans no read-only file mapping, no page of a private
 * one (a page the page cache shares is copy-on-write there) and no tmpfs file
 * (its shared policy has no MPOL_F_MOF). XSBench's own table is anonymous
 * memory its initialisation wrote: writable, dirty translations, which luf
 * never defers.
 * The main thread reads every page once; then lookup threads, pinned to the
 * CPUs, each read one random word of the table per lookup and check it
 * against its signature, for --seconds.
 *
 * Usage: tier --dev FILE [--threads N] [--seconds N]
 *   --dev FILE   the table (boot: /mnt/data, the disk's ext4 file)
 *   --threads N  lookup threads (default 4), pinned to CPU i % CPUs
 *   --seconds N  length of the lookup phase (default 60)
 * Prints key=value lines, of the lookup phase alone (the first reads demote too,
 * and are not counted): runtime_s, lookups, lookups_per_s, bad_reads (words that were not
 * their signature), tlb_shootdowns (the "TLB" row of /proc/interrupts), and the
 * /proc/vmstat deltas nr_tlb_remote_flush, nr_tlb_remote_flush_received,
 * pgmigrate_success, pgdemote_kswapd, pgdemote_direct, pgpromote_success,
 * numa_pages_migrated, numa_hint_faults, numa_pte_updates (PTEs NUMA balancing
 * made PROT_NONE, each range of them flushed) and nr_luf_deferred (-1 without
 * luf); node1_pages (the table's pages on
 * node 1 at the end, of a sample of 4,096).
 * Exit: 0 done, 1 a bad read, or no tiering (it proves nothing): no page of the
 * sample on node 1 at the end, numa_balancing not 2, or no page demoted or none
 * promoted while looking up; 2 usage or set-up failure.
 */
#include "common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/syscall.h>

static const char usage[] = "usage: tier --dev FILE [--threads N] [--seconds N]\n";

/* The /proc/vmstat counters of the lookup phase (a trailing space: exact names). */
static const char *const vm_keys[] = {
    "nr_tlb_remote_flush ", "nr_tlb_remote_flush_received ",
    "pgmigrate_success ",   "pgdemote_kswapd ",
    "pgdemote_direct ",	    "pgpromote_success ",
    "numa_pages_migrated ", "numa_hint_faults ",
    "numa_pte_updates ",    "nr_luf_deferred ",
};
#define NR_VM_KEYS (sizeof(vm_keys) / sizeof(vm_keys[0]))
/* The indexes in vm_keys of the counters that show tiering at work. */
enum { DEMOTE_KSWAPD = 3, DEMOTE_DIRECT = 4, PROMOTE = 5 };
#define SAMPLE 4096

static uint64_t *table;
static unsigned long nr_pages;
static atomic_int stop;
static atomic_long bad_reads;

static void *looker_main(void *arg)
{
	struct guest_worker *l = arg;
	uint64_t x = 0x9e3779b97f4a7c15ULL * (uint64_t)(l->index + 7);
	long n = 0, bad = 0;

	if (pin_to_cpu(l->cpu))
		fprintf(stderr, "tier: cannot pin a lookup thread to CPU %d\n", l->cpu);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		bad += sig_read_random(table, nr_pages, &x, bad, "tier");
		/* Published every 256 lookups: the count is read once, at the end. */
		if (!(++n & 255))
			atomic_store_explicit(&l->done, n, memory_order_relaxed);
	}
	atomic_store_explicit(&l->done, n, memory_order_relaxed);
	atomic_fetch_add(&bad_reads, bad);
	return NULL;
}

/* The first number in the file @path, or -1. */
static long read_num(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void vm_snap(long *v)
{
	size_t i;

	for (i = 0; i < NR_VM_KEYS; i++)
		v[i] = vmstat_sum(vm_keys[i]);
}

/* Of SAMPLE pages spread over the table, how many are on node 1 (move_pages' query). */
static long node1_pages(void)
{
	static void *pages[SAMPLE];
	static int status[SAMPLE];
	unsigned long i;
	long n = 0;

	for (i = 0; i < SAMPLE; i++)
		pages[i] = (char *)table + (i * (nr_pages / SAMPLE)) * PAGE_SIZE;
	if (syscall(SYS_move_pages, 0, SAMPLE, pages, NULL, status, 0) < 0)
		return -1;
	for (i = 0; i < SAMPLE; i++)
		n += status[i] == 1;
	return n;
}

int main(int argc, char **argv)
{
	int threads = 4, seconds = 60, i, fd;
	const char *dev = NULL;
	const struct opt opts[] = {
	    {"--dev", OPT_STR, &dev, 0},
	    {"--threads", OPT_INT, &threads, 1},
	    {"--seconds", OPT_INT, &seconds, 1},
	};
	long vb[NR_VM_KEYS], va[NR_VM_KEYS], shoot, lookups = 0, on1, mode, demoted;
	struct guest_worker *lookers;
	double t0, spent;
	unsigned long p;
	size_t k;

	prog = "tier";
	parse_opts(argc, argv, opts, sizeof(opts) / sizeof(opts[0]), usage);
	if (!dev) {
		fprintf(stderr, "tier: --dev FILE is needed\n%s", usage);
		return 2;
	}
	fd = open(dev, O_RDWR);
	if (fd < 0)
		die(dev);
	nr_pages = fd_size(fd) / PAGE_SIZE;
	if (nr_pages < SAMPLE) {
		fprintf(stderr, "tier: %s has fewer than %d pages\n", dev, SAMPLE);
		return 2;
	}
	table = mmap(NULL, nr_pages * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (table == MAP_FAILED)
		die("mmap");
	/* Every page read once: the table in the page cache, node 0 full, demotion. */
	for (p = 0; p < nr_pages; p++)
		if (((volatile uint64_t *)table)[p * WORDS_PER_PAGE] != sig_word(p, 0, 0))
			atomic_fetch_add(&bad_reads, 1);

	lookers = aligned_alloc(64, (size_t)threads * sizeof(*lookers));
	if (!lookers)
		die("aligned_alloc");
	memset(lookers, 0, (size_t)threads * sizeof(*lookers));
	shoot = tlb_shootdowns();
	if (shoot < 0) {
		fprintf(stderr, "tier: no TLB row in /proc/interrupts\n");
		return 2;
	}
	vm_snap(vb);
	t0 = now_s();
	for (i = 0; i < threads; i++) {
		lookers[i].cpu = i % nr_cpus();
		lookers[i].index = i;
		errno = pthread_create(&lookers[i].thread, NULL, looker_main, &lookers[i]);
		if (errno)
			die("pthread_create");
	}
	sleep((unsigned int)seconds);
	atomic_store(&stop, 1);
	for (i = 0; i < threads; i++) {
		pthread_join(lookers[i].thread, NULL);
		lookups += atomic_load(&lookers[i].done);
	}
	spent = now_s() - t0;
	shoot = tlb_shootdowns() - shoot;
	vm_snap(va);
	on1 = node1_pages();

	printf("runtime_s=%.2f\nlookups=%ld\nlookups_per_s=%.0f\nbad_reads=%ld\n", spent, lookups,
	       lookups / spent, atomic_load(&bad_reads));
	printf("tlb_shootdowns=%ld\n", shoot);
	for (k = 0; k < NR_VM_KEYS; k++)
		printf("%.*s=%ld\n", (int)strlen(vm_keys[k]) - 1, vm_keys[k],
		       va[k] < 0 ? -1 : va[k] - vb[k]);
	mode = read_num("/proc/sys/kernel/numa_balancing");
	printf("node1_pages=%ld\nnuma_balancing=%ld\n", on1, mode);
	if (atomic_load(&bad_reads))
		return 1;
	/* Lookups that ran while nothing moved between the tiers prove nothing. */
	demoted = va[DEMOTE_KSWAPD] - vb[DEMOTE_KSWAPD] + va[DEMOTE_DIRECT] - vb[DEMOTE_DIRECT];
	if (on1 < 1 || mode != 2 || demoted < 1 || va[PROMOTE] - vb[PROMOTE] < 1) {
		fprintf(stderr,
			"tier: no tiering while looking up (node 1 pages %ld, numa_balancing %ld, "
			"%ld demoted, %ld promoted)\n",
			on1, mode, demoted, va[PROMOTE] - vb[PROMOTE]);
		return 1;
	}
	return 0;
}
