// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/ds/ds_map.h - the map code every scheme runs (ds.h), included once
 * by each scheme's file after it defines, for its own scheme:
 *
 *   static inline void s_read_lock(struct ds_thr *t);
 *   static inline void s_read_unlock(struct ds_thr *t);
 *   static struct ds_node *s_alloc(struct ds_thr *t);      a new node
 *   static void s_retire(struct ds_thr *t, struct ds_node *n);  unlinked
 *   static unsigned long s_held(void);    objects all threads hold now
 *
 * and it defines static void ds_work(struct ds_thr *t), the measured loop.
 */
#ifndef DS_MAP_H
#define DS_MAP_H

#include <unistd.h>

#include "ds.h"

static inline uint64_t ds_rnd(struct ds_thr *t)
{
	uint64_t x = t->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	t->rng = x;
	return x * 0x2545f4914f6cdd1dull;
}

static inline bool ds_node_ok(const struct ds_node *n, unsigned long bucket, unsigned long *key)
{
	unsigned long k = atomic_load_explicit(&n->key, memory_order_relaxed);
	unsigned long c = atomic_load_explicit(&n->canary, memory_order_relaxed);

	*key = k;
	return c == (DS_MAGIC ^ k) && (k & (DS_BUCKETS - 1)) == bucket;
}

/* A lookup: the scheme's read section around the walk of one chain. */
static inline void ds_lookup(struct ds_thr *t, unsigned long key)
{
	unsigned long b = key & (DS_BUCKETS - 1), k;
	struct ds_node *n;

	s_read_lock(t);
	for (n = atomic_load_explicit(&ds_map[b].head, memory_order_acquire); n;
	     n = atomic_load_explicit(&n->next, memory_order_acquire)) {
		if (!ds_node_ok(n, b, &k)) {
			t->violations++;
			break; /* its link may be garbage too */
		}
		if (k != key)
			continue;
		t->found++;
		if (ds_hold_us && t->found % DS_HOLD_EVERY == 0) {
			usleep(ds_hold_us); /* a reader preempted holding the node */
			if (!ds_node_ok(n, b, &k) || k != key)
				t->violations++;
		}
		break;
	}
	s_read_unlock(t);
	t->reads++;
}

/* Is @key on @bk's chain? Under @bk's lock. */
static inline bool ds_present(struct ds_bucket *bk, unsigned long key)
{
	for (struct ds_node *n = atomic_load_explicit(&bk->head, memory_order_relaxed); n;
	     n = atomic_load_explicit(&n->next, memory_order_relaxed))
		if (atomic_load_explicit(&n->key, memory_order_relaxed) == key)
			return true;
	return false;
}

/*
 * --pc (ds.h): the key @t's update toggles in @key's bucket, under its
 * lock. A producer (even id): the first absent key of the bucket from
 * @key on; a consumer (odd id): the bucket's first node's. ~0ul: none
 * (the bucket is full, or empty).
 */
static inline unsigned long ds_pc_key(const struct ds_thr *t, struct ds_bucket *bk,
				      unsigned long key)
{
	struct ds_node *head = atomic_load_explicit(&bk->head, memory_order_relaxed);

	if (t->id % 2)
		return head ? atomic_load_explicit(&head->key, memory_order_relaxed) : ~0ul;
	for (unsigned long i = 0, k = key; i < ds_keys; i += DS_BUCKETS) {
		if (!ds_present(bk, k))
			return k;
		k = k + DS_BUCKETS < ds_keys ? k + DS_BUCKETS : key & (DS_BUCKETS - 1);
	}
	return ~0ul;
}

/* An update: delete @key if present, else insert it (--pc: ds_pc_key()'s key). */
static inline void ds_update(struct ds_thr *t, unsigned long key)
{
	struct ds_bucket *bk = &ds_map[key & (DS_BUCKETS - 1)];
	_Atomic(struct ds_node *) *link = &bk->head;
	struct ds_node *n;
	unsigned long h;

	pthread_mutex_lock(&bk->lock);
	if (ds_pc && (key = ds_pc_key(t, bk, key)) == ~0ul) {
		pthread_mutex_unlock(&bk->lock);
		t->updates++; /* tried: nothing to insert or delete here */
		return;
	}
	for (n = atomic_load_explicit(link, memory_order_relaxed); n;
	     link = &n->next, n = atomic_load_explicit(link, memory_order_relaxed))
		if (atomic_load_explicit(&n->key, memory_order_relaxed) == key)
			break;
	if (n) {
		/* Unlink: readers that find it from now on see its successor. */
		atomic_store_explicit(link, atomic_load_explicit(&n->next, memory_order_relaxed),
				      memory_order_release);
		pthread_mutex_unlock(&bk->lock);
		s_retire(t, n);
		t->deletes++;
	} else {
		n = t->spare;
		t->spare = NULL;
		atomic_store_explicit(&n->key, key, memory_order_relaxed);
		atomic_store_explicit(&n->canary, DS_MAGIC ^ key, memory_order_relaxed);
		atomic_store_explicit(&n->next,
				      atomic_load_explicit(&bk->head, memory_order_relaxed),
				      memory_order_relaxed);
		atomic_store_explicit(&bk->head, n, memory_order_release);
		pthread_mutex_unlock(&bk->lock);
		t->spare = s_alloc(t);
		t->inserts++;
	}
	t->updates++;
	h = s_held();
	if (h > t->peak_held)
		t->peak_held = h;
}

static void ds_work(struct ds_thr *t)
{
	if (!t->spare)
		t->spare = s_alloc(t);
	for (;;) {
		for (unsigned int i = 0; i < 32; i++) {
			uint64_t r = ds_rnd(t);
			unsigned long key = (unsigned long)(r % ds_keys);

			if ((r >> 40) % 100 < ds_update_pct)
				ds_update(t, key);
			else
				ds_lookup(t, key);
		}
		t->ops += 32;
		if (ds_quota ? t->ops >= ds_quota
			     : atomic_load_explicit(&ds_stop, memory_order_relaxed))
			break;
	}
}

#endif /* DS_MAP_H */
