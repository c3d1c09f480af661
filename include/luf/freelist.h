/* SPDX-License-Identifier: GPL-2.0-only OR MIT */
/*
 * luf/freelist.h - the deferred folio free list.
 *
 * Freed folios go to one of two lists: clean (no flush owed: the key's set
 * was done when freed, or has been flushed since) or pend (a CPU in its set
 * may still translate to it). An allocation takes clean folios first. With
 * no clean folio to spare it first releases the done prefix of the pend
 * list (FIFO: the oldest frees are the likeliest to have been flushed
 * since, by any CPU's flush). Only if that releases nothing, and with
 * LUF_ALLOC_MAY_FLUSH, it flushes once, for the union of the sets of the
 * pend folios left, and moves them all to clean: one flush pays for the
 * whole list. Without the flag it never flushes and
 * never hands out a pend folio (it fails with -EAGAIN instead), and it may
 * use the reserve: a floor of clean folios kept for callers that cannot
 * flush (atomic context, a signal handler), which a caller that may flush
 * never gets (L1).
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
#include "folio.h"
#include "pcpu.h"

LUF_BEGIN_DECLS

/*
 * The caller's descriptor (@type) around its struct luf_folio @member at
 * @ptr. (clang-format would glue the minus to the cast.)
 */
/* clang-format off */
#define luf_folio_entry(ptr, type, member) \
	((type *)((uintptr_t)(ptr) - offsetof(type, member)))
/* clang-format on */

/* The caller may block on a flush (luf_alloc()'s flags). */
#define LUF_ALLOC_MAY_FLUSH 0x1u

/**
 * struct luf_freelist - a deferred free list, one owner at a time
 * @luf: the instance it flushes through
 * @kt: the key table of the folios' sets
 * @clean: the clean list, LIFO: hottest first
 * @pend: the pend list, FIFO, so it splices onto clean
 * @pend_tail: where the next pend folio is linked
 * @nr_clean: folios on the clean list
 * @nr_pend: folios on the pend list
 * @reserve: clean folios kept from callers that may flush
 * @pend_set: the union of the pend folios' sets
 * @cache_seq: the verdict cache for runs of one key: its seqcount
 * @cache_key: ... the key (0: no verdict cached)
 * @cache_done: ... and whether its set was done
 * @pend_partial: a done prefix was released since @pend_set was built
 * @magic: the init marker
 *
 * luf_freelist_size() bytes of caller storage, set up by luf_freelist_init().
 */
struct luf_freelist {
	struct luf *luf;
	struct luf_keytab *kt;
	struct luf_folio *clean;
	struct luf_folio *pend;
	struct luf_folio **pend_tail;
	unsigned long nr_clean;
	unsigned long nr_pend;
	unsigned long reserve;
	struct luf_batch *pend_set;
	unsigned long cache_seq;
	unsigned short cache_key;
	bool cache_done;
	bool pend_partial;
	unsigned long magic;
};

/**
 * luf_freelist_size() - bytes of storage for a free list
 * @nr_cpus: the instance's CPU count
 *
 * Return: a size in bytes.
 */
static inline size_t luf_freelist_size(unsigned int nr_cpus)
{
	return sizeof(struct luf_freelist) + luf_batch_size(nr_cpus);
}

/* True iff @fl is a live free list (luf_freelist_init() returned 0). */
static inline bool __luf_freelist_live(const struct luf_freelist *fl)
{
	return fl && fl->magic == __luf_magic(fl, __LUF_MAGIC_FREELIST);
}

/* True iff @fl and @pc are live and of one instance and key table. */
static inline bool __luf_freelist_fits(const struct luf_freelist *fl, const struct luf_pcpu *pc)
{
	return __luf_freelist_live(fl) && __luf_pcpu_live(pc) && pc->luf == fl->luf &&
	       pc->kt == fl->kt;
}

/**
 * luf_freelist_init() - set up an empty free list
 * @fl: luf_freelist_size(l->nr_cpus) bytes
 * @l: a live instance
 * @kt: its key table (bound to @l)
 * @reserve: clean folios kept back from callers that may flush
 *
 * Return: 0; -EINVAL for NULL, an instance or table that is not live, or
 * a table of another instance; -EBUSY if @fl is live already
 * (luf_freelist_fini() it). Nothing is written on error.
 * Each failure names its check: luf_last_error() and the error hook in
 * user space, a pr_warn line in a kernel (luf/error.h).
 */
int luf_freelist_init(struct luf_freelist *fl, struct luf *l, struct luf_keytab *kt,
		      unsigned long reserve);

/**
 * luf_freelist_fini() - end an empty free list: its storage may be reused
 * @fl: a live free list
 *
 * Return: 0; -EINVAL if @fl is not live; -EBUSY if folios are still on it
 * (take them off with luf_alloc() first: they would be lost).
 * Each failure names its check: luf_last_error() and the error hook in
 * user space, a pr_warn line in a kernel (luf/error.h).
 */
