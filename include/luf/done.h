/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/done.h - per-CPU done counters and their summary.
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
 *
 * The summary. Reading one line per CPU makes a check of a 1,024-CPU set
 * cost ~1,000 loads. Tree RCU answers "has every CPU passed this point"
 * from per-group summaries (rcu_node) and one comparison for the whole
 * system (rcu_seq_done()); luf keeps the same shape for done:
 *
 *   all          <= group[g] for every group g         (one word, one line)
 *   group[g]     <= done[cpu] for every possible CPU of g (CPUs 64g..64g+63,
 *                   word g of a cpumask)
 *
 * Every summary value is a minimum of counters that were read with acquire
 * and is published with release: as counters only move forward, it stays
 * a lower bound forever, and a reader that sees it at or past a ugen sees
 * every flush it stands for. It may lag (say "not done" when every CPU
 * has flushed); it never runs ahead. Only the flush path writes it: a CPU
 * that flushed and held its group's minimum takes itself out of the
 * group's holders, and the last one out recomputes the group (64 loads
 * per move of a group, not per flush). Checks and diets only read it: one
 * comparison when every CPU has passed the set's ugen, one word per group
 * that has.
 */
#ifndef LUF_DONE_H
#define LUF_DONE_H

#include "platform.h"
#include "ugen.h"
#include "cpumask.h"

LUF_BEGIN_DECLS

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

/* Groups of the summary: one per cpumask word of LUF_MAX_CPUS CPUs. */
#define LUF_DONE_GROUPS LUF_CPUMASK_WORDS(LUF_MAX_CPUS)

/*
 * Rounds a recomputation of a group, or of @all, takes before it leaves a
 * summary that keeps moving under it to later flushers. With interrupts
 * off, a flusher that marks one cpumask word reads at most
 * (2 x __LUF_DONE_SUM_ROUNDS + 1) x 64 counters (each round reads the
 * word's CPUs, and all but the last read those at the minimum again) and
 * (__LUF_DONE_SUM_ROUNDS + 1) x 2 x LUF_DONE_GROUPS summary words (@all's
 * passes over the groups, two words each).
 */
#define __LUF_DONE_SUM_ROUNDS 64

/* In struct luf_done's @lag_all: @all may lag; a later move of a group recomputes it. */
#define __LUF_DONE_ALL_BEHIND (1UL << (LUF_BITS_PER_LONG - 1))

#ifndef __luf_done_sum_all_round
/* Between a recomputation's raise of @all and its second read (a unit test moves groups). */
#define __luf_done_sum_all_round(d) ((void)(d))
#endif

/**
 * struct luf_done - the done counters of an instance and their summary
 * @all: a ugen every possible CPU has flushed up to (the minimum of @group)
 * @lag_all: a word whose group held @all when it was last computed (a hint),
 *	or __LUF_DONE_ALL_BEHIND set: a recomputation gave up, @all may lag
 * @cpu: the per-CPU counters (caller storage, luf_done_size() bytes)
 * @nr_cpus: CPU ids 0..@nr_cpus - 1
 * @group: per cpumask word, a ugen every possible CPU of the word has
 *	flushed up to; on their own lines, away from @all
 * @lag: per word, a CPU that held the word's minimum when @group was last
 *	computed (a hint: a check looks at it first)
 * @hold: per word, the CPUs that held its minimum when @group was last
 *	computed and have not flushed since: the group can only move once
 *	this is empty (flushers clear their CPU's bit)
 *
 * Embedded in struct luf (&l->done); set up by luf_init(). Summary values
 * only move forward, are written by flushers only, and never run ahead of
 * the counters they summarise.
 */
struct luf_done {
	LUF_CACHE_ALIGNED unsigned long all;
	unsigned long lag_all;
	struct luf_done_cpu __percpu *cpu;
	unsigned int nr_cpus;
	LUF_CACHE_ALIGNED unsigned long group[LUF_DONE_GROUPS];
	unsigned long lag[LUF_DONE_GROUPS];
	unsigned long hold[LUF_DONE_GROUPS];
};

/*
 * Start every possible CPU of @d at @start, luf_ugen_current() of the
 * source they will be compared with (so that no stamp handed out later
 * looks done already, even just below the wrap), and the summary with them.
 */
