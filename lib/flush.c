// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The slow paths of luf/flush.h and luf/stats.h: setting up
 * an instance, the flush protocol, outside flushes, the statistics sums.
 *
 * The same file builds libluf in user space and, vendored, lib/luf in a
 * kernel tree: it includes nothing but the luf headers.
 */
#include <luf/luf.h>

int luf_init(struct luf *l, const struct luf_arch_ops *ops, void *arch,
	     struct luf_done_cpu __percpu *done, struct luf_stats_cpu __percpu *stats,
	     unsigned long start)
{
	unsigned int nr;

	if (!l)
		return __luf_fail(-EINVAL, __func__, "@l is NULL");
	if (!ops)
		return __luf_fail(-EINVAL, __func__, "@ops is NULL");
	if (!ops->flush)
		return __luf_fail(-EINVAL, __func__, "@ops->flush is NULL (required)");
	if (!ops->nr_cpu_ids)
		return __luf_fail(-EINVAL, __func__, "@ops->nr_cpu_ids is NULL (required)");
	if (!ops->this_cpu)
		return __luf_fail(-EINVAL, __func__, "@ops->this_cpu is NULL (required)");
	if (!done)
		return __luf_fail(-EINVAL, __func__, "@done is NULL");
	if (!stats)
		return __luf_fail(-EINVAL, __func__, "@stats is NULL");
	/* Alignment first: a misaligned @l must not even be read as a struct luf. */
	if (!__luf_cacheline_aligned(l))
		return __luf_fail(-EINVAL, __func__, "@l is not aligned to " __LUF_CACHELINE_TEXT);
	if (!__luf_percpu_aligned(done))
		return __luf_fail(-EINVAL, __func__,
				  "@done is not aligned to " __LUF_CACHELINE_TEXT);
	if (!__luf_percpu_aligned(stats))
		return __luf_fail(-EINVAL, __func__,
				  "@stats is not aligned to " __LUF_CACHELINE_TEXT);
	if (__luf_live(l))
		return __luf_fail(-EBUSY, __func__, "@l is live already: luf_fini() it first");
	nr = ops->nr_cpu_ids(arch);
	if (!nr)
		return __luf_fail(-EINVAL, __func__, "@ops->nr_cpu_ids() returned 0");
	if (nr > LUF_MAX_CPUS)
		return __luf_fail(-EINVAL, __func__,
				  "@ops->nr_cpu_ids() returned more than LUF_MAX_CPUS");
	__luf_ugen_src_init(&l->ugen, start);
	l->ops = ops;
	l->arch = arch;
	l->nr_cpus = nr;
	l->stats = stats;
	l->report = NULL;
	__luf_done_init(&l->done, done, nr, start);
	__luf_stats_init(stats, nr);
	l->magic = __luf_magic(l, __LUF_MAGIC_LUF);
	return 0;
}

LUF_EXPORT(luf_init);

int luf_fini(struct luf *l)
{
	if (!l)
		return __luf_fail(-EINVAL, __func__, "@l is NULL");
	if (!__luf_live(l))
		return __luf_fail(-EINVAL, __func__,
				  "@l is not live: not luf_init()ed, or ended already");
	l->magic = 0;
	return 0;
}

LUF_EXPORT(luf_fini);

