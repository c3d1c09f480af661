// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/ds/ds_luf.c - the map under luf's high-level API (<luf/luf_proc.h>):
 * readers luf_read_lock()/luf_read_unlock(), updaters luf_retire() after
 * the unlink (U1) and luf_reuse() for a new node, malloc() on -EAGAIN.
 * The domain is made with the defaults a user gets from
 * luf_proc_create(&p, NULL) unless --luf-max-threads is given.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <luf/luf_proc.h>
#include "ds.h"

_Static_assert(sizeof(struct luf_node) <= sizeof(((struct ds_node *)0)->mech), "entry");
_Static_assert(offsetof(struct ds_node, mech) % _Alignof(struct luf_node) == 0, "entry");

unsigned int ds_luf_max_threads; /* --luf-max-threads: 0 for luf's default */

static struct luf_proc *proc;
/* Each thread's luf_thread_held(), published by the thread after each update. */
static struct {
	_Alignas(64) atomic_ulong held;
} held[DS_MAX_THREADS];

static struct luf_node *lnode(struct ds_node *n)
{
	return (struct luf_node *)(void *)n->mech;
}

static void die(const char *what, int ret)
{
	fprintf(stderr, "luf-ds: luf: %s: %d (%s)\n", what, ret, strerror(-ret));
	exit(1);
}

static inline void s_read_lock(struct ds_thr *t)
{
	luf_read_lock(t->priv);
}

static inline void s_read_unlock(struct ds_thr *t)
{
	luf_read_unlock(t->priv);
}

static void publish(struct ds_thr *t)
{
	atomic_store_explicit(&held[t->id].held, luf_thread_held(t->priv), memory_order_relaxed);
}

static struct ds_node *s_alloc(struct ds_thr *t)
{
	struct luf_node *ln;
	struct ds_node *n;
	int ret = luf_reuse(t->priv, &ln);

	if (ret == -EAGAIN)
		return ds_node_new(t);
	if (ret)
		die("luf_reuse", ret);
	n = luf_node_entry(ln, struct ds_node, mech);
	ds_node_poison(n);
	publish(t);
	return n;
}

static void s_retire(struct ds_thr *t, struct ds_node *n)
{
	int ret = luf_retire(t->priv, lnode(n));

	if (ret)
		die("luf_retire", ret);
	publish(t);
}

static unsigned long s_held(void)
{
	unsigned long sum = 0;

	for (unsigned int i = 0; i < ds_threads; i++)
		sum += atomic_load_explicit(&held[i].held, memory_order_relaxed);
	return sum;
}

#include "ds_map.h"

static int init(unsigned int threads)
{
	struct luf_proc_config cfg = {.max_threads = ds_luf_max_threads};
	int ret;

	(void)threads;
	memset(held, 0, sizeof(held));
	ret = luf_proc_create(&proc, ds_luf_max_threads ? &cfg : NULL);
	if (ret)
		fprintf(stderr, "luf-ds: luf_proc_create: %d (%s)\n", ret, strerror(-ret));
	return ret;
}

static int thread_init(struct ds_thr *t)
{
	struct luf_thread *lt;
	int ret = luf_thread_register(proc, &lt);

	if (ret) {
		fprintf(stderr, "luf-ds: luf_thread_register: %d (%s)\n", ret, strerror(-ret));
		return ret;
	}
	t->priv = lt;
	return 0;
}

static void thread_fini(struct ds_thr *t)
{
	int ret;

	/* The spare was never retired: its entry is zero and it is the thread's to free. */
	if (t->spare)
		ds_node_free(t->spare), t->spare = NULL;
	while ((ret = luf_thread_unregister(t->priv)) == -EINTR)
		;
	if (ret)
		die("luf_thread_unregister", ret);
}

static void release(struct luf_node *ln, void *arg)
{
	(void)arg;
	ds_node_free(luf_node_entry(ln, struct ds_node, mech));
}

static void fini(void)
{
	int ret = luf_proc_destroy(proc, release, NULL);

	if (ret)
		die("luf_proc_destroy", ret);
	proc = NULL;
}

const struct ds_scheme ds_luf = {"luf", init, thread_init, ds_work, thread_fini, fini};
