/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/stats.h - vmstat-like counters.
 *
 * One block of counters per CPU, each block on its own cache lines and
 * written only by its owner (the CPU, or the thread that owns the
 * struct luf_pcpu of that CPU id), with a relaxed load and store: no
 * read-modify-write, no shared line. Readers sum the blocks without locks;
 * a sum read while CPUs run is a snapshot that may be a few events old.
 * The per-CPU count of flush requests received, which other CPUs write,
 * lives beside done[cpu] in done.h instead. In a kernel the blocks are a
 * per-CPU variable, which the glue can make part of /proc/vmstat.
 *
 * Names follow /proc/vmstat where an equivalent exists
 * (nr_tlb_remote_flush, nr_tlb_remote_flush_received, nr_tlb_local_flush_all).
 */
#ifndef LUF_STATS_H
#define LUF_STATS_H

#include "platform.h"

LUF_BEGIN_DECLS

struct luf;

/**
 * enum luf_abort_cause - why a deferral was cancelled and its flush run at once
 * @LUF_ABORT_WRITE_FAULT: a write fault would install a writable PTE
 * @LUF_ABORT_PROT_UPGRADE: mprotect() or similar grants write permission
 * @LUF_ABORT_WRITE_OTHER: the folio is written by another path (file write)
 * @LUF_ABORT_POISON: poison-on-free writes the folio
 * @LUF_ABORT_INIT_ON_FREE: init-on-free zeroes the folio
 * @LUF_ABORT_MIGRATE_COPY: migration copies into the folio
 * @LUF_ABORT_MOVE: mremap() or migration moves a translation
 * @LUF_ABORT_NR_CAUSES: the number of causes
 */
enum luf_abort_cause {
	LUF_ABORT_WRITE_FAULT,
	LUF_ABORT_PROT_UPGRADE,
	LUF_ABORT_WRITE_OTHER,
	LUF_ABORT_POISON,
	LUF_ABORT_INIT_ON_FREE,
	LUF_ABORT_MIGRATE_COPY,
	LUF_ABORT_MOVE,
	LUF_ABORT_NR_CAUSES
};

/**
 * enum luf_stat_item - the counters, after /proc/vmstat's TLB items
 * @LUF_STAT_REMOTE_FLUSH: flush calls that reached another CPU (nr_tlb_remote_flush)
 * @LUF_STAT_LOCAL_FLUSH: flush calls for the caller's CPU only (nr_tlb_local_flush_all)
 * @LUF_STAT_FLUSH_SKIPPED: flushes not issued because diet emptied the set
 * @LUF_STAT_DIET_DROPPED: CPUs dropped from sets by diet
 * @LUF_STAT_FLUSH_FAILED: the arch flush returned an error; the set stayed pending
 * @LUF_STAT_CAS_RETRY: compare-and-swap retries when marking done
 * @LUF_STAT_DEFERRED: translations whose flush was deferred
 * @LUF_STAT_NO_FLUSH: inaccessible translations, removed with no flush owed
 * @LUF_STAT_WRITABLE_FLUSH: batches flushed at fold because they held a writable entry
 * @LUF_STAT_FOLD: per-CPU sets folded into the key table
 * @LUF_STAT_FREE_CLEAN: folios freed straight to the clean list
 * @LUF_STAT_FREE_PEND: folios freed to the pend list
 * @LUF_STAT_ALLOC_CLEAN: allocations served (a clean folio handed out)
 * @LUF_STAT_ALLOC_FLUSH: allocations that flushed the pend list
 * @LUF_STAT_ALLOC_DONE: pend list, or its head, found flushed already: no flush
 * @LUF_STAT_ALLOC_FAIL: allocations that returned an error
 * @LUF_STAT_PEND_RELEASED: pend folios moved to clean (flushed, or found done)
 * @LUF_STAT_ABORT: the first of %LUF_ABORT_NR_CAUSES counters, one per cause
 * @LUF_STAT_NR_ITEMS: the number of counters
 *
 * Read with luf_stats_sum().
 */
