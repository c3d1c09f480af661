// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/micro/main.c - luf-micro: ns/op and instructions/op of luf's fast
 * paths (defer, clean alloc, check_done, diet, fold) and of the flush path
 * (marking CPUs done, luf_flush_batch).
 *
 *   luf-micro --list   (NAME, CPUs, units per op, "row" or "pair", label; tab-separated)
 *   luf-micro --op NAME|all [--iters N] [--reps R] [--threads T] [--count]
 *
 * Time mode (default): a warm-up, then R repetitions (default 5) of N
 * operations (default: per operation, about 0.1 s) on each of T threads
 * (default 1), each thread pinned to a CPU with its own struct luf_pcpu,
 * free list and folios; prints one line per operation:
 *   op=NAME cpus=C threads=T iters=N reps=R per=P ns_med=.. ns_min=.. ns_max=..
 * where a repetition's ns/op is the mean over threads of the time its
 * measured stretches took (CLOCK_MONOTONIC) divided by N, and by P for an
 * operation reported per unit (per CPU marked or flushed: ns/CPU). For a
 * MICRO_PAIR operation it is thread 0's alone (the others interfere).
 *
 * Count mode (--count): a warm-up, then one repetition of exactly N
 * operations with no clock read, callgrind collection toggled on around
 * the measured stretches only. Run it as
 *   valgrind --tool=callgrind --collect-atstart=no luf-micro --op X --iters N --count
 * and divide the collected instructions by N. It is deterministic, and
 * does the same syscalls and heap allocations whatever N is, unless the
 * operation itself does some (bench/micro/run checks exactly that).
 *
 * Exit status: 0, or 1 if an operation returned a wrong result or set-up
 * failed, 2 for bad usage. No timing is ever asserted.
 */
#define _GNU_SOURCE /* pthread_setaffinity_np(), CPU_SET() */
#include "micro.h"
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <unistd.h>

struct micro_opts {
	const char *op;
	unsigned long iters; /* 0: the operation's default */
	unsigned int reps;
	unsigned int threads;
	bool count;
};

/* What the threads of one operation share. */
struct micro_run {
	const struct micro_op *op;
	struct micro_thread **th;
	unsigned int nr_threads;
	unsigned long iters;
	unsigned int reps;
	bool count;
	pthread_barrier_t start; /* every repetition starts on all threads at once */
	double *ns;		 /* [rep * nr_threads + thread]: ns/op */
};

struct micro_worker {
	struct micro_run *run;
	unsigned int idx;
};

