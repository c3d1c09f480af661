// SPDX-License-Identifier: GPL-2.0-only OR MIT
/*
 * The deferred free list's slow paths: set-up, end, and
 * moving the pend folios to clean (luf/freelist.h).
 */
#include <luf/luf.h>

int luf_freelist_init(struct luf_freelist *fl, struct luf *l, struct luf_keytab *kt,
		      unsigned long reserve)
{
	if (!fl)
		return __luf_fail(-EINVAL, __func__, "@fl is NULL");
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
	if (__luf_freelist_live(fl))
		return __luf_fail(-EBUSY, __func__,
				  "@fl is live already: luf_freelist_fini() it first");
	fl->luf = l;
	fl->kt = kt;
	fl->clean = NULL;
	fl->pend = NULL;
	fl->pend_tail = &fl->pend;
	fl->nr_clean = 0;
	fl->nr_pend = 0;
	fl->reserve = reserve;
	fl->pend_set = (struct luf_batch *)(uintptr_t)(fl + 1);
	fl->cache_key = 0;
	fl->cache_seq = 0;
	fl->cache_done = false;
	fl->pend_partial = false;
	luf_batch_init(fl->pend_set, l->nr_cpus);
	fl->magic = __luf_magic(fl, __LUF_MAGIC_FREELIST);
	return 0;
}

LUF_EXPORT(luf_freelist_init);

int luf_freelist_fini(struct luf_freelist *fl)
{
	if (!fl)
		return __luf_fail(-EINVAL, __func__, "@fl is NULL");
	if (!__luf_freelist_live(fl))
		return __luf_fail(-EINVAL, __func__,
				  "@fl is not live: not luf_freelist_init()ed, or ended already");
	if (fl->nr_clean)
		return __luf_fail(-EBUSY, __func__,
				  "@fl still holds clean folios: luf_alloc() them first");
	if (fl->nr_pend)
		return __luf_fail(-EBUSY, __func__,
				  "@fl still holds pend folios: luf_alloc() them first");
	fl->magic = 0;
	return 0;
}

LUF_EXPORT(luf_freelist_fini);

int luf_freelist_cache_key(struct luf_freelist *fl, struct luf_pcpu *pc, unsigned int key)
{
	struct luf_shared *s;
	unsigned long seq;
	bool done;

	if (!__luf_freelist_fits(fl, pc) || !__luf_keytab_valid(fl->kt, key))
		return -EINVAL;
	s = __luf_keytab_entry(fl->kt, key);
	seq = __luf_shared_read(s, pc->scratch);
	if (!__luf_keytab_named(fl->kt, key))
		return -EINVAL;
	done = luf_batch_check_done(pc->scratch, &fl->luf->done);
	if (!done)
		luf_batch_fold(fl->pend_set, pc->scratch);
	fl->cache_key = (unsigned short)key;
	fl->cache_seq = seq;
	fl->cache_done = done;
	return done;
}

LUF_EXPORT(luf_freelist_cache_key);

/*
 * Move the first @n pend folios (up to and excluding @stop) to the front of
 * the clean list: their sets are done. Leaves the pend set alone: it still
 * covers what stays pend, and more.
 */
static void luf_freelist_release_prefix(struct luf_freelist *fl, struct luf_pcpu *pc,
					struct luf_folio *stop, unsigned long n)
{
	struct luf_folio *f, *last = NULL;

	for (f = fl->pend; f != stop; f = f->next) {
		f->state = LUF_FOLIO_CLEAN;
		last = f;
	}
	if (!last)
		return;
	last->next = fl->clean;
	fl->clean = fl->pend;
	fl->nr_clean += n;
	fl->pend = stop;
	fl->nr_pend -= n;
	if (!stop)
		fl->pend_tail = &fl->pend;
	__luf_stat_add(pc->luf->stats, pc->cpu, LUF_STAT_PEND_RELEASED, (long)n);
}

/* Splice every pend folio onto the front of the clean list: their sets are done. */
static void luf_freelist_release_pend(struct luf_freelist *fl, struct luf_pcpu *pc)
{
	luf_freelist_release_prefix(fl, pc, NULL, fl->nr_pend);
	luf_batch_clear(fl->pend_set);
	fl->pend_partial = false;
	fl->cache_key = 0;
}

/*
 * The pend list is FIFO, so its oldest folios are the likeliest to be done
 * by now (other flushes, context switches). Release the prefix whose keys'
 * sets are done: a key's set only gains CPUs at newer ugens and loses CPUs
 * that flushed, so if it is done now, it was done for every folio freed
 * under it. One check per run of a key; stops at the first folio not done.
 * Returns the number of folios released.
 */
static unsigned long luf_freelist_release_done(struct luf_freelist *fl, struct luf_pcpu *pc)
{
	unsigned int key = 0;
	unsigned long n = 0;
	struct luf_folio *f;

	for (f = fl->pend; f; f = f->next, n++) {
		if (f->key != key) {
			key = f->key;
			if (luf_keytab_check_done(fl->kt, key) != 1)
				break;
		}
	}
	if (n) {
		luf_freelist_release_prefix(fl, pc, f, n);
		fl->pend_partial = true;
	}
	return n;
}

/*
 * After a prefix was released the pend set still holds the released
 * folios' CPUs: rebuild it from the keys still on the pend list, so the
 * flush reaches only the CPUs still owed. The one-key verdict cache is
 * dropped: its key may have no folio left in the rebuilt set.
 */
static void luf_freelist_rebuild_pend_set(struct luf_freelist *fl, struct luf_pcpu *pc)
{
	unsigned int key = 0;
	struct luf_folio *f;

	luf_batch_clear(fl->pend_set);
	for (f = fl->pend; f; f = f->next) {
		if (f->key == key)
			continue;
		key = f->key;
		__luf_shared_read(__luf_keytab_entry(fl->kt, key), pc->scratch);
		luf_batch_fold(fl->pend_set, pc->scratch);
	}
	fl->pend_partial = false;
	fl->cache_key = 0;
}

int luf_freelist_refill(struct luf_freelist *fl, struct luf_pcpu *pc, unsigned int flags)
{
	int ret;

	if (!__luf_freelist_fits(fl, pc) || (flags & ~LUF_ALLOC_MAY_FLUSH))
		return -EINVAL;
	if (!fl->nr_pend)
		return 0;
	if (luf_batch_check_done(fl->pend_set, &fl->luf->done)) {
		__luf_stat_inc(pc->luf->stats, pc->cpu, LUF_STAT_ALLOC_DONE);
		luf_freelist_release_pend(fl, pc);
		return 1;
	}
	if (luf_freelist_release_done(fl, pc)) {
		__luf_stat_inc(pc->luf->stats, pc->cpu, LUF_STAT_ALLOC_DONE);
		return 1;
	}
	if (!(flags & LUF_ALLOC_MAY_FLUSH))
		return -EAGAIN;
	if (fl->pend_partial)
		luf_freelist_rebuild_pend_set(fl, pc);
	ret = luf_flush_batch(fl->luf, pc->cpu, fl->pend_set);
	if (ret < 0)
		return ret;
	/* Diet may have found it done since the check: count what happened. */
	__luf_stat_inc(pc->luf->stats, pc->cpu, ret ? LUF_STAT_ALLOC_FLUSH : LUF_STAT_ALLOC_DONE);
	luf_freelist_release_pend(fl, pc);
	return 1;
}

LUF_EXPORT(luf_freelist_refill);
