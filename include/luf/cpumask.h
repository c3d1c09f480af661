/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/cpumask.h - runtime-sized CPU sets.
 *
 * A cpumask is an array of LUF_CPUMASK_WORDS(nr_cpus) words of type
 * luf_aulong plus the number of valid bits, nr_cpus, which every call
 * takes (like the kernel's bitmap_*() API, whose layout it shares, so the
 * kernel glue can hand the words to on_each_cpu_mask() through to_cpumask()).
 * Up to LUF_MAX_CPUS (4096) CPUs. Bits at or above nr_cpus are always 0.
 *
 * The words are atomics accessed relaxed so that a seqcount reader may
 * read a mask while a writer changes it (see keytab.h); each loop works a
 * word at a time and skips zero words, so an operation costs O(words) plus
 * O(CPUs in the set).
 */
#ifndef LUF_CPUMASK_H
#define LUF_CPUMASK_H

#include "platform.h"

/* Most CPU ids an instance supports (nr_cpus of every init is 1..LUF_MAX_CPUS). */
#define LUF_MAX_CPUS 4096u
/* Words (unsigned long) of a mask of @nr_cpus CPUs. */
#define LUF_CPUMASK_WORDS(nr_cpus) (((nr_cpus) + LUF_BITS_PER_LONG - 1) / LUF_BITS_PER_LONG)

/* Bytes of storage for a mask of @nr_cpus CPUs. */
static inline size_t luf_cpumask_size(unsigned int nr_cpus)
{
	return LUF_CPUMASK_WORDS(nr_cpus) * sizeof(luf_aulong);
}

/*
 * True iff @m has no bit at or above @nr_cpus: the check for a mask that
 * came from a caller. O(1): only the last word can hold such bits.
 */
static inline bool luf_cpumask_valid(const luf_aulong *m, unsigned int nr_cpus)
{
	unsigned int tail = nr_cpus % LUF_BITS_PER_LONG;

	return !tail || !(luf_load_relaxed(&m[nr_cpus / LUF_BITS_PER_LONG]) >> tail);
}

/**
 * luf_cpumask_clear() - empty a mask.
 * @m: LUF_CPUMASK_WORDS(@nr_cpus) words. @nr_cpus: 1..LUF_MAX_CPUS.
 */
static inline void luf_cpumask_clear(luf_aulong *m, unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		luf_store_relaxed(&m[i], 0);
}

/**
 * luf_cpumask_set_cpu() - add CPU @cpu to @m (one writer at a time: a
 * relaxed load and store; see luf_cpumask_set_cpu_atomic()).
 * Return: 0, or -EINVAL if @cpu >= @nr_cpus (the mask is unchanged).
 */
static inline int luf_cpumask_set_cpu(luf_aulong *m, unsigned int nr_cpus, unsigned int cpu)
{
	luf_aulong *w = &m[cpu / LUF_BITS_PER_LONG];

	if (cpu >= nr_cpus)
		return -EINVAL;
	luf_store_relaxed(w, luf_load_relaxed(w) | (1UL << (cpu % LUF_BITS_PER_LONG)));
	return 0;
}

/**
 * luf_cpumask_clear_cpu() - remove CPU @cpu from @m (one writer at a time).
 * Return: 0, or -EINVAL if @cpu >= @nr_cpus (the mask is unchanged).
 */
static inline int luf_cpumask_clear_cpu(luf_aulong *m, unsigned int nr_cpus, unsigned int cpu)
{
	luf_aulong *w = &m[cpu / LUF_BITS_PER_LONG];

	if (cpu >= nr_cpus)
		return -EINVAL;
	luf_store_relaxed(w, luf_load_relaxed(w) & ~(1UL << (cpu % LUF_BITS_PER_LONG)));
	return 0;
}

/**
 * luf_cpumask_set_cpu_atomic() - add @cpu to a mask other CPUs change too
 * (an mm_cpumask that each CPU joins when it runs the mm): an atomic OR,
 * where luf_cpumask_set_cpu() is a load and a store owned by one writer.
 * Return: 0, or -EINVAL if @cpu >= @nr_cpus (unchanged).
 */
static inline int luf_cpumask_set_cpu_atomic(luf_aulong *m, unsigned int nr_cpus, unsigned int cpu)
{
	if (cpu >= nr_cpus)
		return -EINVAL;
	luf_or_relaxed(&m[cpu / LUF_BITS_PER_LONG], 1UL << (cpu % LUF_BITS_PER_LONG));
	return 0;
}

