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

	if (!pc || !__luf_live(l) || !__luf_keytab_live(kt) || kt->luf != l || cpu >= l->nr_cpus ||
	    !threshold)
		return -EINVAL;
	if (__luf_pcpu_live(pc))
		return -EBUSY;
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
	if (!__luf_pcpu_live(pc))
		return -EINVAL;
	if (!luf_batch_empty(pc->open) || pc->key)
		return -EBUSY;
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
