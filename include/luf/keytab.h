/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/keytab.h - the key table: key -> shared pending set.
 *
 * A folio cannot carry a cpumask, so it carries a small key (16 bits, as
 * in LUF) that reaches a shared pending set here. Keys are handed out
 * round-robin, skipping 0 ("no pending set"). When the table wraps, a new
 * user of a key folds into what the key's entry still holds: a collision
 * only makes the sets of the folios sharing it larger (a flush may cover
 * more than needed), never smaller. Each entry is a struct luf_shared
 * (seqcount + lock) on its own cache line(s). A table is bound to one
 * instance, whose done counters judge its sets. Source: LUF RFC v12,
 * luf_batch[] indexed by the folio's luf_key, new_luf_key(),
 * fold_luf_batch().
 */
#ifndef LUF_KEYTAB_H
#define LUF_KEYTAB_H

#include "platform.h"
#include "shared.h"

LUF_BEGIN_DECLS

/* Most keys a table can have (a folio's key is 16 bits, as in LUF). */
#define LUF_KEYTAB_MAX_KEYS 65536u

/**
 * struct luf_keytab - the key table, key -> shared pending set
 * @next: the round-robin key counter, on its own line (written at fold time)
 * @nr_keys: keys 1..@nr_keys - 1 are valid
 * @nr_cpus: the CPU count of every entry's set
 * @stride: bytes per entry, a multiple of LUF_CACHELINE
 * @luf: the instance whose done counters judge the sets
 * @magic: the init marker
 *
 * luf_keytab_size() bytes of caller storage, set up by luf_keytab_init();
 * @nr_keys entries of @stride bytes follow the header.
 */
struct luf_keytab {
	LUF_CACHE_ALIGNED unsigned long next;
	LUF_CACHE_ALIGNED unsigned int nr_keys;
	unsigned int nr_cpus;
	size_t stride;
	struct luf *luf;
	unsigned long magic;
};

/* Bytes per table entry for @nr_cpus CPUs: a shared set rounded up to whole cache lines. */
static inline size_t __luf_keytab_stride(unsigned int nr_cpus)
{
	size_t sz = __luf_shared_size(nr_cpus);

	return (sz + LUF_CACHELINE - 1) / LUF_CACHELINE * LUF_CACHELINE;
}

/**
 * luf_keytab_size() - bytes of storage for a key table
 * @nr_keys: 2..LUF_KEYTAB_MAX_KEYS
 * @nr_cpus: the instance's CPU count
 *
 * Return: a size in bytes.
 */
static inline size_t luf_keytab_size(unsigned int nr_keys, unsigned int nr_cpus)
{
	return sizeof(struct luf_keytab) + (size_t)nr_keys * __luf_keytab_stride(nr_cpus);
}

/* True iff @kt is a live key table (luf_keytab_init() returned 0). */
static inline bool __luf_keytab_live(const struct luf_keytab *kt)
{
	return kt && kt->magic == __luf_magic(kt, __LUF_MAGIC_KEYTAB);
}

/* True iff @key names an entry (0 is "no key" and names none). */
static inline bool __luf_keytab_valid(const struct luf_keytab *kt, unsigned int key)
{
	return key && key < kt->nr_keys;
}

/* The shared set of @key, which must be below nr_keys. */
static inline struct luf_shared *__luf_keytab_entry(const struct luf_keytab *kt, unsigned int key)
{
	return (struct luf_shared *)(uintptr_t)((const char *)(kt + 1) + (size_t)key * kt->stride);
}

/**
 * luf_keytab_init() - set up an empty key table, bound to instance @l
 * @kt: luf_keytab_size(@nr_keys, l->nr_cpus) bytes, cache-line aligned
 * @l: a live instance; only its per-CPU states, free lists and done
 *	counters may use the table (two instances number their ugens apart,
 *	so one cannot judge the other's sets)
 * @nr_keys: 2..LUF_KEYTAB_MAX_KEYS (entry 0 exists but is never used)
 *
 * Context: process; writes every entry.
 * Return: 0; -EINVAL (NULL, misaligned, a count out of range, @l not
 * live); -EBUSY if @kt is a live table already (luf_keytab_fini() it).
 * Nothing is written on error.
 * Each failure names its check: luf_last_error() and the error hook in
 * user space, a pr_warn line in a kernel (luf/error.h).
 */
int luf_keytab_init(struct luf_keytab *kt, struct luf *l, unsigned int nr_keys);

/**
 * luf_keytab_fini() - end a key table: its storage may be reused
 * @kt: a live table, no folio of which is on a free list
 *
 * Sets still pending are forgotten.
 * Return: 0, or -EINVAL if @kt is not a live table.
 * Each failure names its check: luf_last_error() and the error hook in
 * user space, a pr_warn line in a kernel (luf/error.h).
 */
int luf_keytab_fini(struct luf_keytab *kt);

/* The next key, round-robin over 1..nr_keys-1: one atomic add, a fold-time cost. */
static inline unsigned short __luf_keytab_new_key(struct luf_keytab *kt)
{
	unsigned long n = __luf_add_return(&kt->next, 1) - 1;

	return (unsigned short)(1 + n % (kt->nr_keys - 1));
}

/**
 * luf_keytab_check_done() - has every CPU in @key's set flushed?
 * @kt: the table (its instance's done counters judge)
 * @key: a key, or 0
 *
 * Context: any; lock-free and write-free.
 * Return: 1 if done (always for key 0), 0 if a flush is still owed,
 * -EINVAL for a table that is not live or a key out of range.
 */
static inline int luf_keytab_check_done(const struct luf_keytab *kt, unsigned int key)
{
	if (!__luf_keytab_live(kt) || key >= kt->nr_keys)
		return -EINVAL;
	if (!key)
		return 1;
	return __luf_shared_check_done(__luf_keytab_entry(kt, key), &kt->luf->done);
}

/*
 * Fold @src into @key's set (fold on collision) and mark the key named.
 * luf_pcpu_fold() is the way in. A writable batch is refused: it must be
 * flushed, never deferred (S3). Returns 0, or -EINVAL for NULL, a bad key,
 * a CPU count mismatch or a writable @src (nothing changed).
 */
static inline int __luf_keytab_fold(struct luf_keytab *kt, unsigned int key,
				    const struct luf_batch *src)
{
	unsigned long flags;
	struct luf_shared *s;

	if (!__luf_keytab_live(kt) || !src || !__luf_keytab_valid(kt, key) ||
	    src->nr_cpus != kt->nr_cpus || luf_batch_writable(src))
		return -EINVAL;
	if (luf_batch_empty(src))
		return 0;
	s = __luf_keytab_entry(kt, key);
	flags = __luf_shared_write_begin(s);
	luf_batch_diet(__luf_shared_batch(s), &kt->luf->done);
	luf_batch_fold(__luf_shared_batch(s), src);
	__luf_write_once(&s->named, 1);
	__luf_shared_write_end(s, flags);
	return 0;
}

/* True iff some fold named @key's set (for readers after a consistent read of it). */
static inline bool __luf_keytab_named(const struct luf_keytab *kt, unsigned int key)
{
	return __luf_read_once(&__luf_keytab_entry(kt, key)->named) != 0;
}

LUF_END_DECLS

#endif /* LUF_KEYTAB_H */