/* Remove @cpu from a mask other CPUs change too (an atomic AND-NOT). */
static inline int luf_cpumask_clear_cpu_atomic(luf_aulong *m, unsigned int nr_cpus,
					       unsigned int cpu)
{
	if (cpu >= nr_cpus)
		return -EINVAL;
	luf_andnot_relaxed(&m[cpu / LUF_BITS_PER_LONG], 1UL << (cpu % LUF_BITS_PER_LONG));
	return 0;
}

/* True iff @cpu < @nr_cpus and @cpu is in @m. */
static inline bool luf_cpumask_test_cpu(const luf_aulong *m, unsigned int nr_cpus, unsigned int cpu)
{
	if (cpu >= nr_cpus)
		return false;
	return (luf_load_relaxed(&m[cpu / LUF_BITS_PER_LONG]) >> (cpu % LUF_BITS_PER_LONG)) & 1UL;
}

/* @dst = @src. */
static inline void luf_cpumask_copy(luf_aulong *dst, const luf_aulong *src, unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		luf_store_relaxed(&dst[i], luf_load_relaxed(&src[i]));
}

/* @dst |= @src (a union). */
static inline void luf_cpumask_or(luf_aulong *dst, const luf_aulong *src, unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++) {
		unsigned long s = luf_load_relaxed(&src[i]);

		if (s)
			luf_store_relaxed(&dst[i], luf_load_relaxed(&dst[i]) | s);
	}
}

/* @dst &= @src (an intersection). */
static inline void luf_cpumask_and(luf_aulong *dst, const luf_aulong *src, unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		luf_store_relaxed(&dst[i], luf_load_relaxed(&dst[i]) & luf_load_relaxed(&src[i]));
}

/* @dst &= ~@src (a difference). */
static inline void luf_cpumask_andnot(luf_aulong *dst, const luf_aulong *src, unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		luf_store_relaxed(&dst[i], luf_load_relaxed(&dst[i]) & ~luf_load_relaxed(&src[i]));
}

/* Number of CPUs in @m. */
static inline unsigned int luf_cpumask_weight(const luf_aulong *m, unsigned int nr_cpus)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		n += luf_popcount(luf_load_relaxed(&m[i]));
	return n;
}

/* True iff @m has no CPU. */
static inline bool luf_cpumask_empty(const luf_aulong *m, unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		if (luf_load_relaxed(&m[i]))
			return false;
	return true;
}

/* True iff @a and @b hold the same CPUs. */
static inline bool luf_cpumask_equal(const luf_aulong *a, const luf_aulong *b, unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		if (luf_load_relaxed(&a[i]) != luf_load_relaxed(&b[i]))
			return false;
	return true;
}

/* True iff every CPU of @sub is in @super. */
static inline bool luf_cpumask_subset(const luf_aulong *sub, const luf_aulong *super,
				      unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		if (luf_load_relaxed(&sub[i]) & ~luf_load_relaxed(&super[i]))
			return false;
	return true;
}

/**
 * luf_cpumask_next() - the first CPU of @m at or after @cpu.
 * Return: a CPU id, or @nr_cpus if there is none.
 */
static inline unsigned int luf_cpumask_next(const luf_aulong *m, unsigned int nr_cpus,
					    unsigned int cpu)
{
	unsigned int i = cpu / LUF_BITS_PER_LONG;
	unsigned long w;

	if (cpu >= nr_cpus)
		return nr_cpus;
	w = luf_load_relaxed(&m[i]) & (~0UL << (cpu % LUF_BITS_PER_LONG));
	for (;;) {
		if (w) {
			unsigned int c = i * LUF_BITS_PER_LONG + luf_ffs0(w);

			return c < nr_cpus ? c : nr_cpus;
		}
		if (++i >= LUF_CPUMASK_WORDS(nr_cpus))
			return nr_cpus;
		w = luf_load_relaxed(&m[i]);
	}
}

/* Iterate @cpu over the CPUs of @m, in increasing order. */
#define luf_for_each_cpu(cpu, m, nr_cpus)                                    \
	for ((cpu) = luf_cpumask_next((m), (nr_cpus), 0); (cpu) < (nr_cpus); \
	     (cpu) = luf_cpumask_next((m), (nr_cpus), (cpu) + 1))

#endif /* LUF_CPUMASK_H */
