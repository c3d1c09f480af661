// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/peers/peer_ck.c - Concurrency Kit's ck_epoch: sections around every
 * read (ck_epoch_begin / ck_epoch_end, a full fence on entry), ck_epoch_call()
 * per retired block, ck_epoch_poll() once per batch, ck_epoch_barrier() when
 * an allocation finds nothing to reuse. Callbacks run in the record's
 * owner thread, so a block goes straight back to its free list. Grace
 * periods are counted as advances of the global epoch.
 */
#define _GNU_SOURCE
#include <ck_epoch.h>
#include <stdlib.h>

#include "peers.h"

_Static_assert(sizeof(ck_epoch_entry_t) <= sizeof(((struct peer_blk *)0)->mech), "entry");
_Static_assert(offsetof(struct peer_blk, mech) % _Alignof(ck_epoch_entry_t) == 0, "entry");

struct cthr {
	ck_epoch_record_t rec;
	struct peer_thr *t;
	struct peer_blk *free;
	unsigned int since_poll;
};

static ck_epoch_t epoch;
static struct cthr *ct;

static int init(unsigned int threads, unsigned long pool)
{
	(void)pool;
	ck_epoch_init(&epoch);
	ct = aligned_alloc(64, (threads * sizeof(*ct) + 63) / 64 * 64);
	return ct ? 0 : -1;
}

static void fini(void)
{
	free(ct);
	ct = NULL;
}

static int thread_init(struct peer_thr *t)
{
	struct cthr *c = &ct[t->id];
	unsigned long first, n;

	c->t = t;
	c->free = NULL;
	c->since_poll = 0;
	ck_epoch_register(&epoch, &c->rec, NULL);
	t->priv = c;
	peer_own_blocks(t->id, &first, &n);
	for (unsigned long i = first; i < first + n; i++)
		peer_pool[i].next = c->free, c->free = &peer_pool[i];
	return 0;
}

static void thread_fini(struct peer_thr *t)
{
	struct cthr *c = t->priv;

	ck_epoch_barrier(&c->rec); /* run what is still deferred */
	ck_epoch_unregister(&c->rec);
}

static void read_epoch(struct peer_thr *t, unsigned long s)
{
	struct cthr *c = t->priv;
	unsigned long e;

	ck_epoch_begin(&c->rec, NULL);
	e = atomic_load_explicit(&peer_slot[s], memory_order_acquire);
	peer_read_block(t, s, e);
	ck_epoch_end(&c->rec, NULL);
}

/* Dispatched by ck_epoch in the owner's thread: the block is reusable. */
static void give_back(ck_epoch_entry_t *e)
{
	struct peer_blk *b =
	    (struct peer_blk *)(void *)((char *)e - offsetof(struct peer_blk, mech));
	struct cthr *c = &ct[b->owner];

	b->next = c->free;
	c->free = b;
	peer_held(c->t, -1);
}

static struct peer_blk *ck_get(struct peer_thr *t)
{
	struct cthr *c = t->priv;
	struct peer_blk *b;

	if (!c->free) {
		double t0 = peer_now();

		ck_epoch_poll(&c->rec);
		if (!c->free)
			ck_epoch_barrier(&c->rec);
		peer_wait_done(t, t0);
	}
	b = c->free;
	c->free = b->next;
	return b;
}

static void ck_retire(struct peer_thr *t, struct peer_blk *b)
{
	struct cthr *c = t->priv;

	peer_held(t, 1);
	/*
	 * ck_epoch_call() tags the entry with the global epoch read by a plain
	 * load and leaves ordering the unlink before that load to the caller
	 * (ck's own example unlinks with ck_pr_fas_ptr(), a full barrier).
	 * replace() unlinked @b with a release store, which the load may pass
	 * (store buffer, x86 too): the entry would carry an epoch older than a
	 * reader that began in the next epoch and still found @b, and a poll
	 * could hand @b back under that reader.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	ck_epoch_call(&c->rec, (ck_epoch_entry_t *)(void *)b->mech, give_back);
	if (++c->since_poll == PEER_BATCH) {
		c->since_poll = 0;
		ck_epoch_poll(&c->rec);
	}
}

/* The global epoch only moves forward, one step per advance: run_one() takes the difference. */
static unsigned long grace_periods(void)
{
	return ck_pr_load_uint(&epoch.epoch);
}

const struct peer_mech peer_ck = {"ck-epoch", init,   thread_init, thread_fini,	 fini,
				  read_epoch, ck_get, ck_retire,   grace_periods};
