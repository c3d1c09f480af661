// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/peers/peer_urcu.c - liburcu, memb flavour (urcu/urcu-memb.h, whose
 * read side is a compiler barrier and whose grace period issues
 * membarrier(2)): call_rcu() per retired block, or synchronize_rcu() per
 * batch. Only the library's public API is used.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <urcu/urcu-memb.h>

#include "peers.h"

_Static_assert(sizeof(struct rcu_head) <= sizeof(((struct peer_blk *)0)->mech), "entry");
_Static_assert(offsetof(struct peer_blk, mech) % _Alignof(struct rcu_head) == 0, "entry");

struct uthr {
	struct peer_blk *free, *batch;
	unsigned int nr_batch;
	pthread_mutex_t lock; /* guards back, filled by call_rcu callbacks */
	struct peer_blk *back;
};

static struct uthr *ut;
static atomic_ulong syncs;

static int init(unsigned int threads, unsigned long pool)
{
	(void)pool;
	ut = calloc(threads, sizeof(*ut));
	if (!ut)
		return -1;
	for (unsigned int i = 0; i < threads; i++)
		pthread_mutex_init(&ut[i].lock, NULL);
	return 0;
}

static void fini(void)
{
	for (unsigned int i = 0; i < peer_threads; i++)
		pthread_mutex_destroy(&ut[i].lock);
	free(ut);
	ut = NULL;
}

static int thread_init(struct peer_thr *t)
{
	struct uthr *u = &ut[t->id];
	unsigned long first, n;

	t->priv = u;
	urcu_memb_register_thread();
	peer_own_blocks(t->id, &first, &n);
	for (unsigned long i = first; i < first + n; i++)
		peer_pool[i].next = u->free, u->free = &peer_pool[i];
	return 0;
}

static void thread_fini(struct peer_thr *t)
{
	(void)t;
	urcu_memb_barrier(); /* every callback has run before the pool goes away */
	urcu_memb_unregister_thread();
}

static void read_rcu(struct peer_thr *t, unsigned long s)
{
	unsigned long e;

	urcu_memb_read_lock();
	e = atomic_load_explicit(&peer_slot[s], memory_order_acquire);
	peer_read_block(t, s, e);
	urcu_memb_read_unlock();
}

static struct peer_blk *blk_of_head(struct rcu_head *h)
{
	return (struct peer_blk *)(void *)((char *)h - offsetof(struct peer_blk, mech));
}

/* call_rcu callback (liburcu's worker thread): hand the block back to its owner. */
static void give_back(struct rcu_head *h)
{
	struct peer_blk *b = blk_of_head(h);
	struct uthr *u = &ut[b->owner];

	pthread_mutex_lock(&u->lock);
	b->next = u->back;
	u->back = b;
	pthread_mutex_unlock(&u->lock);
	atomic_fetch_add_explicit(&peer_thr[b->owner].returned, 1, memory_order_relaxed);
}

static struct peer_blk *call_get(struct peer_thr *t)
{
	struct uthr *u = t->priv;
	struct peer_blk *b;
	double t0 = 0;

	while (!u->free) {
		if (!t0)
			t0 = peer_now();
		pthread_mutex_lock(&u->lock);
		u->free = u->back;
		u->back = NULL;
		pthread_mutex_unlock(&u->lock);
		if (!u->free)
			sched_yield(); /* wait for a grace period and the callbacks */
	}
	if (t0)
		peer_wait_done(t, t0);
	b = u->free;
	u->free = b->next;
	return b;
}

static void call_retire(struct peer_thr *t, struct peer_blk *b)
{
	peer_held(t, 1);
	urcu_memb_call_rcu((struct rcu_head *)(void *)b->mech, give_back);
}

/* synchronize_rcu per batch: the retiring thread waits for the grace period. */
static void sync_batch(struct peer_thr *t, struct uthr *u)
{
	urcu_memb_synchronize_rcu();
	atomic_fetch_add_explicit(&syncs, 1, memory_order_relaxed);
	peer_held(t, -(long)u->nr_batch);
	while (u->batch) {
		struct peer_blk *b = u->batch;

		u->batch = b->next;
		b->next = u->free, u->free = b;
	}
	u->nr_batch = 0;
}

static struct peer_blk *sync_get(struct peer_thr *t)
{
	struct uthr *u = t->priv;
	struct peer_blk *b;

	if (!u->free) {
		double t0 = peer_now();

		sync_batch(t, u);
		peer_wait_done(t, t0);
	}
	b = u->free;
	u->free = b->next;
	return b;
}

static void sync_retire(struct peer_thr *t, struct peer_blk *b)
{
	struct uthr *u = t->priv;

	b->next = u->batch, u->batch = b;
	peer_held(t, 1);
	if (++u->nr_batch == PEER_BATCH)
		sync_batch(t, u);
}

static unsigned long grace_periods(void)
{
	return atomic_load(&syncs);
}

/* call_rcu's grace periods run in liburcu's worker and are not counted. */
static unsigned long no_count(void)
{
	return ULONG_MAX;
}

const struct peer_mech peer_urcu_call = {"urcu-call", init,	thread_init, thread_fini, fini,
					 read_rcu,    call_get, call_retire, no_count};
const struct peer_mech peer_urcu_sync = {"urcu-sync", init,	thread_init, thread_fini,  fini,
					 read_rcu,    sync_get, sync_retire, grace_periods};
