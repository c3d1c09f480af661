// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/peers/peer_luf.c - the two hazard-word mechanisms on lib/user's
 * membarrier backend: luf (deferred, batched, dieted) and "every" (one
 * membarrier per retired block).
 *
 * Reader (both): publish the block in the hazard word with only a compiler
 * barrier, re-check the slot; the reclaimer's membarrier supplies the
 * store-load fence the reader skipped (luf_user.h, the store-buffering
 * race). Reclaimer: after the barrier, a block no hazard names may be reused.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <luf/luf_user.h>
#include "peers.h"

_Static_assert(sizeof(struct luf_folio) <= sizeof(((struct peer_blk *)0)->mech), "entry");
_Static_assert(offsetof(struct peer_blk, mech) % _Alignof(struct luf_folio) == 0, "entry");

struct lthr {
	struct luf_pcpu *pc;
	struct luf_freelist *fl;
	struct peer_blk *batch[PEER_BATCH], *parked, *free; /* free, parked: "every" */
	unsigned int nr_batch;
};

static struct {
	struct luf_user u;
	struct luf *l;
	struct luf_done_cpu *done;
	struct luf_stats_cpu *stats;
	struct luf_keytab *kt;
	unsigned long readers[LUF_CPUMASK_WORDS(PEER_MAX_THREADS)];
	unsigned int threads;
	unsigned long pool;
	void *mem[8];
	int nmem;
} g;

static void *zalloc(size_t size)
{
	size_t n = (size + LUF_CACHELINE - 1) / LUF_CACHELINE * LUF_CACHELINE;
	void *p = aligned_alloc(LUF_CACHELINE, n);

	if (p)
		memset(p, 0, n);
	return p;
}

static struct luf_folio *folio(struct peer_blk *b)
{
	return (struct luf_folio *)(void *)b->mech;
}

static int init(unsigned int threads, unsigned long pool)
{
	struct luf_user_config cfg = {.nr_ids = threads};
	int ret;

	g.threads = threads;
	g.pool = pool;
	if (luf_user_kind(&g.u) == LUF_USER_NONE) {
		ret = luf_user_membarrier_open(&g.u, &cfg);
		if (ret) {
			fprintf(stderr, "luf-peers: membarrier: %s\n", luf_user_why(&g.u));
			return ret;
		}
	}
	g.l = zalloc(sizeof(*g.l));
	g.done = zalloc(luf_done_size(threads));
	g.stats = zalloc(luf_stats_size(threads));
	g.kt = zalloc(luf_keytab_size(4096, threads));
	if (!g.l || !g.done || !g.stats || !g.kt)
		return -1;
	if ((ret = luf_init(g.l, &luf_user_ops, &g.u, g.done, g.stats, 0)) ||
	    (ret = luf_keytab_init(g.kt, g.l, 4096)))
		return ret;
	luf_cpumask_clear(g.readers, threads);
	for (unsigned int t = 0; t < threads; t++)
		luf_cpumask_set_cpu(g.readers, threads, t);
	return 0;
}

static void fini(void)
{
	free(g.l), free(g.done), free(g.stats), free(g.kt);
	g.l = NULL;
}

static int thread_init(struct peer_thr *t)
{
	struct lthr *p = zalloc(sizeof(*p));
	unsigned long first, n;

	if (!p)
		return -1;
	t->priv = p;
	/* Without its own id the thread would pass for CPU 0 and share its per-CPU state. */
	if (luf_user_set_thread_id(&g.u, t->id))
		return -1;
	p->pc = zalloc(luf_pcpu_size(g.threads));
	p->fl = zalloc(luf_freelist_size(g.threads));
	if (!p->pc || !p->fl ||
	    luf_pcpu_init(p->pc, g.l, g.kt, t->id, LUF_PCPU_DEFAULT_THRESHOLD) ||
	    luf_freelist_init(p->fl, g.l, g.kt, 0))
		return -1;
	peer_own_blocks(t->id, &first, &n);
	for (unsigned long i = first; i < first + n; i++) {
		struct peer_blk *b = &peer_pool[i];

		if (luf_free(p->fl, p->pc, folio(b), 0))
			return -1;
		b->next = p->free;
		p->free = b;
	}
	return 0;
}

static void thread_fini(struct peer_thr *t)
{
	struct lthr *p = t->priv;

	free(p->pc), free(p->fl), free(p);
}

