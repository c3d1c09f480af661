// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * bench/replay/rp_bound.h - the two lower bounds of issue 16, shared by
 * luf-replay and luf-workloads (the same header in both builds).
 *
 * A stale translation on CPU c, removed at tick r, must be flushed from c
 * by its deadline d: the point where it would be reused, upgraded to
 * writable or left writable past a batch end. That is the interval [r, d]
 * of CPU c; a flush c did for its own reasons (a context switch: "own")
 * at a tick in [r, d] covers it for free. The caller reports deadlines in
 * time order (rp_bound_need() at tick d), which is the order of right
 * ends, so choosing flushes greedily at the earliest deadline not yet
 * covered (interval stabbing) is optimal:
 *
 *   cpu_flushes  per CPU, stab its uncovered intervals at their deadlines:
 *                the fewest flushes of CPUs (IPIs received, plus the
 *                caller's own CPU when it is flushed as part of the
 *                operation) that any safe policy needs for these events;
 *   ops          stab the intervals of all CPUs together, one flush
 *                operation reaching any number of CPUs: the fewest flush
 *                operations (local or remote) any safe policy needs.
 *
 * Both count only what the events force; neither is reachable by one
 * policy at once in general (the fewest operations flush every stale CPU,
 * the fewest CPU flushes flush each CPU separately).
 */
#ifndef RP_BOUND_H
#define RP_BOUND_H

#include <stdint.h>
#include <stdlib.h>

struct rp_bound {
	unsigned int nr_cpus;
	uint64_t *cov; /* per CPU: newest tick it was flushed at (stab or own) */
	uint64_t *own; /* per CPU: newest tick of its own flush */
	uint64_t op;   /* newest tick of a flush operation of the ops bound */
	unsigned long long cpu_flushes, ops;
};

/* Header only: luf-replay, luf-workloads and the fuzz target build no extra source. */
static inline int rp_bound_init(struct rp_bound *b, unsigned int nr_cpus)
{
	b->nr_cpus = nr_cpus;
	b->cov = calloc(nr_cpus, sizeof(*b->cov));
	b->own = calloc(nr_cpus, sizeof(*b->own));
	b->op = 0;
	b->cpu_flushes = b->ops = 0;
	return b->cov && b->own ? 0 : -1;
}

static inline void rp_bound_fini(struct rp_bound *b)
{
	free(b->cov);
	free(b->own);
	b->cov = b->own = NULL;
}

/* @cpu flushed itself for its own reasons at @tick (context switch). */
static inline void rp_bound_own(struct rp_bound *b, unsigned int cpu, uint64_t tick)
{
	b->own[cpu] = tick;
	if (b->cov[cpu] < tick)
		b->cov[cpu] = tick;
}

/* Has @cpu been flushed (by the CPU-flush bound) since @removed? */
static inline int rp_bound_covered(const struct rp_bound *b, unsigned int cpu, uint64_t removed)
{
	return b->cov[cpu] >= removed;
}

/*
 * A translation removed at tick @removed may still be cached by @cpu and
 * must be gone now, at tick @now (>= @removed; no removal after @now has
 * happened yet). Return: 1 if the CPU-flush bound had to flush @cpu here.
 */
static inline int rp_bound_need(struct rp_bound *b, unsigned int cpu, uint64_t removed,
				uint64_t now)
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

#endif /* RP_BOUND_H */
