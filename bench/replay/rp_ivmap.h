// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_ivmap.h - a sorted array of disjoint intervals
 * [start, end), each followed by a fixed-size value: the mappings of an
 * address space (value: protection) and its stale ranges (value: the
 * newest removal's struct luf_cmp_rec). Lookups are binary searches; insertions
 * and erasures move the tail (address spaces hold hundreds to a few
 * thousand intervals).
 */
#ifndef RP_IVMAP_H
#define RP_IVMAP_H

#include <stddef.h>

struct rp_iv {
	unsigned long start, end;
	/* followed by the value (stride - sizeof(struct rp_iv) bytes) */
};

struct rp_ivmap {
	char *a;
	size_t n, cap, stride;
};

int rp_ivmap_init(struct rp_ivmap *m, size_t valsize);
void rp_ivmap_free(struct rp_ivmap *m);

static inline struct rp_iv *rp_iv_at(const struct rp_ivmap *m, size_t i)
{
	return (struct rp_iv *)(void *)(m->a + i * m->stride);
}

static inline void *rp_iv_val(struct rp_iv *iv)
{
	return iv + 1;
}

/* Index of the first interval with end > @addr (m->n if none). */
size_t rp_ivmap_lower(const struct rp_ivmap *m, unsigned long addr);

/*
 * rp_ivmap_cut() - split the intervals that straddle @start or @end, so
 * that the ones overlapping [@start, @end) are exactly [*@i, *@j).
 * Return: 0, or -1 out of memory (nothing split then).
 */
int rp_ivmap_cut(struct rp_ivmap *m, unsigned long start, unsigned long end, size_t *i, size_t *j);

/* Remove intervals [@i, @j). */
void rp_ivmap_erase(struct rp_ivmap *m, size_t i, size_t j);

/* Insert [@start, @end) at index @i with the value @val (copied). NULL: out of memory. */
struct rp_iv *rp_ivmap_insert(struct rp_ivmap *m, size_t i, unsigned long start, unsigned long end,
			      const void *val);

#endif /* RP_IVMAP_H */
