// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/kernel/guest/reclaim.c - the "reclaim" and "mixed" workloads.
 *
 * N threads, each pinned to its own CPU (thread i on CPU i mod nr_cpus), read one
 * byte of every page of a shared PROT_READ MAP_SHARED mapping of a disk larger
 * than RAM, P passes. Reclaim keeps unmapping the file pages the threads mapped,
 * and every unmap of a page of this multi-threaded mm needs a TLB shootdown.
 *
 * With --write-every K (the "mixed" workload uses 8), one page in K is written
 * (one byte) through a second, PROT_READ|PROT_WRITE MAP_SHARED mapping of the
 * same disk instead, so that reclaim also unmaps writable and dirty PTEs.
 *
 * By default thread i starts at page i * pages / N and wraps around (--stagger 0:
 * all threads start at page 0 and go in near lockstep, sharing faults).
 *
 * Usage: reclaim [--dev /dev/vda] [--threads N] [--passes P] [--write-every K]
 *                [--stagger 0|1]
 * Prints key=value lines: threads, passes, pages, reads, writes, runtime_s, ...
 */
#include "common.h"

#include <pthread.h>
#include <sys/mman.h>

struct worker {
	pthread_t tid;
	int id;
	int cpu;
	unsigned long reads;
	unsigned long writes;
	unsigned long sum;
	double seconds;
};

static const volatile unsigned char *rmap;
static volatile unsigned char *wmap;
static unsigned long npages;
static int nthreads = 4;
static int passes = 2;
static long write_every;
static int stagger = 1;
static pthread_barrier_t start_line;

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long start = stagger ? npages / nthreads * w->id : 0;
	unsigned long k, i, sum = 0;
	double t0;
	int pass;

	if (pin_to_cpu(w->cpu))
		fprintf(stderr, "%s: thread %d: cannot pin to CPU %d\n", prog, w->id, w->cpu);
	pthread_barrier_wait(&start_line);
	t0 = now_s();
	for (pass = 0; pass < passes; pass++) {
		for (k = 0; k < npages; k++) {
			i = start + k;
			if (i >= npages)
				i -= npages;
			if (write_every && i % write_every == 0) {
				wmap[i * PAGE_SIZE] = (unsigned char)(pass + 1);
				w->writes++;
			} else {
				sum += rmap[i * PAGE_SIZE];
				w->reads++;
			}
		}
	}
	w->seconds = now_s() - t0;
	w->sum = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dev = "/dev/vda";
	const struct opt opts[] = {
	    {.name = "--dev", .kind = OPT_STR, .to = &dev},
	    {.name = "--threads", .kind = OPT_INT, .to = &nthreads, .min = 1},
	    {.name = "--passes", .kind = OPT_INT, .to = &passes, .min = 1},
	    {.name = "--write-every", .kind = OPT_LONG, .to = &write_every},
	    {.name = "--stagger", .kind = OPT_INT, .to = &stagger},
	};
	struct worker *workers;
	unsigned long reads = 0, writes = 0;
	uint64_t size;
	double t0, t1;
	int fd, i;

	prog = "reclaim";
	parse_opts(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		   "usage: reclaim [--dev PATH] [--threads N] [--passes P] [--write-every K] "
		   "[--stagger 0|1]\n");
	if (write_every == 1) {
		fprintf(stderr, "%s: --write-every 1 would write every page; use >= 2\n", prog);
		return 2;
	}

	fd = open(dev, write_every ? O_RDWR : O_RDONLY);
	if (fd < 0)
		die(dev);
	size = fd_size(fd);
	npages = size / PAGE_SIZE;
	if (!npages) {
		fprintf(stderr, "%s: %s is empty\n", prog, dev);
		return 2;
	}
	rmap = mmap(NULL, npages * PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (rmap == MAP_FAILED)
		die("mmap PROT_READ");
	if (write_every) {
		wmap = mmap(NULL, npages * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (wmap == MAP_FAILED)
			die("mmap PROT_READ|PROT_WRITE");
	}

	workers = calloc(nthreads, sizeof(*workers));
	if (!workers || pthread_barrier_init(&start_line, NULL, nthreads + 1))
		die("setup");
	for (i = 0; i < nthreads; i++) {
		workers[i].id = i;
		workers[i].cpu = i % nr_cpus();
		errno = pthread_create(&workers[i].tid, NULL, worker_main, &workers[i]);
		if (errno)
			die("pthread_create");
	}
	pthread_barrier_wait(&start_line);
	t0 = now_s();
	for (i = 0; i < nthreads; i++) {
		pthread_join(workers[i].tid, NULL);
		reads += workers[i].reads;
		writes += workers[i].writes;
	}
	t1 = now_s();

	printf("threads=%d\n", nthreads);
	printf("passes=%d\n", passes);
	printf("cpus=%d\n", nr_cpus());
	printf("pages=%lu\n", npages);
	printf("disk_mb=%llu\n", (unsigned long long)(size >> 20));
	printf("write_every=%ld\n", write_every);
	printf("stagger=%d\n", stagger);
	printf("reads=%lu\n", reads);
	printf("writes=%lu\n", writes);
	printf("thread_seconds=");
	for (i = 0; i < nthreads; i++)
		printf("%s%.2f", i ? "," : "", workers[i].seconds);
	printf("\nruntime_s=%.2f\n", t1 - t0);
	fflush(stdout);
	return 0;
}
