// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/ds/ds_every.c - membarrier-per-retire: luf's reader, no deferral.
 *
 * Reader: a per-thread counter, odd inside a section, set with a plain
 * store and a compiler barrier on entry, a release store on exit (what
 * luf_read_lock() and luf_read_unlock() do). Updater, at every retirement:
 * membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), the store-load fence the
 * readers skipped, run on every thread of the process after the unlink;
 * then a wait until each section seen open after it has closed (the
 * counter moved). The node is then read by nobody: onto the thread's free
 * list, which the next insert takes before malloc(). Nothing is deferred.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ds.h"

struct ethr {
	_Alignas(64) atomic_ulong ctr; /* odd inside a section; the thread's own line */
	_Alignas(64) struct ds_node *free;
};

static struct ethr et[DS_MAX_THREADS];

static struct ds_node **link_of(struct ds_node *n)
{
	return (struct ds_node **)(void *)n->mech;
}

static inline void s_read_lock(struct ds_thr *t)
{
	atomic_ulong *c = &et[t->id].ctr;

	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst); /* compiler barrier only */
}

static inline void s_read_unlock(struct ds_thr *t)
{
	atomic_ulong *c = &et[t->id].ctr;

	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1,
			      memory_order_release);
}

static struct ds_node *s_alloc(struct ds_thr *t)
{
	struct ethr *e = &et[t->id];
	struct ds_node *n = e->free;

	if (!n)
		return ds_node_new(t);
	e->free = *link_of(n);
	ds_node_poison(n);
	return n;
}

static void s_retire(struct ds_thr *t, struct ds_node *n)
{
	struct ethr *e = &et[t->id];

	if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0)) {
		fprintf(stderr, "luf-ds: membarrier: %s\n", strerror(errno));
		exit(1);
	}
	for (unsigned int i = 0; i < ds_threads; i++) {
		unsigned long c = atomic_load_explicit(&et[i].ctr, memory_order_acquire);

		if (i == t->id || !(c & 1))
			continue;
		for (unsigned int spin = 0;
		     atomic_load_explicit(&et[i].ctr, memory_order_acquire) == c; spin++)
			if (spin >= 256)
				sched_yield(); /* the reader was preempted in its section */
	}
	*link_of(n) = e->free;
	e->free = n;
}

static unsigned long s_held(void)
{
	return 0;
}

#include "ds_map.h"

static int init(unsigned int threads)
{
	(void)threads;
	for (unsigned int i = 0; i < DS_MAX_THREADS; i++) {
		atomic_store(&et[i].ctr, 0);
		et[i].free = NULL;
	}
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0)) {
		fprintf(stderr, "luf-ds: membarrier register: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int thread_init(struct ds_thr *t)
{
	(void)t;
	return 0;
}

static void thread_fini(struct ds_thr *t)
{
	struct ethr *e = &et[t->id];

	if (t->spare)
		ds_node_free(t->spare), t->spare = NULL;
	while (e->free) {
		struct ds_node *n = e->free;

		e->free = *link_of(n);
		ds_node_free(n);
	}
}

static void fini(void)
{
}

const struct ds_scheme ds_every = {
    "membarrier-per-retire", init, thread_init, ds_work, thread_fini, fini};