static inline void __luf_done_init(struct luf_done *d, struct luf_done_cpu __percpu *cpus,
				   unsigned int nr_cpus, unsigned long start)
{
	unsigned int c, g;

	d->cpu = cpus;
	d->nr_cpus = nr_cpus;
	for (g = 0; g < LUF_DONE_GROUPS; g++) {
		__luf_write_once(&d->group[g], start);
		__luf_write_once(&d->lag[g], ~0UL); /* no possible CPU (yet) */
		__luf_write_once(&d->hold[g], 0);
	}
	__luf_for_each_possible_cpu(c, nr_cpus) {
		g = c / LUF_BITS_PER_LONG;
		__luf_write_once(&__luf_per_cpu(cpus, c)->done, start);
		__luf_write_once(&__luf_per_cpu(cpus, c)->received, 0);
		if (__luf_read_once(&d->lag[g]) == ~0UL)
			__luf_write_once(&d->lag[g], c);
		__luf_write_once(&d->hold[g],
				 __luf_read_once(&d->hold[g]) | 1UL << (c % LUF_BITS_PER_LONG));
	}
	__luf_write_once(&d->all, start);
	__luf_write_once(&d->lag_all, 0);
}

/**
 * luf_done_read() - done[@cpu], with acquire ordering
 * @d: the done counters of an instance (&struct luf.done)
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
static inline unsigned long luf_done_read(const struct luf_done *d, unsigned int cpu)
{
#if defined(LUF_MUTANT_DONE_RELAXED)
	/* Mutant: no acquire; the reuse may be ordered before the flush it relies on. */
	return __luf_read_once(&__luf_per_cpu(d->cpu, cpu)->done);
#else
	/* Pairs with the release in __luf_done_raise(): the flush before the reuse. */
	return __luf_load_acquire(&__luf_per_cpu(d->cpu, cpu)->done);
#endif
}

/**
 * luf_done_all() - a ugen every possible CPU has flushed up to
 * @d: the done counters of an instance (&struct luf.done)
 *
 * A set stamped at or before it is done, whatever its CPUs. It may lag the
 * slowest CPU's counter; it is never ahead of it.
 *
 * Context: any; one load (acquire: pairs with the summary's release).
 * Return: a ugen.
 */
static inline unsigned long luf_done_all(const struct luf_done *d)
{
	return __luf_load_acquire(&d->all);
}

/* Summary of cpumask word @g (acquire: pairs with __luf_done_raise()). */
static inline unsigned long __luf_done_group(const struct luf_done *d, unsigned int g)
{
	return __luf_load_acquire(&d->group[g]);
}

/*
 * Raise *@p to @v unless it is there already (release: whatever made @v
 * true comes before it). Returns the value it held before; equal to or
 * past @v if nothing was written.
 */
static inline unsigned long __luf_done_raise(unsigned long *p, unsigned long v,
					     unsigned long *retries)
{
	unsigned long old = __luf_read_once(p), was = old;

	while (luf_ugen_before(old, v)) {
		if (__luf_try_cmpxchg_release(p, &old, v))
			return was;
		was = old;
		(*retries)++;
	}
	return was;
}

/* True iff cpumask word @g of @d holds no possible CPU (its group never moves). */
static inline bool __luf_done_group_empty(const struct luf_done *d, unsigned int g)
{
	return __luf_read_once(&d->lag[g]) == ~0UL;
}

/*
 * The minimum of the groups that hold a possible CPU, for @all; @lag_all
 * names a group at it. A group is read with acquire, so @all, published
 * with release, carries every flush its groups stand for.
 */
static inline unsigned long __luf_done_groups_min(struct luf_done *d)
{
	unsigned int words = LUF_CPUMASK_WORDS(d->nr_cpus), g, at = 0;
	unsigned long min = 0, v, prev;
	bool any = false;

	for (g = 0; g < words; g++) {
		if (__luf_done_group_empty(d, g))
			continue;
		v = __luf_done_group(d, g);
		if (!any || luf_ugen_before(v, min)) {
			min = v;
			at = g;
		}
		any = true;
	}
	if (!any)
		return luf_done_all(d);
	prev = __luf_read_once(&d->lag_all);
	/* A hint: a lost race leaves it stale; the mark of a lagging @all stays. */
	if (prev != at && !(prev & __LUF_DONE_ALL_BEHIND))
		__luf_try_cmpxchg_release(&d->lag_all, &prev, at);
	return min;
}

