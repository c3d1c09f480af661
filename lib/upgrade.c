// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The write-upgrade abort (luf/upgrade.h): flush a
 * folio's key or an address space's pending set before a write could
 * observe a stale read-only translation (S2).
 */
#include <luf/luf.h>

int luf_abort_key(struct luf_pcpu *pc, unsigned int key, enum luf_abort_cause cause)
{
	int ret;

	if (!__luf_pcpu_live(pc) || (unsigned int)cause >= LUF_ABORT_NR_CAUSES ||
	    (key && !__luf_keytab_valid(pc->kt, key)))
		return -EINVAL;
#if defined(LUF_MUTANT_NO_ABORT)
	/* Mutant: skips the write-upgrade abort (breaks S2). */
	(void)ret;
	return 0;
#else
	if (!key || luf_keytab_check_done(pc->kt, key) == 1)
		return 0;
	ret = luf_key_flush(pc, key);
	if (ret < 0)
		return ret;
	if (ret)
		__luf_stat_inc(pc->luf->stats, pc->cpu, LUF_STAT_ABORT + cause);
	return 0;
#endif
}

LUF_EXPORT(luf_abort_key);

int luf_abort_domain(struct luf_pcpu *pc, struct luf_domain *dom, enum luf_abort_cause cause)
{
	int ret;

	if (!__luf_pcpu_live(pc) || !dom || (unsigned int)cause >= LUF_ABORT_NR_CAUSES ||
	    !__luf_domain_fits(dom, pc->luf))
		return -EINVAL;
#if defined(LUF_MUTANT_NO_ABORT)
	(void)ret;
	return 0;
#else
	if (!luf_domain_pending(dom))
		return 0;
	ret = luf_domain_settle(pc->luf, pc->cpu, dom, pc->scratch);
	if (ret < 0)
		return ret;
	if (ret)
		__luf_stat_inc(pc->luf->stats, pc->cpu, LUF_STAT_ABORT + cause);
	return 0;
#endif
}

LUF_EXPORT(luf_abort_domain);

int luf_abort_stamp(struct luf_pcpu *pc, const unsigned long *cpus, unsigned long stamp,
		    enum luf_abort_cause cause)
{
	int ret;

	if (!__luf_pcpu_live(pc) || !cpus || !luf_cpumask_valid(cpus, pc->luf->nr_cpus) ||
	    (unsigned int)cause >= LUF_ABORT_NR_CAUSES)
		return -EINVAL;
#if defined(LUF_MUTANT_NO_ABORT)
	(void)ret;
	(void)stamp;
	return 0;
#else
	if (!stamp)
		return 0;
	luf_batch_clear(pc->scratch);
	luf_batch_add(pc->scratch, cpus, stamp, false);
	ret = luf_flush_batch(pc->luf, pc->cpu, pc->scratch);
	if (ret < 0) {
		luf_batch_clear(pc->scratch);
		return ret;
	}
	if (ret)
		__luf_stat_inc(pc->luf->stats, pc->cpu, LUF_STAT_ABORT + cause);
	return ret;
#endif
}

LUF_EXPORT(luf_abort_stamp);