int luf_flush_batch(struct luf *l, unsigned int cpu, struct luf_batch *b)
{
	unsigned int dropped;
	unsigned long snap;
	int ret;

	if (!__luf_live(l) || !b || cpu >= l->nr_cpus || b->nr_cpus != l->nr_cpus)
		return -EINVAL;
	dropped = luf_batch_diet(b, &l->done);
	if (dropped)
		__luf_stat_add(l->stats, cpu, LUF_STAT_DIET_DROPPED, (long)dropped);
	if (luf_batch_empty(b)) {
		__luf_stat_inc(l->stats, cpu, LUF_STAT_FLUSH_SKIPPED);
		return 0;
	}
	snap = __luf_ugen_new(&l->ugen);
#if defined(LUF_MUTANT_MARK_BEFORE_FLUSH)
	/* Mutant: marks done before the flush has returned (breaks S1). */
	__luf_done_mark(&l->done, b->cpus, b->nr_cpus, snap);
#endif
#if defined(LUF_MUTANT_SUM_AHEAD)
	/* Mutant: the summary claims the flush before it ran, ahead of the counters (S1). */
	for (unsigned int i = 0; i < LUF_CPUMASK_WORDS(b->nr_cpus); i++) {
		unsigned long r = 0;

		if (b->cpus[i])
			__luf_done_raise(&l->done.group[i], snap, &r);
	}
#endif
	ret = l->ops->flush(l->arch, b->cpus, b->nr_cpus, NULL);
	if (ret) {
		__luf_stat_inc(l->stats, cpu, LUF_STAT_FLUSH_FAILED);
		return ret < 0 ? ret : -EIO;
	}
	__luf_stat_add(l->stats, cpu, LUF_STAT_CAS_RETRY,
		       (long)__luf_done_mark(&l->done, b->cpus, b->nr_cpus, snap));
	if (luf_cpumask_weight(b->cpus, b->nr_cpus) == 1 &&
	    luf_cpumask_test_cpu(b->cpus, b->nr_cpus, cpu))
		__luf_stat_inc(l->stats, cpu, LUF_STAT_LOCAL_FLUSH);
	else
		__luf_stat_inc(l->stats, cpu, LUF_STAT_REMOTE_FLUSH);
	luf_batch_clear(b);
	return 1;
}

LUF_EXPORT(luf_flush_batch);

unsigned long luf_local_flush_begin(struct luf *l)
{
	return __luf_live(l) ? __luf_ugen_new(&l->ugen) : 0;
}

LUF_EXPORT(luf_local_flush_begin);

unsigned long luf_ugen_advance(struct luf *l)
{
	return luf_local_flush_begin(l);
}

LUF_EXPORT(luf_ugen_advance);

int luf_local_flush_end(struct luf *l, unsigned int cpu, unsigned long snap)
{
	if (!__luf_live(l) || cpu >= l->nr_cpus || !snap ||
	    luf_ugen_before(luf_ugen_current(&l->ugen), snap))
		return -EINVAL;
	__luf_stat_add(l->stats, cpu, LUF_STAT_CAS_RETRY,
		       (long)__luf_done_mark_cpu(&l->done, cpu, snap));
	return 0;
}

LUF_EXPORT(luf_local_flush_end);

unsigned long luf_flush_received(const struct luf *l, unsigned int cpu)
{
	if (!__luf_live(l) || cpu >= l->nr_cpus)
		return 0;
	return __luf_read_once(&__luf_per_cpu(l->done.cpu, cpu)->received);
}

LUF_EXPORT(luf_flush_received);

void luf_set_report(struct luf *l, luf_report_fn *fn)
{
	if (__luf_live(l))
		l->report = fn;
}

LUF_EXPORT(luf_set_report);

long luf_stats_sum(const struct luf *l, enum luf_stat_item item)
{
	unsigned long sum = 0;
	unsigned int c;

	if (!__luf_live(l) || (unsigned int)item >= LUF_STAT_NR_ITEMS)
		return 0;
	__luf_for_each_possible_cpu(c, l->nr_cpus)
		sum += __luf_read_once(&__luf_per_cpu(l->stats, c)->v[item]);
	return (long)sum;
}

LUF_EXPORT(luf_stats_sum);

long luf_stats_read(const struct luf *l, unsigned int cpu, enum luf_stat_item item)
{
	if (!__luf_live(l) || cpu >= l->nr_cpus || (unsigned int)item >= LUF_STAT_NR_ITEMS)
		return 0;
	return (long)__luf_read_once(&__luf_per_cpu(l->stats, cpu)->v[item]);
}

LUF_EXPORT(luf_stats_read);

long luf_stats_nr_pend(const struct luf *l)
{
	return luf_stats_sum(l, LUF_STAT_FREE_PEND) - luf_stats_sum(l, LUF_STAT_PEND_RELEASED);
}

LUF_EXPORT(luf_stats_nr_pend);

long luf_stats_nr_clean(const struct luf *l)
{
	return luf_stats_sum(l, LUF_STAT_FREE_CLEAN) + luf_stats_sum(l, LUF_STAT_PEND_RELEASED) -
	       luf_stats_sum(l, LUF_STAT_ALLOC_CLEAN);
}

LUF_EXPORT(luf_stats_nr_clean);
