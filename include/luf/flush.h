/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/flush.h - a luf instance and the one flush protocol every path uses.
 *
 * struct luf ties together the arch ops, the ugen source, the per-CPU done
 * counters and the per-CPU statistics, all in caller storage. The flush
 * protocol (luf_flush_batch()) is the only place luf calls ops->flush:
 *
 *   1. diet the set (drop CPUs that flushed since, for any reason);
 *   2. if nothing is left, count a skipped flush and stop;
 *   3. f = luf_ugen_new()        -- the snapshot, taken before the flush;
 *   4. ops->flush(cpus)          -- on error: stop, the set stays pending,
 *                                   done is not marked;
 *   5. __luf_done_mark(cpus, f)  -- after the flush returned 0.
 *
 * Why the snapshot comes first (the ugen.h diagram): a CPU that removes a
 * translation after step 3 stamps it with a ugen > f, so marking f cannot
 * claim a flush that may have run before that removal.
 */
#ifndef LUF_FLUSH_H
#define LUF_FLUSH_H

#include "platform.h"
#include "ugen.h"
#include "cpumask.h"
#include "done.h"
#include "batch.h"
#include "stats.h"
#include "arch.h"

/* Receives LUF_DEBUG misuse reports: what, the folio or object, call site. */
typedef void luf_report_fn(const char *what, const void *obj, const char *file, int line);

/*
 * A luf instance: the arch ops, the ugen source and, in caller storage, the
 * per-CPU done counters and stats. Set up by luf_init(); one per machine
 * (or per simulated machine, per process in user space).
 */
struct luf {
	struct luf_ugen_src ugen;	/* own cache line: written by flushers only */
	const struct luf_arch_ops *ops; /* read-mostly from here on */
	void *arch;			/* the backend's context, passed to every op */
	unsigned int nr_cpus;		/* ops->nr_cpu_ids() at init */
	struct luf_done_cpu *done;	/* nr_cpus counters */
	struct luf_stats_cpu *stats;	/* nr_cpus blocks */
	luf_report_fn *report;		/* LUF_DEBUG reports; NULL: the platform's */
	unsigned long magic;		/* __luf_magic(this, LUF_MAGIC_LUF) while live */
};

/*
 * Init markers. Every object with an init function holds its type's
 * constant XOR its own address while it is live: a zeroed or garbage
 * object (never initialised) and a byte copy of a live one (another
 * address) do not match, so every entry point can refuse them, and init
 * can refuse a live object (-EBUSY) instead of dropping its pending state.
 * The matching fini function clears the marker.
 */
#define LUF_MAGIC_LUF 0x6c7566496e737431UL
#define LUF_MAGIC_KEYTAB 0x6c75664b65797431UL
#define LUF_MAGIC_DOMAIN 0x6c7566446f6d6e31UL
#define LUF_MAGIC_PCPU 0x6c75665063707531UL
#define LUF_MAGIC_FREELIST 0x6c7566466c737431UL

/* The marker of a live object of type @type at @obj. */
static inline unsigned long __luf_magic(const void *obj, unsigned long type)
{
	return type ^ (unsigned long)(uintptr_t)obj;
}

/* True iff @l is a live instance (luf_init() returned 0, no luf_fini() since). */
static inline bool __luf_live(const struct luf *l)
{
	return l && l->magic == __luf_magic(l, LUF_MAGIC_LUF);
}

/* True iff @p is aligned to a cache line (storage rule for per-CPU arrays). */
static inline bool luf_cacheline_aligned(const void *p)
{
	return ((uintptr_t)p % LUF_CACHELINE) == 0;
}

/**
 * luf_init() - set up a luf instance.
 * @l: caller storage for the instance (sizeof(struct luf), cache-line aligned).
 * @ops: the backend; flush, nr_cpu_ids and this_cpu must be set.
 * @arch: the backend's context.
 * @done: luf_done_size(nr) bytes, cache-line aligned, nr = ops->nr_cpu_ids(@arch).
 * @stats: luf_stats_size(nr) bytes, cache-line aligned.
 * @start: the ugen the source starts at (0 normally; tests use values
 *         just below the wrap).
 *
 * Return: 0; -EINVAL for a NULL argument, a missing required op, a CPU
 * count of 0 or above LUF_MAX_CPUS, or misaligned storage; -EBUSY if @l
 * is a live instance already (luf_fini() it first). Nothing is written
 * on error.
 */
static inline int luf_init(struct luf *l, const struct luf_arch_ops *ops, void *arch,
			   struct luf_done_cpu *done, struct luf_stats_cpu *stats, luf_ugen_t start)
{
	unsigned int nr;

	if (!l || !ops || !ops->flush || !ops->nr_cpu_ids || !ops->this_cpu || !done || !stats)
		return -EINVAL;
	if (__luf_live(l))
		return -EBUSY;
	if (!luf_cacheline_aligned(l) || !luf_cacheline_aligned(done) ||
	    !luf_cacheline_aligned(stats))
		return -EINVAL;
	nr = ops->nr_cpu_ids(arch);
	if (!nr || nr > LUF_MAX_CPUS)
		return -EINVAL;
	luf_ugen_src_init(&l->ugen, start);
	l->ops = ops;
	l->arch = arch;
	l->nr_cpus = nr;
	l->done = done;
	l->stats = stats;
	l->report = NULL;
	luf_done_init(done, nr, start);
	luf_stats_init(stats, nr);
	l->magic = __luf_magic(l, LUF_MAGIC_LUF);
	return 0;
}

/**
 * luf_fini() - end an instance: its storage may be reused or initialised
 * again. The caller has ended every object bound to it first.
 * Return: 0, or -EINVAL if @l is not a live instance.
 */
