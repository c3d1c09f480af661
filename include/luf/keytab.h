/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/keytab.h - the key table: key -> shared pending set.
 *
 * A folio cannot carry a cpumask, so it carries a small key (16 bits, as
 * in LUF) that reaches a shared pending set here. Keys are handed out
 * round-robin, skipping 0 ("no pending set"). When the table wraps, a new
 * user of a key folds into what the key's entry still holds: a collision
 * only makes the sets of the folios sharing it larger (a flush may cover
 * more than needed), never smaller. Each entry is a luf_shared (seqcount +
 * lock) on its own cache line(s). Source: LUF RFC v12, luf_batch[] indexed
 * by the folio's luf_key, new_luf_key(), fold_luf_batch().
 */
#ifndef LUF_KEYTAB_H
#define LUF_KEYTAB_H

#include "platform.h"
#include "shared.h"

/* A folio's key: index of its pending set in the key table; 0 = none. */
typedef unsigned short luf_key_t;

/* Most keys a table can have (luf_key_t is 16 bits, as in LUF). */
#define LUF_KEYTAB_MAX_KEYS 65536u

/*
 * The key table: key -> shared pending set, each entry on its own cache
 * lines with its own seqcount and lock. luf_keytab_size() bytes of caller
 * storage, set up by luf_keytab_init().
 */
struct luf_keytab {
	LUF_CACHE_ALIGNED luf_aulong next;	/* round-robin key counter: written at fold time */
	LUF_CACHE_ALIGNED unsigned int nr_keys; /* keys 1..nr_keys-1 are valid */
	unsigned int nr_cpus;			/* CPUs of every entry's set */
	size_t stride;				/* bytes per entry, a multiple of LUF_CACHELINE */
	struct luf *luf;			/* the instance whose done counters judge it */
	unsigned long magic;			/* __luf_magic(this, LUF_MAGIC_KEYTAB) while live */
						/* nr_keys entries of stride bytes follow */
};

/* Bytes per table entry for @nr_cpus CPUs: a shared set rounded up to whole cache lines. */
static inline size_t luf_keytab_stride(unsigned int nr_cpus)
{
	size_t sz = luf_shared_size(nr_cpus);

	return (sz + LUF_CACHELINE - 1) / LUF_CACHELINE * LUF_CACHELINE;
}

/* Bytes of storage for a table of @nr_keys keys (2..65536) over @nr_cpus CPUs. */
static inline size_t luf_keytab_size(unsigned int nr_keys, unsigned int nr_cpus)
{
	return sizeof(struct luf_keytab) + (size_t)nr_keys * luf_keytab_stride(nr_cpus);
}

/* True iff @kt is a live key table (luf_keytab_init() returned 0). */
static inline bool __luf_keytab_live(const struct luf_keytab *kt)
{
	return kt && kt->magic == __luf_magic(kt, LUF_MAGIC_KEYTAB);
}

/* True iff @key names an entry (0 is "no key" and names none). */
static inline bool luf_keytab_valid(const struct luf_keytab *kt, unsigned int key)
{
	return key && key < kt->nr_keys;
}

/* The shared set of @key, which must be valid. */
static inline struct luf_shared *luf_keytab_entry(const struct luf_keytab *kt, luf_key_t key)
{
	return (struct luf_shared *)(void *)((char *)(kt + 1) + (size_t)key * kt->stride);
}

/**
 * luf_keytab_init() - set up an empty key table, bound to instance @l:
 * only @l's per-CPU states, free lists and done counters may use it (two
 * instances number their ugens apart, so one cannot judge the other's sets).
 * @kt: luf_keytab_size(@nr_keys, l->nr_cpus) bytes, cache-line aligned.
 * @l: a live instance. @nr_keys: 2..65536 (entry 0 exists but is never used).
 * Return: 0; -EINVAL (NULL, misaligned, a count out of range, @l not
 * live); -EBUSY if @kt is a live table already (luf_keytab_fini() it).
 * Nothing is written on error.
 */