enum luf_stat_item {
	LUF_STAT_REMOTE_FLUSH,
	LUF_STAT_LOCAL_FLUSH,
	LUF_STAT_FLUSH_SKIPPED,
	LUF_STAT_DIET_DROPPED,
	LUF_STAT_FLUSH_FAILED,
	LUF_STAT_CAS_RETRY,
	LUF_STAT_DEFERRED,
	LUF_STAT_NO_FLUSH,
	LUF_STAT_WRITABLE_FLUSH,
	LUF_STAT_FOLD,
	LUF_STAT_FREE_CLEAN,
	LUF_STAT_FREE_PEND,
	LUF_STAT_ALLOC_CLEAN,
	LUF_STAT_ALLOC_FLUSH,
	LUF_STAT_ALLOC_DONE,
	LUF_STAT_ALLOC_FAIL,
	LUF_STAT_PEND_RELEASED,
	LUF_STAT_ABORT,
	LUF_STAT_NR_ITEMS = LUF_STAT_ABORT + LUF_ABORT_NR_CAUSES
};

/**
 * struct luf_stats_cpu - one CPU's counters, sized and aligned so no two CPUs share a line
 * @v: the counters, indexed by enum luf_stat_item
 */
struct luf_stats_cpu {
	LUF_CACHE_ALIGNED unsigned long v[LUF_STAT_NR_ITEMS];
};

/**
 * luf_stats_size() - bytes for the counters of @nr_cpus CPUs (user space)
 * @nr_cpus: 1..LUF_MAX_CPUS
 *
 * Return: @nr_cpus times sizeof(struct luf_stats_cpu).
 */
static inline size_t luf_stats_size(unsigned int nr_cpus)
{
	return nr_cpus * sizeof(struct luf_stats_cpu);
}

/* Zero the counters of every possible CPU of @s. */
static inline void __luf_stats_init(struct luf_stats_cpu __percpu *s, unsigned int nr_cpus)
{
	unsigned int c;

	__luf_for_each_possible_cpu(c, nr_cpus) {
		for (unsigned int i = 0; i < LUF_STAT_NR_ITEMS; i++)
			__luf_write_once(&__luf_per_cpu(s, c)->v[i], 0);
	}
}

/*
 * Add @delta (may be negative) to @item of CPU @cpu's block. In user space
 * owner-only: a relaxed load and store, so two writers of one block may
 * lose counts (never corrupt anything else). The kernel counts on the
 * running CPU instead (platform/kernel.h).
 */
static inline void __luf_stat_add(struct luf_stats_cpu __percpu *s, unsigned int cpu,
				  enum luf_stat_item item, long delta)
{
	__luf_counter_add(s, cpu, v[item], delta);
}

/* Add 1 to @item of CPU @cpu's block (owner-only, as __luf_stat_add()). */
static inline void __luf_stat_inc(struct luf_stats_cpu __percpu *s, unsigned int cpu,
				  enum luf_stat_item item)
{
	__luf_stat_add(s, cpu, item, 1);
}

/**
 * luf_stats_sum() - the sum of one counter over every CPU of an instance
 * @l: a live instance
 * @item: the counter
 *
 * Context: any; lock-free, a snapshot while writers run.
 * Return: the count, or 0 if @l is not live or @item is out of range.
 */
long luf_stats_sum(const struct luf *l, enum luf_stat_item item);

/**
 * luf_stats_read() - one counter of one CPU's block
 * @l: a live instance
 * @cpu: a CPU id
 * @item: the counter
 *
 * Context: any; lock-free.
 * Return: the count, or 0 for a bad argument.
 */
long luf_stats_read(const struct luf *l, unsigned int cpu, enum luf_stat_item item);

/**
 * luf_stats_nr_pend() - folios on pend lists now
 * @l: a live instance
 *
 * Derived from the event counts (frees to pend minus pend folios
 * released), so the free path keeps no separate gauge.
 * Context: any; lock-free, a snapshot while writers run.
 * Return: a count of folios.
 */
long luf_stats_nr_pend(const struct luf *l);

/**
 * luf_stats_nr_clean() - folios on clean lists now
 * @l: a live instance
 *
 * Frees to clean plus released pend folios minus allocations.
 * Context: any; lock-free, a snapshot while writers run.
 * Return: a count of folios.
 */
long luf_stats_nr_clean(const struct luf *l);

LUF_END_DECLS

#endif /* LUF_STATS_H */