/*
 * Recompute @all from the groups and raise it if it moved. A flusher that
 * raised a group while this one was reading may have seen the old @all
 * and left it to us: after publishing, read the groups again (a full
 * barrier between) and go round if their minimum moved on, at most
 * __LUF_DONE_SUM_ROUNDS times. Past that, @all is left where it was raised
 * and marked behind (__LUF_DONE_ALL_BEHIND in @lag_all): a flusher that
 * moves a group and then sees the mark recomputes @all, and clears the
 * mark before it reads (one that moved a group just before the mark was
 * set may miss it: @all then waits for the next move). Until then it may
 * lag, as it may while a CPU is idle.
 */
static inline void __luf_done_sum_all(struct luf_done *d, unsigned long *retries)
{
	unsigned long min, prev;
	unsigned int round;

	if (__luf_read_once(&d->lag_all) & __LUF_DONE_ALL_BEHIND)
		__luf_andnot_return(&d->lag_all, __LUF_DONE_ALL_BEHIND); /* before the reads */
	min = __luf_done_groups_min(d);
	for (round = 0;; round++) {
		prev = __luf_done_raise(&d->all, min, retries);
		if (!luf_ugen_before(prev, min))
			return; /* another flusher published it, and reads again */
		__luf_smp_mb(); /* the new @all before the groups' second read */
		__luf_done_sum_all_round(d);
		prev = min;
		min = __luf_done_groups_min(d);
		if (min == prev)
			return;
		if (round + 1 == __LUF_DONE_SUM_ROUNDS)
			break;
	}
	/* The groups moved on past the last raise: leave @all to their next move. */
	__luf_set_bit(LUF_BITS_PER_LONG - 1, &d->lag_all); /* __LUF_DONE_ALL_BEHIND */
}

/*
 * Recompute the summary of cpumask word @g from its CPUs' counters: its
 * minimum, the CPUs at it (@hold) and one of them (@lag), then raise the
 * group, and after its last raise recompute @all once if that group may
 * have held it (or @all was left behind). A flusher that raced
 * with the reads may have seen the old summary and left the work to us
 * (its CPU's bit cleared before our @hold was stored): so after
 * publishing, read the group and the CPUs at its minimum again (a full
 * barrier between) and go round if any moved. When flushers stop, the
 * summary is exact, unless a recomputation gave up: a group that kept
 * moving under it for __LUF_DONE_SUM_ROUNDS rounds is raised to what was
 * read and left with every CPU in @hold, so that the next flush of each
 * clears its bit and the last one recomputes (until then it may lag, as
 * it may while a CPU is idle).
 */
static inline void __luf_done_sum_group(struct luf_done *d, unsigned int g, unsigned long *retries)
{
	unsigned int first = g * LUF_BITS_PER_LONG, end = d->nr_cpus, c, round;
	bool sum_all = false;

	if (end - first > LUF_BITS_PER_LONG)
		end = first + LUF_BITS_PER_LONG;
	for (round = 0;; round++) {
		unsigned long min = 0, holders = 0, possible = 0, v, prev, w;

		for (c = first; c < end; c++) {
			if (!__luf_cpu_possible(c, d->nr_cpus))
				continue;
			possible |= 1UL << (c - first);
			v = luf_done_read(d, c);
			if (!holders || luf_ugen_before(v, min)) {
				min = v;
				holders = 0;
			}
			if (v == min)
				holders |= 1UL << (c - first);
		}
		if (!holders)
			break; /* no possible CPU here */
		/* After the last round, every CPU a holder: its next flush clears it. */
		__luf_write_once(&d->hold[g], round == __LUF_DONE_SUM_ROUNDS ? possible : holders);
		__luf_write_once(&d->lag[g], first + __luf_ffs(holders));
		/* Release: the counters read above before the new group. */
		prev = __luf_done_raise(&d->group[g], min, retries);
		__luf_smp_mb(); /* the stores above before the second reads */
		/* This group may have held @all, or @all was left behind: recompute it below. */
		if (luf_ugen_before(prev, min) &&
		    (!luf_ugen_before(luf_done_all(d), prev) ||
		     __luf_read_once(&d->lag_all) & __LUF_DONE_ALL_BEHIND))
			sum_all = true;
		if (round == __LUF_DONE_SUM_ROUNDS)
			break;
		if (__luf_done_group(d, g) != min)
			continue; /* another flusher moved it on: our @hold may be stale */
		for (w = holders; w; w &= w - 1)
			if (luf_done_read(d, first + __luf_ffs(w)) != min)
				break;
		if (!w)
			break;
	}
	if (sum_all) /* once, after the group's last raise: its reads see them all */
		__luf_done_sum_all(d, retries);
}

