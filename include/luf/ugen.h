/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/ugen.h - unmap generations.
 *
 * A ugen is a wrap-around counter (an unsigned long). Two ugens are only
 * ever compared with luf_ugen_before(), a signed difference, never with <,
 * so the order survives the wrap from ULONG_MAX to 1. The value 0 means
 * "no generation" (an empty pending set) and is never handed out.
 *
 * Who moves the counter. In the LUF RFC (v12, new_luf_ugen()) every
 * unmapper increments the global counter and a flusher reads it. luf
 * turns that around so that the defer path never writes a shared line:
 * a flusher takes a new ugen with __luf_ugen_new() *before* it flushes,
 * and an unmapper stamps its removed translations with luf_ugen_stamp(),
 * which only reads the counter. The stamp is one past what it read: it
 * names the first flush that certainly started after the removal.
 *
 *   unmapper (CPU0)                      flusher (CPU1)
 *   clear PTE                            f = __luf_ugen_new()  (counter -> f)
 *   full barrier                         flush CPUs of the set
 *   s = luf_ugen_stamp() = cur + 1       mark done = f
 *
 * The counter's updates and the unmapper's read are totally ordered. If
 * CPU1's increment comes first, CPU0 reads cur >= f, so s > f: that flush
 * may have run before the PTE was cleared, and it does not count for s.
 * If the read comes first, f >= cur + 1 = s and CPU1's flush runs after
 * the increment, hence after the PTE was cleared: done = f covers s.
 *
 * Limit (as in LUF): a CPU whose done lags the counter by 2^(BITS_PER_LONG-1)
 * generations compares the wrong way; at one flush per nanosecond that is
 * 292 years on a 64-bit machine.
 */
#ifndef LUF_UGEN_H
#define LUF_UGEN_H

#include "platform.h"

LUF_BEGIN_DECLS

/**
 * struct luf_ugen_src - the source of unmap generations of one instance
 * @cur: the last ugen handed out by __luf_ugen_new(); written by flushers
 *       only, on its own cache line
 */
struct luf_ugen_src {
	LUF_CACHE_ALIGNED unsigned long cur;
};

/**
 * luf_ugen_before() - is ugen @a older than ugen @b, across the wrap?
 * @a: a ugen; 0 ("none") is not special here, callers test for it first
 * @b: another ugen
 *
 * Context: any; reads nothing shared.
 * Return: true iff (long)(@a - @b) < 0. Source: LUF RFC v12, ugen_before().
 */
static inline bool luf_ugen_before(unsigned long a, unsigned long b)
{
#if defined(LUF_MUTANT_UGEN_LT)
	/* Mutant: a plain comparison, wrong across the wrap (breaks S4). */
	return a < b;
#else
	return (long)(a - b) < 0;
#endif
}

/**
 * luf_ugen_newer() - the newer of two ugens, treating 0 as "none"
 * @a: a ugen or 0
 * @b: a ugen or 0
 *
 * Context: any; reads nothing shared.
 * Return: @a if @b is 0 or older, else @b.
 */
static inline unsigned long luf_ugen_newer(unsigned long a, unsigned long b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return luf_ugen_before(a, b) ? b : a;
}

/* Start @src at @start; done counters start at the same value (luf_init()). */
static inline void __luf_ugen_src_init(struct luf_ugen_src *src, unsigned long start)
{
	__luf_write_once(&src->cur, start);
}

/**
 * luf_ugen_current() - the last ugen handed out, or the start value
 * @src: the source
 *
 * Context: any; one relaxed load, no ordering.
 * Return: a ugen, 0 if the source started at 0 and never moved.
 */
static inline unsigned long luf_ugen_current(const struct luf_ugen_src *src)
{
	return __luf_read_once(&src->cur);
}

/*
 * A new generation, taken by a flusher before it flushes: the ugen its
 * flush will mark done. A fully ordered read-modify-write, so the flush
 * that follows is ordered after it; skips 0 on wrap (again if another
 * wrap raced past 0: tests/spin). Writes the source's line: flush path only.
 */
static inline unsigned long __luf_ugen_new(struct luf_ugen_src *src)
{
	unsigned long g;

	do
		g = __luf_add_return(&src->cur, 1);
	while (luf_unlikely(!g));
	return g;
}

/**
 * luf_ugen_stamp() - the ugen a flush must reach to cover every
 * translation this CPU removed before the call
 * @src: the source
 *
 * Call after the PTE clear. The full barrier keeps the clear (a plain
 * store in a simulator, ptep_get_and_clear() in a kernel) before the read
 * of the counter: the store-buffering pattern of the diagram above.
 *
 * Context: any; reads only (no shared-line write).
 * Return: current + 1, or 1 where that is 0; never 0.
 */
static inline unsigned long luf_ugen_stamp(const struct luf_ugen_src *src)
{
	unsigned long g;

	__luf_smp_mb(); /* the removal before the read of the counter (diagram above) */
	g = __luf_read_once(&src->cur) + 1;
	return g ? g : 1;
}

LUF_END_DECLS

#endif /* LUF_UGEN_H */
