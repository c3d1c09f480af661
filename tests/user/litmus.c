// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/user/litmus.c - the store-buffering litmus test on two real CPUs,
 * proving that a user-space backend's flush is the barrier luf needs.
 *
 *   thread A (CPU a)                    thread B (CPU b)
 *   x[i] = 1                            y[i] = 1
 *   compiler barrier only               flush()   (the backend under test)
 *   rA = y[i]                           rB = x[i]
 *
 * Outcome rA == 0 && rB == 0 means A's store sat in its store buffer while
 * B's whole flush ran: the flush did not make A pass a barrier. It must
 * never appear with membarrier or mprotect. With a no-op flush (a compiler
 * barrier) x86-64 shows it readily (TSO lets a load pass an earlier store),
 * which proves the harness can see the outcome at all.
 *
 * Each iteration uses fresh slots x[i], y[i] (no reset between rounds) and
 * starts with a two-flag spin barrier, so both threads run the pattern
 * within a few nanoseconds of each other. Threads are pinned with
 * pthread_setaffinity_np() to the first two CPUs the process may use.
 *
 * Usage: litmus --backend membarrier|sync-core|rseq|mprotect|none [--iters N]
 * Exit: 0 pass, 1 fail, 77 skipped (one CPU only, backend unavailable, or a
 * no-op run on hardware that need not show the outcome).
 */
#define _GNU_SOURCE
#include <luf/luf_user.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SKIP 77
/*
 * How the barrier waits. A few PAUSEs first: their latency spreads the two
 * threads' exits over a few tens of nanoseconds, so stores and loads
 * overlap in every alignment (with plain loads only, the no-op run saw
 * 0,0 a few dozen times per 10^6 iterations; with PAUSE, ~20,000). Then
 * plain loads: a long PAUSE loop makes a hypervisor deschedule the vCPU
 * (pause-loop exiting), which delays the flush's IPI to it (it doubled
 * the time per iteration). After many spins the other thread was
 * preempted: yield the CPU meanwhile.
 */
#define SPIN_PAUSES 32u
#ifndef SPIN_BEFORE_YIELD
#define SPIN_BEFORE_YIELD (1u << 20)
#endif

struct flag {
	LUF_CACHE_ALIGNED atomic_ulong v;
};

static struct {
	unsigned long iters;
	int cpu[2];
	atomic_uint *x, *y;
	unsigned char *ra, *rb;
	struct flag flag[2];
	struct luf_user *u; /* NULL: the no-op flush */
	unsigned long mask[LUF_CPUMASK_WORDS(LUF_MAX_CPUS)];
	unsigned int nr_cpus;
	int flush_err;
} lt;

/* Both threads reach iteration @i before either goes on. */
static void meet(int self, unsigned long i)
{
	unsigned int spins = 0;

	atomic_store_explicit(&lt.flag[self].v, i, memory_order_release);
	while (atomic_load_explicit(&lt.flag[!self].v, memory_order_acquire) < i) {
		if (++spins < SPIN_PAUSES)
			__luf_cpu_relax();
		else if (spins >= SPIN_BEFORE_YIELD)
			sched_yield();
	}
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *thread_a(void *arg)
{
	(void)arg;
	if (pin(lt.cpu[0]))
		return (void *)1;
	for (unsigned long i = 0; i < lt.iters; i++) {
		meet(0, i + 1);
		atomic_store_explicit(&lt.x[i], 1, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst); /* compiler barrier only */
		lt.ra[i] = (unsigned char)atomic_load_explicit(&lt.y[i], memory_order_relaxed);
	}
	return NULL;
}

static void *thread_b(void *arg)
{
	int ret;

	(void)arg;
	if (pin(lt.cpu[1]))
		return (void *)1;
	for (unsigned long i = 0; i < lt.iters; i++) {
		meet(1, i + 1);
		atomic_store_explicit(&lt.y[i], 1, memory_order_relaxed);
		if (lt.u) {
			ret = luf_user_ops.flush(lt.u, lt.mask, lt.nr_cpus, NULL);
			if (ret && !lt.flush_err)
				lt.flush_err = ret;
		} else {
			atomic_signal_fence(memory_order_seq_cst); /* the no-op flush */
		}
		lt.rb[i] = (unsigned char)atomic_load_explicit(&lt.x[i], memory_order_relaxed);
	}
	return NULL;
}

/* The first two CPUs of the process's affinity mask; -1 if fewer. */
static int pick_cpus(void)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			lt.cpu[n++] = c;
	return n == 2 ? 0 : -1;
}

