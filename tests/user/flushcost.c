// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * tests/user/flushcost.c - what one flush costs, per backend and mode,
 * while a second thread of the process runs on the other CPU (so every
 * flush must really reach it): the measurement behind the default of
 * struct luf_user_config.rseq_max_cpus (per-CPU RSEQ flushing stays off
 * unless it is faster than one whole-process PRIVATE_EXPEDITED call).
 *
 * Modes: membarrier (PRIVATE_EXPEDITED), sync-core, rseq-cpu (one
 * PRIVATE_EXPEDITED_RSEQ | FLAG_CPU call aimed at the peer's CPU), rseq-self
 * (a set holding only the caller's CPU: no system call) and mprotect.
 * Prints the median ns per flush of --rounds rounds (at most 64) of
 * --flushes flushes each, and the IPIs the peer's CPU took per flush
 * (/proc/interrupts: CAL function-call and TLB shootdown rows).
 * No assertion: timings on a shared machine are noise-prone; it fails only
 * if a flush fails.
 *
 * Usage: flushcost [--flushes N] [--rounds N]
 */
#define _GNU_SOURCE
#include <luf/luf_user.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_int stop;
static int cpus[2];
static clockid_t peer_clock;

/*
 * Interrupts CPU @cpu has taken on the /proc/interrupts row @row ("CAL:"
 * function-call IPIs, which membarrier sends; "TLB:" shootdowns, which
 * mprotect causes); 0 if unreadable.
 */
static unsigned long irqs(const char *row, int cpu)
{
	FILE *f = fopen("/proc/interrupts", "re");
	char line[4096], *p, *end;
	unsigned long v = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		p = line + strspn(line, " ");
		if (strncmp(p, row, strlen(row)) != 0)
			continue;
		p += strlen(row);
		for (int c = 0; c <= cpu; c++) {
			v = strtoul(p, &end, 10);
			p = end;
		}
		break;
	}
	fclose(f);
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/*
 * The peer: runs (and so must be reached by every flush) until told to
 * stop. Plain loads, no PAUSE: under a hypervisor a PAUSE loop may make
 * the host deschedule the vCPU (pause-loop exiting).
 */
static void *peer(void *arg)
{
	(void)arg;
	pin(cpus[1]);
	while (!atomic_load_explicit(&stop, memory_order_relaxed))
		;
	return NULL;
}

/* CPU time the peer thread has run, in seconds. */
static double peer_time(void)
{
	struct timespec ts;

	if (clock_gettime(peer_clock, &ts))
		return 0;
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Median ns/flush over @rounds rounds of @n flushes of @cpu's singleton set (-1: NULL set). */
static double measure(struct luf_user *u, int cpu, unsigned long n, int rounds, int *err)
{
	unsigned long mask[LUF_CPUMASK_WORDS(LUF_MAX_CPUS)];
	unsigned int nr = luf_user_nr_cpu_ids(u);
	double t[64] = {0};

	luf_cpumask_clear(mask, nr);
	if (cpu >= 0)
		luf_cpumask_set_cpu(mask, nr, (unsigned int)cpu);
	for (int r = 0, j; r < rounds; r++) {
		double t0 = now(), dt;

		for (unsigned long i = 0; i < n; i++) {
			int ret = luf_user_flush(u, cpu >= 0 ? mask : NULL, nr);

			if (ret && !*err)
				*err = ret;
		}
		dt = (now() - t0) * 1e9 / (double)n;
		for (j = r; j > 0 && t[j - 1] > dt; j--)
			t[j] = t[j - 1];
		t[j] = dt;
	}
	return t[rounds / 2];
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		bool mprotect;
		unsigned int flags, rseq;
		int target; /* 0: NULL set, 1: the peer's CPU, 2: own CPU */
	} modes[] = {
	    {"membarrier", false, 0, 0, 0}, {"sync-core", false, LUF_USER_SYNC_CORE, 0, 0},
	    {"rseq-cpu", false, 0, 1, 1},   {"rseq-self", false, 0, 1, 2},
	    {"mprotect", true, 0, 0, 0},
	};
	unsigned long n = 20000;
	int rounds = 5, failed = 0, n_cpus = 0;
	cpu_set_t set;
	pthread_t t;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--flushes") && i + 1 < argc)
			n = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else
			return 2;
	}
	if (rounds < 1 || rounds > 64)
		return 2;
	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	for (int c = 0; c < CPU_SETSIZE && n_cpus < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n_cpus++] = c;
	if (n_cpus < 2) {
		printf("flushcost: SKIP: needs two CPUs\n");
		return 77;
	}
	pin(cpus[0]);
	if (pthread_create(&t, NULL, peer, NULL) || pthread_getcpuclockid(t, &peer_clock))
		return 1;
	printf("flushcost: caller on CPU %d, a spinning peer thread on CPU %d\n", cpus[0], cpus[1]);
	for (unsigned int m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		struct luf_user_config cfg = {.flags = modes[m].flags,
					      .rseq_max_cpus = modes[m].rseq};
		struct luf_user u = {0};
		int err = 0, ret, cpu;
		unsigned long cal, tlb;
		double ns, ran, wall;

		ret = modes[m].mprotect ? luf_user_mprotect_open(&u, &cfg)
					: luf_user_membarrier_open(&u, &cfg);
		if (ret) {
			printf("  %-11s unavailable: %s\n", modes[m].name, luf_user_why(&u));
			continue;
		}
		cpu = modes[m].target == 0 ? -1 : cpus[modes[m].target == 1 ? 1 : 0];
		cal = irqs("CAL:", cpus[1]);
		tlb = irqs("TLB:", cpus[1]);
		ran = peer_time();
		wall = now();
		ns = measure(&u, cpu, n, rounds, &err);
		ran = (peer_time() - ran) / (now() - wall);
		cal = irqs("CAL:", cpus[1]) - cal;
		tlb = irqs("TLB:", cpus[1]) - tlb;
		printf("  %-11s %8.0f ns/flush  %5.2f syscalls/flush  peer ran %3.0f%%, its "
		       "IPIs/flush: "
		       "%.2f call, %.2f tlb\n",
		       modes[m].name, ns, (double)luf_user_calls(&u) / (double)luf_user_flushes(&u),
		       ran * 100, (double)cal / (double)luf_user_flushes(&u),
		       (double)tlb / (double)luf_user_flushes(&u));
		if (err) {
			printf("  %-11s FAIL: flush returned %d\n", modes[m].name, err);
			failed = 1;
		}
		luf_user_close(&u);
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	return failed;
}
