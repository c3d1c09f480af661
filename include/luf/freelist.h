/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/freelist.h - the deferred folio free list.
 *
 * Freed folios go to one of two lists: clean (no flush owed: the key's set
 * was done when freed, or has been flushed since) or pend (a CPU in its set
 * may still translate to it). An allocation takes clean folios first. With
 * LUF_ALLOC_MAY_FLUSH and no clean folio to spare, it flushes once, for the
 * union of the sets of every pend folio, and moves them all to clean: one
 * flush pays for the whole list. Without the flag it never flushes and
 * never hands out a pend folio (it fails with -EAGAIN instead), and it may
 * use the reserve: a floor of clean folios kept for callers that cannot
 * flush (atomic context, a signal handler), which a caller that may flush
 * never gets (L1).
 *
 * The list's links and state live in struct luf_folio, which the caller
 * embeds in its own folio descriptor (struct page, a slab header, a pool
 * slot), never in the folio's bytes: a CPU reading through a stale
 * translation would see them (S1).
 *
 * One owner at a time (a CPU's own list, as the kernel's pcp lists, or the
 * caller's lock around a shared one): luf does no locking here, which keeps
 * free-to-pend and clean allocation free of shared-line writes.
 * Source: LUF RFC v12 (luf'd folios kept apart in the buddy and pcp lists
 * and flushed by check_luf_flush() before handing them out).
 */
#ifndef LUF_FREELIST_H
#define LUF_FREELIST_H

#include "platform.h"
#include "pcpu.h"

/* Where a folio is (struct luf_folio's state). */
enum luf_folio_state {
	LUF_FOLIO_IN_USE = 0, /* allocated, or never freed to luf */
	LUF_FOLIO_CLEAN = 1,  /* on a clean list: no flush owed */
	LUF_FOLIO_PEND = 2,   /* on a pend list: a flush is owed before reuse */
};

/* Embed in the caller's folio descriptor; zero-initialise (state IN_USE). */
struct luf_folio {
	struct luf_folio *next; /* next on its list; NULL at the end or in use */
	luf_key_t key;		/* key of its pending set when freed; 0 = none */
	unsigned char state;	/* enum luf_folio_state */
#if defined(LUF_DEBUG)
	const char *file; /* call site of the last free or allocation */
	int line;
#endif
};

/* Recover the caller's descriptor from its embedded struct luf_folio. */
#define luf_folio_entry(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

#define LUF_ALLOC_MAY_FLUSH 0x1u /* the caller may block on a flush */

/*
 * A deferred free list, one owner at a time: luf_freelist_size() bytes of
 * caller storage, set up by luf_freelist_init().
 */
struct luf_freelist {
	struct luf *luf;	      /* the instance it flushes through */
	struct luf_keytab *kt;	      /* the key table of the folios' sets */
	struct luf_folio *clean;      /* LIFO: hottest first */
	struct luf_folio *pend;	      /* FIFO, so it splices onto clean */
	struct luf_folio **pend_tail; /* where the next pend folio is linked */
	unsigned long nr_clean;	      /* folios on the clean list */
	unsigned long nr_pend;	      /* folios on the pend list */
	unsigned long reserve;	      /* clean folios kept from callers that may flush */
	struct luf_batch *pend_set;   /* union of the pend folios' sets */
	unsigned long cache_seq;      /* verdict cache for runs of one key: its seqcount */
	luf_key_t cache_key;	      /* ... the key (0: no verdict cached) */
	bool cache_done;	      /* ... and whether its set was done */
	unsigned long magic;	      /* __luf_magic(this, LUF_MAGIC_FREELIST) while live */
};

/* True iff @fl is a live free list (luf_freelist_init() returned 0). */
static inline bool __luf_freelist_live(const struct luf_freelist *fl)
{
	return fl && fl->magic == __luf_magic(fl, LUF_MAGIC_FREELIST);
}

/* True iff @fl and @pc are live and of one instance and key table. */
static inline bool __luf_freelist_fits(const struct luf_freelist *fl, const struct luf_pcpu *pc)
{
	return __luf_freelist_live(fl) && __luf_pcpu_live(pc) && pc->luf == fl->luf &&
	       pc->kt == fl->kt;
}

/* Bytes of storage for a free list of an instance of @nr_cpus CPUs. */
static inline size_t luf_freelist_size(unsigned int nr_cpus)
{
	return sizeof(struct luf_freelist) + luf_batch_size(nr_cpus);
}

/**
 * luf_freelist_init() - set up an empty free list.
 * @fl: luf_freelist_size(l->nr_cpus) bytes. @l: a live instance. @kt: its
 * key table (bound to @l). @reserve: clean folios kept back from callers
 * that may flush.
 * Return: 0; -EINVAL for NULL, an instance or table that is not live, or
 * a table of another instance; -EBUSY if @fl is live already
 * (luf_freelist_fini() it). Nothing is written on error.
 */
static inline int luf_freelist_init(struct luf_freelist *fl, struct luf *l, struct luf_keytab *kt,
				    unsigned long reserve)
{
	if (!fl || !__luf_live(l) || !__luf_keytab_live(kt) || kt->luf != l)
		return -EINVAL;
	if (__luf_freelist_live(fl))
		return -EBUSY;
	fl->luf = l;
	fl->kt = kt;
	fl->clean = NULL;
	fl->pend = NULL;
	fl->pend_tail = &fl->pend;
	fl->nr_clean = fl->nr_pend = 0;
	fl->reserve = reserve;
	fl->pend_set = (struct luf_batch *)(void *)(fl + 1);
	fl->cache_key = 0;
	fl->cache_seq = 0;
	fl->cache_done = false;
	luf_batch_init(fl->pend_set, l->nr_cpus);
	fl->magic = __luf_magic(fl, LUF_MAGIC_FREELIST);
	return 0;
}

/**
 * luf_freelist_fini() - end an empty free list: its storage may be reused.
 * Return: 0; -EINVAL if @fl is not live; -EBUSY if folios are still on it
 * (take them off with luf_alloc() first: they would be lost).
 */
static inline int luf_freelist_fini(struct luf_freelist *fl)
{
	if (!__luf_freelist_live(fl))
		return -EINVAL;
	if (fl->nr_clean || fl->nr_pend)
		return -EBUSY;
	fl->magic = 0;
	return 0;
}

/* LUF_DEBUG: report misuse of @f (@what, call site) through the instance's hook; else nothing. */
static inline void luf_freelist_report(struct luf_freelist *fl, const char *what,
				       const struct luf_folio *f, const char *file, int line)
{
#if defined(LUF_DEBUG)
	luf_debug_report(fl->luf, what, f, file, line);
#else
	(void)fl, (void)what, (void)f, (void)file, (void)line;
#endif
}

/* LUF_DEBUG: record the call site of @f's last free or allocation; else nothing. */
static inline void luf_folio_track(struct luf_folio *f, const char *file, int line)
{
#if defined(LUF_DEBUG)
	f->file = file;
	f->line = line;
#else
	(void)f, (void)file, (void)line;
#endif
}

/*
 * The verdict for @key when the list's cache does not hold it: a
 * consistent copy of the key's set (its verdict and the pend set agree),
 * folded into the pend set if not done. Out of line: it runs once per run
 * of frees with one key, and keeps luf_free_at() small enough to inline.
 * Return: 1 done, 0 not done, -EINVAL for a key that no fold ever named:
 * freeing under it would claim a set nobody recorded (flushing such a key
 * writes its entry, but names nothing).
 */
static luf_noinline_cold int luf_free_lookup(struct luf_freelist *fl, struct luf_pcpu *pc,
					     struct luf_shared *s, luf_key_t key)
{
	unsigned long seq = luf_shared_read(s, pc->scratch);
	bool done;

	if (!__luf_keytab_named(fl->kt, key))
		return -EINVAL; /* a key no fold has named: its set is unknown */
	done = luf_batch_check_done(pc->scratch, fl->luf->done);
	if (!done)
		luf_batch_fold(fl->pend_set, pc->scratch);
	fl->cache_key = key;
	fl->cache_seq = seq;
	fl->cache_done = done;
	return done;
}

/**
 * luf_free() - free a folio into the list.
 * @fl: the list. @pc: the caller's CPU state (its scratch set and stats).
 * @f: the folio's embedded struct luf_folio, state IN_USE.
 * @key: the key luf_pcpu_fold() named for the batch that unmapped it, or 0
 *       if no flush is owed for it.
 * @file, @line: the call site, for LUF_DEBUG reports (luf_free() passes
 *       __FILE__ and __LINE__).
 *
 * Clean if @key's set is done, else pend. No syscall, no allocation, no
 * flush, no shared-line write: a run of frees with one key reads the
 * key's seqcount and links the folio. (Under LUF_DEBUG, a macro records
 * the call site; the function is luf_free_at().)
 * Return: 0; -EINVAL for NULL, a list or @pc that is not live, a @pc of
 * another instance or key table, a key out of range or one that no
 * luf_pcpu_fold() has named; -EBUSY if @f is
 * already on a free list (a double free, or a second list). Nothing changes
 * on error.
 */
static inline int luf_free_at(struct luf_freelist *fl, struct luf_pcpu *pc, struct luf_folio *f,
			      unsigned int key, const char *file, int line)
{
	int done = 1;

	if (!__luf_freelist_fits(fl, pc) || !f || (key && !luf_keytab_valid(fl->kt, key)))
		return -EINVAL;
	if (f->state != LUF_FOLIO_IN_USE) {
		luf_freelist_report(fl, "double free (folio already on a free list)", f, file,
				    line);
		return -EBUSY;
	}
	if (key) {
		struct luf_shared *s = luf_keytab_entry(fl->kt, (luf_key_t)key);

		if (luf_likely(key == fl->cache_key && luf_shared_seq(s) == fl->cache_seq))
			done = fl->cache_done;
		else
			done = luf_free_lookup(fl, pc, s, (luf_key_t)key);
		if (luf_unlikely(done < 0))
			return done;
	}
	f->key = (luf_key_t)key;
	luf_folio_track(f, file, line);
	if (done) {
		f->state = LUF_FOLIO_CLEAN;
		f->next = fl->clean;
		fl->clean = f;
		fl->nr_clean++;
		luf_stat_inc(pc->stats, LUF_STAT_FREE_CLEAN);
	} else {
		f->state = LUF_FOLIO_PEND;
		f->next = NULL;
		*fl->pend_tail = f;
		fl->pend_tail = &f->next;
		fl->nr_pend++;
		luf_stat_inc(pc->stats, LUF_STAT_FREE_PEND);
	}
	return 0;
}

/* Move every pend folio to clean: their sets are known done. */
static inline void luf_freelist_release_pend(struct luf_freelist *fl, struct luf_pcpu *pc)
{
	struct luf_folio *f;

	for (f = fl->pend; f; f = f->next)
		f->state = LUF_FOLIO_CLEAN;
	*fl->pend_tail = fl->clean;
	fl->clean = fl->pend;
	fl->nr_clean += fl->nr_pend;
	luf_stat_add(pc->stats, LUF_STAT_PEND_RELEASED, (long)fl->nr_pend);
	fl->pend = NULL;
	fl->pend_tail = &fl->pend;
	fl->nr_pend = 0;
	luf_batch_clear(fl->pend_set);
	fl->cache_key = 0;
}

/**
 * luf_alloc_at() - take a folio from the list (under LUF_DEBUG through the
 * macro luf_alloc(), which records the call site).
 * @fl: the list. @pc: the caller's CPU state. @flags: 0 (may not flush) or
 *      LUF_ALLOC_MAY_FLUSH. @out: where the folio goes. @file, @line: the
 *      call site, for LUF_DEBUG reports (luf_alloc() passes them).
 *
 * Order: a clean folio above the reserve (any clean folio without
 * LUF_ALLOC_MAY_FLUSH); else, if the pend folios' union set is already
 * done, all pend folios become clean without a flush; else, with
 * LUF_ALLOC_MAY_FLUSH, one flush of that union (diet first), then all
 * pend folios become clean. The folio handed out is IN_USE again.
 *
 * May flush only with LUF_ALLOC_MAY_FLUSH (and then only when no clean
 * folio above the reserve exists). The clean path does no syscall, no
 * allocation and no shared-line write.
 * The reserve is a floor under the clean folios that were there at the
 * call: a caller that may flush takes a clean folio only above it, and
 * otherwise takes one of the pend folios it has just released, so the
 * clean count it leaves is never below min(reserve, clean count at the
 * call). Both halves of L1 hold: it never fails while pend folios exist,
 * and it never takes a folio the reserve was holding back.
 *
 * Return: 0 and *@out set; -EINVAL for NULL, a list or @pc that is not
 * live, a @pc of another instance or unknown flags; -EAGAIN (no
 * flag) if only pend folios, still owing a flush, remain; -ENOMEM if no
 * folio may be handed out (empty, or only the reserve for a caller that
 * may flush); or the flush's error, with every pend folio still pend.
 */
static inline int luf_alloc_at(struct luf_freelist *fl, struct luf_pcpu *pc, unsigned int flags,
			       struct luf_folio **out, const char *file, int line)
{
	unsigned long floor;
	struct luf_folio *f;
	bool flushed;
	int ret;

	if (!__luf_freelist_fits(fl, pc) || !out || (flags & ~LUF_ALLOC_MAY_FLUSH))
		return -EINVAL;
	floor = (flags & LUF_ALLOC_MAY_FLUSH) ? fl->reserve : 0;
	if (luf_unlikely(fl->nr_clean <= floor)) {
		if (!fl->nr_pend) {
			luf_stat_inc(pc->stats, LUF_STAT_ALLOC_FAIL);
			return -ENOMEM;
		}
		if (!luf_batch_check_done(fl->pend_set, fl->luf->done)) {
			if (!(flags & LUF_ALLOC_MAY_FLUSH)) {
				luf_stat_inc(pc->stats, LUF_STAT_ALLOC_FAIL);
				return -EAGAIN;
			}
			ret = __luf_flush_batch(fl->luf, pc->cpu, fl->pend_set, &flushed);
			if (ret) {
				luf_stat_inc(pc->stats, LUF_STAT_ALLOC_FAIL);
				return ret;
			}
			/* Diet may have found it done since the check: count what happened. */
			luf_stat_inc(pc->stats,
				     flushed ? LUF_STAT_ALLOC_FLUSH : LUF_STAT_ALLOC_DONE);
		} else {
			luf_stat_inc(pc->stats, LUF_STAT_ALLOC_DONE);
		}
		luf_freelist_release_pend(fl, pc);
	}
	f = fl->clean;
	if (luf_unlikely(f->state != LUF_FOLIO_CLEAN))
		luf_freelist_report(fl, "corrupt clean list (folio not clean)", f, file, line);
	fl->clean = f->next;
	fl->nr_clean--;
	f->next = NULL;
	f->state = LUF_FOLIO_IN_USE;
	luf_folio_track(f, file, line);
	luf_stat_inc(pc->stats, LUF_STAT_ALLOC_CLEAN);
	*out = f;
	return 0;
}

/* luf_free_at() with the caller's __FILE__ and __LINE__: the call to use. */
#define luf_free(fl, pc, f, key) luf_free_at((fl), (pc), (f), (key), __FILE__, __LINE__)
/* luf_alloc_at() with the caller's __FILE__ and __LINE__: the call to use. */
#define luf_alloc(fl, pc, flags, out) luf_alloc_at((fl), (pc), (flags), (out), __FILE__, __LINE__)

/* Folios on the clean list (the owner's view; no locking). */
static inline unsigned long luf_freelist_nr_clean(const struct luf_freelist *fl)
{
	return fl->nr_clean;
}

/* Folios on the pend list (the owner's view; no locking). */
static inline unsigned long luf_freelist_nr_pend(const struct luf_freelist *fl)
{
	return fl->nr_pend;
}

#endif /* LUF_FREELIST_H */