static inline int luf_keytab_init(struct luf_keytab *kt, struct luf *l, unsigned int nr_keys)
{
	if (!kt || !luf_cacheline_aligned(kt) || !__luf_live(l) || nr_keys < 2 ||
	    nr_keys > LUF_KEYTAB_MAX_KEYS)
		return -EINVAL;
	if (__luf_keytab_live(kt))
		return -EBUSY;
	luf_store_relaxed(&kt->next, 0);
	kt->nr_keys = nr_keys;
	kt->nr_cpus = l->nr_cpus;
	kt->stride = luf_keytab_stride(l->nr_cpus);
	kt->luf = l;
	for (unsigned int k = 0; k < nr_keys; k++)
		luf_shared_init(luf_keytab_entry(kt, (luf_key_t)k), l->nr_cpus);
	kt->magic = __luf_magic(kt, LUF_MAGIC_KEYTAB);
	return 0;
}

/**
 * luf_keytab_fini() - end a key table: its storage may be reused. Sets
 * still pending are forgotten, so call it only once no folio of the table
 * is on a free list.
 * Return: 0, or -EINVAL if @kt is not a live table.
 */
static inline int luf_keytab_fini(struct luf_keytab *kt)
{
	if (!__luf_keytab_live(kt))
		return -EINVAL;
	kt->magic = 0;
	return 0;
}

/**
 * luf_keytab_new_key() - the next key, round-robin over 1..nr_keys-1.
 * One atomic add on the table's counter line (a fold-time cost,
 * not a fast-path one). Return: a valid key, never 0.
 */
static inline luf_key_t luf_keytab_new_key(struct luf_keytab *kt)
{
	unsigned long n = luf_add_return(&kt->next, 1) - 1;

	return (luf_key_t)(1 + n % (kt->nr_keys - 1));
}

/**
 * luf_keytab_check_done() - has every CPU in @key's set flushed?
 * @kt: the table (its instance's done counters judge). @key: a key, or 0.
 * Lock-free and write-free.
 * Return: 1 if done (always for key 0), 0 if a flush is still owed,
 * -EINVAL for a table that is not live or a key out of range.
 */
static inline int luf_keytab_check_done(const struct luf_keytab *kt, unsigned int key)
{
	if (!__luf_keytab_live(kt) || key >= kt->nr_keys)
		return -EINVAL;
	if (!key)
		return 1;
	return luf_shared_check_done(luf_keytab_entry(kt, (luf_key_t)key), kt->luf->done);
}

/*
 * __luf_keytab_fold() - fold @src into @key's set (fold on collision) and
 * mark the key named. Internal: luf_pcpu_fold() is the way in. A writable
 * batch is refused: it must be flushed, never deferred (S3).
 * Return: 0, or -EINVAL for NULL, a bad key, a CPU count mismatch or a
 * writable @src (nothing changed).
 */
static inline int __luf_keytab_fold(struct luf_keytab *kt, unsigned int key,
				    const struct luf_batch *src)
{
	struct luf_shared *s;

	if (!__luf_keytab_live(kt) || !src || !luf_keytab_valid(kt, key) ||
	    src->nr_cpus != kt->nr_cpus || luf_batch_writable(src))
		return -EINVAL;
	if (luf_batch_empty(src))
		return 0;
	s = luf_keytab_entry(kt, (luf_key_t)key);
	luf_shared_write_begin(s);
	luf_batch_diet(luf_shared_batch(s), kt->luf->done);
	luf_batch_fold(luf_shared_batch(s), src);
	luf_store_relaxed(&s->named, 1);
	luf_shared_write_end(s);
	return 0;
}

/* True iff some fold named @key's set (readers after a consistent read of it). */
static inline bool __luf_keytab_named(const struct luf_keytab *kt, luf_key_t key)
{
	return luf_load_relaxed(&luf_keytab_entry(kt, key)->named) != 0;
}

#endif /* LUF_KEYTAB_H */