static inline int luf_fini(struct luf *l)
{
	if (!__luf_live(l))
		return -EINVAL;
	l->magic = 0;
	return 0;
}

/*
 * The flush protocol (see the top of this file). @flushed, if not NULL, is
 * set to whether ops->flush was called and returned 0 (false when diet
 * emptied the set), so callers count only flushes that happened.
 */
static inline int __luf_flush_batch(struct luf *l, unsigned int cpu, struct luf_batch *b,
				    bool *flushed)
{
	struct luf_stats_cpu *st;
	unsigned int dropped;
	luf_ugen_t snap;
	int ret;

	if (flushed)
		*flushed = false;
	if (!__luf_live(l) || !b || cpu >= l->nr_cpus || b->nr_cpus != l->nr_cpus)
		return -EINVAL;
	st = &l->stats[cpu];
	dropped = luf_batch_diet(b, l->done);
	if (dropped)
		luf_stat_add(st, LUF_STAT_DIET_DROPPED, (long)dropped);
	if (luf_batch_empty(b)) {
		luf_stat_inc(st, LUF_STAT_FLUSH_SKIPPED);
		return 0;
	}
	snap = luf_ugen_new(&l->ugen);
#if defined(LUF_MUTANT_MARK_BEFORE_FLUSH)
	/* Mutant: marks done before the flush has returned (breaks S1). */
	__luf_done_mark(l->done, b->cpus, b->nr_cpus, snap);
#endif
	ret = l->ops->flush(l->arch, b->cpus, b->nr_cpus, NULL);
	if (ret) {
		luf_stat_inc(st, LUF_STAT_FLUSH_FAILED);
		return ret < 0 ? ret : -EIO;
	}
	luf_stat_add(st, LUF_STAT_CAS_RETRY,
		     (long)__luf_done_mark(l->done, b->cpus, b->nr_cpus, snap));
	if (luf_cpumask_weight(b->cpus, b->nr_cpus) == 1 &&
	    luf_cpumask_test_cpu(b->cpus, b->nr_cpus, cpu))
		luf_stat_inc(st, LUF_STAT_LOCAL_FLUSH);
	else
		luf_stat_inc(st, LUF_STAT_REMOTE_FLUSH);
	luf_batch_clear(b);
	if (flushed)
		*flushed = true;
	return 0;
}

/**
 * luf_flush_batch() - flush what @b still needs, by the protocol above.
 * @l: the instance. @cpu: the caller's CPU id (statistics go to its block).
 * @b: a batch the caller owns (a private copy; never a shared entry).
 *
 * May call ops->flush (IPIs, a syscall, sleeping: whatever the backend
 * does). On success @b is empty. On failure @b has only been dieted (the
 * CPUs dropped had flushed already), done is unchanged, and the error is
 * returned: nothing pending is lost.
 *
 * Return: 0 (flushed, or nothing left to flush); -EINVAL for NULL, an
 * instance that is not live, a bad @cpu or a batch of another CPU count;
 * the backend's negative errno (-EIO if it returned a positive value).
 */
static inline int luf_flush_batch(struct luf *l, unsigned int cpu, struct luf_batch *b)
{
	return __luf_flush_batch(l, cpu, b, NULL);
}

/**
 * luf_set_report() - route LUF_DEBUG misuse reports to @fn (NULL: the
 * platform's default, stderr in user space, pr_warn in the kernel).
 */
static inline void luf_set_report(struct luf *l, luf_report_fn *fn)
{
	l->report = fn;
}

#if defined(LUF_DEBUG)
static inline void luf_debug_report(const struct luf *l, const char *what, const void *obj,
				    const char *file, int line)
{
	if (l->report)
		l->report(what, obj, file, line);
	else
		luf_platform_report(what, obj, file, line);
}
#endif

/**
 * luf_local_flush_begin() - snapshot for a full flush done outside luf:
 * a CPU flushing for its own reasons (a context switch to another mm, a
 * flush_tlb_all()), or a flush the caller sent by another way. Take it
 * before the flush starts; pass it to luf_local_flush_end() once the flush
 * has completed, and diet will drop that CPU from every set stamped before
 * the snapshot. One atomic add on the ugen line: call it for full flushes
 * only, which cost far more. Source: LUF RFC v12, which updates the
 * per-CPU ugen done on such flushes.
 * Return: the snapshot, a ugen (never 0); 0 if @l is not a live instance.
 */
static inline luf_ugen_t luf_local_flush_begin(struct luf *l)
{
	return __luf_live(l) ? luf_ugen_new(&l->ugen) : 0;
}

/**
 * luf_local_flush_end() - record that CPU @cpu completed a full flush
 * that started after @snap was taken: the checked way to report a flush
 * luf did not send (raw done counters are internal).
 * Return: 0, or -EINVAL for an instance that is not live, a bad CPU id,
 * or a @snap that is 0 or newer than any ugen handed out (nothing
 * changed: done never runs ahead of the source).
 */
static inline int luf_local_flush_end(struct luf *l, unsigned int cpu, luf_ugen_t snap)
{
	if (!__luf_live(l) || cpu >= l->nr_cpus || !snap ||
	    luf_ugen_before(luf_ugen_current(&l->ugen), snap))
		return -EINVAL;
	luf_stat_add(&l->stats[cpu], LUF_STAT_CAS_RETRY,
		     (long)__luf_done_mark_cpu(l->done, cpu, snap));
	return 0;
}

/* The count of flush requests CPU @cpu received (nr_tlb_remote_flush_received). */
static inline unsigned long luf_flush_received(const struct luf *l, unsigned int cpu)
{
	return cpu < l->nr_cpus ? luf_load_relaxed(&l->done[cpu].received) : 0;
}

#endif /* LUF_FLUSH_H */
