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
 * a flusher takes a new ugen with luf_ugen_new() *before* it flushes, and
 * an unmapper stamps its removed translations with luf_ugen_stamp(), which
 * only reads the counter. The stamp is one past what it read: it names the
 * first flush that certainly started after the removal.
 *
 *   unmapper (CPU0)                      flusher (CPU1)
 *   clear PTE                            f = luf_ugen_new()    (counter -> f)
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

/* An unmap generation: wrap-around, compared only with luf_ugen_before(); 0 = none. */
typedef unsigned long luf_ugen_t;

/* The global source: one per luf instance, on its own cache line. */
struct luf_ugen_src {
	LUF_CACHE_ALIGNED luf_aulong cur; /* last ugen handed out by luf_ugen_new() */
};

/**
 * luf_ugen_before() - wrap-safe "a is older than b".
 * @a, @b: ugens (0 is "none" and is older than nothing in particular: callers
 *         test for 0 first).
 *
 * Return: true iff (long)(a - b) < 0. Source: LUF RFC v12, ugen_before().
 */
static inline bool luf_ugen_before(luf_ugen_t a, luf_ugen_t b)
{
#if defined(LUF_MUTANT_UGEN_LT)
	/* Mutant: a plain comparison, wrong across the wrap (breaks S4). */
	return a < b;
#else
	return (long)(a - b) < 0;
#endif
}

/**
 * luf_ugen_newer() - the newer of two ugens, treating 0 as "none".
 * @a, @b: ugens.
 *
 * Return: @a if @b is 0 or older, else @b.
 */
static inline luf_ugen_t luf_ugen_newer(luf_ugen_t a, luf_ugen_t b)
{
	if (!a)
		return b;
	if (!b)
		return a;
	return luf_ugen_before(a, b) ? b : a;
}

/**
 * luf_ugen_src_init() - start a ugen source.
 * @src:   caller storage.
 * @start: the value the counter starts at (any value; tests start just
 *         below the wrap, e.g. ULONG_MAX - 16). Done counters must be
 *         initialised to luf_ugen_current() of this source.
 */
static inline void luf_ugen_src_init(struct luf_ugen_src *src, luf_ugen_t start)
{
	luf_store_relaxed(&src->cur, start);
}

/**
 * luf_ugen_current() - the last ugen handed out (or the start value).
 * @src: the source.
 *
 * Return: a ugen, possibly 0 if the source started at 0. No ordering.
 */
static inline luf_ugen_t luf_ugen_current(const struct luf_ugen_src *src)
{
	return luf_load_relaxed(&src->cur);
}

/**
 * luf_ugen_new() - take a new generation; called by a flusher before it
 * flushes, the result is the ugen its flush will mark done.
 * @src: the source.
 *
 * Fully ordered (a seq_cst read-modify-write): the flush that follows is
 * ordered after it. Skips 0 on wrap.
 *
 * Return: a ugen, never 0. Writes the source's cache line: flush path only.
 */
static inline luf_ugen_t luf_ugen_new(struct luf_ugen_src *src)
{
	luf_ugen_t g;

	do
		g = luf_add_return(&src->cur, 1);
	while (luf_unlikely(!g)); /* again if another wrap raced past 0 (tests/model) */
	return g;
}

/**
 * luf_ugen_stamp() - the ugen a flush must reach to cover every translation
 * this CPU removed before the call.
 * @src: the source.
 *
 * Issues a full barrier first, so the caller's PTE clear (a plain store in
 * a simulator, ptep_get_and_clear() in a kernel) is ordered before the read
 * (the store-buffering pattern in the comment at the top of this file).
 *
 * Return: current + 1, or 1 where that is 0. Never 0. Reads only.
 */
static inline luf_ugen_t luf_ugen_stamp(const struct luf_ugen_src *src)
{
	luf_ugen_t g;

	luf_smp_mb();
	g = luf_load_relaxed(&src->cur) + 1;
	return g ? g : 1;
}

#endif /* LUF_UGEN_H */
