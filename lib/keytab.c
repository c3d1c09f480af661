// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * Setting up and ending a key table (luf/keytab.h).
 */
#include <luf/luf.h>

int luf_keytab_init(struct luf_keytab *kt, struct luf *l, unsigned int nr_keys)
{
	if (!kt)
		return __luf_fail(-EINVAL, __func__, "@kt is NULL");
	if (!__luf_cacheline_aligned(kt))
		return __luf_fail(-EINVAL, __func__, "@kt is not aligned to " __LUF_CACHELINE_TEXT);
	if (!l)
		return __luf_fail(-EINVAL, __func__, "@l is NULL");
	if (!__luf_live(l))
		return __luf_fail(-EINVAL, __func__,
				  "@l is not a live struct luf: luf_init() it first");
	if (nr_keys < 2)
		return __luf_fail(-EINVAL, __func__, "@nr_keys is below 2");
	if (nr_keys > LUF_KEYTAB_MAX_KEYS)
		return __luf_fail(-EINVAL, __func__, "@nr_keys is above LUF_KEYTAB_MAX_KEYS");
	if (__luf_keytab_live(kt))
		return __luf_fail(-EBUSY, __func__,
				  "@kt is live already: luf_keytab_fini() it first");
	__luf_write_once(&kt->next, 0);
	kt->nr_keys = nr_keys;
	kt->nr_cpus = l->nr_cpus;
	kt->stride = __luf_keytab_stride(l->nr_cpus);
	kt->luf = l;
	for (unsigned int k = 0; k < nr_keys; k++)
		__luf_shared_init(__luf_keytab_entry(kt, k), l->nr_cpus);
	kt->magic = __luf_magic(kt, __LUF_MAGIC_KEYTAB);
	return 0;
}

LUF_EXPORT(luf_keytab_init);

int luf_keytab_fini(struct luf_keytab *kt)
{
	if (!kt)
		return __luf_fail(-EINVAL, __func__, "@kt is NULL");
	if (!__luf_keytab_live(kt))
		return __luf_fail(-EINVAL, __func__,
				  "@kt is not live: not luf_keytab_init()ed, or ended already");
	kt->magic = 0;
	return 0;
}

LUF_EXPORT(luf_keytab_fini);
