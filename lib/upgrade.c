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