static int open_backend(const char *name, struct luf_user *u)
{
	struct luf_user_config cfg = {0};
	int ret;

	if (!strcmp(name, "none"))
		return 0;
	if (!strcmp(name, "membarrier")) {
		ret = luf_user_membarrier_open(u, &cfg);
	} else if (!strcmp(name, "sync-core")) {
		cfg.flags = LUF_USER_SYNC_CORE;
		ret = luf_user_membarrier_open(u, &cfg);
	} else if (!strcmp(name, "rseq")) {
		cfg.rseq_max_cpus = 1;
		ret = luf_user_membarrier_open(u, &cfg);
	} else if (!strcmp(name, "mprotect")) {
		ret = luf_user_mprotect_open(u, &cfg);
	} else {
		fprintf(stderr, "litmus: unknown backend %s\n", name);
		return -EINVAL;
	}
	if (ret)
		return ret;
	lt.u = u;
	lt.nr_cpus = luf_user_nr_cpu_ids(u);
	luf_cpumask_clear(lt.mask, lt.nr_cpus);
	/* Thread A's CPU: the one a per-CPU (rseq) flush must reach. */
	return luf_cpumask_set_cpu(lt.mask, lt.nr_cpus, (unsigned int)lt.cpu[0]);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	static struct luf_user u;
	const char *backend = "membarrier";
	unsigned long count[4] = {0};
	pthread_t ta, tb;
	void *ra, *rb;
	double t0, dt;
	int ret;

	lt.iters = 1000000;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--backend") && i + 1 < argc)
			backend = argv[++i];
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			lt.iters = strtoul(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: litmus --backend NAME [--iters N]\n");
			return 2;
		}
	}
	if (pick_cpus()) {
		printf("litmus %s: SKIP: needs two CPUs in the affinity mask\n", backend);
		return SKIP;
	}
	ret = open_backend(backend, &u);
	if (ret == -EINVAL && !u.state)
		return 2;
	if (ret) {
		printf("litmus %s: SKIP: backend unavailable: %s\n", backend, luf_user_why(&u));
		return SKIP;
	}
	lt.x = calloc(lt.iters, sizeof(*lt.x));
	lt.y = calloc(lt.iters, sizeof(*lt.y));
	lt.ra = calloc(lt.iters, 1);
	lt.rb = calloc(lt.iters, 1);
	if (!lt.x || !lt.y || !lt.ra || !lt.rb) {
		fprintf(stderr, "litmus: out of memory\n");
		return 1;
	}
	t0 = now();
	if (pthread_create(&ta, NULL, thread_a, NULL) || pthread_create(&tb, NULL, thread_b, NULL))
		return 1;
	pthread_join(ta, &ra);
	pthread_join(tb, &rb);
	dt = now() - t0;
	if (ra || rb) {
		printf("litmus %s: SKIP: cannot pin threads to CPUs %d and %d\n", backend,
		       lt.cpu[0], lt.cpu[1]);
		return SKIP;
	}
	for (unsigned long i = 0; i < lt.iters; i++)
		count[lt.ra[i] * 2 + lt.rb[i]]++;
	printf("litmus %s: %lu iterations on CPUs %d,%d in %.2f s (%.0f ns/iter)%s%s\n", backend,
	       lt.iters, lt.cpu[0], lt.cpu[1], dt, dt * 1e9 / (double)lt.iters,
	       lt.u ? ", backend: " : "", lt.u ? luf_user_why(lt.u) : "");
	printf("  outcomes rA,rB: 0,0=%lu 0,1=%lu 1,0=%lu 1,1=%lu\n", count[0], count[1], count[2],
	       count[3]);
	if (lt.u) {
		printf("  flushes %lu, system calls %lu\n", luf_user_flushes(lt.u),
		       luf_user_calls(lt.u));
		if (lt.flush_err) {
			printf("litmus %s: FAIL: a flush returned %d\n", backend, lt.flush_err);
			return 1;
		}
		if (count[0]) {
			printf("litmus %s: FAIL: the forbidden outcome 0,0 appeared %lu times\n",
			       backend, count[0]);
			return 1;
		}
		printf("litmus %s: PASS: 0,0 never appeared\n", backend);
		return 0;
	}
	if (count[0]) {
		printf(
		    "litmus none: PASS: the harness observes 0,0 without a barrier (%lu times)\n",
		    count[0]);
		return 0;
	}
#if defined(__x86_64__) || defined(__i386__)
	printf("litmus none: FAIL: x86 allows 0,0 but the harness never saw it\n");
	return 1;
#else
	printf("litmus none: SKIP: 0,0 not observed; this hardware need not show it\n");
	return SKIP;
#endif
}
