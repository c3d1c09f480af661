// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/ds/ds_urcu.c - the map under liburcu's membarrier flavour
 * (urcu/urcu-memb.h): urcu_memb_read_lock()/unlock() around each lookup,
 * call_rcu() per retired node, whose callback (in liburcu's call_rcu
 * helper thread) frees it; malloc() for every new node.
 *
 * _LGPL_SOURCE: liburcu's read side is inlined, as luf's is (without it
 * each lock and unlock is a call into the library).
 */
#define _GNU_SOURCE
#define _LGPL_SOURCE
#include <stdlib.h>
#include <urcu/urcu-memb.h>

#include "ds.h"

_Static_assert(sizeof(struct rcu_head) <= sizeof(((struct ds_node *)0)->mech), "entry");
_Static_assert(offsetof(struct ds_node, mech) % _Alignof(struct rcu_head) == 0, "entry");

/* Retired by each thread (its own line), freed by the callbacks. */
static struct {
	_Alignas(64) atomic_ulong retired;
} ut[DS_MAX_THREADS];
static _Alignas(64) atomic_ulong freed;

static inline void s_read_lock(struct ds_thr *t)
{
	(void)t;
	urcu_memb_read_lock();
}

static inline void s_read_unlock(struct ds_thr *t)
{
	(void)t;
	urcu_memb_read_unlock();
}

static struct ds_node *s_alloc(struct ds_thr *t)
{
	return ds_node_new(t);
}

static void free_node(struct rcu_head *h)
{
	ds_node_free((struct ds_node *)(void *)((char *)h - offsetof(struct ds_node, mech)));
	atomic_fetch_add_explicit(&freed, 1, memory_order_relaxed);
}

static void s_retire(struct ds_thr *t, struct ds_node *n)
{
	atomic_ulong *r = &ut[t->id].retired;

	atomic_store_explicit(r, atomic_load_explicit(r, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	urcu_memb_call_rcu((struct rcu_head *)(void *)n->mech, free_node);
}

static unsigned long s_held(void)
{
	unsigned long sum = 0;

	/* freed first: a callback counted there was retired before it. */
	sum -= atomic_load_explicit(&freed, memory_order_relaxed);
	for (unsigned int i = 0; i < ds_threads; i++)
		sum += atomic_load_explicit(&ut[i].retired, memory_order_relaxed);
	return sum;
}

#include "ds_map.h"

static int init(unsigned int threads)
{
	(void)threads;
	for (unsigned int i = 0; i < DS_MAX_THREADS; i++)
		atomic_store(&ut[i].retired, 0);
	atomic_store(&freed, 0);
	return 0;
}

static int thread_init(struct ds_thr *t)
{
	(void)t;
	urcu_memb_register_thread();
	return 0;
}

static void thread_fini(struct ds_thr *t)
{
	if (t->spare)
		ds_node_free(t->spare), t->spare = NULL;
	urcu_memb_barrier(); /* every callback queued so far has run */
	urcu_memb_unregister_thread();
}

static void fini(void)
{
}

const struct ds_scheme ds_urcu = {"urcu-memb", init, thread_init, ds_work, thread_fini, fini};
