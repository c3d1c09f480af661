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
 * lives beside done[cpu] in done.h instead.
 *
 * Names follow /proc/vmstat where an equivalent exists
 * (nr_tlb_remote_flush, nr_tlb_remote_flush_received, nr_tlb_local_flush_all).
 */
#ifndef LUF_STATS_H
#define LUF_STATS_H

#include "platform.h"

/* Why a deferral was cancelled and its flush run at once (DESIGN.md 4.8). */
enum luf_abort_cause {
	LUF_ABORT_WRITE_FAULT,	/* a write fault would install a writable PTE */
	LUF_ABORT_PROT_UPGRADE, /* mprotect() or similar grants write permission */
	LUF_ABORT_WRITE_OTHER,	/* the folio is written by another path (file write) */
	LUF_ABORT_POISON,	/* poison-on-free writes the folio */
	LUF_ABORT_INIT_ON_FREE, /* init-on-free zeroes the folio */
	LUF_ABORT_MIGRATE_COPY, /* migration copies into the folio */
	LUF_ABORT_MOVE,		/* mremap() or migration moves a translation */
	LUF_ABORT_NR_CAUSES
};

/* The counters, after /proc/vmstat's TLB items; read with luf_stats_sum(). */
enum luf_stat_item {
	LUF_STAT_REMOTE_FLUSH,	 /* nr_tlb_remote_flush: flush calls that reached another CPU */
	LUF_STAT_LOCAL_FLUSH,	 /* nr_tlb_local_flush_all: flush calls for the caller's CPU only */
	LUF_STAT_FLUSH_SKIPPED,	 /* flushes not issued because diet emptied the set */
	LUF_STAT_DIET_DROPPED,	 /* CPUs dropped from sets by diet */
	LUF_STAT_FLUSH_FAILED,	 /* arch flush returned an error; the set stayed pending */
	LUF_STAT_CAS_RETRY,	 /* mark_done compare-and-swap retries */
	LUF_STAT_DEFERRED,	 /* translations whose flush was deferred */
	LUF_STAT_NO_FLUSH,	 /* inaccessible translations: removed with no flush owed */
	LUF_STAT_WRITABLE_FLUSH, /* batches flushed at fold because they held a writable entry */
	LUF_STAT_FOLD,		 /* per-CPU sets folded into the key table */
	LUF_STAT_FREE_CLEAN,	 /* folios freed straight to the clean list */
	LUF_STAT_FREE_PEND,	 /* folios freed to the pend list */
	LUF_STAT_ALLOC_CLEAN,	 /* allocations served (a clean folio handed out) */
	LUF_STAT_ALLOC_FLUSH,	 /* allocations that flushed the pend list */
	LUF_STAT_ALLOC_DONE,	 /* pend list found flushed already (diet): no flush */
	LUF_STAT_ALLOC_FAIL,	 /* allocations that returned an error */
	LUF_STAT_PEND_RELEASED,	 /* pend folios moved to clean (flushed, or found done) */
	LUF_STAT_ABORT,		 /* first of LUF_ABORT_NR_CAUSES counters, one per cause */
	LUF_STAT_NR_ITEMS = LUF_STAT_ABORT + LUF_ABORT_NR_CAUSES
};

/* One CPU's counters. Sized and aligned so no two CPUs share a line. */
struct luf_stats_cpu {
	LUF_CACHE_ALIGNED luf_aulong v[LUF_STAT_NR_ITEMS]; /* indexed by enum luf_stat_item */
};

/* Bytes for the counters of @nr_cpus CPUs (an array of struct luf_stats_cpu). */
static inline size_t luf_stats_size(unsigned int nr_cpus)
{
	return nr_cpus * sizeof(struct luf_stats_cpu);
}

/* Zero the counters of @nr_cpus CPUs. */
static inline void luf_stats_init(struct luf_stats_cpu *s, unsigned int nr_cpus)
{
	for (unsigned int c = 0; c < nr_cpus; c++)
		for (unsigned int i = 0; i < LUF_STAT_NR_ITEMS; i++)
			luf_store_relaxed(&s[c].v[i], 0);
}

/*
 * Add @delta (may be negative) to @item of one CPU's block. Owner-only:
 * a relaxed load and store, so two writers of one block may lose counts
 * (never corrupt anything else).
 */
static inline void luf_stat_add(struct luf_stats_cpu *s, enum luf_stat_item item, long delta)
{
	luf_store_relaxed(&s->v[item], luf_load_relaxed(&s->v[item]) + (unsigned long)delta);
}

/* Add 1 to @item of one CPU's block (owner-only, as luf_stat_add()). */
static inline void luf_stat_inc(struct luf_stats_cpu *s, enum luf_stat_item item)
{
	luf_stat_add(s, item, 1);
}

/**
 * luf_stats_sum() - the sum of @item over @nr_cpus CPUs' blocks.
 * Return: the count (gauges are signed sums, returned as long). Lock-free;
 * a snapshot while writers run.
 */
static inline long luf_stats_sum(const struct luf_stats_cpu *s, unsigned int nr_cpus,
				 enum luf_stat_item item)
{
	unsigned long sum = 0;

	for (unsigned int c = 0; c < nr_cpus; c++)
		sum += luf_load_relaxed(&s[c].v[item]);
	return (long)sum;
}

/**
 * luf_stats_nr_pend() - folios on pend lists now, summed over @nr_cpus
 * CPUs' blocks. Derived from the event counts (frees to pend minus pend
 * folios released), so the free path keeps no separate gauge.
 * Return: a count of folios; a lock-free snapshot while writers run.
 */
static inline long luf_stats_nr_pend(const struct luf_stats_cpu *s, unsigned int nr_cpus)
{
	return luf_stats_sum(s, nr_cpus, LUF_STAT_FREE_PEND) -
	       luf_stats_sum(s, nr_cpus, LUF_STAT_PEND_RELEASED);
}

/**
 * luf_stats_nr_clean() - folios on clean lists now, summed over @nr_cpus
 * CPUs' blocks: frees to clean plus released pend folios minus
 * allocations. Return: a count of folios; a lock-free snapshot.
 */
static inline long luf_stats_nr_clean(const struct luf_stats_cpu *s, unsigned int nr_cpus)
{
	return luf_stats_sum(s, nr_cpus, LUF_STAT_FREE_CLEAN) +
	       luf_stats_sum(s, nr_cpus, LUF_STAT_PEND_RELEASED) -
	       luf_stats_sum(s, nr_cpus, LUF_STAT_ALLOC_CLEAN);
}

#endif /* LUF_STATS_H */
