// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * A CPU's batching state: set-up, end, flushing a key now
 * (luf/pcpu.h).
 */
#include <luf/luf.h>

int luf_pcpu_init(struct luf_pcpu *pc, struct luf *l, struct luf_keytab *kt, unsigned int cpu,
		  unsigned int threshold)
{
	char *p;

	if (!pc)
		return __luf_fail(-EINVAL, __func__, "@pc is NULL");
	if (!l)
		return __luf_fail(-EINVAL, __func__, "@l is NULL");
	if (!__luf_live(l))
		return __luf_fail(-EINVAL, __func__,
				  "@l is not a live struct luf: luf_init() it first");
	if (!kt)
		return __luf_fail(-EINVAL, __func__, "@kt is NULL");
	if (!__luf_keytab_live(kt))
		return __luf_fail(-EINVAL, __func__, "@kt is not live: luf_keytab_init() it first");
	if (kt->luf != l)
		return __luf_fail(-EINVAL, __func__, "@kt belongs to another struct luf");
	if (cpu >= l->nr_cpus)
		return __luf_fail(-EINVAL, __func__, "@cpu is not below @l's ops->nr_cpu_ids()");
	if (!threshold)
		return __luf_fail(-EINVAL, __func__, "@threshold is 0");
	if (__luf_pcpu_live(pc))
		return __luf_fail(-EBUSY, __func__,
				  "@pc is live already: luf_pcpu_fini() it first");
	p = (char *)(pc + 1);
	pc->luf = l;
	pc->kt = kt;
	pc->open = (struct luf_batch *)(uintptr_t)p;
	pc->scratch = (struct luf_batch *)(uintptr_t)(p + luf_batch_size(l->nr_cpus));
	pc->cpu = cpu;
	pc->threshold = threshold;
	pc->nr_open = 0;
	pc->key = 0;
	luf_batch_init(pc->open, l->nr_cpus);
	luf_batch_init(pc->scratch, l->nr_cpus);
	pc->magic = __luf_magic(pc, __LUF_MAGIC_PCPU);
	return 0;
}

LUF_EXPORT(luf_pcpu_init);

int luf_pcpu_fini(struct luf_pcpu *pc)
{
	if (!pc)
		return __luf_fail(-EINVAL, __func__, "@pc is NULL");
	if (!__luf_pcpu_live(pc))
		return __luf_fail(-EINVAL, __func__,
				  "@pc is not live: not luf_pcpu_init()ed, or ended already");
	if (!luf_batch_empty(pc->open))
		return __luf_fail(-EBUSY, __func__,
				  "@pc has open removals: luf_pcpu_fold() them first");
	if (pc->key)
		return __luf_fail(-EBUSY, __func__,
				  "@pc holds a key luf_pcpu_fold() has not returned: fold first");
	pc->magic = 0;
	return 0;
}

LUF_EXPORT(luf_pcpu_fini);

int luf_key_flush(struct luf_pcpu *pc, unsigned int key)
{
	int ret;

	if (!__luf_pcpu_live(pc) || (key && !__luf_keytab_valid(pc->kt, key)))
		return -EINVAL;
	if (!key)
		return 0;
	ret = __luf_pcpu_flush_open(pc);
	if (ret)
		return ret;
	return __luf_shared_flush(pc->luf, pc->cpu, __luf_keytab_entry(pc->kt, key), pc->scratch);
}

LUF_EXPORT(luf_key_flush);
