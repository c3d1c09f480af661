/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/done.h - per-CPU done counters.
 *
 * done[cpu] is the newest ugen that CPU is known to have flushed: every
 * translation removed before that generation was stamped is gone from its
 * TLB. It only moves forward (S4). Each CPU's counter sits on its own cache
 * line with the count of flush requests it received: the 2020 pageblock
 * flags thread measured contended cmpxchg retries falling from 1,208 to 68
 * once the hot words were split onto separate lines, and luf counts its own
 * retries in LUF_STAT_CAS_RETRY. Source: LUF RFC v12, per-CPU ugen_done.
 */
#ifndef LUF_DONE_H
#define LUF_DONE_H

#include "platform.h"
#include "ugen.h"
#include "cpumask.h"

/*
 * One CPU's done counter, on its own cache line: an array of nr_cpus of
 * them is the done[] of an instance (luf_done_size() bytes).
 */
struct luf_done_cpu {
	LUF_CACHE_ALIGNED luf_aulong done; /* newest ugen flushed on this CPU */
	luf_aulong received;		   /* nr_tlb_remote_flush_received */
};

/* Bytes for the done counters of @nr_cpus CPUs. */
static inline size_t luf_done_size(unsigned int nr_cpus)
{
	return nr_cpus * sizeof(struct luf_done_cpu);
}

/**
 * luf_done_init() - start every CPU at @start.
 * @d: luf_done_size(@nr_cpus) bytes. @nr_cpus: CPUs, 1..LUF_MAX_CPUS.
 * @start: luf_ugen_current() of the
 *     source the counters will be compared with (so that no stamp handed
 *     out later looks done already, even just below the wrap).
 */
static inline void luf_done_init(struct luf_done_cpu *d, unsigned int nr_cpus, luf_ugen_t start)
{
	for (unsigned int c = 0; c < nr_cpus; c++) {
		luf_store_relaxed(&d[c].done, start);
		luf_store_relaxed(&d[c].received, 0);
	}
}

/*
 * luf_done_read() - done[@cpu], with acquire ordering: whatever the flush
 * that raised it did (the TLB invalidation, the barrier) happens before the
 * caller's next access, e.g. its reuse of a folio. Pairs with the release
 * compare-and-swap in __luf_done_mark(). @cpu must be < nr_cpus (not checked:
 * fast path; callers take CPU ids from a checked cpumask).
 */
static inline luf_ugen_t luf_done_read(const struct luf_done_cpu *d, unsigned int cpu)
{
#if defined(LUF_MUTANT_DONE_RELAXED)
	/* Mutant: no acquire; the reuse may be ordered before the flush it relies on. */
	return luf_load_relaxed(&d[cpu].done);
#else
	return luf_load_acquire(&d[cpu].done);
#endif
}

/*
 * __luf_done_mark_cpu() - raise done[@cpu] to @ugen unless it is there already.
 * @d: the done counters. @cpu: < nr_cpus. @ugen: a snapshot taken before
 *     the flush of @cpu that has now completed; never 0.
 *
 * Monotonic: a counter at or past @ugen is left alone, so of two racing
 * flushers the newer value wins and done never goes back (S4). The
 * release compare-and-swap publishes the completed flush to luf_done_read().
 * Return: the number of compare-and-swap retries (for LUF_STAT_CAS_RETRY).
 */
static inline unsigned long __luf_done_mark_cpu(struct luf_done_cpu *d, unsigned int cpu,
						luf_ugen_t ugen)
{
	unsigned long old = luf_load_relaxed(&d[cpu].done), retries = 0;

	if (luf_unlikely(!ugen))
		return 0; /* "no generation": marks nothing */
	while (luf_ugen_before(old, ugen)) {
		if (luf_try_cmpxchg_release(&d[cpu].done, &old, ugen))
			break;
		retries++;
	}
	return retries;
}

/*
 * __luf_done_mark() - raise done of every CPU in @cpus to @ugen, after a flush
 * of those CPUs that started after @ugen was taken (luf_ugen_new()) has
 * returned successfully; count one flush request received by each.
 * @d: the done counters. @cpus, @nr_cpus: the flushed CPUs. @ugen: the
 *     flusher's snapshot, never 0.
 * Internal: a caller reporting a flush luf did not send uses
 * luf_local_flush_end(), which refuses a ugen the source never handed out.
 * Return: the number of compare-and-swap retries (for LUF_STAT_CAS_RETRY).
 */
static inline unsigned long __luf_done_mark(struct luf_done_cpu *d, const luf_aulong *cpus,
					    unsigned int nr_cpus, luf_ugen_t ugen)
{
	unsigned long retries = 0;
	unsigned int cpu;

	luf_for_each_cpu (cpu, cpus, nr_cpus) {
		luf_add_relaxed(&d[cpu].received, 1);
		retries += __luf_done_mark_cpu(d, cpu, ugen);
	}
	return retries;
}

#endif /* LUF_DONE_H */