/*
 * After CPUs @at of word @g were raised: take them out of the CPUs that
 * held the group's minimum (@hold), and recompute the group once none is
 * left there; until then @lag names one still there. A raised CPU is past
 * the group's value in any case, so clearing its bit is always right. A
 * CPU marked on its own costs a load and, when it held the minimum, one
 * atomic on the summary's line (and a barrier where a compare-and-swap is
 * not one); the 64 loads of a recomputation are paid once per move of the
 * group.
 */
static inline void __luf_done_sum_after(struct luf_done *d, unsigned int g, unsigned long at,
					unsigned long *retries)
{
	unsigned long left, lag;

	/* The raised counters (a successful compare-and-swap) before the summary's read. */
	__luf_smp_mb__after_atomic();
	if (!(__luf_read_once(&d->hold[g]) & at))
		return; /* none of them held the minimum */
	left = __luf_andnot_return(&d->hold[g], at);
	if (!left) {
		__luf_done_sum_group(d, g, retries);
		return;
	}
	/* Other CPUs still hold it: keep the hint on one of them. */
	lag = __luf_read_once(&d->lag[g]) - (unsigned long)g * LUF_BITS_PER_LONG;
	if (lag >= LUF_BITS_PER_LONG || !(left >> lag & 1))
		__luf_write_once(&d->lag[g],
				 (unsigned long)g * LUF_BITS_PER_LONG + __luf_ffs(left));
}

/*
 * Raise done[@cpu] to @ugen unless it is there already, without the
 * summary. @ugen is a snapshot taken before a flush of @cpu that has now
 * completed, never 0. Monotonic: of two racing flushers the newer value
 * wins and done never goes back (S4). Returns true if it raised the
 * counter, with *@was the value it replaced.
 */
static inline bool __luf_done_raise_cpu(struct luf_done *d, unsigned int cpu, unsigned long ugen,
					unsigned long *was, unsigned long *retries)
{
	*was = __luf_done_raise(&__luf_per_cpu(d->cpu, cpu)->done, ugen, retries);
	return luf_ugen_before(*was, ugen);
}

/*
 * Raise done[@cpu] to @ugen (see above; 0 marks nothing) and keep the
 * summary. Internal: luf_local_flush_end() is the checked way in.
 * Returns the number of compare-and-swap retries (LUF_STAT_CAS_RETRY).
 */
static inline unsigned long __luf_done_mark_cpu(struct luf_done *d, unsigned int cpu,
						unsigned long ugen)
{
	unsigned long retries = 0, was;

	if (luf_unlikely(!ugen))
		return 0;
	if (__luf_done_raise_cpu(d, cpu, ugen, &was, &retries))
		__luf_done_sum_after(d, cpu / LUF_BITS_PER_LONG, 1UL << (cpu % LUF_BITS_PER_LONG),
				     &retries);
	return retries;
}

/*
 * Raise done of every CPU in @cpus (@nr_cpus bits) to @ugen, after a flush
 * of those CPUs that started after @ugen was taken has returned
 * successfully, count one flush request received by each, and keep the
 * summary: at most one recomputation per cpumask word. Returns the number
 * of compare-and-swap retries.
 */
static inline unsigned long __luf_done_mark(struct luf_done *d, const unsigned long *cpus,
					    unsigned int nr_cpus, unsigned long ugen)
{
	unsigned int words = LUF_CPUMASK_WORDS(nr_cpus), i, cpu;
	unsigned long retries = 0, was, w;

	if (luf_unlikely(!ugen))
		return 0;
	for (i = 0; i < words; i++) {
		unsigned long at = 0; /* the CPUs of the word raised here */

		for (w = __luf_read_once(&cpus[i]); w; w &= w - 1) {
			cpu = i * LUF_BITS_PER_LONG + __luf_ffs(w);
			__luf_add_relaxed(&__luf_per_cpu(d->cpu, cpu)->received, 1);
			if (__luf_done_raise_cpu(d, cpu, ugen, &was, &retries))
				at |= w & -w;
		}
		if (at)
			__luf_done_sum_after(d, i, at, &retries);
	}
	return retries;
}

LUF_END_DECLS

#endif /* LUF_DONE_H */