int luf_freelist_fini(struct luf_freelist *fl);

/**
 * luf_freelist_refill() - move the pend folios to the clean list
 * @fl: the list
 * @pc: the caller's CPU state (statistics; the flush is sent from its CPU)
 * @flags: 0 (may not flush) or LUF_ALLOC_MAY_FLUSH
 *
 * If the union of the pend folios' sets is done already, all of them move
 * without a flush; else the pend folios at the head of the list whose
 * keys' sets are done move (one check per run of a key); if none is,
 * with LUF_ALLOC_MAY_FLUSH, all of them move after one flush of the union
 * of the sets still pend (rebuilt from their keys if a prefix left, then
 * dieted). luf_alloc() calls it when no clean folio is left
 * above its floor; a caller may call it to drain the pend list.
 *
 * Context: may flush only with LUF_ALLOC_MAY_FLUSH.
 * Return: 1 if folios moved, 0 if the pend list was empty; -EINVAL for
 * bad arguments; -EAGAIN (no flag) if pend folios still owe a flush; or
 * the flush's error, with every pend folio still pend.
 */
int luf_freelist_refill(struct luf_freelist *fl, struct luf_pcpu *pc, unsigned int flags);

/* LUF_DEBUG: report misuse of @f (@what, call site) through the instance's sink; else nothing. */
static inline void __luf_freelist_report(struct luf_freelist *fl, const char *what,
					 const struct luf_folio *f, const char *file, int line)
{
#if defined(LUF_DEBUG)
	__luf_debug_report(fl->luf, what, f, file, line);
#else
	(void)fl, (void)what, (void)f, (void)file, (void)line;
#endif
}

/* LUF_DEBUG in user space: record the call site of @f's last free or allocation. */
static inline void __luf_folio_track(struct luf_folio *f, const char *file, int line)
{
#if defined(LUF_DEBUG) && !defined(__KERNEL__)
	f->file = file;
	f->line = line;
#else
	(void)f, (void)file, (void)line;
#endif
}

/**
 * luf_freelist_cache_key() - judge @key's set for a run of frees
 * @fl: the list
 * @pc: the caller's CPU state (its scratch set)
 * @key: a key below the table's nr_keys, not 0
 *
 * luf_free() calls it when the list's one-key verdict cache does not hold
 * the key. It takes a consistent copy of the key's set (so its verdict and
 * the pend set agree), folds it into the pend set if not done, and caches
 * the verdict with the set's seqcount. Out of line: it runs once per run
 * of frees with one key, and keeps luf_free() small enough to inline.
 *
 * Context: any; reads the key's entry, writes @fl and @pc's scratch set.
 * Return: 1 done, 0 not done; -EINVAL for bad arguments or a key that no
 * fold ever named: freeing under it would claim a set nobody recorded
 * (flushing such a key writes its entry, but names nothing).
 */
int luf_freelist_cache_key(struct luf_freelist *fl, struct luf_pcpu *pc, unsigned int key);

/**
 * luf_free_at() - free a folio into the list (use luf_free())
 * @fl: the list
 * @pc: the caller's CPU state (its scratch set and statistics)
 * @f: the folio's embedded struct luf_folio, state IN_USE
 * @key: the key luf_pcpu_fold() named for the batch that unmapped it, or 0
 *	if no flush is owed for it
 * @file: the call site, for LUF_DEBUG reports (luf_free() passes __FILE__)
 * @line: ... and its line (__LINE__)
 *
 * The folio goes to the clean list if @key's set is done, else to the
 * pend list. A run of frees with one key reads the key's seqcount and
 * links the folio.
 *
 * Context: any; no system call, no allocation, no flush, no shared-line
 * write.
 * Return: 0; -EINVAL for NULL, a list or @pc that is not live, a @pc of
 * another instance or key table, a key out of range or one that no
 * luf_pcpu_fold() has named; -EBUSY if @f is already on a free list (a
 * double free, or a second list). Nothing changes on error.
 */
