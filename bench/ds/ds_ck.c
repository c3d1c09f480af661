// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/ds/ds_ck.c - the map under Concurrency Kit's ck_epoch:
 * ck_epoch_begin()/ck_epoch_end() around each lookup (a store-load fence
 * on entry), ck_epoch_call() per retired node, ck_epoch_poll() every
 * DS_BATCH retirements, ck_epoch_barrier() when more than
 * DS_CK_MAX_PENDING nodes wait. Callbacks run in the record's owner (the
 * retiring thread, inside poll or barrier) and free the node; malloc()
 * for every new node.
 */
#define _GNU_SOURCE
#include <ck_epoch.h>
#include <stdlib.h>

#include "ds.h"

_Static_assert(sizeof(ck_epoch_entry_t) <= sizeof(((struct ds_node *)0)->mech), "entry");
_Static_assert(offsetof(struct ds_node, mech) % _Alignof(ck_epoch_entry_t) == 0, "entry");

struct cthr {
	ck_epoch_record_t rec;
	unsigned long pending; /* called, not dispatched: the owner's count */
	unsigned int since_poll;
	_Alignas(64) atomic_ulong held; /* @pending, published for the peak */
};

static ck_epoch_t epoch;
static struct cthr *ct;
static _Thread_local struct cthr *self;

static inline void s_read_lock(struct ds_thr *t)
{
	ck_epoch_begin(&((struct cthr *)t->priv)->rec, NULL);
}

static inline void s_read_unlock(struct ds_thr *t)
{
	ck_epoch_end(&((struct cthr *)t->priv)->rec, NULL);
}

static struct ds_node *s_alloc(struct ds_thr *t)
{
	return ds_node_new(t);
}

/* Dispatched in the owner's thread (ck_epoch_poll, ck_epoch_barrier). */
static void free_node(ck_epoch_entry_t *e)
{
	ds_node_free((struct ds_node *)(void *)((char *)e - offsetof(struct ds_node, mech)));
	self->pending--;
}

static void s_retire(struct ds_thr *t, struct ds_node *n)
{
	struct cthr *c = t->priv;

	/*
	 * ck_epoch_call() tags the entry with the global epoch read by a plain
	 * load and leaves ordering the unlink before it to the caller (as in
	 * bench/peers/peer_ck.c): the unlink was a release store.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	ck_epoch_call(&c->rec, (ck_epoch_entry_t *)(void *)n->mech, free_node);
	c->pending++;
	if (++c->since_poll == DS_BATCH) {
		c->since_poll = 0;
		ck_epoch_poll(&c->rec);
		if (c->pending > DS_CK_MAX_PENDING)
			ck_epoch_barrier(&c->rec);
	}
	atomic_store_explicit(&c->held, c->pending, memory_order_relaxed);
}

static unsigned long s_held(void)
{
	unsigned long sum = 0;

	for (unsigned int i = 0; i < ds_threads; i++)
		sum += atomic_load_explicit(&ct[i].held, memory_order_relaxed);
	return sum;
}

#include "ds_map.h"

static int init(unsigned int threads)
{
	size_t size = (threads * sizeof(*ct) + 63) / 64 * 64;

	ck_epoch_init(&epoch);
	ct = aligned_alloc(64, size);
	if (!ct)
		return -1;
	for (unsigned int i = 0; i < threads; i++) {
		ct[i].pending = 0;
		ct[i].since_poll = 0;
		atomic_store(&ct[i].held, 0);
	}
	return 0;
}

static int thread_init(struct ds_thr *t)
{
	struct cthr *c = &ct[t->id];

	ck_epoch_register(&epoch, &c->rec, NULL);
	self = c;
	t->priv = c;
	return 0;
}

static void thread_fini(struct ds_thr *t)
{
	struct cthr *c = t->priv;

	if (t->spare)
		ds_node_free(t->spare), t->spare = NULL;
	ck_epoch_barrier(&c->rec); /* dispatch what is still deferred */
	ck_epoch_unregister(&c->rec);
	self = NULL;
}

static void fini(void)
{
	free(ct);
	ct = NULL;
}

const struct ds_scheme ds_ck = {"ck-epoch", init, thread_init, ds_work, thread_fini, fini};
