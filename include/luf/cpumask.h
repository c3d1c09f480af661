/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/cpumask.h - runtime-sized CPU sets.
 *
 * A cpumask is an array of LUF_CPUMASK_WORDS(nr_cpus) unsigned longs plus
 * the number of valid bits, nr_cpus, which every call takes (like the
 * kernel's bitmap_*() API, whose layout it shares: in a kernel the words
 * of a set are a struct cpumask through to_cpumask(), and mm_cpumask(mm)
 * is a luf mask through cpumask_bits()). Up to LUF_MAX_CPUS CPUs. Bits at
 * or above nr_cpus are always 0.
 *
 * The words are read and written through the platform's relaxed
 * accessors, so that a seqcount reader may read a mask while a writer
 * changes it (see shared.h); each loop works a word at a time and skips
 * zero words, so an operation costs O(words) plus O(CPUs in the set).
 */
#ifndef LUF_CPUMASK_H
#define LUF_CPUMASK_H

#include "platform.h"

LUF_BEGIN_DECLS

/* Most CPU ids an instance supports: Debian's kernels are built for 8192. */
#define LUF_MAX_CPUS 8192u
/* Words (unsigned long) of a mask of @nr_cpus CPUs. */
#define LUF_CPUMASK_WORDS(nr_cpus) (((nr_cpus) + LUF_BITS_PER_LONG - 1) / LUF_BITS_PER_LONG)

/**
 * luf_cpumask_size() - bytes of storage for a mask of @nr_cpus CPUs
 * @nr_cpus: 1..LUF_MAX_CPUS
 *
 * Return: LUF_CPUMASK_WORDS(@nr_cpus) words, in bytes.
 */
static inline size_t luf_cpumask_size(unsigned int nr_cpus)
{
	return LUF_CPUMASK_WORDS(nr_cpus) * sizeof(unsigned long);
}

/**
 * luf_cpumask_valid() - does a caller's mask fit @nr_cpus?
 * @m: a mask
 * @nr_cpus: the CPU count it must fit
 *
 * O(1): only the last word can hold bits at or above @nr_cpus.
 * Return: true iff @m has no bit at or above @nr_cpus.
 */
static inline bool luf_cpumask_valid(const unsigned long *m, unsigned int nr_cpus)
{
	unsigned int tail = nr_cpus % LUF_BITS_PER_LONG;

	return !tail || !(__luf_read_once(&m[nr_cpus / LUF_BITS_PER_LONG]) >> tail);
}

/**
 * luf_cpumask_clear() - empty a mask
 * @m: LUF_CPUMASK_WORDS(@nr_cpus) words
 * @nr_cpus: 1..LUF_MAX_CPUS
 */
static inline void luf_cpumask_clear(unsigned long *m, unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		__luf_write_once(&m[i], 0);
}

/**
 * luf_cpumask_set_cpu() - add @cpu to a mask that one writer owns
 * @m: the mask
 * @nr_cpus: its CPU count
 * @cpu: a CPU id
 *
 * A relaxed load and store; luf_cpumask_set_cpu_atomic() for a mask that
 * other CPUs change too.
 * Return: 0, or -EINVAL if @cpu >= @nr_cpus (the mask is unchanged).
 */
static inline int luf_cpumask_set_cpu(unsigned long *m, unsigned int nr_cpus, unsigned int cpu)
{
	unsigned long *w = &m[cpu / LUF_BITS_PER_LONG];

	if (cpu >= nr_cpus)
		return -EINVAL;
	__luf_write_once(w, __luf_read_once(w) | (1UL << (cpu % LUF_BITS_PER_LONG)));
	return 0;
}

/**
 * luf_cpumask_clear_cpu() - remove @cpu from a mask that one writer owns
 * @m: the mask
 * @nr_cpus: its CPU count
 * @cpu: a CPU id
 *
 * Return: 0, or -EINVAL if @cpu >= @nr_cpus (the mask is unchanged).
 */
static inline int luf_cpumask_clear_cpu(unsigned long *m, unsigned int nr_cpus, unsigned int cpu)
{
	unsigned long *w = &m[cpu / LUF_BITS_PER_LONG];

	if (cpu >= nr_cpus)
		return -EINVAL;
	__luf_write_once(w, __luf_read_once(w) & ~(1UL << (cpu % LUF_BITS_PER_LONG)));
	return 0;
}

/**
 * luf_cpumask_set_cpu_atomic() - add @cpu to a mask other CPUs change too
 * @m: the mask (an mm_cpumask that each CPU joins when it runs the mm)
 * @nr_cpus: its CPU count
 * @cpu: a CPU id
 *
 * An atomic OR of the bit (set_bit()), ordering nothing.
 * Return: 0, or -EINVAL if @cpu >= @nr_cpus (unchanged).
 */
static inline int luf_cpumask_set_cpu_atomic(unsigned long *m, unsigned int nr_cpus,
					     unsigned int cpu)
{
	if (cpu >= nr_cpus)
		return -EINVAL;
	__luf_set_bit(cpu, m);
	return 0;
}

/**
 * luf_cpumask_clear_cpu_atomic() - remove @cpu from a mask other CPUs change too
 * @m: the mask
 * @nr_cpus: its CPU count
 * @cpu: a CPU id
 *
 * Return: 0, or -EINVAL if @cpu >= @nr_cpus (unchanged).
 */
