// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * An address space's pending set: set-up, end, settle
 * (luf/domain.h).
 */
#include <luf/luf.h>

int luf_domain_init(struct luf_domain *dom, struct luf *l)
{
	if (!dom)
		return __luf_fail(-EINVAL, __func__, "@dom is NULL");
	if (!l)
		return __luf_fail(-EINVAL, __func__, "@l is NULL");
	if (!__luf_live(l))
		return __luf_fail(-EINVAL, __func__,
				  "@l is not a live struct luf: luf_init() it first");
	if (__luf_domain_live(dom))
		return __luf_fail(-EBUSY, __func__,
				  "@dom is live already: luf_domain_fini() it first");
	dom->luf = l;
	__luf_shared_init(&dom->set, l->nr_cpus);
	dom->magic = __luf_magic(dom, __LUF_MAGIC_DOMAIN);
	return 0;
}

LUF_EXPORT(luf_domain_init);

int luf_domain_fini(struct luf_domain *dom)
{
	if (!dom)
		return __luf_fail(-EINVAL, __func__, "@dom is NULL");
	if (!__luf_domain_live(dom))
		return __luf_fail(-EINVAL, __func__,
				  "@dom is not live: not luf_domain_init()ed, or ended already");
	if (luf_domain_pending(dom))
		return __luf_fail(-EBUSY, __func__,
				  "@dom still owes a flush: luf_domain_settle() it first");
	dom->magic = 0;
	return 0;
}

LUF_EXPORT(luf_domain_fini);

int luf_domain_settle(struct luf *l, unsigned int cpu, struct luf_domain *dom,
		      struct luf_batch *scratch)
{
	if (!__luf_live(l) || !dom || !scratch || cpu >= l->nr_cpus || !__luf_domain_fits(dom, l))
		return -EINVAL;
#if defined(LUF_MUTANT_NO_SETTLE)
	/* Mutant: settles nothing (breaks S2). */
	return 0;
#else
	return __luf_shared_flush(l, cpu, &dom->set, scratch);
#endif
}

LUF_EXPORT(luf_domain_settle);
