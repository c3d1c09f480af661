// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/micro/micro.h - the pieces shared by the micro-benchmark's driver
 * (main.c) and its operations (ops.c).
 *
 * An operation is a fast path of luf run @n times by a thread. Work the
 * operation needs between measured stretches (refilling a free list,
 * resetting folios) runs between micro_meter_start() and micro_meter_stop()
 * calls, outside the measured part. The meter either reads CLOCK_MONOTONIC
 * (time mode), toggles callgrind's event collection (count mode: callgrind
 * then counts the instructions of the measured stretches only), or does
 * nothing (warm-up).
 */
#ifndef LUF_MICRO_H
#define LUF_MICRO_H

/* clock_gettime(): include this header before any system header. */
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include "testenv.h"
#include <time.h>

#if defined(LUF_MICRO_HAVE_CALLGRIND)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_TOGGLE_COLLECT
#endif

/*
 * Compiler barrier after each operation: the compiler must assume any
 * memory changed, so it can neither merge iterations, hoist loads out of
 * the loop, nor drop an operation whose result looks unused.
 */
#define micro_barrier() __asm__ __volatile__("" ::: "memory")

/* Folios per run: one reclaim batch freed with one key, or one refill. */
#define MICRO_RUN 512u

enum micro_mode {
	MICRO_OFF,   /* warm-up: measure nothing */
	MICRO_TIME,  /* add CLOCK_MONOTONIC time of the measured stretches to ns */
	MICRO_COUNT, /* toggle callgrind collection around the measured stretches */
};

struct micro_meter {
	enum micro_mode mode;
	unsigned long long ns;
	struct timespec t0;
};

static inline void micro_meter_start(struct micro_meter *m)
{
	if (m->mode == MICRO_TIME)
		clock_gettime(CLOCK_MONOTONIC, &m->t0);
	else if (m->mode == MICRO_COUNT)
		CALLGRIND_TOGGLE_COLLECT;
}

static inline void micro_meter_stop(struct micro_meter *m)
{
	struct timespec t1;

	if (m->mode == MICRO_TIME) {
		clock_gettime(CLOCK_MONOTONIC, &t1);
		m->ns += (unsigned long long)(t1.tv_sec - m->t0.tv_sec) * 1000000000ull +
			 (unsigned long long)t1.tv_nsec - (unsigned long long)m->t0.tv_nsec;
	} else if (m->mode == MICRO_COUNT) {
		CALLGRIND_TOGGLE_COLLECT;
	}
}

/*
 * One luf instance (the recording backend of tests/common: its flush only
 * counts and copies the mask, no TLB is flushed), shared by all threads.
 * @stop: rounds thread 0 has finished, for MICRO_PAIR operations (the
 * other threads interfere until thread 0 is done with the same round).
 */
struct micro_env {
	struct testenv t;
	unsigned int nr_threads;
	LUF_CACHE_ALIGNED unsigned long stop;
};

/*
 * One benchmark thread: its own CPU id, struct luf_pcpu (the instance's
 * pc[cpu]), free list, folios and sets, in cache-line aligned storage of
 * its own so that two threads share no written line.
 */
struct micro_thread {
	LUF_CACHE_ALIGNED struct micro_env *env;
	unsigned int cpu;
	struct luf_pcpu *pc;
	struct luf_freelist *fl;
	struct testenv_folio *folios;
	struct luf_batch *set;	/* the set the operation works on */
	struct luf_batch *tmpl; /* a template it is reset from, or folded in */
	unsigned short key, key2;
	unsigned long mask[LUF_CPUMASK_WORDS(LUF_MAX_CPUS)];
	unsigned long *snaps;	   /* MICRO_RUN snapshots, taken outside the measured part */
	struct luf_done_cpu *base; /* done counters of the baseline (code before the summary) */
	unsigned long round;	   /* calls of run() so far (MICRO_PAIR) */
	unsigned long sink;	   /* results, so no operation is dead code */
	unsigned long bad;	   /* operations that returned a wrong result */
	struct micro_meter meter;
};

/*
 * MICRO_PAIR: thread 0 runs the measured operation; every other thread
 * runs interference (e.g. marks CPUs done) until thread 0 has finished the
 * same round, and is not measured. Only thread 0's ns/op is reported. The
 * operation is a row of the thread-scaling table only.
 */
#define MICRO_PAIR 1u

struct micro_op {
	const char *name;
	const char *label;   /* what is measured, for the table */
	unsigned int cpus;   /* CPUs of the instance (and of the set, for set ops) */
	unsigned long iters; /* default iterations per timed repetition */
	/* Prepare @th (its env is set up). Return: 0, or -1 if set-up failed. */
	int (*init)(struct micro_thread *th);
	/* Run the operation @n times, metering the measured stretches. */
	void (*run)(struct micro_thread *th, unsigned long n);
	/* Units per operation (CPUs marked or flushed): ns and instructions are per unit; 0: 1. */
	unsigned int per;
	unsigned int flags; /* MICRO_PAIR */
};

extern const struct micro_op micro_ops[];
extern const unsigned int micro_nr_ops;

/* Free what init() allocated for @th. */
void micro_thread_fini(struct micro_thread *th);

#endif /* LUF_MICRO_H */