static inline int luf_cpumask_clear_cpu_atomic(unsigned long *m, unsigned int nr_cpus,
					       unsigned int cpu)
{
	if (cpu >= nr_cpus)
		return -EINVAL;
	__luf_clear_bit(cpu, m);
	return 0;
}

/**
 * luf_cpumask_test_cpu() - is @cpu in @m?
 * @m: the mask
 * @nr_cpus: its CPU count
 * @cpu: a CPU id
 *
 * Return: true iff @cpu < @nr_cpus and @cpu is in @m.
 */
static inline bool luf_cpumask_test_cpu(const unsigned long *m, unsigned int nr_cpus,
					unsigned int cpu)
{
	if (cpu >= nr_cpus)
		return false;
	return (__luf_read_once(&m[cpu / LUF_BITS_PER_LONG]) >> (cpu % LUF_BITS_PER_LONG)) & 1UL;
}

/**
 * luf_cpumask_copy() - @dst = @src
 * @dst: the mask written
 * @src: the mask read
 * @nr_cpus: their CPU count
 */
static inline void luf_cpumask_copy(unsigned long *dst, const unsigned long *src,
				    unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		__luf_write_once(&dst[i], __luf_read_once(&src[i]));
}

/**
 * luf_cpumask_or() - @dst |= @src, a union
 * @dst: the mask written
 * @src: the mask read
 * @nr_cpus: their CPU count
 */
static inline void luf_cpumask_or(unsigned long *dst, const unsigned long *src,
				  unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++) {
		unsigned long s = __luf_read_once(&src[i]);

		if (s)
			__luf_write_once(&dst[i], __luf_read_once(&dst[i]) | s);
	}
}

/**
 * luf_cpumask_and() - @dst &= @src, an intersection
 * @dst: the mask written
 * @src: the mask read
 * @nr_cpus: their CPU count
 */
static inline void luf_cpumask_and(unsigned long *dst, const unsigned long *src,
				   unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		__luf_write_once(&dst[i], __luf_read_once(&dst[i]) & __luf_read_once(&src[i]));
}

/**
 * luf_cpumask_andnot() - @dst &= ~@src, a difference
 * @dst: the mask written
 * @src: the mask read
 * @nr_cpus: their CPU count
 */
static inline void luf_cpumask_andnot(unsigned long *dst, const unsigned long *src,
				      unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		__luf_write_once(&dst[i], __luf_read_once(&dst[i]) & ~__luf_read_once(&src[i]));
}

/**
 * luf_cpumask_weight() - the number of CPUs in @m
 * @m: the mask
 * @nr_cpus: its CPU count
 *
 * Return: a count of CPUs.
 */
static inline unsigned int luf_cpumask_weight(const unsigned long *m, unsigned int nr_cpus)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		n += __luf_popcount(__luf_read_once(&m[i]));
	return n;
}

/**
 * luf_cpumask_empty() - does @m hold no CPU?
 * @m: the mask
 * @nr_cpus: its CPU count
 *
 * Return: true iff @m is empty.
 */
static inline bool luf_cpumask_empty(const unsigned long *m, unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		if (__luf_read_once(&m[i]))
			return false;
	return true;
}

/**
 * luf_cpumask_equal() - do @a and @b hold the same CPUs?
 * @a: a mask
 * @b: another mask
 * @nr_cpus: their CPU count
 *
 * Return: true iff they are equal.
 */
static inline bool luf_cpumask_equal(const unsigned long *a, const unsigned long *b,
				     unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		if (__luf_read_once(&a[i]) != __luf_read_once(&b[i]))
			return false;
	return true;
}

/**
 * luf_cpumask_subset() - is every CPU of @sub in @super?
 * @sub: a mask
 * @super: another mask
 * @nr_cpus: their CPU count
 *
 * Return: true iff @sub is a subset of @super.
 */
static inline bool luf_cpumask_subset(const unsigned long *sub, const unsigned long *super,
				      unsigned int nr_cpus)
{
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(nr_cpus); i++)
		if (__luf_read_once(&sub[i]) & ~__luf_read_once(&super[i]))
			return false;
	return true;
}

/**
 * luf_cpumask_next() - the first CPU of @m at or after @cpu
 * @m: the mask
 * @nr_cpus: its CPU count
 * @cpu: where to start
 *
 * Return: a CPU id, or @nr_cpus if there is none.
 */
static inline unsigned int luf_cpumask_next(const unsigned long *m, unsigned int nr_cpus,
					    unsigned int cpu)
{
	unsigned int i = cpu / LUF_BITS_PER_LONG;
	unsigned long w;

	if (cpu >= nr_cpus)
		return nr_cpus;
	w = __luf_read_once(&m[i]) & (~0UL << (cpu % LUF_BITS_PER_LONG));
	for (;;) {
		if (w) {
			unsigned int c = i * LUF_BITS_PER_LONG + __luf_ffs(w);

			return c < nr_cpus ? c : nr_cpus;
		}
		if (++i >= LUF_CPUMASK_WORDS(nr_cpus))
			return nr_cpus;
		w = __luf_read_once(&m[i]);
	}
}

/* Iterate @cpu over the CPUs of @m (@nr_cpus bits), in increasing order. */
#define luf_for_each_cpu(cpu, m, nr_cpus)                                    \
	for ((cpu) = luf_cpumask_next((m), (nr_cpus), 0); (cpu) < (nr_cpus); \
	     (cpu) = luf_cpumask_next((m), (nr_cpus), (cpu) + 1))

LUF_END_DECLS

#endif /* LUF_CPUMASK_H */