static void micro_pin(unsigned int idx)
{
	long nr = sysconf(_SC_NPROCESSORS_ONLN);
	cpu_set_t set;

	if (nr <= 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(idx % (unsigned long)nr, &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

static void *micro_worker_fn(void *arg)
{
	struct micro_worker *w = arg;
	struct micro_run *r = w->run;
	struct micro_thread *th = r->th[w->idx];
	unsigned long warm = r->iters / 10 ? r->iters / 10 : r->iters;

	micro_pin(w->idx);
	th->meter.mode = MICRO_OFF;
	r->op->run(th, warm);
	for (unsigned int rep = 0; rep < r->reps; rep++) {
		pthread_barrier_wait(&r->start);
		th->meter.mode = r->count ? MICRO_COUNT : MICRO_TIME;
		th->meter.ns = 0;
		r->op->run(th, r->iters);
		th->meter.mode = MICRO_OFF;
		r->ns[rep * r->nr_threads + w->idx] = (double)th->meter.ns / (double)r->iters;
	}
	return NULL;
}

static int micro_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Run @op on @nr_threads threads; print its line. Return: 0, or 1 on failure. */
static int micro_run_op(const struct micro_op *op, const struct micro_opts *o,
			unsigned int nr_threads)
{
	unsigned int cpus = op->cpus > nr_threads ? op->cpus : nr_threads;
	unsigned int per = op->per ? op->per : 1;
	/* MICRO_PAIR: thread 0 is measured, the others only interfere. */
	unsigned int measured = op->flags & MICRO_PAIR ? 1 : nr_threads;
	struct micro_worker w[64];
	pthread_t tid[64];
	struct micro_run r;
	struct micro_env *env;
	double per_rep[64], med;
	unsigned long bad = 0;
	int failed = 0;

	memset(&r, 0, sizeof(r));
	r.op = op;
	r.nr_threads = nr_threads;
	r.iters = o->iters ? o->iters : op->iters;
	r.reps = o->count ? 1 : o->reps;
	r.count = o->count;
	env = testenv_zalloc(sizeof(*env));
	testenv_init(&env->t, cpus, 64, 0, LUF_PCPU_DEFAULT_THRESHOLD, 0, 0);
	env->nr_threads = nr_threads;
	r.th = calloc(nr_threads, sizeof(struct micro_thread *));
	r.ns = calloc((size_t)r.reps * nr_threads, sizeof(*r.ns));
	if (!r.th || !r.ns)
		abort();
	/* Set-up in this thread, in order: deterministic keys and ugens. */
	for (unsigned int i = 0; i < nr_threads; i++) {
		struct micro_thread *th = testenv_zalloc(sizeof(*th));

		th->env = env;
		th->cpu = i;
		th->pc = env->t.pc[i];
		r.th[i] = th;
		if (op->init(th)) {
			fprintf(stderr, "luf-micro: %s: set-up failed\n", op->name);
			failed = 1;
		}
	}
	if (!failed && nr_threads == 1) {
		/* No thread: the same syscalls whatever N is (no racing join). */
		pthread_barrier_init(&r.start, NULL, 1);
		w[0].run = &r;
		w[0].idx = 0;
		micro_worker_fn(&w[0]);
		pthread_barrier_destroy(&r.start);
	} else if (!failed) {
		pthread_barrier_init(&r.start, NULL, nr_threads);
		for (unsigned int i = 0; i < nr_threads; i++) {
			w[i].run = &r;
			w[i].idx = i;
			if (pthread_create(&tid[i], NULL, micro_worker_fn, &w[i]))
				abort();
		}
		for (unsigned int i = 0; i < nr_threads; i++)
			pthread_join(tid[i], NULL);
		pthread_barrier_destroy(&r.start);
	}
	for (unsigned int i = 0; i < nr_threads; i++) {
		bad += r.th[i]->bad;
		micro_thread_fini(r.th[i]);
		free(r.th[i]);
	}
	if (bad) {
		fprintf(stderr, "luf-micro: %s: %lu runs returned a wrong result\n", op->name, bad);
		failed = 1;
	}
	if (failed) {
		printf("op=%s FAILED\n", op->name);
	} else if (o->count) {
		printf("op=%s cpus=%u threads=%u iters=%lu per=%u mode=count\n", op->name, cpus,
		       nr_threads, r.iters, per);
	} else {
		for (unsigned int rep = 0; rep < r.reps; rep++) {
			per_rep[rep] = 0;
			for (unsigned int i = 0; i < measured; i++)
				per_rep[rep] += r.ns[rep * nr_threads + i] / measured / per;
		}
		qsort(per_rep, r.reps, sizeof(per_rep[0]), micro_cmp_double);
		med = r.reps % 2 ? per_rep[r.reps / 2]
				 : (per_rep[r.reps / 2 - 1] + per_rep[r.reps / 2]) / 2;
		printf("op=%s cpus=%u threads=%u iters=%lu reps=%u per=%u ns_med=%.2f ns_min=%.2f "
		       "ns_max=%.2f\n",
		       op->name, cpus, nr_threads, r.iters, r.reps, per, med, per_rep[0],
		       per_rep[r.reps - 1]);
	}
	fflush(stdout);
	free(r.ns);
	free(r.th);
	testenv_destroy(&env->t);
	free(env);
	return failed;
}

static void micro_usage(FILE *f)
{
	fprintf(f, "usage: luf-micro --list\n"
		   "       luf-micro --op NAME|all [--iters N] [--reps R] [--threads T] [--count]\n"
		   "  --iters N   operations per repetition (default: per operation)\n"
		   "  --reps R    timed repetitions, 1..64 (default 5); median, min and max\n"
		   "  --threads T threads, 1..64, each with its own CPU id, luf_pcpu, free\n"
		   "              list, folios and sets (default 1)\n"
		   "  --count     one repetition, no clock; callgrind collects the measured\n"
		   "              loop only (run under valgrind --tool=callgrind "
		   "--collect-atstart=no)\n");
}

static bool micro_parse_ulong(const char *s, unsigned long *v)
{
	char *end;

	if (!s || !*s || *s == '-')
		return false;
	*v = strtoul(s, &end, 10);
	return !*end;
}

int main(int argc, char **argv)
{
	struct micro_opts o = {.reps = 5, .threads = 1};
	unsigned long v;
	bool list = false, found = false;
	int ret = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--list")) {
			list = true;
		} else if (!strcmp(a, "--count")) {
			o.count = true;
		} else if (!strcmp(a, "--op") && next) {
			o.op = next;
			i++;
		} else if (!strcmp(a, "--iters") && micro_parse_ulong(next, &v) && v) {
			o.iters = v;
			i++;
		} else if (!strcmp(a, "--reps") && micro_parse_ulong(next, &v) && v && v <= 64) {
			o.reps = (unsigned int)v;
			i++;
		} else if (!strcmp(a, "--threads") && micro_parse_ulong(next, &v) && v && v <= 64) {
			o.threads = (unsigned int)v;
			i++;
		} else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			micro_usage(stdout);
			return 0;
		} else {
			micro_usage(stderr);
			return 2;
		}
	}
	if (list) {
		for (unsigned int i = 0; i < micro_nr_ops; i++)
			printf("%s\t%u\t%u\t%s\t%s\n", micro_ops[i].name, micro_ops[i].cpus,
			       micro_ops[i].per ? micro_ops[i].per : 1,
			       micro_ops[i].flags & MICRO_PAIR ? "pair" : "row",
			       micro_ops[i].label);
		return 0;
	}
	if (!o.op) {
		micro_usage(stderr);
		return 2;
	}
	for (unsigned int i = 0; i < micro_nr_ops; i++) {
		const struct micro_op *op = &micro_ops[i];

		if (strcmp(o.op, "all") != 0 && strcmp(o.op, op->name) != 0)
			continue;
		found = true;
		ret |= micro_run_op(op, &o, o.threads);
	}
	if (!found) {
		fprintf(stderr, "luf-micro: unknown operation '%s' (see --list)\n", o.op);
		return 2;
	}
	return ret;
}