static inline int luf_free_at(struct luf_freelist *fl, struct luf_pcpu *pc, struct luf_folio *f,
			      unsigned int key, const char *file, int line)
{
	int done = 1;

	if (!__luf_freelist_fits(fl, pc) || !f || (key && !__luf_keytab_valid(fl->kt, key)))
		return -EINVAL;
	if (f->state != LUF_FOLIO_IN_USE) {
		__luf_freelist_report(fl, "double free (folio already on a free list)", f, file,
				      line);
		return -EBUSY;
	}
	if (key) {
		struct luf_shared *s = __luf_keytab_entry(fl->kt, key);

		if (luf_likely(key == fl->cache_key && __luf_shared_seq(s) == fl->cache_seq))
			done = fl->cache_done;
		else
			done = luf_freelist_cache_key(fl, pc, key);
		if (luf_unlikely(done < 0))
			return done;
	}
	f->key = (unsigned short)key;
	__luf_folio_track(f, file, line);
	if (done) {
		f->state = LUF_FOLIO_CLEAN;
		f->next = fl->clean;
		fl->clean = f;
		fl->nr_clean++;
		__luf_stat_inc(pc->luf->stats, pc->cpu, LUF_STAT_FREE_CLEAN);
	} else {
		f->state = LUF_FOLIO_PEND;
		f->next = NULL;
		*fl->pend_tail = f;
		fl->pend_tail = &f->next;
		fl->nr_pend++;
		__luf_stat_inc(pc->luf->stats, pc->cpu, LUF_STAT_FREE_PEND);
	}
	return 0;
}

/**
 * luf_alloc_at() - take a folio from the list (use luf_alloc())
 * @fl: the list
 * @pc: the caller's CPU state
 * @flags: 0 (may not flush) or LUF_ALLOC_MAY_FLUSH
 * @out: where the folio goes
 * @file: the call site, for LUF_DEBUG reports (luf_alloc() passes __FILE__)
 * @line: ... and its line (__LINE__)
 *
 * Order: a clean folio above the reserve (any clean folio without
 * LUF_ALLOC_MAY_FLUSH); else luf_freelist_refill() and a folio it made
 * clean. The folio handed out is IN_USE again.
 *
 * The reserve is a floor under the clean folios that were there at the
 * call: a caller that may flush takes a clean folio only above it, and
 * otherwise takes one of the pend folios it has just released, so the
 * clean count it leaves is never below min(reserve, clean count at the
 * call). Both halves of L1 hold: it never fails while pend folios exist,
 * and it never takes a folio the reserve was holding back.
 *
 * Context: the clean path makes no system call, no allocation and no
 * shared-line write; may flush only with LUF_ALLOC_MAY_FLUSH, and then
 * only when no clean folio above the reserve exists.
 * Return: 0 and *@out set; -EINVAL for NULL, a list or @pc that is not
 * live, a @pc of another instance or unknown flags; -EAGAIN (no flag) if
 * only pend folios, still owing a flush, remain; -ENOMEM if no folio may
 * be handed out (empty, or only the reserve for a caller that may flush);
 * or the flush's error, with every pend folio still pend.
 */
static inline int luf_alloc_at(struct luf_freelist *fl, struct luf_pcpu *pc, unsigned int flags,
			       struct luf_folio **out, const char *file, int line)
{
	unsigned long floor;
	struct luf_folio *f;
	int ret;

	if (!__luf_freelist_fits(fl, pc) || !out || (flags & ~LUF_ALLOC_MAY_FLUSH))
		return -EINVAL;
	floor = (flags & LUF_ALLOC_MAY_FLUSH) ? fl->reserve : 0;
	if (luf_unlikely(fl->nr_clean <= floor)) {
		ret = luf_freelist_refill(fl, pc, flags);
		if (ret <= 0) {
			__luf_stat_inc(pc->luf->stats, pc->cpu, LUF_STAT_ALLOC_FAIL);
			return ret ? ret : -ENOMEM;
		}
	}
	f = fl->clean;
	if (luf_unlikely(f->state != LUF_FOLIO_CLEAN))
		__luf_freelist_report(fl, "corrupt clean list (folio not clean)", f, file, line);
	fl->clean = f->next;
	fl->nr_clean--;
	f->next = NULL;
	f->state = LUF_FOLIO_IN_USE;
	__luf_folio_track(f, file, line);
	__luf_stat_inc(pc->luf->stats, pc->cpu, LUF_STAT_ALLOC_CLEAN);
	*out = f;
	return 0;
}

/* luf_free_at() with the caller's __FILE__ and __LINE__: the call to use. */
#define luf_free(fl, pc, f, key) luf_free_at((fl), (pc), (f), (key), __FILE__, __LINE__)
/* luf_alloc_at() with the caller's __FILE__ and __LINE__: the call to use. */
#define luf_alloc(fl, pc, flags, out) luf_alloc_at((fl), (pc), (flags), (out), __FILE__, __LINE__)

/**
 * luf_freelist_nr_clean() - folios on the clean list (the owner's view)
 * @fl: a free list
 *
 * Return: a count of folios.
 */
static inline unsigned long luf_freelist_nr_clean(const struct luf_freelist *fl)
{
	return fl->nr_clean;
}

/**
 * luf_freelist_nr_pend() - folios on the pend list (the owner's view)
 * @fl: a free list
 *
 * Return: a count of folios.
 */
static inline unsigned long luf_freelist_nr_pend(const struct luf_freelist *fl)
{
	return fl->nr_pend;
}

LUF_END_DECLS

#endif /* LUF_FREELIST_H */
