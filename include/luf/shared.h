/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/shared.h - a pending set shared between CPUs (internal).
 *
 * The key table's entries and the domains are shared pending sets: many
 * CPUs fold into them, many check them. Writers take a small lock and bump
 * a seqcount around their change; readers (check_done on the allocation
 * fast path, the copy a flusher takes) write nothing: they read the count,
 * the set, and the count again, and retry if a writer ran in between.
 * Storage: __luf_shared_size(nr_cpus) bytes, a header followed by a batch.
 *
 * The reader/writer pairing (the C11 seqlock of Boehm, "Can seqlocks get
 * along with programming language memory models?", MSPC 2012):
 *
 *   writer                               reader
 *   lock                                 s = seq (acquire); odd: retry
 *   seq = s + 1 (relaxed)                read the set (relaxed)
 *   write barrier                        read barrier
 *   write the set (relaxed)              seq == s ? use it : retry
 *   seq = s + 2 (release)
 *   unlock
 */
#ifndef LUF_SHARED_H
#define LUF_SHARED_H

#include "platform.h"
#include "batch.h"
#include "flush.h"

LUF_BEGIN_DECLS

/**
 * struct luf_shared - a pending set shared between CPUs
 * @seq: the seqcount: even when stable, odd while a writer changes the set
 * @named: 1 once a fold named this set (a key table entry)
 * @lock: serialises writers
 *
 * The set's struct luf_batch follows this header (__luf_shared_batch()).
 * The entries of the key table and the domains are these.
 */
struct luf_shared {
	unsigned long seq;
	unsigned long named;
	struct luf_lock lock;
};

/* Bytes for a shared set of @nr_cpus CPUs. */
static inline size_t __luf_shared_size(unsigned int nr_cpus)
{
	return sizeof(struct luf_shared) + luf_batch_size(nr_cpus);
}

/* The set inside @s. Readers other than the lock holder use the helpers below. */
static inline struct luf_batch *__luf_shared_batch(const struct luf_shared *s)
{
	return (struct luf_batch *)(uintptr_t)((const char *)s + sizeof(struct luf_shared));
}

/* Set up an empty shared set of @nr_cpus CPUs (1..LUF_MAX_CPUS). */
static inline void __luf_shared_init(struct luf_shared *s, unsigned int nr_cpus)
{
	__luf_write_once(&s->seq, 0);
	__luf_write_once(&s->named, 0);
	__luf_lock_init(&s->lock);
	luf_batch_init(__luf_shared_batch(s), nr_cpus);
}

/* Start a lock-free read of @s: wait out a writer; the seqcount for __luf_shared_read_retry(). */
static inline unsigned long __luf_shared_read_begin(const struct luf_shared *s)
{
	unsigned int spins = 0;
	unsigned long seq;

	/* Acquire: the set's words are read after the even count (pairs with write_end). */
	while ((seq = __luf_load_acquire(&s->seq)) & 1)
		__luf_spin_wait(&spins);
	return seq;
}

/* True iff a writer changed @s since __luf_shared_read_begin() returned @seq: read again. */
static inline bool __luf_shared_read_retry(const struct luf_shared *s, unsigned long seq)
{
	__luf_smp_rmb(); /* the set's words before the count's second read */
	return __luf_read_once(&s->seq) != seq;
}

/* Take @s's lock and make its seqcount odd; returns the lock flags. */
static inline unsigned long __luf_shared_write_begin(struct luf_shared *s)
{
	unsigned long flags = __luf_lock(&s->lock);

	__luf_write_once(&s->seq, __luf_read_once(&s->seq) + 1);
	__luf_smp_wmb(); /* the odd count before the set's new words */
	return flags;
}

/* Make @s's seqcount even again and unlock (@flags from write_begin). */
static inline void __luf_shared_write_end(struct luf_shared *s, unsigned long flags)
{
	/* Release: the set's new words before the even count. */
	__luf_store_release(&s->seq, __luf_read_once(&s->seq) + 1);
	__luf_unlock(&s->lock, flags);
}

/* Has every CPU of the shared set flushed? Lock-free and write-free (luf_batch_check_done()). */
static inline bool __luf_shared_check_done(const struct luf_shared *s, const struct luf_done *d)
{
	unsigned long seq;
	bool done;

	do {
		seq = __luf_shared_read_begin(s);
		done = luf_batch_check_done(__luf_shared_batch(s), d);
	} while (__luf_shared_read_retry(s, seq));
	return done;
}

/*
 * A consistent copy of the shared set into @dst (same CPU count, owned by
 * the caller). Returns the even seqcount the copy was taken at; it changes
 * whenever the set does, so a caller may cache a verdict per (set, count).
 */
static inline unsigned long __luf_shared_read(const struct luf_shared *s, struct luf_batch *dst)
{
	unsigned long seq;

	do {
		seq = __luf_shared_read_begin(s);
		luf_batch_copy(dst, __luf_shared_batch(s));
	} while (__luf_shared_read_retry(s, seq));
	return seq;
}

/* The seqcount now (acquire), for comparing with a cached __luf_shared_read(). */
static inline unsigned long __luf_shared_seq(const struct luf_shared *s)
{
	return __luf_load_acquire(&s->seq);
}

/*
 * Does the shared set already hold @cpus at @ugen (and writable, if
 * @writable)? Lock-free and write-free: lets a writer skip a fold that
 * would change nothing, so the steady state writes no shared line.
 */
static inline bool __luf_shared_covers(const struct luf_shared *s, const unsigned long *cpus,
				       unsigned long ugen, bool writable)
{
	const struct luf_batch *b = __luf_shared_batch(s);
	unsigned long seq;
	bool covers;

	do {
		unsigned long g;

		seq = __luf_shared_read_begin(s);
		g = luf_batch_ugen(b);
		covers = g && !luf_ugen_before(g, ugen) && (!writable || luf_batch_writable(b)) &&
			 luf_cpumask_subset(cpus, b->cpus, b->nr_cpus);
	} while (__luf_shared_read_retry(s, seq));
	return covers;
}

/*
 * Fold removed translations (@cpus at stamp @ugen, never 0) into the
 * shared set under its lock, dieting it first so CPUs that flushed since
 * do not accumulate.
 */
static inline void __luf_shared_add(struct luf_shared *s, const unsigned long *cpus,
				    unsigned long ugen, bool writable, const struct luf_done *d)
{
	unsigned long flags = __luf_shared_write_begin(s);

	luf_batch_diet(__luf_shared_batch(s), d);
	luf_batch_add(__luf_shared_batch(s), cpus, ugen, writable);
	__luf_shared_write_end(s, flags);
}

/*
 * Flush what the shared set still needs: a copy into @scratch (the
 * caller's, of the instance's CPU count) is flushed, so no lock is held
 * across ops->flush; on success the set is dieted under its lock (what was
 * flushed is dropped, anything folded in meanwhile stays). Returns as
 * luf_flush_batch(); on error the set is left as it was.
 */
static inline int __luf_shared_flush(struct luf *l, unsigned int cpu, struct luf_shared *s,
				     struct luf_batch *scratch)
{
	unsigned long flags;
	int ret;

	if (scratch->nr_cpus != __luf_shared_batch(s)->nr_cpus)
		return -EINVAL;
	__luf_shared_read(s, scratch);
	ret = luf_flush_batch(l, cpu, scratch);
	if (ret < 0)
		return ret;
	flags = __luf_shared_write_begin(s);
	luf_batch_diet(__luf_shared_batch(s), &l->done);
	__luf_shared_write_end(s, flags);
	return ret;
}

LUF_END_DECLS

#endif /* LUF_SHARED_H */
