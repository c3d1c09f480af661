/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/shared.h - a pending set shared between CPUs.
 *
 * The key table's entries and the domains are shared pending sets: many
 * CPUs fold into them, many check them. Writers take a small lock and bump
 * a seqcount around their change; readers (check_done on the allocation
 * fast path, the copy a flusher takes) write nothing: they read the count,
 * the set, and the count again, and retry if a writer ran in between.
 * Storage: luf_shared_size(nr_cpus) bytes, a header followed by a batch.
 *
 * The reader/writer pairing (the C11 seqlock of Boehm, "Can seqlocks get
 * along with programming language memory models?", MSPC 2012):
 *
 *   writer                               reader
 *   lock                                 s = seq (acquire); odd: retry
 *   seq = s + 1 (relaxed)                read the set (relaxed atomics)
 *   release fence                        acquire fence
 *   write the set (relaxed atomics)      seq == s ? use it : retry
 *   seq = s + 2 (release)
 *   unlock
 *
 * The release fence keeps the set's new words from becoming visible before
 * the odd count; the final release store keeps them from becoming visible
 * after the even one. The reader's acquire fence keeps its reads of the set
 * from moving below its second read of the count.
 */
#ifndef LUF_SHARED_H
#define LUF_SHARED_H

#include "platform.h"
#include "batch.h"
#include "flush.h"

/*
 * A pending set shared between CPUs: a seqcount for lock-free readers and
 * a lock for writers, followed by the batch (luf_shared_size() bytes).
 * The entries of the key table and the domains are these.
 */
struct luf_shared {
	luf_aulong seq;	  /* even: stable; odd: a writer is changing the set */
	luf_aulong named; /* 1 once a fold named this set (a key table entry) */
	luf_lock_t lock;  /* serialises writers */
			  /* struct luf_batch follows at luf_shared_batch() */
};

/* Bytes for a shared set of @nr_cpus CPUs. */
static inline size_t luf_shared_size(unsigned int nr_cpus)
{
	return sizeof(struct luf_shared) + luf_batch_size(nr_cpus);
}

/* The set inside @s. Readers other than the lock holder use the helpers below. */
static inline struct luf_batch *luf_shared_batch(const struct luf_shared *s)
{
	return (struct luf_batch *)(void *)((char *)s + sizeof(struct luf_shared));
}

/* Set up an empty shared set. Return: 0 or -EINVAL (bad @nr_cpus). */
static inline int luf_shared_init(struct luf_shared *s, unsigned int nr_cpus)
{
	luf_store_relaxed(&s->seq, 0);
	luf_store_relaxed(&s->named, 0);
	luf_lock_init(&s->lock);
	return luf_batch_init(luf_shared_batch(s), nr_cpus);
}

/* Start a lock-free read of @s: wait out a writer; return the seqcount to pass to _read_retry(). */
static inline unsigned long luf_shared_read_begin(const struct luf_shared *s)
{
	unsigned int spins = 0;
	unsigned long seq;

	/* A preempted writer keeps the count odd: spin a little, then yield. */
	while ((seq = luf_load_acquire(&s->seq)) & 1)
		luf_spin_wait(&spins);
	return seq;
}

/* True iff a writer changed @s since luf_shared_read_begin() returned @seq: read again. */
static inline bool luf_shared_read_retry(const struct luf_shared *s, unsigned long seq)
{
	luf_smp_rmb();
	return luf_load_relaxed(&s->seq) != seq;
}

/* Take @s's lock and make its seqcount odd: readers wait until luf_shared_write_end(). */
static inline void luf_shared_write_begin(struct luf_shared *s)
{
	luf_lock(&s->lock);
	luf_store_relaxed(&s->seq, luf_load_relaxed(&s->seq) + 1);
	luf_smp_wmb();
}

/* Make @s's seqcount even again (release: the new set is visible first) and unlock. */
static inline void luf_shared_write_end(struct luf_shared *s)
{
	luf_store_release(&s->seq, luf_load_relaxed(&s->seq) + 1);
	luf_unlock(&s->lock);
}

/**
 * luf_shared_check_done() - has every CPU of the shared set flushed?
 * @s: the set. @d: the done counters.
 * Lock-free and write-free. Return: as luf_batch_check_done().
 */
static inline bool luf_shared_check_done(const struct luf_shared *s, const struct luf_done_cpu *d)
{
	unsigned long seq;
	bool done;

	do {
		seq = luf_shared_read_begin(s);
		done = luf_batch_check_done(luf_shared_batch(s), d);
	} while (luf_shared_read_retry(s, seq));
	return done;
}

/**
 * luf_shared_read() - a consistent copy of the shared set.
 * @s: the set. @dst: a batch of the same CPU count, owned by the caller.
 * Lock-free and write-free (except @dst).
 * Return: the (even) seqcount the copy was taken at; it changes whenever
 * the set does, so a caller may cache a verdict per (set, seqcount).
 */
static inline unsigned long luf_shared_read(const struct luf_shared *s, struct luf_batch *dst)
{
	unsigned long seq;

	do {
		seq = luf_shared_read_begin(s);
		luf_batch_copy(dst, luf_shared_batch(s));
	} while (luf_shared_read_retry(s, seq));
	return seq;
}

/* The seqcount now (acquire), for comparing with a cached luf_shared_read(). */
static inline unsigned long luf_shared_seq(const struct luf_shared *s)
{
	return luf_load_acquire(&s->seq);
}

/**
 * luf_shared_covers() - does the shared set already hold @cpus at @ugen
 * (and writable, if @writable)? Lock-free and write-free: lets a writer skip
 * a fold that would change nothing, so the steady state writes no shared line.
 */
static inline bool luf_shared_covers(const struct luf_shared *s, const luf_aulong *cpus,
				     luf_ugen_t ugen, bool writable)
{
	const struct luf_batch *b = luf_shared_batch(s);
	unsigned long seq;
	bool covers;

	do {
		luf_ugen_t g;

		seq = luf_shared_read_begin(s);
		g = luf_batch_ugen(b);
		covers = g && !luf_ugen_before(g, ugen) && (!writable || luf_batch_writable(b)) &&
			 luf_cpumask_subset(cpus, b->cpus, b->nr_cpus);
	} while (luf_shared_read_retry(s, seq));
	return covers;
}

/**
 * luf_shared_add() - fold removed translations (@cpus at stamp @ugen) into
 * the shared set, like luf_batch_add() under the set's lock.
 * Return: 0, or -EINVAL for a zero @ugen (nothing changed).
 */
static inline int luf_shared_add(struct luf_shared *s, const luf_aulong *cpus, luf_ugen_t ugen,
				 bool writable, const struct luf_done_cpu *d)
{
	int ret;

	if (!ugen)
		return -EINVAL;
	luf_shared_write_begin(s);
	luf_batch_diet(luf_shared_batch(s), d);
	ret = luf_batch_add(luf_shared_batch(s), cpus, ugen, writable);
	luf_shared_write_end(s);
	return ret;
}

/*
 * Flush what the shared set still needs (see luf_shared_flush());
 * @flushed as for __luf_flush_batch().
 */
static inline int __luf_shared_flush(struct luf *l, unsigned int cpu, struct luf_shared *s,
				     struct luf_batch *scratch, bool *flushed)
{
	int ret;

	if (scratch->nr_cpus != luf_shared_batch(s)->nr_cpus)
		return -EINVAL;
	luf_shared_read(s, scratch);
	ret = __luf_flush_batch(l, cpu, scratch, flushed);
	if (ret)
		return ret;
	luf_shared_write_begin(s);
	luf_batch_diet(luf_shared_batch(s), l->done);
	luf_shared_write_end(s);
	return 0;
}

/**
 * luf_shared_flush() - flush what the shared set still needs.
 * @l: the instance. @cpu: the caller's CPU id. @s: the set.
 * @scratch: a batch of l->nr_cpus CPUs owned by the caller (the copy is
 *           flushed, so no lock is held across ops->flush).
 *
 * May flush (ops->flush). On success the set is dieted under its lock:
 * what was flushed is dropped, anything folded in meanwhile stays.
 * Return: 0, or luf_flush_batch()'s error (the set is left as it was).
 */
static inline int luf_shared_flush(struct luf *l, unsigned int cpu, struct luf_shared *s,
				   struct luf_batch *scratch)
{
	return __luf_shared_flush(l, cpu, s, scratch, NULL);
}

#endif /* LUF_SHARED_H */
