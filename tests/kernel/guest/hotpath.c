// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/kernel/guest/hotpath.c - the "hotpath" workload: what luf adds to the
 * paths every program takes, timed in the guest.
 *
 * Three loops, one after the other, each timed with CLOCK_MONOTONIC:
 *   pingpong  two processes pinned to CPUs 0 and 1 pass one byte back and forth
 *             over two pipes: every round trip is two context switches between
 *             mms (luf's mm-switch hook runs on each);
 *   mprotect  a process with spinner threads (default one, spin-reading on CPU 1,
 *             so that the mm is live there) flips one page of a 64-page mapping
 *             between PROT_READ and PROT_READ|PROT_WRITE: each downgrade is a
 *             ranged flush of a multi-CPU mm (luf's flush hook runs on each
 *             CPU of it);
 *   munmap    the same process maps, touches and unmaps 16 pages: the same
 *             flush, from the unmap path.
 * The mm switch and the TLB flush (a CPU's own and the IPI's) are where luf
 * adds work to paths that reclaim does not take; tests/kernel/compare
 * --workloads hotpath runs this on both kernels and compares the times.
 *
 * Usage: hotpath [--rounds N] [--iters N] [--spinners N]
 *   --rounds N    ping-pong round trips (default 30000)
 *   --iters N     mprotect pairs and munmap cycles (default 20000)
 *   --spinners N  threads keeping the mm live on CPUs 1..N (default 1, at most
 *                 the CPUs but one). One, because the test host has two cores:
 *                 with the main thread and three spinners, four busy vCPUs share
 *                 two host cores, and an IPI then waits for the host to schedule
 *                 its target's vCPU thread, and the time measures the
 *                 host's scheduler more than the kernel.
 * Prints key=value lines: pingpong_ns (per round trip), mprotect_ns (per
 * downgrade-upgrade pair), munmap_ns (per map-touch-unmap cycle), the counts, and
 * seconds (the three loops' time; under TCG the defaults take tens of seconds).
 * Exit: 0 done, 1 a loop failed, 2 usage.
 */
#include "common.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/wait.h>

static atomic_int stop_spin;
static volatile const unsigned char *spin_page;

/* Keep the mm live on this thread's CPU: read, never write. */
static void *spinner(void *arg)
{
	unsigned long sum = 0;

	if (pin_to_cpu((int)(long)arg))
		fprintf(stderr, "%s: spinner: cannot pin to CPU %ld\n", prog, (long)arg);
	while (!atomic_load_explicit(&stop_spin, memory_order_relaxed))
		sum += spin_page[0];
	return (void *)sum;
}

static double pingpong(long rounds)
{
	int ab[2], ba[2];
	double t0, t1;
	char c = 0;
	pid_t pid;
	long i;

	if (pipe(ab) || pipe(ba))
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		if (pin_to_cpu(1))
			_exit(2);
		for (i = 0; i < rounds; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	if (pin_to_cpu(0))
		fprintf(stderr, "%s: cannot pin to CPU 0\n", prog);
	t0 = now_s();
	for (i = 0; i < rounds; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			return -1;
	t1 = now_s();
	if (waitpid(pid, (int[]){0}, 0) != pid)
		die("waitpid");
	close(ab[0]);
	close(ab[1]);
	close(ba[0]);
	close(ba[1]);
	return (t1 - t0) * 1e9 / rounds;
}

static double mprotect_loop(long iters)
{
	unsigned char *p =
	    mmap(NULL, 64 * PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double t0, t1;
	long i;

	if (p == MAP_FAILED)
		die("mmap");
	memset(p, 1, 64 * PAGE_SIZE);
	t0 = now_s();
	for (i = 0; i < iters; i++) {
		if (mprotect(p + (i % 64) * PAGE_SIZE, PAGE_SIZE, PROT_READ) ||
		    mprotect(p + (i % 64) * PAGE_SIZE, PAGE_SIZE, PROT_READ | PROT_WRITE))
			return -1;
		p[(i % 64) * PAGE_SIZE]++; /* the next downgrade has a writable entry to flush */
	}
	t1 = now_s();
	munmap(p, 64 * PAGE_SIZE);
	return (t1 - t0) * 1e9 / iters;
}

static double munmap_loop(long iters)
{
	double t0, t1;
	long i, j;

	t0 = now_s();
	for (i = 0; i < iters; i++) {
		unsigned char *p = mmap(NULL, 16 * PAGE_SIZE, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return -1;
		for (j = 0; j < 16; j++)
			p[j * PAGE_SIZE] = 1;
		if (munmap(p, 16 * PAGE_SIZE))
			return -1;
	}
	t1 = now_s();
	return (t1 - t0) * 1e9 / iters;
}

int main(int argc, char **argv)
{
	long rounds = 30000, iters = 20000, spinners = 1;
	const struct opt opts[] = {
	    {.name = "--rounds", .kind = OPT_LONG, .to = &rounds, .min = 1},
	    {.name = "--iters", .kind = OPT_LONG, .to = &iters, .min = 1},
	    {.name = "--spinners", .kind = OPT_LONG, .to = &spinners},
	};
	double pp, mp, mu;
	pthread_t *th;
	int i, n;

	prog = "hotpath";
	parse_opts(argc, argv, opts, sizeof(opts) / sizeof(opts[0]),
		   "usage: hotpath [--rounds N] [--iters N] [--spinners N]\n");
	if (spinners > nr_cpus() - 1) {
		fprintf(stderr, "%s: --spinners %ld: %d CPUs, one of them the main thread's\n",
			prog, spinners, nr_cpus());
		return 2;
	}
	pp = pingpong(rounds);

	spin_page = mmap(NULL, PAGE_SIZE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (spin_page == MAP_FAILED)
		die("mmap");
	n = (int)spinners;
	th = calloc(n ? (size_t)n : 1, sizeof(*th));
	if (!th)
		die("calloc");
	for (i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, spinner, (void *)(long)(i + 1)))
			die("pthread_create");
	if (pin_to_cpu(0))
		fprintf(stderr, "%s: cannot pin to CPU 0\n", prog);
	mp = mprotect_loop(iters);
	mu = munmap_loop(iters);
	atomic_store(&stop_spin, 1);
	for (i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	free(th);

	printf("rounds=%ld\niters=%ld\nspinners=%d\n", rounds, iters, n);
	printf("pingpong_ns=%.1f\nmprotect_ns=%.1f\nmunmap_ns=%.1f\n", pp, mp, mu);
	printf("seconds=%.1f\n", (pp * rounds + (mp + mu) * iters) / 1e9);
	if (pp < 0 || mp < 0 || mu < 0) {
		fprintf(stderr, "%s: a loop failed: %s\n", prog, strerror(errno));
		return 1;
	}
	return 0;
}
