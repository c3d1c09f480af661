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
 * Swap-backed memory ("reclaim-tmpfs", "reclaim-anon"; the guest has swapped on a
 * disk first): with --fill MB the data is a file of MB MiB at --dev (a path on a
 * tmpfs, given explicitly; never a block device), written through write() first,
 * then read through a PROT_READ MAP_SHARED mapping as above. With --anon MB it is
 * MB MiB of private anonymous memory, written, made PROT_READ, then read by N
 * forked children (not threads), child i pinned to CPU (i + 1) mod nr_cpus: the
 * children map the same frames read-only, so reclaim unmaps each page from every
 * child that mapped it (and, the first time, from the parent that wrote it). Either
 * way every page holds fill_byte() of its index, and each read is checked against
 * it ("bad_reads": a page that came back from swap with other contents). The
 * writes come before the read phase that runtime_s and thread_seconds time.
 *
 * Usage: reclaim [--dev /dev/vda] [--threads N] [--passes P] [--write-every K]
 *                [--stagger 0|1] [--fill MB | --anon MB]
 * Prints key=value lines: threads, passes, pages, reads, writes, bad_reads,
 * runtime_s, read_tlb_shootdowns and read_pages_reclaimed (the read phase's: TLB
 * shootdowns received, the "TLB" row of /proc/interrupts, and pages reclaimed),
 * ...; exit 1 if a read was bad.
 */
#include "common.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