static void read_hazard(struct peer_thr *t, unsigned long s)
{
	unsigned long e;

	for (;;) {
		e = atomic_load_explicit(&peer_slot[s], memory_order_acquire);
		atomic_store_explicit(&t->hazard, e & 0xffffffffu, memory_order_relaxed);
		/* Compiler barrier only: the flush is the other half of the fence. */
		atomic_signal_fence(memory_order_seq_cst);
		if (atomic_load_explicit(&peer_slot[s], memory_order_acquire) == e)
			break;
	}
	peer_read_block(t, s, e);
	/* Release: the reads happen before the reclaimer sees the hazard cleared. */
	atomic_store_explicit(&t->hazard, 0, memory_order_release);
}

static void die(const char *what, int ret)
{
	fprintf(stderr, "luf-peers: %s: %d\n", what, ret);
	exit(1);
}

/* luf: clean first; if only pend blocks are left, one flush (or none: diet) for all. */
static struct peer_blk *luf_get(struct peer_thr *t)
{
	struct lthr *p = t->priv;
	struct peer_blk *parked = NULL, *b;

	for (;;) {
		bool wait = luf_freelist_nr_clean(p->fl) == 0;
		unsigned long pend = luf_freelist_nr_pend(p->fl);
		double t0 = wait ? peer_now() : 0;
		struct luf_folio *f;
		int ret = luf_alloc(p->fl, p->pc, LUF_ALLOC_MAY_FLUSH, &f);

		if (ret == -ENOMEM && parked) {
			sched_yield(); /* every free block is being read */
		} else if (ret) {
			die("luf_alloc", ret);
		} else {
			if (wait)
				peer_wait_done(t, t0);
			if (pend && !luf_freelist_nr_pend(p->fl))
				peer_held(t, -(long)pend);
			b = (struct peer_blk *)(void *)((char *)f -
							offsetof(struct peer_blk, mech));
			if (!peer_hazarded(b))
				break;
			b->next = parked;
			parked = b;
			continue;
		}
		for (; parked; parked = parked->next)
			luf_free(p->fl, p->pc, folio(parked), 0);
	}
	for (; parked; parked = parked->next)
		luf_free(p->fl, p->pc, folio(parked), 0);
	return b;
}

static void luf_retire(struct peer_thr *t, struct peer_blk *b)
{
	struct lthr *p = t->priv;
	unsigned short key;
	int ret;

	/* A reader's hazard is a read-only "translation": its flush may wait. */
	if ((ret = luf_unmap(p->pc, NULL, g.readers, LUF_PTE_ACCESSIBLE)))
		die("luf_unmap", ret);
	p->batch[p->nr_batch++] = b;
	peer_held(t, 1);
	if (p->nr_batch < PEER_BATCH)
		return;
	if ((ret = luf_pcpu_fold(p->pc, &key)))
		die("luf_pcpu_fold", ret);
	while (p->nr_batch)
		if ((ret = luf_free(p->fl, p->pc, folio(p->batch[--p->nr_batch]), key)))
			die("luf_free", ret);
}

static unsigned long flushes(void)
{
	return luf_user_calls(&g.u);
}

/* every: the barrier at each retire, then the scan; a hazarded block is parked. */
static struct peer_blk *every_get(struct peer_thr *t)
{
	struct lthr *p = t->priv;
	struct peer_blk *b;

	while (!p->free) {
		struct peer_blk *list = p->parked;
		double t0 = peer_now();

		p->parked = NULL;
		while (list) { /* the barrier ran at retire: only the scan is left */
			struct peer_blk *n = list->next;

			if (peer_hazarded(list)) {
				list->next = p->parked, p->parked = list;
			} else {
				list->next = p->free, p->free = list;
				peer_held(t, -1);
			}
			list = n;
		}
		peer_wait_done(t, t0);
		if (!p->free)
			sched_yield();
	}
	b = p->free;
	p->free = b->next;
	return b;
}

static void every_retire(struct peer_thr *t, struct peer_blk *b)
{
	struct lthr *p = t->priv;
	int ret = luf_user_flush(&g.u, NULL, 0);

	if (ret)
		die("membarrier", ret);
	if (peer_hazarded(b)) {
		b->next = p->parked, p->parked = b;
		peer_held(t, 1);
	} else {
		b->next = p->free, p->free = b;
	}
}

const struct peer_mech peer_luf = {"luf",	init,	 thread_init, thread_fini, fini,
				   read_hazard, luf_get, luf_retire,  flushes};
const struct peer_mech peer_every = {"every",	  init,	     thread_init,  thread_fini, fini,
				     read_hazard, every_get, every_retire, flushes};
