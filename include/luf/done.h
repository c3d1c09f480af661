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
 * retries in LUF_STAT_CAS_RETRY. In a kernel the counters are a per-CPU
 * variable; in user space an array indexed by CPU id (__percpu).
 * Source: LUF RFC v12, per-CPU ugen_done.
 */
#ifndef LUF_DONE_H
#define LUF_DONE_H

#include "platform.h"
#include "ugen.h"
#include "cpumask.h"

/**
 * struct luf_done_cpu - one CPU's done counter, on its own cache line
 * @done: the newest ugen flushed on this CPU
 * @received: flush requests this CPU received (nr_tlb_remote_flush_received)
 *
 * Per-CPU storage of an instance: luf_done_size() bytes in user space.
 */
struct luf_done_cpu {
	LUF_CACHE_ALIGNED unsigned long done;
	unsigned long received;
};

/**
 * luf_done_size() - bytes for the done counters of @nr_cpus CPUs (user space)
 * @nr_cpus: 1..LUF_MAX_CPUS
 *
 * Return: @nr_cpus times sizeof(struct luf_done_cpu).
 */
static inline size_t luf_done_size(unsigned int nr_cpus)
{
	return nr_cpus * sizeof(struct luf_done_cpu);
}

/*
 * Start every possible CPU of @d at @start, luf_ugen_current() of the
 * source they will be compared with (so that no stamp handed out later
 * looks done already, even just below the wrap).
 */
static inline void __luf_done_init(struct luf_done_cpu __percpu *d, unsigned int nr_cpus,
				   unsigned long start)
{
	unsigned int c;

	__luf_for_each_possible_cpu(c, nr_cpus) {
		__luf_write_once(&__luf_per_cpu(d, c)->done, start);
		__luf_write_once(&__luf_per_cpu(d, c)->received, 0);
	}
}

/**
 * luf_done_read() - done[@cpu], with acquire ordering
 * @d: the done counters of an instance (its &struct luf.done)
 * @cpu: a CPU id below the instance's CPU count (not checked: fast path;
 *       callers take CPU ids from a checked cpumask)
 *
 * Whatever the flush that raised the counter did (the TLB invalidation,
 * the barrier) happens before the caller's next access, e.g. its reuse of
 * a folio. Pairs with the release compare-and-swap of __luf_done_mark_cpu().
 *
 * Context: any; one load of @cpu's line.
 * Return: a ugen.
 */
static inline unsigned long luf_done_read(const struct luf_done_cpu __percpu *d, unsigned int cpu)
{
#if defined(LUF_MUTANT_DONE_RELAXED)
	/* Mutant: no acquire; the reuse may be ordered before the flush it relies on. */
	return __luf_read_once(&__luf_per_cpu(d, cpu)->done);
#else
	/* Pairs with the release in __luf_done_mark_cpu(): the flush before the reuse. */
	return __luf_load_acquire(&__luf_per_cpu(d, cpu)->done);
#endif
}

/*
 * Raise done[@cpu] to @ugen unless it is there already. @ugen is a
 * snapshot taken before a flush of @cpu that has now completed, never 0
 * (0 marks nothing). Monotonic: a counter at or past @ugen is left alone,
 * so of two racing flushers the newer value wins and done never goes back
 * (S4). Internal: luf_local_flush_end() is the checked way in.
 * Returns the number of compare-and-swap retries (LUF_STAT_CAS_RETRY).
 */
static inline unsigned long __luf_done_mark_cpu(struct luf_done_cpu __percpu *d, unsigned int cpu,
						unsigned long ugen)
{
	unsigned long *p = &__luf_per_cpu(d, cpu)->done;
	unsigned long old = __luf_read_once(p), retries = 0;

	if (luf_unlikely(!ugen))
		return 0;
	while (luf_ugen_before(old, ugen)) {
		/* Release: the completed flush before the new value (luf_done_read()). */
		if (__luf_try_cmpxchg_release(p, &old, ugen))
			break;
		retries++;
	}
	return retries;
}

/*
 * Raise done of every CPU in @cpus (@nr_cpus bits) to @ugen, after a flush
 * of those CPUs that started after @ugen was taken has returned
 * successfully, and count one flush request received by each. Returns the
 * number of compare-and-swap retries.
 */
static inline unsigned long __luf_done_mark(struct luf_done_cpu __percpu *d,
					    const unsigned long *cpus, unsigned int nr_cpus,
					    unsigned long ugen)
{
	unsigned long retries = 0;
	unsigned int cpu;

	luf_for_each_cpu(cpu, cpus, nr_cpus) {
		__luf_add_relaxed(&__luf_per_cpu(d, cpu)->received, 1);
		retries += __luf_done_mark_cpu(d, cpu, ugen);
	}
	return retries;
}

#endif /* LUF_DONE_H */
