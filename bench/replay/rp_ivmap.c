// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* bench/replay/rp_ivmap.c - sorted interval arrays (see rp_ivmap.h). */
#include <stdlib.h>
#include <string.h>

#include "rp_ivmap.h"

int rp_ivmap_init(struct rp_ivmap *m, size_t valsize)
{
	m->a = NULL;
	m->n = m->cap = 0;
	m->stride = (sizeof(struct rp_iv) + valsize + 7) & ~(size_t)7;
	return 0;
}

void rp_ivmap_free(struct rp_ivmap *m)
{
	free(m->a);
	m->a = NULL;
	m->n = m->cap = 0;
}

size_t rp_ivmap_lower(const struct rp_ivmap *m, unsigned long addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rp_iv_at(m, mid)->end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static int reserve(struct rp_ivmap *m, size_t more)
{
	if (m->n + more > m->cap) {
		size_t cap = m->cap ? 2 * m->cap : 16;
		char *a;

		while (cap < m->n + more)
			cap *= 2;
		a = realloc(m->a, cap * m->stride);
		if (!a)
			return -1;
		m->a = a;
		m->cap = cap;
	}
	return 0;
}

struct rp_iv *rp_ivmap_insert(struct rp_ivmap *m, size_t i, unsigned long start, unsigned long end,
			      const void *val)
{
	struct rp_iv *iv;

	if (reserve(m, 1))
		return NULL;
	memmove(m->a + (i + 1) * m->stride, m->a + i * m->stride, (m->n - i) * m->stride);
	m->n++;
	iv = rp_iv_at(m, i);
	iv->start = start;
	iv->end = end;
	memcpy(rp_iv_val(iv), val, m->stride - sizeof(*iv));
	return iv;
}

void rp_ivmap_erase(struct rp_ivmap *m, size_t i, size_t j)
{
	if (j <= i)
		return;
	memmove(m->a + i * m->stride, m->a + j * m->stride, (m->n - j) * m->stride);
	m->n -= j - i;
}

/* Split the interval containing @addr strictly inside it, if any. */
static int split_at(struct rp_ivmap *m, unsigned long addr)
{
	size_t i = rp_ivmap_lower(m, addr);
	struct rp_iv *iv;

	if (i == m->n)
		return 0;
	if (reserve(m, 1)) /* first: the value is copied from inside the array */
		return -1;
	iv = rp_iv_at(m, i);
	if (iv->start >= addr)
		return 0;
	if (!rp_ivmap_insert(m, i + 1, addr, iv->end, rp_iv_val(iv)))
		return -1;
	rp_iv_at(m, i)->end = addr;
	return 0;
}

int rp_ivmap_cut(struct rp_ivmap *m, unsigned long start, unsigned long end, size_t *i, size_t *j)
{
	size_t k;

	if (split_at(m, start) || split_at(m, end))
		return -1;
	*i = rp_ivmap_lower(m, start);
	for (k = *i; k < m->n && rp_iv_at(m, k)->start < end; k++)
		;
	*j = k;
	return 0;
}
