// SPDX-License-Identifier: GPL-2.0-only OR MIT
/* bench/replay/rp_bound.c - the lower bounds of rp_bound.h. */
#include <stdlib.h>

#include "rp_bound.h"

int rp_bound_init(struct rp_bound *b, unsigned int nr_cpus)
{
	b->nr_cpus = nr_cpus;
	b->cov = calloc(nr_cpus, sizeof(*b->cov));
	b->own = calloc(nr_cpus, sizeof(*b->own));
	b->op = 0;
	b->cpu_flushes = b->ops = 0;
	return b->cov && b->own ? 0 : -1;
}

void rp_bound_fini(struct rp_bound *b)
{
	free(b->cov);
	free(b->own);
	b->cov = b->own = NULL;
}

int rp_bound_need(struct rp_bound *b, unsigned int cpu, uint64_t removed, uint64_t now)
{
	int stab = 0;

	if (!removed)
		return 0;
	/* fewest operations: one operation at @now covers every CPU */
	if (b->op < removed && b->own[cpu] < removed) {
		b->op = now;
		b->ops++;
	}
	/* fewest CPU flushes: this CPU at @now */
	if (b->cov[cpu] < removed) {
		b->cov[cpu] = now;
		b->cpu_flushes++;
		stab = 1;
	}
	return stab;
}