/* In memory shared with the children under --anon. */
struct worker {
	pthread_t tid;
	pid_t pid; /* --anon: the child's */
	int id;
	int cpu;
	unsigned long reads;
	unsigned long writes;
	unsigned long bad_reads;
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
static long fill_mb;
static long anon_mb;
/* Whether each read is checked against fill_byte() (--fill, --anon). */
static int check;
static pthread_barrier_t *start_line;

/* The byte every byte of page @i holds under --fill and --anon: never 0. */
static unsigned char fill_byte(unsigned long i)
{
	return (unsigned char)(i % 251 + 1);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned long start = stagger ? npages / nthreads * w->id : 0;
	unsigned long k, i, sum = 0;
	double t0;
	int pass;

	if (pin_to_cpu(w->cpu))
		fprintf(stderr, "%s: thread %d: cannot pin to CPU %d\n", prog, w->id, w->cpu);
	pthread_barrier_wait(start_line);
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
				unsigned char b = rmap[i * PAGE_SIZE];

				sum += b;
				w->reads++;
				if (check && b != fill_byte(i))
					w->bad_reads++;
			}
		}
	}
	w->seconds = now_s() - t0;
	w->sum = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	const char *dev = NULL;
	const struct opt opts[] = {
	    {.name = "--dev", .kind = OPT_STR, .to = &dev},
	    {.name = "--threads", .kind = OPT_INT, .to = &nthreads, .min = 1},
	    {.name = "--passes", .kind = OPT_INT, .to = &passes, .min = 1},
	    {.name = "--write-every", .kind = OPT_LONG, .to = &write_every},
	    {.name = "--stagger", .kind = OPT_INT, .to = &stagger},
	    {.name = "--fill", .kind = OPT_LONG, .to = &fill_mb, .min = 1},
	    {.name = "--anon", .kind = OPT_LONG, .to = &anon_mb, .min = 1},
	};
	struct worker *workers;
	unsigned long reads = 0, writes = 0, bad_reads = 0;
	uint64_t size;
	double t0, t1;
	long shoot0, shoot1, steal0, steal1;
	int fd = -1, i;

	prog = "reclaim";
	parse_opts(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		   "usage: reclaim [--dev PATH] [--threads N] [--passes P] [--write-every K] "
		   "[--stagger 0|1] [--fill MB | --anon MB]\n");
	if (write_every == 1) {
		fprintf(stderr, "%s: --write-every 1 would write every page; use >= 2\n", prog);
		return 2;
	}
	if ((fill_mb || anon_mb) && (write_every || (fill_mb && anon_mb))) {
		fprintf(stderr, "%s: --fill and --anon go alone (no --write-every)\n", prog);
		return 2;
	}
	/* At most 1 TiB: the sizes below stay far from overflow. */
	if (fill_mb > 1L << 20 || anon_mb > 1L << 20) {
		fprintf(stderr, "%s: --fill and --anon are at most %ld (MiB)\n", prog, 1L << 20);
		return 2;
	}
	if ((fill_mb && !dev) || (anon_mb && dev)) {
		fprintf(stderr, "%s: --fill needs --dev (a new file's path), --anon takes none\n",
			prog);
		return 2;
	}
	if (!dev)
		dev = "/dev/vda";
	check = fill_mb || anon_mb;

	if (anon_mb) {
		size = (uint64_t)anon_mb << 20;
		npages = size / PAGE_SIZE;
		wmap = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (wmap == MAP_FAILED)
			die("mmap anonymous");
		for (i = 0; (unsigned long)i < npages; i++)
			memset((unsigned char *)wmap + (size_t)i * PAGE_SIZE, fill_byte(i),
			       PAGE_SIZE);
		if (mprotect((void *)wmap, size, PROT_READ))
			die("mprotect PROT_READ");
		rmap = wmap;
		wmap = NULL;
	} else {
		struct stat st;

		/* --fill writes a regular file, never a device that is there already. */
		if (fill_mb && !stat(dev, &st) && !S_ISREG(st.st_mode)) {
			fprintf(stderr, "%s: --fill: %s is not a regular file\n", prog, dev);
			return 2;
		}
		fd = open(dev,
			  fill_mb	? O_RDWR | O_CREAT | O_TRUNC
			  : write_every ? O_RDWR
					: O_RDONLY,
			  0600);
		if (fd < 0)
			die(dev);
		if (fill_mb) {
			static unsigned char page[PAGE_SIZE];
			unsigned long n = ((unsigned long)fill_mb << 20) / PAGE_SIZE;

			for (i = 0; (unsigned long)i < n; i++) {
				memset(page, fill_byte(i), sizeof(page));
				if (write(fd, page, sizeof(page)) != (ssize_t)sizeof(page))
					die("write --fill");
			}
		}
		size = fd_size(fd);
		npages = size / PAGE_SIZE;
		if (!npages) {
			fprintf(stderr, "%s: %s is empty\n", prog, dev);
			return 2;
		}
		rmap = mmap(NULL, npages * PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
		if (rmap == MAP_FAILED)
			die("mmap PROT_READ");
	}
	if (write_every) {
		wmap = mmap(NULL, npages * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (wmap == MAP_FAILED)
			die("mmap PROT_READ|PROT_WRITE");
	}

	/* Shared, so that forked children (--anon) report and line up here too. */
	workers = mmap(NULL, nthreads * sizeof(*workers) + sizeof(*start_line),
		       PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (workers == MAP_FAILED)
		die("mmap workers");
	start_line = (pthread_barrier_t *)(workers + nthreads);
	{
		pthread_barrierattr_t attr;

		if (pthread_barrierattr_init(&attr) ||
		    pthread_barrierattr_setpshared(&attr, PTHREAD_PROCESS_SHARED) ||
		    pthread_barrier_init(start_line, &attr, nthreads + 1))
			die("setup");
	}
	for (i = 0; i < nthreads; i++) {
		workers[i].id = i;
		workers[i].cpu = (i + !!anon_mb) % nr_cpus();
		if (anon_mb) {
			pid_t pid = fork();

			if (pid < 0) {
				int err = errno;

				/* The children forked so far wait at the barrier: end them. */
				while (i--)
					kill(workers[i].pid, SIGKILL);
				errno = err;
				die("fork");
			}
			if (!pid) {
				/* Not left waiting at the barrier if the parent dies. */
				if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
					_exit(1);
				worker_main(&workers[i]);
				_exit(0);
			}
			workers[i].pid = pid; /* the parent's write: the array is shared */
			continue;
		}
		errno = pthread_create(&workers[i].tid, NULL, worker_main, &workers[i]);
		if (errno)
			die("pthread_create");
	}
	pthread_barrier_wait(start_line);
	t0 = now_s();
	shoot0 = tlb_shootdowns();
	steal0 = vm_reclaimed();
	for (i = 0; i < nthreads; i++) {
		if (anon_mb) {
			int status;

			if (wait(&status) < 0)
				die("wait");
			if (!WIFEXITED(status) || WEXITSTATUS(status)) {
				fprintf(stderr, "%s: a reader child failed (status %#x)\n", prog,
					status);
				return 1;
			}
		} else {
			pthread_join(workers[i].tid, NULL);
		}
	}
	t1 = now_s();
	shoot1 = tlb_shootdowns();
	steal1 = vm_reclaimed();
	for (i = 0; i < nthreads; i++) {
		reads += workers[i].reads;
		writes += workers[i].writes;
		bad_reads += workers[i].bad_reads;
	}

	printf("threads=%d\n", nthreads);
	printf("passes=%d\n", passes);
	printf("cpus=%d\n", nr_cpus());
	printf("pages=%lu\n", npages);
	printf("disk_mb=%llu\n", (unsigned long long)(size >> 20));
	printf("write_every=%ld\n", write_every);
	printf("stagger=%d\n", stagger);
	printf("reads=%lu\n", reads);
	printf("writes=%lu\n", writes);
	printf("memory=%s\n", anon_mb ? "anon" : fill_mb ? "file" : "disk");
	printf("bad_reads=%lu\n", bad_reads);
	printf("thread_seconds=");
	for (i = 0; i < nthreads; i++)
		printf("%s%.2f", i ? "," : "", workers[i].seconds);
	printf("\nruntime_s=%.2f\n", t1 - t0);
	/* The read phase alone, without the fill's (--anon: dirty PTEs, flushed on any kernel). */
	printf("read_tlb_shootdowns=%ld\n", shoot0 < 0 || shoot1 < 0 ? -1 : shoot1 - shoot0);
	printf("read_pages_reclaimed=%ld\n", steal1 - steal0);
	fflush(stdout);
	if (bad_reads)
		fprintf(stderr, "%s: %lu reads saw other contents than were written\n", prog,
			bad_reads);
	return bad_reads ? 1 : 0;
}
