/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/batch.h - pending sets.
 *
 * A pending set (a "batch", after the kernel's tlbflush_unmap_batch) is
 * {cpus, ugen, writable}: the CPUs that may still cache a removed
 * translation, the ugen a flush of them must reach (luf_ugen_stamp() of
 * the newest removal), and whether any removed translation was writable
 * or dirty. It is a variable-size object: the header below followed by the
 * cpumask words, luf_batch_size(nr_cpus) bytes of caller storage.
 *
 * Invariant: the set has no CPU iff its ugen is 0 and writable is 0.
 *
 * Every operation costs O(words + CPUs in the set); check_done is O(1)
 * and diet reads no counter when every CPU has flushed past the set
 * (luf/done.h). None allocates, locks or writes anything but the batch
 * it is given; a batch shared between
 * CPUs is guarded by its owner (the key table's and the domain's seqcount
 * and lock). Source: LUF RFC v12, fold_batch(), arch_tlbbatch_diet(),
 * arch_tlbbatch_check_done(); Linux arch_tlbbatch_fold().
 */
#ifndef LUF_BATCH_H
#define LUF_BATCH_H

#include "platform.h"
#include "ugen.h"
#include "cpumask.h"
#include "done.h"

LUF_BEGIN_DECLS

/**
 * struct luf_batch - a pending set {cpus, ugen, writable}
 * @nr_cpus: bits in @cpus, fixed at luf_batch_init()
 * @ugen: the newest stamp folded in; 0 when the set is empty
 * @writable: 1 if a writable or dirty translation was folded in
 * @cpus: LUF_CPUMASK_WORDS(@nr_cpus) words, the CPUs that may cache one
 *
 * luf_batch_size(nr_cpus) bytes of caller storage.
 */
struct luf_batch {
	unsigned int nr_cpus;
	unsigned long ugen;
	unsigned long writable;
	unsigned long cpus[];
};

/**
 * luf_batch_size() - bytes of storage for a batch of @nr_cpus CPUs
 * @nr_cpus: 1..LUF_MAX_CPUS
 *
 * Return: a size in bytes.
 */
static inline size_t luf_batch_size(unsigned int nr_cpus)
{
	return sizeof(struct luf_batch) + luf_cpumask_size(nr_cpus);
}

/**
 * luf_batch_clear() - empty @b: no CPU, ugen 0, not writable
 * @b: an initialised batch
 */
static inline void luf_batch_clear(struct luf_batch *b)
{
	luf_cpumask_clear(b->cpus, b->nr_cpus);
	__luf_write_once(&b->ugen, 0);
	__luf_write_once(&b->writable, 0);
}

/**
 * luf_batch_init() - set up an empty batch in caller storage
 * @b: luf_batch_size(@nr_cpus) bytes
 * @nr_cpus: 1..LUF_MAX_CPUS
 *
 * Return: 0, or -EINVAL for a NULL @b or @nr_cpus out of range.
 */
static inline int luf_batch_init(struct luf_batch *b, unsigned int nr_cpus)
{
	if (!b || !nr_cpus || nr_cpus > LUF_MAX_CPUS)
		return -EINVAL;
	b->nr_cpus = nr_cpus;
	luf_batch_clear(b);
	return 0;
}

/**
 * luf_batch_empty() - is there no CPU left to flush in @b?
 * @b: a batch
 *
 * Return: true iff @b is empty.
 */
static inline bool luf_batch_empty(const struct luf_batch *b)
{
	return !__luf_read_once(&b->ugen);
}

/**
 * luf_batch_ugen() - the newest stamp folded into @b
 * @b: a batch
 *
 * Return: a ugen; 0 iff @b is empty.
 */
static inline unsigned long luf_batch_ugen(const struct luf_batch *b)
{
	return __luf_read_once(&b->ugen);
}

/**
 * luf_batch_writable() - was a writable or dirty translation folded into @b?
 * @b: a batch
 *
 * Such a set is flushed, never deferred (S3).
 * Return: true iff it was.
 */
static inline bool luf_batch_writable(const struct luf_batch *b)
{
	return __luf_read_once(&b->writable) != 0;
}

/**
 * luf_batch_add() - fold removed translations into @b
 * @b: an initialised batch
 * @cpus: the CPUs that may cache them, @b->nr_cpus bits
 * @ugen: their stamp (luf_ugen_stamp()), never 0
 * @writable: whether any was writable or dirty
 *
 * An empty @cpus adds nothing (the translation was cached nowhere).
 * Return: 0, or -EINVAL for NULL, an uninitialised @b, a zero @ugen or
 * bits of @cpus at or above nr_cpus (@b unchanged).
 */
static inline int luf_batch_add(struct luf_batch *b, const unsigned long *cpus, unsigned long ugen,
				bool writable)
{
	if (!b || !b->nr_cpus || !cpus || !ugen || !luf_cpumask_valid(cpus, b->nr_cpus))
		return -EINVAL;
	if (luf_cpumask_empty(cpus, b->nr_cpus))
		return 0;
	luf_cpumask_or(b->cpus, cpus, b->nr_cpus);
	__luf_write_once(&b->ugen, luf_ugen_newer(__luf_read_once(&b->ugen), ugen));
	if (writable)
		__luf_write_once(&b->writable, 1);
	return 0;
}

/**
 * luf_batch_fold() - merge @src into @dst
 * @dst: the batch written
 * @src: the batch read
 *
 * Union of CPUs, the newer ugen, writable OR writable: commutative,
 * associative and idempotent.
 * Return: 0, or -EINVAL for NULL or batches of different CPU counts
 * (@dst unchanged).
 */
static inline int luf_batch_fold(struct luf_batch *dst, const struct luf_batch *src)
{
	unsigned long g;

	if (!dst || !src || !dst->nr_cpus || dst->nr_cpus != src->nr_cpus)
		return -EINVAL;
	g = __luf_read_once(&src->ugen);
	if (!g)
		return 0;
	luf_cpumask_or(dst->cpus, src->cpus, dst->nr_cpus);
	__luf_write_once(&dst->ugen, luf_ugen_newer(__luf_read_once(&dst->ugen), g));
	if (__luf_read_once(&src->writable))
		__luf_write_once(&dst->writable, 1);
	return 0;
}

/**
 * luf_batch_copy() - @dst = @src
 * @dst: the batch written
 * @src: the batch read
 *
 * Return: 0, or -EINVAL for NULL or batches of different CPU counts.
 */
static inline int luf_batch_copy(struct luf_batch *dst, const struct luf_batch *src)
{
	if (!dst || !src || !dst->nr_cpus || dst->nr_cpus != src->nr_cpus)
		return -EINVAL;
	luf_cpumask_copy(dst->cpus, src->cpus, dst->nr_cpus);
	__luf_write_once(&dst->ugen, __luf_read_once(&src->ugen));
	__luf_write_once(&dst->writable, __luf_read_once(&src->writable));
	return 0;
}

/**
 * luf_batch_equal() - do @a and @b hold the same CPUs, ugen and writable flag?
 * @a: a batch
 * @b: another batch
 *
 * Return: true iff they are equal.
 */
static inline bool luf_batch_equal(const struct luf_batch *a, const struct luf_batch *b)
{
	return a->nr_cpus == b->nr_cpus && __luf_read_once(&a->ugen) == __luf_read_once(&b->ugen) &&
	       __luf_read_once(&a->writable) == __luf_read_once(&b->writable) &&
	       luf_cpumask_equal(a->cpus, b->cpus, a->nr_cpus);
}

/* Has @cpu flushed far enough for a set stamped @ugen? (diet's and check_done's test) */
static inline bool __luf_cpu_done(const struct luf_done *d, unsigned int cpu, unsigned long ugen)
{
#if defined(LUF_MUTANT_DIET_EARLY)
	/* Mutant: counts a CPU one generation behind as done (breaks S1). */
	return !luf_ugen_before(luf_done_read(d, cpu) + 1, ugen);
#else
	return !luf_ugen_before(luf_done_read(d, cpu), ugen);
#endif
}

/*
 * Is the CPU that held the minimum of word @i's group (its lag hint) among
 * @w, the set's CPUs of that word, and behind @ugen?
 */
static inline bool __luf_lag_behind(const struct luf_done *d, unsigned int i, unsigned long w,
				    unsigned long ugen)
{
	unsigned long lag = __luf_read_once(&d->lag[i]) - (unsigned long)i * LUF_BITS_PER_LONG;

	return lag < LUF_BITS_PER_LONG && (w >> lag & 1) &&
	       !__luf_cpu_done(d, i * LUF_BITS_PER_LONG + (unsigned int)lag, ugen);
}

/*
 * Has every CPU of word @i of a set stamped @ugen flushed? @w: the word's
 * CPUs. The CPU that held the group's minimum is looked at first: when
 * one CPU of many is behind, it is most often that one.
 */
static inline bool __luf_word_done(const struct luf_done *d, unsigned int i, unsigned long w,
				   unsigned long ugen)
{
	if (__luf_lag_behind(d, i, w, ugen))
		return false;
	for (; w; w &= w - 1)
		if (!__luf_cpu_done(d, i * LUF_BITS_PER_LONG + __luf_ffs(w), ugen))
			return false;
	return true;
}

/**
 * luf_batch_check_done() - has every CPU of @b flushed up to its ugen?
 * @b: the batch
 * @d: the done counters of an instance of @b->nr_cpus CPUs (&struct luf.done)
 *
 * Reads only (no write to any line): a check on the allocation fast path.
 * One comparison when every CPU has flushed past the set's ugen (the
 * summary's @all); otherwise one word per cpumask word of @b whose group
 * has, and the CPUs of the others (struct luf_done).
 * Return: true iff @b is empty or done[cpu] >= ugen for every CPU in it.
 */
static inline bool luf_batch_check_done(const struct luf_batch *b, const struct luf_done *d)
{
	unsigned long ugen = __luf_read_once(&b->ugen);
	unsigned int words = LUF_CPUMASK_WORDS(b->nr_cpus);

	unsigned long g;

	if (!ugen || !luf_ugen_before(luf_done_all(d), ugen))
		return true;
	/* The CPU that held the machine back, if the set has it: often the answer. */
	g = __luf_read_once(&d->lag_all);
	if (g < words && __luf_lag_behind(d, (unsigned int)g, __luf_read_once(&b->cpus[g]), ugen))
		return false;
	for (unsigned int i = 0; i < words; i++) {
		unsigned long w = __luf_read_once(&b->cpus[i]);

		if (w && luf_ugen_before(__luf_done_group(d, i), ugen) &&
		    !__luf_word_done(d, i, w, ugen))
			return false;
	}
	return true;
}

/*
 * luf_batch_check_done() without the summary: every CPU's counter. The
 * reference the summary is tested against; O(CPUs in the set).
 */
static inline bool __luf_batch_check_done_scan(const struct luf_batch *b, const struct luf_done *d)
{
	unsigned long ugen = __luf_read_once(&b->ugen);
	unsigned int words = LUF_CPUMASK_WORDS(b->nr_cpus);

	if (!ugen)
		return true;
	for (unsigned int i = 0; i < words; i++) {
		unsigned long w = __luf_read_once(&b->cpus[i]);

		for (; w; w &= w - 1)
			if (!__luf_cpu_done(d, i * LUF_BITS_PER_LONG + __luf_ffs(w), ugen))
				return false;
	}
	return true;
}

/**
 * luf_batch_diet() - drop from @b every CPU that has flushed up to its ugen
 * @b: the batch, owned by the caller
 * @d: the done counters of an instance (&struct luf.done)
 *
 * A CPU may have flushed for any reason: a context switch, another
 * flusher's shootdown. A CPU whose done is older than the ugen is never
 * dropped. If no CPU is left, @b becomes empty (ugen 0, not writable):
 * nothing to flush. A whole cpumask word is cleared at once when its
 * group's summary has passed the ugen (struct luf_done).
 * Return: the number of CPUs dropped.
 */
static inline unsigned int luf_batch_diet(struct luf_batch *b, const struct luf_done *d)
{
	unsigned long ugen = __luf_read_once(&b->ugen);
	unsigned int words = LUF_CPUMASK_WORDS(b->nr_cpus), dropped = 0;
	unsigned long left = 0;

	if (!ugen)
		return 0;
	if (!luf_ugen_before(luf_done_all(d), ugen)) {
		/* Every CPU has passed the set: no counter to read. */
		dropped = luf_cpumask_weight(b->cpus, b->nr_cpus);
		luf_batch_clear(b);
		return dropped;
	}
	for (unsigned int i = 0; i < words; i++) {
		unsigned long w = __luf_read_once(&b->cpus[i]), keep = 0;

		if (!w)
			continue;
		if (luf_ugen_before(__luf_done_group(d, i), ugen)) {
			/* Branch-free: collect the CPUs that have not flushed far enough. */
			for (unsigned long t = w; t; t &= t - 1) {
				unsigned int bit = __luf_ffs(t), cpu = i * LUF_BITS_PER_LONG + bit;

				keep |= (unsigned long)!__luf_cpu_done(d, cpu, ugen) << bit;
			}
		}
		if (keep != w) {
			__luf_write_once(&b->cpus[i], keep);
			dropped += __luf_popcount(w ^ keep);
		}
		left |= keep;
	}
	if (!left) {
		__luf_write_once(&b->ugen, 0);
		__luf_write_once(&b->writable, 0);
	}
	return dropped;
}

LUF_END_DECLS

#endif /* LUF_BATCH_H */
