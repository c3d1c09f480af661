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
 *   3. f = __luf_ugen_new()      -- the snapshot, taken before the flush;
 *   4. ops->flush(cpus)          -- on error: stop, the set stays pending,
 *                                   done is not marked;
 *   5. __luf_done_mark(cpus, f)  -- after the flush returned 0.
 *
 * Why the snapshot comes first (the ugen.h diagram): a CPU that removes a
 * translation after step 3 stamps it with a ugen > f, so marking f cannot
 * claim a flush that may have run before that removal.
 *
 * The flush paths (this file's functions without a body here) live in
 * lib/flush.c: set-up and flushing cost far more than a call.
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

LUF_BEGIN_DECLS

/* Receives LUF_DEBUG misuse reports: what, the folio or object, the call site. */
typedef void luf_report_fn(const char *what, const void *obj, const char *file, int line);

/**
 * struct luf - a luf instance
 * @ugen: the ugen source, on its own cache line (written by flushers only)
 * @ops: the backend (read-mostly from here on)
 * @arch: the backend's context, passed to every op
 * @nr_cpus: ops->nr_cpu_ids() at luf_init()
 * @done: the per-CPU done counters and their summary (luf/done.h)
 * @stats: the per-CPU statistics
 * @report: where LUF_DEBUG reports go; NULL for the platform's default
 * @magic: the init marker (__luf_magic() of this instance while live)
 *
 * Set up by luf_init(); one per machine (or per simulated machine, per
 * process in user space).
 */
struct luf {
	struct luf_ugen_src ugen;
	const struct luf_arch_ops *ops;
	void *arch;
	unsigned int nr_cpus;
	struct luf_stats_cpu __percpu *stats;
	luf_report_fn *report;
	unsigned long magic;
	struct luf_done done;
};

/*
 * Init markers. Every object with an init function holds its type's
 * constant XOR its own address while it is live: a zeroed or garbage
 * object (never initialised) and a byte copy of a live one (another
 * address) do not match, so every entry point can refuse them, and init
 * can refuse a live object (-EBUSY) instead of dropping its pending state.
 * The matching fini function clears the marker.
 */
#define __LUF_MAGIC_LUF 0x6c7566496e737431UL
#define __LUF_MAGIC_KEYTAB 0x6c75664b65797431UL
#define __LUF_MAGIC_DOMAIN 0x6c7566446f6d6e31UL
#define __LUF_MAGIC_PCPU 0x6c75665063707531UL
#define __LUF_MAGIC_FREELIST 0x6c7566466c737431UL

/* The marker of a live object of type @type at @obj. */
static inline unsigned long __luf_magic(const void *obj, unsigned long type)
{
	return type ^ (unsigned long)(uintptr_t)obj;
}

/* True iff @l is a live instance (luf_init() returned 0, no luf_fini() since). */
static inline bool __luf_live(const struct luf *l)
{
	return l && l->magic == __luf_magic(l, __LUF_MAGIC_LUF);
}

/* True iff @p is aligned to a cache line (the storage rule of luf objects). */
static inline bool __luf_cacheline_aligned(const void *p)
{
	return ((uintptr_t)p % LUF_CACHELINE) == 0;
}

/**
 * luf_init() - set up a luf instance
 * @l: caller storage for the instance (sizeof(struct luf), cache-line aligned)
 * @ops: the backend; flush, nr_cpu_ids and this_cpu must be set
 * @arch: the backend's context
 * @done: per-CPU done counters of nr = ops->nr_cpu_ids(@arch) CPUs
 *	(luf_done_size(nr) bytes, cache-line aligned, in user space)
 * @stats: per-CPU statistics (luf_stats_size(nr) bytes, cache-line aligned)
 * @start: the ugen the source starts at (0 normally; tests use values
 *	just below the wrap)
 *
 * Context: process; calls ops->nr_cpu_ids(), writes every CPU's counters.
 * Return: 0; -EINVAL for a NULL argument, a missing required op, a CPU
 * count of 0 or above LUF_MAX_CPUS, or misaligned storage; -EBUSY if @l
 * is a live instance already (luf_fini() it first). Nothing is written
 * on error.
 * Each failure names its check: luf_last_error() and the error hook in
 * user space, a pr_warn line in a kernel (luf/error.h).
 */
int luf_init(struct luf *l, const struct luf_arch_ops *ops, void *arch,
	     struct luf_done_cpu __percpu *done, struct luf_stats_cpu __percpu *stats,
	     unsigned long start);

/**
 * luf_fini() - end an instance: its storage may be reused or initialised again
 * @l: a live instance whose bound objects were ended first
 *
 * Return: 0, or -EINVAL if @l is not a live instance.
 * Each failure names its check: luf_last_error() and the error hook in
 * user space, a pr_warn line in a kernel (luf/error.h).
 */
int luf_fini(struct luf *l);

/**
 * luf_flush_batch() - flush what @b still needs, by the protocol above
 * @l: the instance
 * @cpu: the caller's CPU id (statistics go to its block)
 * @b: a batch the caller owns (a private copy; never a shared entry)
 *
 * On success @b is empty. On failure @b has only been dieted (the CPUs
 * dropped had flushed already), done is unchanged, and the error is
 * returned: nothing pending is lost.
 *
 * Context: may call ops->flush (IPIs, a system call, sleeping: whatever
 * the backend does); no luf lock is held across it.
 * Return: 1 if ops->flush was called and succeeded; 0 if diet left
 * nothing to flush; -EINVAL for NULL, an instance that is not live, a bad
 * @cpu or a batch of another CPU count; the backend's negative errno
 * (-EIO if it returned a positive value).
 */
int luf_flush_batch(struct luf *l, unsigned int cpu, struct luf_batch *b);

/**
 * luf_local_flush_begin() - snapshot for a full flush done outside luf
 * @l: a live instance
 *
 * For a CPU flushing for its own reasons (a context switch to another mm,
 * a flush_tlb_all()), or a flush the caller sent by another way. Take it
 * before the flush starts; pass it to luf_local_flush_end() once the flush
 * has completed, and diet will drop that CPU from every set stamped
 * before the snapshot. Source: LUF RFC v12, which updates the per-CPU
 * ugen done on such flushes.
 *
 * Context: any; one atomic add on the ugen line: call it for full
 * flushes only, which cost far more.
 * Return: the snapshot, a ugen (never 0); 0 if @l is not a live instance.
 */
unsigned long luf_local_flush_begin(struct luf *l);

/**
 * luf_flush_snapshot() - a write-free snapshot for a full flush done outside luf
 * @l: a live instance
 *
 * The cheap form of luf_local_flush_begin() for hot paths (a context
 * switch, a TLB-flush interrupt handler): it only reads the ugen source,
 * so it covers every removal stamped before the source last moved (a
 * flush, luf_local_flush_begin(), luf_ugen_advance()), not the ones
 * stamped since. A caller that marks CPUs done this way advances the
 * source after it folds a batch. Take it before the flush starts; pass it
 * to luf_local_flush_end() once the flush has completed.
 *
 * Context: any, interrupts off too; one load of the source's line.
 * Return: a ugen; 0 (which luf_local_flush_end() refuses) if the source
 * never moved.
 */
static inline unsigned long luf_flush_snapshot(const struct luf *l)
{
	/* Acquire: the flush (and the reads it depends on) stay after the read. */
#if defined(LUF_MUTANT_SNAPSHOT_AHEAD)
	/* Mutant: claims the next ugen, not yet handed out (breaks S1). */
	return __luf_load_acquire(&l->ugen.cur) + 1;
#else
	return __luf_load_acquire(&l->ugen.cur);
#endif
}

/**
 * luf_ugen_advance() - advance the ugen source
 * @l: a live instance
 *
 * Every removal stamped before the call is then covered by any flush that
 * snapshots the source afterwards, even with luf_flush_snapshot(). Call
 * it after folding a batch (luf_pcpu_fold()) when CPUs report their own
 * flushes with that cheap snapshot.
 *
 * Context: any; one atomic add on the source's line.
 * Return: the new ugen (never 0); 0 if @l is not a live instance.
 */
unsigned long luf_ugen_advance(struct luf *l);

/**
 * luf_local_flush_end() - record that CPU @cpu completed a full flush
 * that started after @snap was taken
 * @l: a live instance
 * @cpu: the CPU that flushed
 * @snap: the luf_local_flush_begin() snapshot taken before that flush
 *
 * The checked way to report a flush luf did not send (raw done counters
 * are internal).
 * Context: any.
 * Return: 0, or -EINVAL for an instance that is not live, a bad CPU id,
 * or a @snap that is 0 or newer than any ugen handed out (nothing
 * changed: done never runs ahead of the source).
 */
int luf_local_flush_end(struct luf *l, unsigned int cpu, unsigned long snap);

/**
 * luf_flush_received() - flush requests CPU @cpu received
 * @l: a live instance
 * @cpu: a CPU id
 *
 * Return: nr_tlb_remote_flush_received of @cpu; 0 for a bad argument.
 */
unsigned long luf_flush_received(const struct luf *l, unsigned int cpu);

/**
 * luf_set_report() - route LUF_DEBUG misuse reports
 * @l: a live instance
 * @fn: the sink, or NULL for the platform's default (stderr in user
 *	space, pr_warn() in a kernel)
 */
void luf_set_report(struct luf *l, luf_report_fn *fn);

#if defined(LUF_DEBUG)
/* Report misuse (@what, on @obj, at @file:@line) through @l's sink. */
static inline void __luf_debug_report(const struct luf *l, const char *what, const void *obj,
				      const char *file, int line)
{
	if (l->report)
		l->report(what, obj, file, line);
	else
		__luf_platform_report(what, obj, file, line);
}
#endif

LUF_END_DECLS

#endif /* LUF_FLUSH_H */
