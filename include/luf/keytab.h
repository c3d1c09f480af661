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
 * luf_keytab_init() - set up an empty key table.
 * @kt: luf_keytab_size(@nr_keys, @nr_cpus) bytes, cache-line aligned.
 * @nr_keys: 2..65536 (entry 0 exists but is never used).
 * @nr_cpus: 1..LUF_MAX_CPUS, the instance's CPU count.
 * Return: 0, or -EINVAL (NULL, misaligned, or a count out of range).
 */
static inline int luf_keytab_init(struct luf_keytab *kt, unsigned int nr_keys, unsigned int nr_cpus)
{
	if (!kt || !luf_cacheline_aligned(kt) || nr_keys < 2 || nr_keys > LUF_KEYTAB_MAX_KEYS ||
	    !nr_cpus || nr_cpus > LUF_MAX_CPUS)
		return -EINVAL;
	luf_store_relaxed(&kt->next, 0);
	kt->nr_keys = nr_keys;
	kt->nr_cpus = nr_cpus;
	kt->stride = luf_keytab_stride(nr_cpus);
	for (unsigned int k = 0; k < nr_keys; k++)
		luf_shared_init(luf_keytab_entry(kt, (luf_key_t)k), nr_cpus);
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
 * @kt: the table. @key: a key, or 0. @d: done counters.
 * Lock-free and write-free.
 * Return: 1 if done (always for key 0), 0 if a flush is still owed,
 * -EINVAL for NULL or a key out of range.
 */
static inline int luf_keytab_check_done(const struct luf_keytab *kt, unsigned int key,
					const struct luf_done_cpu *d)
{
	if (!kt || !d || key >= kt->nr_keys)
		return -EINVAL;
	if (!key)
		return 1;
	return luf_shared_check_done(luf_keytab_entry(kt, (luf_key_t)key), d);
}

/**
 * luf_keytab_fold() - fold @src into @key's set (fold on collision).
 * Return: 0, or -EINVAL for NULL, a bad key or a CPU count mismatch
 * (nothing changed).
 */
static inline int luf_keytab_fold(struct luf_keytab *kt, unsigned int key,
				  const struct luf_batch *src, const struct luf_done_cpu *d)
{
	if (!kt || !src || !d || !luf_keytab_valid(kt, key) || src->nr_cpus != kt->nr_cpus)
		return -EINVAL;
	return luf_shared_fold(luf_keytab_entry(kt, (luf_key_t)key), src, d);
}

#endif /* LUF_KEYTAB_H */
